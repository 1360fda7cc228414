"""Paths as strings, with ``os.path``: what config, discovery and per-file-ignores ask of
pathlib (``resolve``, ``relative_to``, ``parents``), without importing it (with ``urllib.parse``
and ``ipaddress`` it cost a one-file run 16 M instructions, 3-4 ms)."""

from __future__ import annotations

import os
from typing import Iterator


def ancestors(path: str) -> Iterator[str]:
    """``path`` resolved if it is a directory, else its directory; then each directory above it."""
    resolved = os.path.realpath(path or ".")  # "" names the current directory, as it does to pathlib
    directory = resolved if os.path.isdir(resolved) else os.path.dirname(resolved)
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent


def under(path: str, directory: str) -> bool:
    """Whether resolved ``path`` is ``directory`` or inside it (what ``Path.relative_to`` allows)."""
    return path == directory or path.startswith(directory if directory.endswith(os.sep) else directory + os.sep)


def relative_to(resolved: str, resolved_root: str) -> str | None:
    """Resolved ``resolved`` relative to ``resolved_root`` in ``/`` form; None when outside it."""
    if not under(resolved, resolved_root):
        return None
    relative = os.path.relpath(resolved, resolved_root)
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def resolved_relative(path: str, resolved_root: str) -> str | None:
    """``Path(path).resolve().relative_to(resolved_root).as_posix()``; None when outside it."""
    try:
        resolved = os.path.realpath(path or ".")
    except (OSError, ValueError):
        return None
    return relative_to(resolved, resolved_root)


def without_dot(path: str) -> str:
    """``./conf/a.yaml`` as ruff prints it: ``conf/a.yaml``."""
    while path.startswith("./"):
        path = path[2:]
    return path
