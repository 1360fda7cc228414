"""``--diff``: the unified diff of each changed file; a notebook's per changed cell, of its
source (as ruff shows it), not of its JSON."""

from __future__ import annotations

import difflib
from typing import Iterator

from dllint.inputs.notebook import cell_sources


def file_diff(path: str, before: str, after: str) -> Iterator[str]:
    """The diff lines of one file (git-style ``a/``/``b/`` prefixes for a relative path)."""
    if path.endswith(".ipynb"):
        cells = _notebook_diff(path, before, after)
        if cells is not None:
            yield from cells
            return
    yield from _diff(before, after, path, "")


def _diff(before: str, after: str, path: str, suffix: str) -> Iterator[str]:
    absolute = path.startswith("/")
    for line in difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path if absolute else 'a/' + path}{suffix}",
        tofile=f"{path if absolute else 'b/' + path}{suffix}",
    ):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def _notebook_diff(path: str, before: str, after: str) -> list[str] | None:
    """Per cell, numbered as the notebook shows them (markdown cells counted); None when the two
    texts are not notebooks with the same cells (then the JSON is diffed)."""
    old, new = cell_sources(before), cell_sources(after)
    if old is None or new is None or len(old) != len(new):
        return None
    lines: list[str] = []
    for number, (was, now) in enumerate(zip(old, new), start=1):
        if was != now:
            lines += _diff(was if was.endswith("\n") else was + "\n", now if now.endswith("\n") else now + "\n", path, f":cell {number}")
    return lines
