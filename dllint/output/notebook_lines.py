"""Where a notebook finding sits in the ``.ipynb`` file's own text, for outputs that point at
lines of the file (GitHub annotations, SARIF): the JSON line of the cell's source string that
holds the finding's line, as ruff reports notebook findings there. Cells are numbered as the
notebook shows them (markdown cells counted), so cell N is ``cells[N - 1]``.
"""

from __future__ import annotations

import json
from typing import Any

from dllint.findings import Finding

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class NotebookLines:
    """Finds each cell source line's place in its notebook's JSON text, each file read once."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[str, list[list[int]]] | None] = {}

    def span(self, finding: Finding) -> tuple[tuple[int, int], tuple[int, int]]:
        """The finding's (start, end) as (line, column) pairs in its file's text: a notebook
        finding's in the JSON text, any other's as reported."""
        start, end = (finding.line, finding.column), (finding.end_line, finding.end_column)
        if finding.cell is not None:
            start = self.position(finding.path, finding.cell, finding.line, finding.column) or start
            end = self.position(finding.path, finding.cell, finding.end_line, finding.end_column) or start
        return start, end

    def position(self, path: str, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """(line, column) in the file's text, 1-based, of ``column`` of the cell's ``line``;
        None when the file is not a notebook as it was linted."""
        if path not in self._files:
            self._files[path] = _index(path)
        indexed = self._files[path]
        if indexed is None or not 0 < cell <= len(indexed[1]):
            return None
        text, starts = indexed[0], indexed[1][cell - 1]
        if not 0 < line <= len(starts):
            return None
        offset = starts[line - 1]  # the opening quote of the string that holds the line
        row = text.count("\n", 0, offset) + 1
        column_start = offset - (text.rfind("\n", 0, offset) + 1)
        # past the quote, to the finding's column (an escape earlier in the line, \" or \t, shifts it)
        return row, column_start + 1 + column


def _index(path: str) -> tuple[str, list[list[int]]] | None:
    from dllint.output.text import _read_text

    text = _read_text(path)
    if text is None:
        return None
    try:
        return text, _source_lines(text)  # read without its BOM
    except (ValueError, IndexError, KeyError):
        return None


def _source_lines(text: str) -> list[list[int]]:
    """For each cell, the offset in ``text`` of the string holding each of its source lines."""
    cells = _member(text, _skip(text, 0), "cells")
    result: list[list[int]] = []
    for start in _elements(text, cells):
        source = _member(text, start, "source")
        if text[source] == "[":
            strings = list(_elements(text, source))
        else:
            strings = [source]
        lines: list[int] = []
        for string in strings:
            value, _ = _DECODER.raw_decode(text, string)
            if not isinstance(value, str):
                raise ValueError("a source that is not text")
            lines += [string] * max(1, value.count("\n") + (0 if value.endswith("\n") else 1))
        result.append(lines)
    return result


def _skip(text: str, i: int) -> int:
    while text[i] in _SPACE:
        i += 1
    return i


def _member(text: str, start: int, key: str) -> int:
    """The offset of ``key``'s value in the object at ``start``."""
    if text[start] != "{":
        raise ValueError("not an object")
    i = _skip(text, start + 1)
    while text[i] != "}":
        name, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] != ":":
            raise ValueError("expected ':'")
        i = _skip(text, i + 1)
        if name == key:
            return i
        _, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    raise KeyError(key)


def _elements(text: str, start: int) -> list[int]:
    """The offsets of the elements of the array at ``start``."""
    if text[start] != "[":
        raise ValueError("not an array")
    offsets = []
    i = _skip(text, start + 1)
    while text[i] != "]":
        offsets.append(i)
        value: Any
        value, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return offsets
