"""Fixes on config files as text edits at the reported spans.

A YAML fix never re-serialises the file: it replaces one scalar or inserts one line with the
indentation of its neighbour, so comments, key order, quoting and indentation stay as written.
The DataLoader rules set values (``persistent_workers: false``, ``prefetch_factor: null``)
rather than delete keys: the user's code reads the keys (``cfg.loader.persistent_workers``),
and OmegaConf's struct mode fails on a key that is gone. A scalar written on one line is
replaced wherever it is (a flow mapping ``{a: 1, b: 2}`` included); a line is inserted only
after an entry alone on its line in a block mapping; a multi-line value gets no fix rather
than a guess. The edit is the finding's :class:`~dllint.findings.ReplaceText`.

Python dict configs are Python files: their fixes go through the LibCST fixer like any
call's arguments (``dict(...)`` and ``L(...)(...)`` are calls).
"""

from __future__ import annotations

import bisect
from functools import lru_cache

from dllint.configs.document import ConfigDocument, Entry, Mapping, Scalar
from dllint.findings import ReplaceText


@lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    """The text's lines, split once per text (a str caches its hash): one split per finding made
    fixing 20,000 loader blocks in one file quadratic. Callers only read the list."""
    return text.splitlines()


def overlaps(one: ReplaceText, other: ReplaceText) -> bool:
    """Two edits touch the same text (or insert at the same place)."""
    return (one.start < other.end and other.start < one.end) or one.start == other.start


def add_if_free(chosen: list[ReplaceText], edit: ReplaceText) -> bool:
    """Add ``edit`` to ``chosen`` (kept sorted by start, none overlapping) unless it overlaps one
    of them: only the neighbours at its place can (each against all made 20,000 edits quadratic)."""
    index = bisect.bisect_left(chosen, edit.start, key=lambda e: e.start)
    if any(overlaps(edit, other) for other in chosen[max(index - 1, 0) : index + 1]):
        return False
    chosen.insert(index, edit)
    return True


def _alone_on_line(document: ConfigDocument, mapping: Mapping, entry: Entry) -> bool:
    """``key: scalar`` (and perhaps a comment) is the whole line, in a block mapping."""
    if mapping.flow or not isinstance(entry.value, Scalar):
        return False
    if entry.value.span.end_line != entry.key_span.line:
        return False
    lines = _lines(document.text)
    if not 0 < entry.key_span.line <= len(lines):
        return False
    line = lines[entry.key_span.line - 1]
    return line[: entry.key_span.column - 1].strip() == ""


def replace_value(document: ConfigDocument, mapping: Mapping, entry: Entry, text: str) -> ReplaceText | None:
    """Replace a scalar written on its key's line, keeping its key, comment and indentation."""
    if document.format != "yaml" or entry.path != document.path or not isinstance(entry.value, Scalar):
        return None
    span = entry.value.span
    if span.line != span.end_line:
        return None
    return ReplaceText((span.line, span.column), (span.end_line, span.end_column), text)


def insert_after(document: ConfigDocument, mapping: Mapping, entry: Entry, key: str, value: str) -> ReplaceText | None:
    """A new ``key: value`` line right after ``entry``'s line, indented like it."""
    if document.format != "yaml" or entry.path != document.path or not _alone_on_line(document, mapping, entry):
        return None
    lines = _lines(document.text)
    line = entry.key_span.line
    indent = lines[line - 1][: entry.key_span.column - 1]
    if line < len(lines) or document.text.endswith("\n"):
        return ReplaceText((line + 1, 1), (line + 1, 1), f"{indent}{key}: {value}\n")
    end = len(lines[line - 1]) + 1
    return ReplaceText((line, end), (line, end), f"\n{indent}{key}: {value}")


def apply_text_edits(text: str, edits: list[ReplaceText]) -> str:
    """Apply non-overlapping edits (the caller checked) from the last to the first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, column = position
        if line > len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: offset(edit.start)] + edit.text + text[offset(edit.end) :]
    return text

