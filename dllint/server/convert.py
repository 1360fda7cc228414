"""From dllint's records to the Language Server Protocol's, and back: pure functions, no I/O.

Findings count lines from 1 and columns in characters from 1; LSP counts both from 0 and
columns in UTF-16 code units unless the client agreed on another encoding.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from lsprotocol import types
from pygls.uris import to_fs_path

from dllint.findings import Finding
from dllint.noqa import INLINE
from dllint.severity import severity as family_severity

DOCS_URL = "https://github.com/dllint/dllint/blob/main/docs/rules.md#{anchor}"
SOURCE = "dllint"
SURROGATE = re.compile("[\ud800-\udfff]")


def path_of(uri: str) -> str | None:
    """The file a document's URI names; None for one that names no file this machine can have
    (not ``file:``, or a NUL byte from ``%00``, which every path call would reject)."""
    path = to_fs_path(uri)
    return None if path is None or "\0" in path else path


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate (JSON's ``"\\ud800"`` alone, which no encoding can write)
    replaced by U+FFFD: one character for one, so that columns stay where the editor has them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE.sub("\ufffd", text)
    return text


def severity(code: str) -> types.DiagnosticSeverity:
    """The family's severity (:mod:`dllint.severity`, shared with every output) as LSP's."""
    if family_severity(code) == "error":
        return types.DiagnosticSeverity.Error
    return types.DiagnosticSeverity.Warning


def units(line: str, characters: int, encoding: str) -> int:
    """How many code units of ``encoding`` the first ``characters`` characters of ``line`` take."""
    if encoding == types.PositionEncodingKind.Utf32:
        return characters
    head = line[:characters]
    if encoding == types.PositionEncodingKind.Utf8:
        return len(head.encode("utf-8", "surrogatepass"))
    return len(head.encode("utf-16-le", "surrogatepass")) // 2



def position(lines: Sequence[str], line: int, column: int, encoding: str) -> types.Position:
    """An LSP position for a 1-based line and 1-based character column of ``lines``."""
    row = max(line - 1, 0)
    text = lines[row] if row < len(lines) else ""
    return types.Position(line=row, character=units(text, max(column - 1, 0), encoding))


def diagnostic(finding: Finding, lines: Sequence[str], encoding: str) -> types.Diagnostic:
    start = position(lines, finding.line, finding.column, encoding)
    end = position(lines, max(finding.end_line, finding.line), finding.end_column, encoding)
    if (end.line, end.character) <= (start.line, start.character):
        end = types.Position(line=start.line, character=start.character + 1)
    fix = None if finding.fix is None else finding.fix.applicability
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=finding.message,
        severity=severity(finding.code),
        code=finding.code,
        code_description=types.CodeDescription(href=DOCS_URL.format(anchor=finding.code.lower())),
        source=SOURCE,
        data={"code": finding.code, "fix": fix, "line": finding.line, "column": finding.column},
    )


def replacement(old: str, new: str, encoding: str) -> types.TextEdit | None:
    """One edit that turns ``old`` into ``new``: the lines between their common head and tail."""
    if old == new:
        return None
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = types.Position(line=head, character=0)
    end_row = len(a) - tail
    if end_row < len(a) or not a or a[-1].endswith(("\n", "\r")):
        end = types.Position(line=end_row, character=0)
    else:  # the last line has no line break: end at its end
        end = types.Position(line=end_row - 1, character=units(a[-1], len(a[-1]), encoding))
        if head == end_row:
            start = end
    return types.TextEdit(range=types.Range(start=start, end=end), new_text="".join(b[head : len(b) - tail]))


def noqa_edit(lines: Sequence[str], line: int, code: str, encoding: str) -> types.TextEdit | None:
    """The edit that silences ``code`` on 1-based ``line``: ``# noqa: CODE``, or ``CODE`` added to
    the line's codes. None when the line already silences everything."""
    text = lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""
    match = INLINE.search(text)
    if match is not None and not match.group("codes"):
        return None
    if match is not None:
        at, insert = match.end("codes"), f", {code}"
    else:
        at, insert = len(text.rstrip()), f"  # noqa: {code}"  # trailing blanks are replaced
    where = types.Position(line=line - 1, character=units(text, at, encoding))
    end = types.Position(line=line - 1, character=units(text, len(text), encoding)) if match is None else where
    return types.TextEdit(range=types.Range(start=where, end=end), new_text=insert)


# -- notebooks -------------------------------------------------------------------------
def notebook_bytes(cells: Sequence[tuple[str, str]], metadata: dict[str, Any] | None = None) -> bytes:
    """An nbformat 4 document of ``(cell_type, source)`` pairs, for the linter's notebook adapter."""
    document = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for kind, source in cells
        ],
        "metadata": metadata or {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document).encode("utf-8")
