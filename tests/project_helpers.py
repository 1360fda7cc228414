"""Helpers for tests that build a small project on disk and lint files of it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from dllint.config import Settings
from dllint.engine import Linter


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write each ``name: text`` under ``root`` (text dedented), creating folders."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def lint_in_project(index, path: Path, settings: Settings):
    """Lint one file of the project ``index`` describes (``FileResult``, with its ``deps``)."""
    from dllint.per_file import lint as lint_bytes

    return lint_bytes(Linter(settings), str(path), path.read_bytes(), index.view(str(path)))
