"""The edits of a finding's fix, as ruff's JSON gives them: ``{"content", "location",
"end_location"}`` with 1-based ``row``/``column`` positions, the end exclusive.

A rule's fix is an intent (``SetArgument``, a hoist), rendered by LibCST over the whole
file; its edits are found by fixing the file with that one fix and comparing the texts, so
they are exactly what ``--fix`` would write for it alone. A notebook finding's edits are in
its cell's source (its positions are the cell's, as ``cell`` says), and a fix that cannot
be made on the cell alone (a hoist that needs other cells, a cell with IPython syntax) lists
none. Computed only for ``--format json``: about 6 ms a fixable finding.
"""

from __future__ import annotations

import difflib
import functools
from typing import TYPE_CHECKING, Any

from dllint.findings import Finding, NotKept, ReplaceText
from dllint.rules import has_fix

if TYPE_CHECKING:
    from dllint.engine import Linter


def fix_edits(finding: Finding, sources: dict[tuple[str, int | None], str | None]) -> list[dict[str, Any]]:
    """The edits of ``finding``'s fix; ``sources`` caches each file's (or cell's) text."""
    if not has_fix(finding) or finding.fix is None or isinstance(finding.fix.edit, NotKept):
        return []
    edit = finding.fix.edit
    if isinstance(edit, ReplaceText):
        return [_edit(edit.start, edit.end, edit.text)]
    text = _source(finding, sources)
    if text is None:
        return []
    fixed = _fixed(finding, text)
    return [] if fixed is None else _differences(text, fixed)


def _source(finding: Finding, sources: dict[tuple[str, int | None], str | None]) -> str | None:
    from dllint.output.text import _read_text

    key = (finding.path, finding.cell)
    if key not in sources:
        text = _read_text(finding.path)
        if text is not None and finding.cell is not None:
            from dllint.inputs.notebook import cell_sources

            cells = cell_sources(text)
            text = cells[finding.cell - 1] if cells is not None and 0 < finding.cell <= len(cells) else None
        sources[key] = text
    return sources[key]


def _fixed(finding: Finding, text: str) -> str | None:
    from dllint.fixer import fix_text

    result = fix_text(finding.path, text, _linter(finding.code), unsafe=True, findings=[finding], max_passes=1,
                      relint=False)
    return result.text if result.fixed else None


@functools.cache
def _linter(code: str) -> Linter:
    """The one-rule linter whose rule makes a fix of ``code`` (the fixed text is not linted again: the edits
    need the text only): built once, not once per finding (its prefilter's patterns, its rule list)."""
    from dllint.config import Settings
    from dllint.engine import Linter

    return Linter(Settings(select=(code,)))


def _differences(before: str, after: str) -> list[dict[str, Any]]:
    """The replaced spans, line by line, then trimmed to the characters that differ."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        was, now = "".join(old[i1:i2]), "".join(new[j1:j2])
        head = len(_common_prefix(was, now))
        tail = len(_common_prefix(was[head:][::-1], now[head:][::-1]))
        start = _position(old, i1, was[:head])
        end = _position(old, i1, was[: len(was) - tail])
        edits.append(_edit(start, end, now[head : len(now) - tail]))
    return edits


def _common_prefix(a: str, b: str) -> str:
    import os

    return os.path.commonprefix([a, b])


def _position(lines: list[str], first: int, text: str) -> tuple[int, int]:
    """(row, column), 1-based, of the end of ``text`` read from line ``first`` (0-based) on."""
    row = first + 1 + text.count("\n")
    column = len(text) - (text.rfind("\n") + 1) + 1
    return row, column


def _edit(start: tuple[int, int], end: tuple[int, int], content: str) -> dict[str, Any]:
    return {
        "content": content,
        "location": {"row": start[0], "column": start[1]},
        "end_location": {"row": end[0], "column": end[1]},
    }
