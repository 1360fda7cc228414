"""The records' side file (:mod:`dllint.project.records`), read in place.

Its first line is JSON: every file's path, stat (mtime, size, inode: three numbers each),
whether it names ``sys.path`` (``"0"``/``"1"``), where each file's row ends in the rest, and
where each named section lies. The rest is bytes: the rows (each the JSON ``[digest, class
text, bindings]``), then the sections (the union of the class texts, the names it answered,
and the import keys: :class:`~dllint.project.records.FileRecords`). A run decodes the first line
and only the rows and sections its questions need; a row never decoded is written back as it
was read."""

from __future__ import annotations

from typing import Any, NamedTuple

FORMAT = 5  # bump when the layout changes


class Row(NamedTuple):
    """One file's row as written: its bytes (a row read and never decoded: as read), stat, adds."""

    line: bytes
    stat: list[int]
    adds: bool


class SideFile:
    """A side file as read: its first line decoded, the rest kept as bytes."""

    def __init__(self, data: bytes, start: int, head: dict[str, Any]) -> None:
        self.data, self.start = data, start
        self.paths: list[str] = head["paths"]
        self.adds: str = head["adds"]
        self.ends: list[int] = head["ends"]
        self.sections: dict[str, Any] = head["sections"]
        stats: list[int] = head["stats"]
        self.stats = {path: stats[3 * i : 3 * i + 3] for i, path in enumerate(self.paths)}

    @classmethod
    def read(cls, data: bytes | None) -> SideFile | None:
        """The side file ``data``; None when it is not one (the side file is the user's own, as
        the cache is: its shape is checked, not its truth)."""
        line = data.find(b"\n") if data else -1
        if data is None or line == -1:
            return None
        head = decoded(data[:line])
        return cls(data, line + 1, head) if _is_head(head, len(data) - line - 1) else None

    def raw(self, at: int) -> bytes:
        """Row number ``at`` as stored."""
        return self.data[self.start + (self.ends[at - 1] if at else 0) : self.start + self.ends[at]]

    def row(self, path: str, at: int) -> list[Any]:
        """Row number ``at`` (of ``path``) as the records keep it, ``[mtime, size, inode, digest,
        class text, bindings, adds]``; one that is not a row reads as a row of no record whose
        class text and bindings are none (what was read from it is built again)."""
        value = decoded(self.raw(at))
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
            value = [None, "?", "?"]
        return [*self.stats[path], *value, self.adds[at] == "1"]

    def kept(self, path: str, at: int) -> Row:
        """Row number ``at`` (of ``path``) to be written back as it was read."""
        return Row(self.raw(at), self.stats[path], self.adds[at] == "1")

    def section(self, name: str) -> bytes | None:
        where = self.sections.get(name)
        if not (isinstance(where, list) and len(where) == 2 and all(type(v) is int for v in where)):
            return None
        start, end = self.start + where[0], self.start + where[1]
        return self.data[start:end] if self.start <= start <= end <= len(self.data) else None


def _is_head(head: Any, size: int) -> bool:
    """``head`` is a first line that describes ``size`` bytes after it."""
    if not isinstance(head, dict) or head.get("format") != FORMAT or not isinstance(head.get("sections"), dict):
        return False
    paths, stats, adds, ends = (head.get(k) for k in ("paths", "stats", "adds", "ends"))
    if not (isinstance(paths, list) and isinstance(stats, list) and isinstance(adds, str) and isinstance(ends, list)):
        return False
    n = len(paths)
    if len(stats) != 3 * n or len(adds) != n or len(ends) != n:
        return False
    if not all(isinstance(p, str) for p in paths) or not all(type(v) is int for v in (*stats, *ends)):
        return False
    return ends == sorted(ends) and (not ends or 0 <= ends[0] and ends[-1] <= size)


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
    head = {"format": FORMAT, "paths": paths, "stats": stats, "adds": adds, "ends": ends, "sections": where}
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
