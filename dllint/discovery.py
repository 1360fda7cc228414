"""Which files a run covers: the paths given, minus excluded directories and patterns."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from dllint.config import DEFAULT_EXCLUDE, Settings

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # paths that do not exist
    empty_dirs: list[str] = field(default_factory=list)  # directories with no source file


def _excluded(name: str, rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.rstrip("/") + "/*") for p in patterns)


def discover(paths: list[str], settings: Settings) -> Discovery:
    result = Discovery()
    user_patterns = tuple(settings.exclude) + tuple(settings.extend_exclude)
    dir_patterns = DEFAULT_EXCLUDE + user_patterns
    root = Path(settings.project_root)
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
        for dirpath, dirnames, filenames in os.walk(raw):
            rel_dir = _relative(dirpath, root)
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


def _relative(dirpath: str, root: Path) -> str:
    try:
        return Path(dirpath).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return Path(dirpath).as_posix()


def _is_virtualenv(parent: str, name: str) -> bool:
    return os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))
