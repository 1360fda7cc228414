"""Which files a run covers: the paths given, minus excluded directories and patterns."""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from typing import Callable, Iterable, NamedTuple

from dllint.config import DEFAULT_EXCLUDE, Settings
from dllint.findings import Finding
from dllint.ignore_files import Ignores, above, ignored, in_directory
from dllint.inputs import SUFFIXES
from dllint.paths import ancestors, relative_to, resolved_relative, under, without_dot
from dllint.source import unreadable

SOURCE_SUFFIXES = SUFFIXES  # every suffix an input adapter reads (dllint.inputs.ADAPTERS)


class Discovery:
    """The files a run covers, and what it passed over (a class, not a dataclass: see :mod:`dllint.deps`)."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.missing: list[str] = []  # paths that do not exist
        self.empty_dirs: list[str] = []  # directories with no source file
        self.excluded: dict[str, Excluded] = {}  # directory given -> what was excluded in it
        self.warnings: list[str] = []  # directories not listed, ignore patterns left out

    def report(self, warn: Callable[[str], None]) -> list[Finding]:
        """Warn about what the walk passed over and empty directories; a DL000 finding for each
        path that does not exist."""
        for message in self.warnings:
            warn(message)
        for directory in self.empty_dirs:
            excluded = self.excluded.get(directory, Excluded())
            why = []
            if excluded.by_patterns:
                why.append(f"{_paths(excluded.by_patterns)} excluded by `exclude`/`extend-exclude`")
            if excluded.by_ignore_files:
                why.append(f"{_paths(excluded.by_ignore_files)} ignored by .gitignore/.ignore (--no-respect-gitignore checks them)")
            if why:
                warn(
                    f"dllint: warning: no files checked in {directory}: {'; '.join(why)}"
                    " (a file named on the command line is checked anyway)"
                )
            else:
                warn(f"dllint: warning: no Python files found in {directory}")
        return [unreadable(p, "cannot read file: no such file or directory") for p in self.missing]


def _paths(count: int) -> str:
    return f"{count} path{'s' if count != 1 else ''} in it {'are' if count != 1 else 'is'}"


def _excluded(name: str, rel: str, patterns: tuple[str, ...]) -> bool:
    plain, globs = _split_patterns(patterns)
    if plain:
        # What the fnmatch calls below mean for a pattern without wildcards, without fnmatch's cost
        # (a warm run over 4,853 files spent half its time here).
        name_c, rel_c = os.path.normcase(name), os.path.normcase(rel)
        if name_c in plain or rel_c in plain or any(rel_c.startswith(prefix) for prefix in plain.values()):
            return True
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.rstrip("/") + "/*") for p in globs)


@lru_cache(maxsize=16)
def _split_patterns(patterns: tuple[str, ...]) -> tuple[dict[str, str], tuple[str, ...]]:
    """({normcased plain pattern: normcased "pattern/" prefix}, patterns with wildcards)."""
    plain = {
        os.path.normcase(p): os.path.normcase(p.rstrip("/") + "/") for p in patterns if not any(c in p for c in "*?[")
    }
    return plain, tuple(p for p in patterns if any(c in p for c in "*?["))


class _Walk(NamedTuple):
    """What a walk below one directory given on the command line needs besides the directory."""

    dir_patterns: tuple[str, ...]  # the defaults and the user's patterns
    user_patterns: tuple[str, ...]
    respect_ignore_files: bool
    add: Callable[[str], None]
    warn: Callable[[str], None]  # a directory not listed, an ignore pattern left out


def discover(paths: list[str], settings: Settings) -> Discovery:
    result = Discovery()
    user_patterns = tuple(settings.exclude) + tuple(settings.extend_exclude)
    resolved_root = os.path.realpath(settings.project_root)
    seen: set[str] = set()

    def add(path: str) -> None:
        if path not in seen:
            seen.add(path)
            result.files.append(path)

    walk = _Walk(DEFAULT_EXCLUDE + user_patterns, user_patterns, settings.respect_gitignore, add, result.warnings.append)
    for raw in paths:
        if not os.path.lexists(raw or "."):  # "" names the current directory, as it does to pathlib
            result.missing.append(raw)
            continue
        if not os.path.isdir(raw or "."):
            # An explicitly named file is linted even if a pattern would exclude it; a FIFO, a
            # device, a symlink loop too: reading it says why it is not (dllint.files).
            add(without_dot(raw))
            continue
        before = len(result.files)
        resolved = os.path.realpath(raw or ".")
        base = relative_to(resolved, resolved_root)
        # The walk enters no symlinked directory: below ``raw`` a directory's path relative to
        # the root is ``base/sub``, built as the walk goes down. Only a ``raw`` above the root
        # (``dllint ..``) has directories inside and outside it: each is resolved on its own.
        rel_top = base if base is not None else _as_given(raw)
        inside = base is None and under(resolved_root, resolved)
        excluded = _walk(raw, rel_top, resolved_root if inside else None, resolved, walk)
        if len(result.files) == before:
            result.empty_dirs.append(raw)
            if excluded.by_patterns or excluded.by_ignore_files:
                result.excluded[raw] = excluded
    return result


class Excluded(NamedTuple):
    by_patterns: int = 0  # source files and directories the user's patterns exclude
    by_ignore_files: int = 0  # ... that .gitignore/.ignore files exclude


def _walk(top: str, rel_top: str, resolve_each: str | None, resolved_top: str, walk: _Walk) -> Excluded:
    """Add the source files below ``top`` (its files first, then each kept directory's, names
    sorted), and count what the user's patterns and ignore files exclude. ``rel_top``: ``top``
    relative to the project root (as given when outside it); ``resolve_each``: the resolved root
    when it is below ``top``, each directory's relative path then resolved on its own. A
    symlinked directory is listed, never entered; a hidden directory (``.hydra``) is skipped
    unless it is ``top``; a directory that cannot be listed is passed over with a warning.

    Measured on the benchmark corpus (808 directories): ``os.walk`` with a ``relpath`` and a
    ``Path`` per directory cost 60-100 ms of a warm run's 250; one ``scandir`` per directory, the
    relative paths built as it goes down, 22-40 ms."""
    by_patterns = by_ignore_files = 0
    ignores, in_git = _ignores_above(resolved_top, walk.warn) if walk.respect_ignore_files else ((), False)
    stack = [(top, rel_top, resolved_top, ignores, in_git)]
    while stack:
        dirpath, rel_dir, real_dir, ignores, in_git = stack.pop()
        try:
            with os.scandir(dirpath) as entries:
                listed = [(entry.name, *_kind(entry)) for entry in entries]
        except OSError as exc:  # its files are not checked: said, never silently
            walk.warn(f"dllint: warning: cannot list {without_dot(dirpath)}: {exc.strerror or exc}: its files are not checked")
            continue
        if walk.respect_ignore_files:
            names = {name for name, _, _ in listed}
            in_git = in_git or ".git" in names
            ignores = ignores + in_directory(real_dir, names, in_git, walk.warn)
        dirs = sorted(name for name, is_dir, _ in listed if is_dir)
        links = {name for name, is_dir, is_link in listed if is_dir and is_link}
        kept = []
        for d in dirs:
            rel = f"{rel_dir}/{d}".lstrip("./")
            if d.startswith(".") or _excluded(d, rel, walk.dir_patterns) or _is_virtualenv(dirpath, d):
                # Only the user's patterns count as "excluded": .git, __pycache__ and the like go unsaid.
                by_patterns += bool(walk.user_patterns) and _excluded(d, rel, walk.user_patterns)
            elif ignores and ignored(ignores, _prefix(real_dir) + d, True):
                by_ignore_files += 1
            else:
                kept.append(d)
        shown_dir, real_prefix = _prefix(without_dot(dirpath)), _prefix(real_dir)  # joined by hand: 20,000 joins cost 30 ms
        for filename in sorted(name for name, is_dir, _ in listed if not is_dir):
            if filename.endswith(SOURCE_SUFFIXES):
                if walk.user_patterns and _excluded(filename, f"{rel_dir}/{filename}".lstrip("./"), walk.user_patterns):
                    by_patterns += 1
                elif ignores and ignored(ignores, real_prefix + filename, False):
                    by_ignore_files += 1
                else:
                    walk.add(shown_dir + filename)
        for d in reversed(kept):  # popped in sorted order: depth first, as os.walk goes
            if d not in links:
                child = os.path.join(dirpath, d)
                if resolve_each is not None:
                    rel = _relative(child, resolve_each)
                else:
                    rel = d if rel_dir == "." else f"{rel_dir}{'' if rel_dir.endswith('/') else '/'}{d}"
                stack.append((child, rel, os.path.join(real_dir, d), ignores, in_git))
    return Excluded(by_patterns, by_ignore_files)


def _prefix(directory: str) -> str:
    """What a name is joined to below ``directory``: ``os.path.join`` without its cost ("." is none)."""
    if directory in (".", ""):
        return ""
    return directory if directory.endswith(os.sep) else directory + os.sep


def _ignores_above(resolved_top: str, warn: Callable[[str], None]) -> tuple[Ignores, bool]:
    """The ignore files above a directory given on the command line, and whether it is in a git
    working tree. A directory they ignore (``dllint outputs/``) was named on purpose: it is
    walked with the ignore files inside it only, as a file named on the command line is checked."""
    chain, in_git = above(resolved_top, warn)
    if chain and ignored(chain, resolved_top, True):
        return (), in_git
    return chain, in_git



def _kind(entry: os.DirEntry) -> tuple[bool, bool]:
    """(a directory, a symlink): what ``os.walk`` asks of an entry, an error meaning no."""
    try:
        is_dir = entry.is_dir()
    except OSError:
        return False, False
    try:
        return is_dir, is_dir and entry.is_symlink()
    except OSError:
        return is_dir, False


def _relative(dirpath: str, resolved_root: str) -> str:
    """``dirpath`` relative to the root, in ``/`` form; as given (normalized) when outside it."""
    relative = resolved_relative(dirpath, resolved_root)
    return relative if relative is not None else _as_given(dirpath)


def _as_given(path: str) -> str:
    from pathlib import PurePath  # a path outside the project: rare enough to import it for

    return PurePath(path).as_posix()


def _is_virtualenv(parent: str, name: str) -> bool:
    return os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))


# -- the project root (dllint.project): found without importing the index ------------------
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def find_project_root(paths: Iterable[str]) -> str | None:
    """The project the paths belong to (resolved): the nearest directory above the first path
    holding pyproject.toml, setup.cfg, setup.py or .git; with no marker above it, the directory of
    the paths given (their common directory), as Python itself puts a script's directory first on
    ``sys.path``. None only when no path is given."""
    given = [p for p in paths]
    if not given:
        return None
    for directory in ancestors(given[0]):
        if any(os.path.exists(os.path.join(directory, marker)) for marker in ROOT_MARKERS):
            return directory
    directories = [next(ancestors(p)) for p in given]
    try:
        return os.path.commonpath(directories)
    except ValueError:  # paths on different drives (Windows): the first one's
        return directories[0]
