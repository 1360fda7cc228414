"""What the project's ignore files say: ``.gitignore`` (below a git working tree's root, with
``.git/info/exclude`` and git's global excludes file), and ``.ignore`` files anywhere, as ruff
and ripgrep read them (the ``ignore`` crate's standard filters).

Patterns are git's (``pathspec``'s ``GitIgnoreSpec``: negation, ``dir/``, anchored ``/x``,
``**``); each file's patterns are relative to its directory; a deeper file wins over a
shallower one, ``.ignore`` over ``.gitignore`` in the same directory, and within one file the
last matching pattern wins. A directory that is ignored is not entered, so (as in git) nothing
below it can be re-included.

A pattern with more than ``MAX_STARS`` ``*`` wildcards (``**`` not counted) is left out, with a
warning: its regex backtracks for each ``*`` (``*a*a*a...*c``, 20 stars, against a long name
runs for hours; git's own wildmatch hangs on it too), and no real ignore file needs so many.
"""

from __future__ import annotations

import os
import re
from typing import Callable, NamedTuple

from dllint.files import Unreadable, read_bytes
from dllint.paths import ancestors
from dllint.patterns import LazyPattern


class IgnoreFile(NamedTuple):
    """One ignore file's patterns, as pathspec compiles them (git's wildmatch to regexes)."""

    prefix: str  # the resolved directory its patterns are relative to, with a trailing separator
    any_match: re.Pattern[str] | None  # without negations: one alternation of every pattern
    ordered: tuple[tuple[re.Pattern[str], bool], ...]  # with negations: (pattern, ignores), last first

    def decides(self, relative: str) -> bool | None:
        """Whether ``relative`` (``/``-separated, a directory ending in ``/``) is ignored by
        this file; None when no pattern matches it."""
        if self.any_match is not None:
            return True if self.any_match.match(relative) else None
        for pattern, include in self.ordered:
            if pattern.match(relative):
                return include
        return None


Ignores = tuple[IgnoreFile, ...]  # lowest precedence first
MAX_GITDIR_FILE = 64 * 1024  # a `.git` file holds one line, "gitdir: PATH"
MAX_STARS = 6  # the matching time of a pattern grows as (name length) ** (its stars)
Warn = Callable[[str], None]


def _quiet(message: str) -> None:
    pass
_NAMED_GROUP = LazyPattern(r"\(\?P<\w+>")


def ignored(ignores: Ignores, path: str, is_dir: bool) -> bool:
    """Whether resolved ``path`` is ignored: the deepest file with a matching pattern decides.

    pathspec's own ``check_file`` (normalizing each path, then trying each pattern) made a
    discovery of 20,000 files 2-3x slower; one alternation per file without negations, tried
    on the path relative to the file's directory, keeps it at about 1.3x."""
    for ignore in reversed(ignores):
        if not path.startswith(ignore.prefix):
            continue
        relative = path[len(ignore.prefix):]
        if os.sep != "/":
            relative = relative.replace(os.sep, "/")
        decision = ignore.decides(relative + "/" if is_dir else relative)
        if decision is not None:
            return decision
    return False


def in_directory(directory: str, names: set[str] | frozenset[str], in_git: bool, warn: Warn = _quiet) -> Ignores:
    """The ignore files of one directory (resolved), given the names it holds."""
    found = []
    for name in (".gitignore", ".ignore") if in_git else (".ignore",):
        if name in names:
            ignore = _read(os.path.join(directory, name), directory, warn)
            if ignore is not None:
                found.append(ignore)
    return tuple(found)


def git_root(directory: str) -> str | None:
    """The working tree's root at or above resolved ``directory`` (where ``.git`` is), or None."""
    for candidate in ancestors(directory):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None


def above(top: str, warn: Warn = _quiet) -> tuple[Ignores, bool]:
    """(the ignore files that apply to resolved directory ``top`` from above it, whether ``top``
    is in a git working tree): global excludes, ``info/exclude``, then each directory's files
    from the working tree's root (or the filesystem's, for ``.ignore``) down to ``top``'s parent."""
    root = git_root(top)
    chain: list[IgnoreFile] = []
    if root is not None:
        for path in (_global_excludes_file(), _info_exclude(root)):
            ignore = _read(path, root, warn) if path else None
            if ignore is not None:
                chain.append(ignore)
    parents = list(ancestors(top))[1:]
    for directory in reversed(parents):
        in_git = root is not None and (directory == root or directory.startswith(root + os.sep))
        names = {n for n in (".gitignore", ".ignore") if os.path.isfile(os.path.join(directory, n))}
        chain.extend(in_directory(directory, names, in_git, warn))
    return tuple(chain), root is not None


def _read(path: str, directory: str, warn: Warn = _quiet) -> IgnoreFile | None:
    """The ignore file at ``path`` whose patterns are relative to ``directory``; None when it
    cannot be read or holds no pattern (``info/exclude`` as ``git init`` writes it)."""
    lines = _lines(path)
    if lines is None:
        return None
    for number, line in enumerate(lines, start=1):
        if line.replace("**", "").count("*") > MAX_STARS:
            warn(f"dllint: warning: {path}:{number}: pattern left out: more than {MAX_STARS} `*` wildcards")
            lines[number - 1] = ""
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    import pathspec  # only when a project has ignore files

    patterns = [
        (p.regex, bool(p.include))
        for p in pathspec.GitIgnoreSpec.from_lines(lines).patterns
        if p.include is not None and p.regex is not None  # (a pattern that includes or excludes has a regex)
    ]
    if not patterns:
        return None
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    if all(include for _, include in patterns):
        # pathspec names a group in each pattern (``ps_d``): unnamed, they can share one alternation
        alternation = "|".join(f"(?:{_NAMED_GROUP.sub('(?:', regex.pattern)})" for regex, _ in patterns)
        return IgnoreFile(prefix, re.compile(alternation), ())
    return IgnoreFile(prefix, None, tuple(reversed(patterns)))


def _lines(path: str) -> list[str] | None:
    """A regular file's lines (undecodable bytes replaced); None when it cannot be read (a
    FIFO, which would block, or a file over the size limit: dllint.files)."""
    try:
        return read_bytes(path).decode("utf-8", "replace").splitlines()
    except Unreadable:
        return None


def _info_exclude(root: str) -> str | None:
    """``.git/info/exclude``; for a linked worktree or a submodule (``.git`` is a file naming
    the git directory) that directory's ``info/exclude``."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "info", "exclude")
    try:  # bounded, regular files only: a `.git` that is a FIFO or a link to /dev/zero is no git directory
        first = read_bytes(dot_git, MAX_GITDIR_FILE).decode("utf-8", "replace").partition("\n")[0].strip()
    except Unreadable:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = first[len("gitdir:"):].strip()
    return os.path.join(root, git_dir, "info", "exclude")


def _global_excludes_file() -> str | None:
    """git's ``core.excludesFile`` (from ``~/.gitconfig`` or ``$XDG_CONFIG_HOME/git/config``),
    else its default ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    for config in (os.path.join(os.path.expanduser("~"), ".gitconfig"), os.path.join(xdg, "git", "config")):
        value = _core_excludes_file(config)
        if value:
            return os.path.expanduser(value)
    return os.path.join(xdg, "git", "ignore")


def _core_excludes_file(config: str) -> str | None:
    """``excludesFile`` of the ``[core]`` section of a git config file (git's own syntax, read
    simply: a key per line; the last one wins, as in git)."""
    lines = _lines(config)
    if lines is None:
        return None
    section, value = "", None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip().lower()
        elif section == "core" and "=" in stripped:
            key, _, raw = stripped.partition("=")
            if key.strip().lower() == "excludesfile":
                value = raw.strip().strip('"')
    return value
