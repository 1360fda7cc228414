"""Which files a run covers: the paths given, minus excluded directories and patterns."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from dllint.config import DEFAULT_EXCLUDE, Settings
from dllint.findings import Finding
from dllint.source import unreadable

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # paths that do not exist
    empty_dirs: list[str] = field(default_factory=list)  # directories with no source file

    def report(self, warn: Callable[[str], None]) -> list[Finding]:
        """Warn about empty directories; a DL000 finding for each path that does not exist."""
        for directory in self.empty_dirs:
            warn(f"dllint: warning: no Python files found in {directory}")
        return [unreadable(p, "cannot read file: no such file or directory") for p in self.missing]


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


def discover(paths: list[str], settings: Settings) -> Discovery:
    result = Discovery()
    user_patterns = tuple(settings.exclude) + tuple(settings.extend_exclude)
    dir_patterns = DEFAULT_EXCLUDE + user_patterns
    root = Path(settings.project_root)
    resolved_root = root.resolve()
    seen: set[str] = set()

    def add(path: str) -> None:
        if path not in seen:
            seen.add(path)
            result.files.append(path)

    for raw in paths:
        path = Path(raw)
        if not path.exists():
            result.missing.append(raw)
            continue
        if path.is_file():
            add(raw)  # an explicitly named file is linted even if a pattern would exclude it
            continue
        before = len(result.files)
        base = _resolved_relative(raw, resolved_root)
        for dirpath, dirnames, filenames in os.walk(raw):
            # os.walk never enters a symlinked directory, so below a resolved ``raw`` the relative
            # path is ``base/sub``: one resolve() per path given instead of one per directory.
            if base is not None:
                rel_dir = _join_relative(base, os.path.relpath(dirpath, raw))
            else:
                rel_dir = _relative(dirpath, root, resolved_root)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not _excluded(d, f"{rel_dir}/{d}".lstrip("./"), dir_patterns) and not _is_virtualenv(dirpath, d)
            )
            for filename in sorted(filenames):
                if filename.endswith(SOURCE_SUFFIXES) and not _excluded(
                    filename, f"{rel_dir}/{filename}".lstrip("./"), user_patterns
                ):
                    add(os.path.join(dirpath, filename))
        if len(result.files) == before:
            result.empty_dirs.append(raw)
    return result


def _relative(dirpath: str, root: Path, resolved_root: Path | None = None) -> str:
    try:
        return Path(dirpath).resolve().relative_to(resolved_root or root.resolve()).as_posix()
    except (ValueError, OSError):
        return Path(dirpath).as_posix()


def _resolved_relative(path: str, resolved_root: Path) -> str | None:
    try:
        return Path(path).resolve().relative_to(resolved_root).as_posix()
    except (ValueError, OSError):
        return None


def _join_relative(base: str, sub: str) -> str:
    if sub == ".":
        return base
    sub = Path(sub).as_posix()
    return sub if base == "." else f"{base}/{sub}"


def _is_virtualenv(parent: str, name: str) -> bool:
    return os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))
