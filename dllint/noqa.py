"""Suppression comments: ``# noqa``, ``# noqa: DL201,DL101`` on the reported line,
``# dllint: noqa`` (optionally with codes) on a line of its own for the whole file."""

from __future__ import annotations

from re import IGNORECASE, MULTILINE
from typing import Literal

from dllint.patterns import LazyPattern

# The same shape flake8 accepts: codes separated by commas and/or spaces.
INLINE = LazyPattern(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", IGNORECASE)
FILE_LEVEL = LazyPattern(
    r"^[ \t]*#[ \t]*dllint:[ \t]*noqa(?::[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?[ \t]*$",
    IGNORECASE | MULTILINE,
)
SPLIT = LazyPattern(r"[,\s]+")


def _codes(text: str | None) -> frozenset[str] | None:
    """None means "every code"."""
    if not text:
        return None
    return frozenset(c.upper() for c in SPLIT.split(text.strip()) if c)


def file_suppression(source: str) -> frozenset[str] | None | Literal[False]:
    """False when the file has no file-level noqa; None for all codes; else the codes."""
    # Substrings any match contains (only ASCII letters match these, case aside), found at C
    # speed: the regex itself tries every line of the file.
    lowered = source.lower()
    if "noqa" not in lowered or "dll" not in lowered:
        return False
    match = FILE_LEVEL.search(source)
    if match is None:
        return False
    return _codes(match.group("codes"))


class LineSuppressions:
    """The ``# noqa`` comments of a file's lines, each line read once however many findings it has
    (a generated one-line file can carry thousands: reading the line per finding was quadratic)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._by_line: dict[int, tuple[frozenset[str] | None, ...]] = {}

    def suppresses(self, line: int, code: str) -> bool:
        """Whether a noqa on 1-based ``line`` covers ``code``."""
        if not 0 < line <= len(self.lines):
            return False
        comments = self._by_line.get(line)
        if comments is None:
            text = self.lines[line - 1]
            comments = tuple(_codes(m.group("codes")) for m in INLINE.finditer(text)) if "#" in text else ()
            self._by_line[line] = comments
        return any(codes is None or code in codes for codes in comments)


def with_noqa(line: str, codes: set[str]) -> str:
    """``line`` with ``# noqa: CODES`` at its end, the codes merged into a ``# noqa: ...`` it
    already has (``# noqa: E501`` becomes ``# noqa: DL201, E501``), as ``ruff --add-noqa`` writes it."""
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    match = next((m for m in INLINE.finditer(body) if m.group("codes")), None)
    if match is not None:
        merged = sorted(set(SPLIT.split(match.group("codes").strip())) | codes)
        return f"{body[: match.start()]}# noqa: {', '.join(merged)}{body[match.end() :]}{ending}"
    separator = "  " if body.strip() else ""
    return f"{body.rstrip()}{separator}# noqa: {', '.join(sorted(codes))}{ending}"
