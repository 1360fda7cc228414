"""The project's classes as its text spells them: which names follow ``class``, and which names
each class header or import alias is made from. One byte scan of the joined files answers
"can ``Name`` be a DataLoader subclass?" for every name a lint asks about, where resolving
each one through the modules parses every file its chain of bases passes through.

The answer over-approximates the analysis, never the other way: a class the analysis finds to
subclass a loader (:func:`dllint.project.resolve.ResolveIndex.ancestors`) is reached here from a
loader's name through the identifiers of class headers (``class C(pkg.Base, Mixin)``: ``Base``,
``Mixin``, ``pkg`` lead to ``C``) and of ``as`` aliases (``from .x import Base as B``: ``Base``
leads to ``B``), because the analysis resolves bases through exactly those: imports and
attributes of imported modules. A header this scan cannot read to its end counts as reached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

_WORD = re.compile(rb"\w+")
_WORD_BEFORE = re.compile(rb"(\w+)[ \t]*\Z")
_PAREN = re.compile(rb"[()]")
_SPACES = re.compile(rb"[ \t]*")
MAX_HEADER = 4096  # bytes of one class header's bases read before it counts as unreadable


@dataclass
class ClassText:
    names: set[bytes] = field(default_factory=set)  # every name after "class " (statement, string, comment)
    leads_to: dict[bytes, set[bytes]] = field(default_factory=dict)  # identifier -> names built on it
    unread: set[bytes] = field(default_factory=set)  # classes whose bases could not be read
    aliases: set[bytes] = field(default_factory=set)  # every name after " as " (a class may be imported so)

    def update(self, other: ClassText) -> None:
        self.names |= other.names
        self.unread |= other.unread
        self.aliases |= other.aliases
        for word, names in other.leads_to.items():
            self.leads_to.setdefault(word, set()).update(names)

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


def scan(data: bytes) -> ClassText:
    """The class names, class headers and ``as`` aliases of ``data`` (a file, or files joined)."""
    found = ClassText()
    at = data.find(b"class ")
    while at != -1:
        word = _WORD.match(data, at + 6)
        if word is not None:
            found.names.add(word.group())
            _header(data, word.end(), word.group(), found)
        at = data.find(b"class ", at + 6)
    at = data.find(b" as ")
    while at != -1:
        before = _WORD_BEFORE.search(data, max(0, at - 128), at)
        after = _WORD.match(data, _SPACES.match(data, at + 4).end())  # type: ignore[union-attr]
        if after is not None:
            found.aliases.add(after.group())
        if before is not None and after is not None:
            found.leads_to.setdefault(before.group(1), set()).add(after.group())
        at = data.find(b" as ", at + 4)
    return found


def _header(data: bytes, end: int, name: bytes, found: ClassText) -> None:
    """The identifiers between the parentheses after ``class name`` (nested ones included)."""
    opening = _SPACES.match(data, end).end()  # type: ignore[union-attr]
    if data[opening : opening + 1] != b"(":
        return  # no bases (or not a class statement)
    depth, at, limit = 0, opening, opening + MAX_HEADER
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
