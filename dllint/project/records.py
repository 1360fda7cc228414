"""What the index reads from every project file's bytes, kept between runs: an owned part of
the index, with its own store and :meth:`FileRecords.forget`.

Some questions are asked of every project file ("which names may be DataLoader subclasses",
:meth:`~dllint.project.search.SearchIndex.loader_class_names`). A run with a cache keeps, per
file, its content digest and its class headers and aliases (:class:`ClassText`), by the file's
stat (mtime, size, inode: the stat table that ``reconcile`` takes), in a side file of the cache
(``project-<root digest>.json``). A later run reads again only the files whose stat moved: after
one file changed, the question costs the stats and one file's scan, not the project's bytes;
and a file's digest (what a dependent's cached findings record) needs no read of an unchanged
file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dllint.project.class_text import ClassText
from dllint.project.imports import ImportBinding

if TYPE_CHECKING:
    from dllint.cache import Cache

FORMAT = 3  # bump when a record's layout changes


class FileRecord:
    """What one file's bytes said at ``stat``; its bindings decoded from a stored row when first
    asked for (the class text of every file is asked for in most runs, the bindings more rarely)."""

    __slots__ = ("stat", "digest", "classes", "adds_path", "_bindings", "_row")

    def __init__(
        self,
        stat: tuple[int, int, int],  # mtime_ns, size, inode: what the record was read at
        digest: str,  # the file's content digest (as ProjectIndex.digest)
        classes: ClassText,  # its class headers and aliases (dllint.project.class_text)
        bindings: list[ImportBinding] | None,  # its import bindings (dllint.project.imports.scan)
        adds_path: bool,  # it names sys.path or addsitedir (dllint.project.syspath reads it)
        row: tuple[str, str] | None = None,  # (path, stored bindings)
    ) -> None:
        self.stat, self.digest, self.classes, self.adds_path = stat, digest, classes, adds_path
        self._bindings, self._row = bindings, row

    @property
    def bindings(self) -> list[ImportBinding] | None:
        """None: the stored text is not what :func:`_binding_text` writes (the file is read again)."""
        if self._bindings is None and self._row is not None:
            self._bindings = _bindings(*self._row)
            self._row = None
        return self._bindings


def content_digest(data: bytes | memoryview) -> str:
    """A project file's content digest: what dependents record (``ProjectIndex.digest``)."""
    import hashlib  # only once a digest is needed: a one-file run often needs none

    return hashlib.sha256(data).hexdigest()[:32]


class FileRecords:
    """Per project file, what its bytes said, by its stat; loaded from and saved to a cache.
    Rows are kept as read and decoded when first asked for (a run after one change decodes
    what its questions need, and writes back the rows it never decoded as they were)."""

    def __init__(self, root: str, cache: Cache) -> None:
        import hashlib

        self.name = f"project-{hashlib.blake2b(root.encode(), digest_size=8).hexdigest()}.json"
        self._cache: Cache | None = cache  # read when a record is first asked for (a warm run asks none)
        self._rows: dict[str, list[Any]] = {}  # as stored (JSON)
        self._known: dict[str, FileRecord] = {}  # decoded
        self._changed = False

    def get(self, path: str, stat: tuple[int, int, int], load: bool = True) -> FileRecord | None:
        """``path``'s record while its stat is ``stat``; ``load``: read the side file if this is
        the first question (else only a record already read answers)."""
        found = self._known.get(path)
        if found is None:
            if self._cache is not None and load:
                self._load(self._cache)  # (rows put before it stay: they are newer)
            row = self._rows.get(path)
            if row is None or row[:3] != list(stat):
                return None
            found = _record(path, row)
            if found is None:
                self.forget(path)
                return None
            self._known[path] = found
        return found if found.stat == stat else None

    def put(self, path: str, record: FileRecord) -> None:
        self._known[path] = record
        row = [*record.stat, record.digest, record.classes.to_text(), _binding_text(record.bindings or []), record.adds_path]
        self._rows[path] = row
        self._changed = True

    def forget(self, path: str) -> None:
        self._known.pop(path, None)
        if self._rows.pop(path, None) is not None:
            self._changed = True

    def _load(self, cache: Cache) -> None:
        """The records a previous run saved (none, when the side file is not one)."""
        self._cache = None
        value = cache.side(self.name)
        if isinstance(value, dict) and value.get("format") == FORMAT and isinstance(value.get("files"), dict):
            self._rows = {p: row for p, row in value["files"].items() if isinstance(row, list) and len(row) == 7} | self._rows

    def save(self, cache: Cache, paths: list[str]) -> None:
        """Write the records of ``paths`` (the project's files now) when this run learnt any."""
        if not self._changed:
            return
        files = {p: row for p in paths if (row := self._rows.get(p)) is not None}
        cache.put_side(self.name, {"format": FORMAT, "files": files})
        self._changed = False


def _record(path: str, row: list[Any]) -> FileRecord | None:
    if not all(type(v) is int for v in row[:3]) or not isinstance(row[3], str) or not isinstance(row[5], str) or type(row[6]) is not bool:
        return None
    classes = ClassText.from_text(row[4])
    return None if classes is None else FileRecord((row[0], row[1], row[2]), row[3], classes, None, row[6], (path, row[5]))


def _binding_text(bindings: list[ImportBinding]) -> str:
    return "\n".join(f"{b.local}\t{b.target}" for b in bindings)


def _bindings(path: str, text: str) -> list[ImportBinding] | None:
    found: list[ImportBinding] = []
    for line in text.split("\n") if text else ():
        local, tab, target = line.partition("\t")
        if not tab:
            return None
        found.append(ImportBinding(path, local, target))
    return found
