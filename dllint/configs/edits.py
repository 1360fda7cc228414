"""Fixes on config files as text edits at the reported spans.

A YAML fix never re-serialises the file: it deletes the line of one ``key: value`` entry,
replaces one scalar, or inserts one line with the indentation of its neighbour, so comments,
key order, quoting and indentation stay as written. An entry that is not alone on its line
(a flow mapping ``{a: 1, b: 2}``, a sequence item ``- num_workers: 0``, a multi-line value)
gets no fix rather than a guess.

Python dict configs are Python files: their fixes go through the LibCST fixer like any
call's arguments (``dict(...)`` and ``L(...)(...)`` are calls).
"""

from __future__ import annotations

from dataclasses import dataclass

from dllint.configs.document import ConfigDocument, Entry, Mapping, Scalar


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (line, column) up to (end_line, end_column), 1-based, end
    exclusive, with ``text``."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def as_data(self) -> tuple[int, int, int, int, str]:
        return (self.line, self.column, self.end_line, self.end_column, self.text)

    def overlaps(self, other: TextEdit) -> bool:
        return (self.line, self.column) < (other.end_line, other.end_column) and (other.line, other.column) < (
            self.end_line,
            self.end_column,
        ) or (self.line, self.column) == (other.line, other.column)


def _alone_on_line(document: ConfigDocument, mapping: Mapping, entry: Entry) -> bool:
    """``key: scalar`` (and perhaps a comment) is the whole line, in a block mapping."""
    if mapping.flow or not isinstance(entry.value, Scalar):
        return False
    if entry.value.span.end_line != entry.key_span.line:
        return False
    lines = document.text.splitlines()
    if not 0 < entry.key_span.line <= len(lines):
        return False
    line = lines[entry.key_span.line - 1]
    return line[: entry.key_span.column - 1].strip() == ""


def remove_entry(document: ConfigDocument, mapping: Mapping, entry: Entry) -> TextEdit | None:
    """Delete the entry's line (its trailing comment goes with it)."""
    if document.format != "yaml" or entry.path != document.path or len(mapping.entries) < 2:
        return None
    if not _alone_on_line(document, mapping, entry):
        return None
    line = entry.key_span.line
    if line < document.text.count("\n") + 1 or document.text.endswith("\n"):
        return TextEdit(line, 1, line + 1, 1, "")
    # The last line, without a newline: take the previous line's newline instead.
    previous = document.text.splitlines()[line - 2] if line > 1 else ""
    return TextEdit(line - 1, len(previous) + 1, line, len(document.text.splitlines()[line - 1]) + 1, "")


def replace_value(document: ConfigDocument, mapping: Mapping, entry: Entry, text: str) -> TextEdit | None:
    """Replace a scalar written on its key's line, keeping its key, comment and indentation."""
    if document.format != "yaml" or entry.path != document.path or not isinstance(entry.value, Scalar):
        return None
    span = entry.value.span
    if span.line != span.end_line:
        return None
    return TextEdit(span.line, span.column, span.end_line, span.end_column, text)


def insert_after(document: ConfigDocument, mapping: Mapping, entry: Entry, key: str, value: str) -> TextEdit | None:
    """A new ``key: value`` line right after ``entry``'s line, indented like it."""
    if document.format != "yaml" or entry.path != document.path or not _alone_on_line(document, mapping, entry):
        return None
    lines = document.text.splitlines()
    line = entry.key_span.line
    indent = lines[line - 1][: entry.key_span.column - 1]
    if line < len(lines) or document.text.endswith("\n"):
        return TextEdit(line + 1, 1, line + 1, 1, f"{indent}{key}: {value}\n")
    end = len(lines[line - 1]) + 1
    return TextEdit(line, end, line, end, f"\n{indent}{key}: {value}")


def apply_text_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (the caller checked) from the last to the first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line > len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
        text = text[:start] + edit.text + text[end:]
    return text
