"""The records' side file (:mod:`dllint.project.records`), read in place.

Its first line is JSON: every file's path (the paths joined by NUL), stat (mtime, size, inode:
three numbers each), whether it names ``sys.path`` (``"0"``/``"1"``), where each file's row ends
in the rest, and where each named section lies; the numbers packed (:func:`packed_ints`: on
the benchmark corpus the line decodes in 0.3 ms, where lists of 4,853 paths and 19,412 numbers
took 1.4 and their checks 0.5). The rest is bytes: the rows (each the JSON ``[digest, class
text, bindings]``), then the sections (the union of the class texts, the names it answered,
and the import keys: :class:`~dllint.project.records.FileRecords`). A run reads and decodes the
first line, and reads only the rows and sections its questions need (by offset, from the file it
opened); a row never decoded is written back as it was read."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Protocol

FORMAT = 6  # bump when the layout changes


class Row(NamedTuple):
    """One file's row as written: its bytes (a row read and never decoded: as read), stat, adds."""

    line: bytes
    stat: list[int]
    adds: bool


class Reader(Protocol):
    """A side file open to be read by parts (:class:`dllint.cache.SideReader`)."""

    size: int

    def read(self, start: int, end: int) -> bytes | None: ...


HEAD_READ = 1 << 20  # the first read: the first line of up to ~10,000 files' records


class SideFile:
    """A side file as read: its first line decoded; its rows and sections read when asked for."""

    def __init__(self, reader: Reader, start: int, paths: list[str], stats: list[int], adds: str, ends: list[int], sections: dict[str, Any]) -> None:
        self.reader, self.start = reader, start
        self.paths, self.stats, self.adds, self.ends, self.sections = paths, stats, adds, ends, sections
        self._rows: bytes | None = None  # every row, once read at once (load_rows)

    @classmethod
    def read(cls, reader: Reader | None) -> SideFile | None:
        """The side file ``reader`` reads; None when it is not one (the side file is the user's
        own, as the cache is: its shape is checked, not its truth)."""
        if reader is None:
            return None
        size = min(reader.size, HEAD_READ)
        while True:
            data = reader.read(0, size) or b""
            line = data.find(b"\n")
            if line != -1 or size >= reader.size or len(data) < size:
                break
            size = min(reader.size, 4 * size)  # a longer first line (a project of more files)
        if line == -1:
            return None
        head = decoded(data[:line])
        if not isinstance(head, dict) or head.get("format") != FORMAT or not isinstance(head.get("sections"), dict):
            return None
        paths, adds = head.get("paths"), head.get("adds")
        stats, ends = unpacked_ints(head.get("stats")), unpacked_ints(head.get("ends"))
        if not (isinstance(paths, str) and isinstance(adds, str)) or stats is None or ends is None:
            return None
        names = paths.split("\0") if paths else []
        n = len(names)
        if len(stats) != 3 * n or len(adds) != n or len(ends) != n:
            return None
        if ends != sorted(ends) or (ends and not 0 <= ends[0] <= ends[-1] <= reader.size - line - 1):
            return None
        return cls(reader, line + 1, names, stats, adds, ends, head["sections"])

    def stat(self, at: int) -> list[int]:
        """Row number ``at``'s stat (mtime, size, inode)."""
        return self.stats[3 * at : 3 * at + 3]

    def load_rows(self) -> None:
        """Read every row at once (before many are asked for: one read, not one per row)."""
        if self._rows is None and self.ends:
            self._rows = self.reader.read(self.start, self.start + self.ends[-1])

    def raw(self, at: int) -> bytes:
        """Row number ``at`` as stored (empty where the file no longer holds it)."""
        start, end = (self.ends[at - 1] if at else 0), self.ends[at]
        if self._rows is not None:
            return self._rows[start:end]
        return self.reader.read(self.start + start, self.start + end) or b""

    def row(self, at: int) -> list[Any]:
        """Row number ``at`` as the records keep it, ``[mtime, size, inode, digest, class text,
        bindings, adds]``; one that is not a row reads as a row of no record whose class text
        and bindings are none (what was read from it is built again)."""
        value = decoded(self.raw(at))
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
            value = [None, "?", "?"]
        return [*self.stat(at), *value, self.adds[at] == "1"]

    def kept(self, at: int) -> Row:
        """Row number ``at`` to be written back as it was read."""
        return Row(self.raw(at), self.stat(at), self.adds[at] == "1")

    def has_section(self, name: str) -> bool:
        where = self.sections.get(name)
        return isinstance(where, list) and len(where) == 2 and all(type(v) is int for v in where) and 0 <= where[0] <= where[1]

    def section(self, name: str) -> bytes | None:
        """The section ``name``, read now; None when there is none (or the file no longer holds it)."""
        if not self.has_section(name):
            return None
        start, end = self.sections[name]
        return self.reader.read(self.start + start, self.start + end)


def written(paths: list[str], rows: list[Row], sections: dict[str, bytes]) -> bytes:
    """The side file of ``paths`` and their ``rows``, then the ``sections``."""
    ends: list[int] = []
    size = 0
    for row in rows:
        size += len(row.line)
        ends.append(size)
    where: dict[str, list[int]] = {}
    for name, data in sections.items():
        where[name] = [size, size + len(data)]
        size += len(data)
    stats = [v for row in rows for v in row.stat]
    adds = "".join("1" if row.adds else "0" for row in rows)
    head = {"format": FORMAT, "paths": "\0".join(paths), "stats": packed_ints(stats), "adds": adds, "ends": packed_ints(ends), "sections": where}
    return b"".join([encoded(head), b"\n", *(row.line for row in rows), *sections.values()])


def row_line(digest: str, classes: str, bindings: str) -> bytes:
    """A row as written."""
    return encoded([digest, classes, bindings]) + b"\n"


def decoded(data: bytes) -> Any:
    """The JSON value ``data`` holds; None when it holds none. (json is imported here: a check
    without a cache never loads it.)"""
    import json

    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def encoded(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def packed_ints(numbers: list[int]) -> str | list[int]:
    """Whole numbers as JSON keeps them compactly: 64-bit, little-endian, in hexadecimal (a list
    of thousands decodes in a tenth of the time of a JSON list of them; hexadecimal rather than
    base64: ``binascii`` is one more library to load, 0.3 ms); a list that does not fit 64 bits
    stays a list."""
    import array

    try:
        packed = array.array("q", numbers)
    except OverflowError:
        return numbers
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes().hex()


def unpacked_ints(value: Any) -> list[int] | None:
    """The numbers :func:`packed_ints` packed; None when ``value`` is not that."""
    import array

    if isinstance(value, list):
        return value if all(type(v) is int for v in value) else None
    if not isinstance(value, str):
        return None
    numbers = array.array("q")
    try:
        numbers.frombytes(bytes.fromhex(value))
    except ValueError:  # not hexadecimal, or not of whole 64-bit numbers
        return None
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers.tolist()
