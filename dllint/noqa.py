"""Suppression comments: ``# noqa``, ``# noqa: DL201,DL101`` on the reported line,
``# dllint: noqa`` (optionally with codes) on a line of its own for the whole file."""

from __future__ import annotations

import re

# The same shape flake8 accepts: codes separated by commas and/or spaces.
INLINE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
FILE_LEVEL = re.compile(
    r"^[ \t]*#[ \t]*dllint:[ \t]*noqa(?::[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
SPLIT = re.compile(r"[,\s]+")


def _codes(text: str | None) -> frozenset[str] | None:
    """None means "every code"."""
    if not text:
        return None
    return frozenset(c.upper() for c in SPLIT.split(text.strip()) if c)


def file_suppression(source: str) -> frozenset[str] | None | bool:
    """False when the file has no file-level noqa; None for all codes; else the codes."""
    match = FILE_LEVEL.search(source)
    if match is None:
        return False
    return _codes(match.group("codes"))


def line_suppresses(line_text: str, code: str) -> bool:
    for match in INLINE.finditer(line_text):
        codes = _codes(match.group("codes"))
        if codes is None or code in codes:
            return True
    return False
