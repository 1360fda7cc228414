"""The project's classes as its text spells them: which names follow ``class``, and which names
each class header or import alias is made from. One byte scan of the joined files answers
"can ``Name`` be a DataLoader subclass?" for every name a lint asks about, where resolving
each one through the modules parses every file its chain of bases passes through.

The answer over-approximates the analysis, never the other way: a class the analysis finds to
subclass a loader (:meth:`dllint.project.resolve.Definitions.ancestors`) is reached here from a
loader's name through the identifiers of class headers (``class C(pkg.Base, Mixin)``: ``Base``,
``Mixin``, ``pkg`` lead to ``C``) and of ``as`` aliases (``from .x import Base as B``: ``Base``
leads to ``B``), because the analysis resolves bases through exactly those: imports and
attributes of imported modules. A header this scan cannot read to its end counts as reached.
"""

from __future__ import annotations

import re
from typing import Iterable

_WORD = re.compile(rb"\w+")
_LAST_WORD = re.compile(rb"\w+\Z")
_CLASS = re.compile(rb"class[ \t]+(\w+)([ \t]*\()?")  # (the parenthesis: a header with bases)
# `` as`` and the name after it: searched from the ``as`` (a search for a pattern that starts
# with a space, the most common byte, took 0.085 s on 79 MB, this one 0.05 s), the space before
# checked on each match; the name in a lookahead, so that no match hides an ``as`` inside the
# previous one's name, the space before it and the matches it overlaps checked by ``scan``.
_ALIAS = re.compile(rb"as(?=[ \t]+(\w+))")
_PAREN = re.compile(rb"[()]")
MAX_HEADER = 4096  # bytes of one class header's bases read before it counts as unreadable
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # what \w is in a bytes pattern
_SPACE_BYTES = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.split() splits on


class ClassText:
    """A text's class names, what leads to each (class headers, ``as`` aliases) and the headers
    not read to their end. (A class with its ``__init__`` and ``__eq__`` written out, not a
    dataclass: defining one costs every run 0.3 ms, see :mod:`dllint.deps`.)"""

    __slots__ = ("names", "leads_to", "unread", "aliases")

    def __init__(
        self,
        names: set[bytes] | None = None,
        leads_to: dict[bytes, set[bytes]] | None = None,
        unread: set[bytes] | None = None,
        aliases: set[bytes] | None = None,
    ) -> None:
        self.names = set() if names is None else names  # every name after "class " (statement, string, comment)
        self.leads_to = {} if leads_to is None else leads_to  # identifier -> names built on it
        self.unread = set() if unread is None else unread  # classes whose bases could not be read
        self.aliases = set() if aliases is None else aliases  # every name after " as " (a class may be imported so)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassText):
            return NotImplemented
        return (self.names, self.leads_to, self.unread, self.aliases) == (other.names, other.leads_to, other.unread, other.aliases)

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return f"ClassText(names={self.names!r}, leads_to={self.leads_to!r}, unread={self.unread!r}, aliases={self.aliases!r})"

    def update(self, other: ClassText) -> None:
        self.names |= other.names
        self.unread |= other.unread
        self.aliases |= other.aliases
        for word, names in other.leads_to.items():
            self.leads_to.setdefault(word, set()).update(names)

    def covers(self, other: ClassText) -> bool:
        """Everything ``other`` holds is held here too (a file's class text that only gained names)."""
        return (
            self.names >= other.names and self.unread >= other.unread and self.aliases >= other.aliases
            and all(self.leads_to.get(word, set()) >= names for word, names in other.leads_to.items())
        )

    def to_text(self) -> str:
        """The record as one line of text, quick to read back (:meth:`from_text`): its names are
        identifiers (no space, ``|`` or ``;``), latin-1 keeps every byte."""
        leads = ";".join(b" ".join([word, *sorted(names)]).decode("latin-1") for word, names in sorted(self.leads_to.items()))
        parts = (b" ".join(sorted(part)).decode("latin-1") for part in (self.names, self.aliases, self.unread))
        return "|".join([*parts, leads])

    @classmethod
    def from_text(cls, text: object) -> ClassText | None:
        """A record written by :meth:`to_text`; None when ``text`` is not one."""
        if not isinstance(text, str) or text.count("|") != 3:
            return None
        names, aliases, unread, leads = (part.encode("latin-1", "replace") for part in text.split("|"))
        found = cls(set(names.split()), {}, set(unread.split()), set(aliases.split()))
        for lead in leads.split(b";") if leads else ():
            word, *to = lead.split(b" ")
            found.leads_to[word] = set(to)
        return found

    def reached_from(self, seeds: Iterable[bytes]) -> frozenset[bytes]:
        """The seeds and every name built on one of them, transitively, and the unread classes."""
        found = set(seeds) | self.unread
        todo = list(found)
        while todo:
            for name in self.leads_to.get(todo.pop(), ()):
                if name not in found:
                    found.add(name)
                    todo.append(name)
        return frozenset(found)


def scan(data: bytes, start: int = 0, end: int | None = None) -> ClassText:
    """The class names, class headers and ``as`` aliases of ``data[start:end]`` (a file, or files
    joined). Regular expressions with a literal start, so that the C search skips to each candidate."""
    end = len(data) if end is None else end
    found = ClassText()
    names, leads_to, aliases = found.names, found.leads_to, found.aliases
    for header in _CLASS.finditer(data, start, end):
        name, bases = header.groups()
        names.add(name)
        if bases:
            _header(data, header.end() - 1, name, found, end)
    consumed = start  # where the last match of " as[ \t]+(\w+)" ended: the next starts there or later
    for alias in _ALIAS.finditer(data, start + 1, end):
        at = alias.start() - 1  # (the space before "as")
        if at < consumed or data[at] != 32:  # (32: a space)
            continue
        consumed = alias.end(1)
        name = alias.group(1)
        aliases.add(name)
        low = max(start, at - 128)
        if at > low and data[at - 1] in _WORD_BYTES:  # "x as y", "a.b as c" (most): the word ending there
            first = at - 1
            while first > low and data[first - 1] in _WORD_BYTES:
                first -= 1
            leads_to.setdefault(bytes(data[first:at]), set()).add(name)  # (bytes: the joined text is a bytearray)
        elif at == low or data[at - 1] in _SPACE_BYTES:  # the last word before the blanks, if any
            before = data[low : at + 1].split()
            word = _LAST_WORD.search(before[-1]) if before else None
            if word is not None:
                leads_to.setdefault(word.group(), set()).add(name)
        # else "open(f) as fh": the text before ends in no word
    return found


def _header(data: bytes, opening: int, name: bytes, found: ClassText, end: int) -> None:
    """The identifiers between the parenthesis at ``opening`` and its closing one (nested ones
    included) lead to ``name``; a header not closed within MAX_HEADER bytes is unread."""
    limit = min(opening + MAX_HEADER, end)
    close = data.find(b")", opening + 1, limit)
    if close != -1 and data.find(b"(", opening + 1, close) == -1:
        at = close + 1  # no parenthesis inside (most headers): no search for each
    else:
        depth, at = 0, opening
        while True:
            paren = _PAREN.search(data, at, limit)
            if paren is None:
                found.unread.add(name)
                return
            depth += 1 if paren.group() == b"(" else -1
            at = paren.end()
            if depth == 0:
                break
    for word in _WORD.findall(data, opening + 1, at - 1):
        found.leads_to.setdefault(word, set()).add(name)
