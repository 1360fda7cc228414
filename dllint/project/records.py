"""What the index reads from every project file's bytes, kept between runs: an owned part of
the index, with its own store and :meth:`FileRecords.forget`.

Some questions are asked of every project file ("which names may be DataLoader subclasses",
:meth:`~dllint.project.search.TextIndex.loader_class_names`). A run with a cache keeps, per
file, its content digest and its class headers and aliases (:class:`ClassText`), by the file's
stat (mtime, size, inode: the stat table that ``reconcile`` takes), in a side file of the cache
(``project-<root digest>.json``). A later run reads again only the files whose stat moved: after
one file changed, the question costs the stats and one file's scan, not the project's bytes;
and a file's digest (what a dependent's cached findings record) needs no read of an unchanged
file.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from dllint.project.class_text import ClassText
from dllint.project.imports import ImportBinding, binding_key

if TYPE_CHECKING:
    from dllint.cache import Cache

FORMAT = 5  # bump when a record's layout changes
MAX_UNSAVED = 64  # rows replaced in a run before the side file is written again (see FileRecords.save)
_NO_CLASSES = ClassText().to_text()  # (an absent row's)


class FileRecord:
    """What one file's bytes said at ``stat``; its class text and bindings decoded from a stored
    row when first asked for (a run after one change decodes only what its questions need)."""

    __slots__ = ("stat", "digest", "adds_path", "_classes", "_class_row", "_bindings", "_row")

    def __init__(
        self,
        stat: tuple[int, int, int],  # mtime_ns, size, inode: what the record was read at
        digest: str,  # the file's content digest (as Summaries.digest)
        classes: ClassText | None,  # its class headers and aliases (dllint.project.class_text)
        bindings: list[ImportBinding] | None,  # its import bindings (dllint.project.imports.scan)
        adds_path: bool,  # it names sys.path or addsitedir (dllint.project.syspath reads it)
        row: tuple[str, str] | None = None,  # (path, stored bindings)
        class_row: str = "",  # the stored class text (ClassText.to_text), when ``classes`` is None
    ) -> None:
        self.stat, self.digest, self.adds_path = stat, digest, adds_path
        self._classes, self._class_row = classes, class_row
        self._bindings, self._row = bindings, row

    @property
    def classes(self) -> ClassText:
        if self._classes is None:
            self._classes = ClassText.from_text(self._class_row) or ClassText()  # (checked when read: see _record)
        return self._classes

    @property
    def bindings(self) -> list[ImportBinding] | None:
        """None: the stored text is not what :func:`_binding_text` writes (the file is read again)."""
        if self._bindings is None and self._row is not None:
            self._bindings = _bindings(*self._row)
            self._row = None
        return self._bindings


def content_digest(data: bytes | memoryview) -> str:
    """A project file's content digest: what dependents record (``Summaries.digest``)."""
    import hashlib  # only once a digest is needed: a one-file run often needs none

    return hashlib.sha256(data).hexdigest()[:32]


class FileRecords:
    """Per project file, what its bytes said, by its stat; loaded from and saved to a cache.

    The side file is read in place: its first line (JSON) holds every file's path, stat and
    whether it names ``sys.path``, and where each file's row lies in the rest; a row (its digest,
    class text and bindings) is decoded only when asked for, and one never asked for is written
    back as it was read. A run after one change decodes the first line and the rows of the files
    that moved, not the whole file (7 MB on the benchmark corpus: 25 ms of JSON).

    Beside the rows it keeps what the questions of every file read from all of them, so that
    a run after a few changes reads neither every row nor every file: the union of the files'
    class texts (:meth:`union`), which files bind each import key (:meth:`key_files`), and,
    answered from the union, the names that may be classes (:meth:`class_names`) and those that
    may be loader classes (:meth:`loaders`). All follow each row replaced or forgotten (a class
    text that loses a name, or a row that cannot be read back, leaves the union and the keys to
    be built again by the index: ``None``); the names answered from the union are kept only
    while no file's class text changed (a file touched keeps them)."""

    def __init__(self, root: str, cache: Cache) -> None:
        import hashlib

        self.name = f"project-{hashlib.blake2b(root.encode(), digest_size=8).hexdigest()}.records"
        self._cache: Cache | None = cache  # read when a record is first asked for (a warm run asks none)
        self._rows: dict[str, list[Any]] = {}  # decoded or replaced: [mtime, size, inode, digest, classes, bindings, adds]
        self._stored: dict[str, int] = {}  # not decoded yet: path -> its number in the side file read
        self._read: _SideFile | None = None
        self._known: dict[str, FileRecord] = {}  # decoded
        self._union: ClassText | None = None  # every row's class text
        self._union_text: str | None = None  # the union as stored, until first asked for
        self._names: bytes | None = None  # " name name ... ": the union's names and aliases (see class_names)
        self._loaders: dict[str, tuple[frozenset[bytes], str]] = {}  # seeds -> the union's loader names, digest
        self._keys: dict[str, list[str]] | None = None  # import key -> the files binding it, in path order
        self._stored_keys: tuple[dict[str, Any], list[str]] = ({}, [])  # as stored (file numbers), decoded per key
        self._keys_text: bytes | None = None  # the keys as stored, until first asked for
        self._changed = 0  # rows replaced or forgotten since loaded
        self._rebuilt = False  # the union or the keys were built from every file (saved whatever changed)

    def get(self, path: str, stat: tuple[int, int, int], load: bool = True) -> FileRecord | None:
        """``path``'s record while its stat is ``stat``; ``load``: read the side file if this is
        the first question (else only a record already read answers)."""
        found = self._known.get(path)
        if found is None:
            if load:
                self._ensure_loaded()
            if self._stat(path) != list(stat):
                return None
            row = self._row(path)
            found = _record(path, row) if row is not None else None
            if found is None:
                self.forget(path)
                return None
            self._known[path] = found
        return found if found.stat == stat else None

    def moved(self, table: dict[str, list[int]]) -> list[str]:
        """The files of a stat table whose row was read at another stat, or that have none."""
        self._ensure_loaded()
        stats = self._read.stats if self._read is not None else {}
        rows, stored = self._rows, self._stored
        return [p for p, stat in table.items() if (rows[p][:3] if p in rows else stats[p] if p in stored else None) != stat]

    def put(self, path: str, record: FileRecord) -> None:
        self._ensure_loaded()
        self._known[path] = record
        row = [*record.stat, record.digest, record.classes.to_text(), _binding_text(record.bindings or []), record.adds_path]
        self._follow(path, self._row(path), row)
        self._rows[path] = row

    def forget(self, path: str) -> None:
        self._known.pop(path, None)
        old = self._row(path)
        if old is not None:
            del self._rows[path]
            self._follow(path, old, None)

    def retain(self, paths: dict[str, Any]) -> None:
        """Forget the rows of files no longer among ``paths`` (deleted, or no longer the project's)."""
        for path in [p for p in (*self._rows, *self._stored) if p not in paths]:
            self.forget(path)

    def adders(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` whose row says they name ``sys.path`` or ``addsitedir``."""
        return [path for path in paths if self._adds(path)]

    def _stat(self, path: str) -> list[int] | None:
        row = self._rows.get(path)
        if row is not None:
            return row[:3]
        return self._read.stats.get(path) if self._read is not None and path in self._stored else None

    def _adds(self, path: str) -> bool:
        row = self._rows.get(path)
        if row is not None:
            return row[6] is True
        return self._read is not None and path in self._stored and self._read.adds[self._stored[path]] == "1"

    def _row(self, path: str) -> list[Any] | None:
        """``path``'s row, decoded from the side file when first asked for."""
        row = self._rows.get(path)
        if row is None and self._read is not None and path in self._stored:
            row = self._rows[path] = self._read.row(path, self._stored.pop(path))
        return row

    # -- what every file's rows say ---------------------------------------------------------
    def union(self) -> ClassText | None:
        """The class text of every row; None: to be built (:meth:`set_union`)."""
        self._ensure_loaded()
        return self._decoded_union()

    def _decoded_union(self) -> ClassText | None:
        if self._union is None and self._union_text is not None:
            self._union, self._union_text = ClassText.from_text(self._union_text), None
        return self._union

    def set_union(self, union: ClassText) -> None:
        self._union, self._union_text, self._rebuilt = union, None, True
        self._names, self._loaders = None, {}

    def class_names(self) -> bytes | None:
        """The union's names and aliases, each between spaces (``b" A B "``: a membership test is
        one search of it); None: to be answered from the union."""
        self._ensure_loaded()
        return self._names

    def loaders(self, seeds: str) -> tuple[frozenset[bytes], str] | None:
        """The names that may be loader classes, and their digest, reached in the union from the
        seeds ``seeds`` names (:meth:`note_loaders`); None: to be answered from the union."""
        self._ensure_loaded()
        return self._loaders.get(seeds)

    def note_loaders(self, seeds: str, found: tuple[frozenset[bytes], str]) -> None:
        """What the union answers for ``seeds`` (kept, and saved, while no class text changes)."""
        self._loaders[seeds] = found

    def key_files(self, key: str) -> list[str] | None:
        """The files whose rows bind import key ``key``; None: to be built (:meth:`set_keys`)."""
        self._ensure_loaded()
        self._decode_keys()
        return None if self._keys is None else self._key(key)

    def _decode_keys(self) -> None:
        if self._keys_text is not None:
            text, self._keys_text = self._keys_text, None
            keys = _decoded(text)
            if isinstance(keys, dict) and self._read is not None:
                self._stored_keys = (keys, self._read.paths)
            else:
                self._keys = None

    def _key(self, key: str) -> list[str]:
        """``key``'s files, decoded from the stored numbers when first asked for."""
        assert self._keys is not None
        found = self._keys.get(key)
        if found is None:
            stored, order = self._stored_keys
            found = self._keys[key] = _files_of(stored.pop(key, []), order)
        return found

    def set_keys(self, keys: dict[str, list[str]]) -> None:
        self._keys, self._keys_text, self._rebuilt = keys, None, True

    def _follow(self, path: str, old: list[Any] | None, new: list[Any] | None) -> None:
        """Keep the union and the keys true as ``path``'s row goes from ``old`` to ``new``."""
        self._changed += 1
        before, after = (old[4] if old else _NO_CLASSES), (new[4] if new else _NO_CLASSES)
        if before != after:
            self._names, self._loaders = None, {}  # answered by the union as it was
            union = self._decoded_union()
            added, held = ClassText.from_text(after), ClassText.from_text(before)
            if union is None:
                pass
            elif added is None or held is None or not added.covers(held):  # a name may be lost (other files may still spell it): built again
                self._union = None
            else:
                union.update(added)
        before, after = (old[5] if old else ""), (new[5] if new else "")
        self._decode_keys()
        if before != after and self._keys is not None:
            lost, gained = _binding_keys(before), _binding_keys(after)
            if lost is None or gained is None:
                self._keys = None
                return
            for key in lost - gained:
                files = self._key(key)
                if path in files:
                    files.remove(path)
            for key in gained - lost:
                files = self._key(key)
                files.insert(bisect_left(files, path), path)

    # -- the side file -----------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        if self._cache is not None:
            self._load(self._cache)  # (rows put before it stay: they are newer)

    def _load(self, cache: Cache) -> None:
        """The records a previous run saved (none, when the side file is not one)."""
        self._cache = None
        found = _SideFile.read(cache.side_bytes(self.name))
        if found is None:
            return
        self._read = found
        self._stored = {path: i for i, path in enumerate(found.paths) if path not in self._rows}
        if self._rows or found.section("keys") is None:
            return  # rows replaced before the load: what was read from every row may not hold
        union = found.section("union")
        self._union_text = _json_str(union) if union is not None else None
        self._keys, self._keys_text = {}, found.section("keys")
        if self._union_text is not None:
            self._names = found.section("names")
            self._loaders = _loaders(found.section("loaders"))

    def save(self, cache: Cache, paths: list[str]) -> None:
        """Write the records of ``paths`` (the project's files now) when this run learnt enough
        to be worth it: a union or keys built from every file, or more than MAX_UNSAVED rows. A
        few rows replaced are not written (the side file holds every file's: megabytes): the
        next run reads those few files again and follows the same changes."""
        self.retain(dict.fromkeys(paths))
        if not self._rebuilt and self._changed <= MAX_UNSAVED:
            return
        kept = [p for p in paths if p in self._rows or p in self._stored]
        sections: dict[str, bytes] = {}
        union = self.union()
        if union is not None:
            sections["union"] = _encoded(union.to_text())
            sections["names"] = self._names or b" " + b" ".join(sorted(union.names | union.aliases)) + b" "
            sections["loaders"] = _encoded(
                {seeds: [sorted(n.decode("latin-1") for n in names), digest] for seeds, (names, digest) in self._loaders.items()}
            )
        self._decode_keys()
        if self._keys is not None:
            for key in list(self._stored_keys[0]):
                self._key(key)
            at = {path: i for i, path in enumerate(kept)}
            sections["keys"] = _encoded({key: [at[p] for p in found if p in at] for key, found in self._keys.items() if found})
        cache.put_side_bytes(self.name, self._written(kept, sections))
        self._changed, self._rebuilt = 0, False

    def _written(self, kept: list[str], sections: dict[str, bytes]) -> bytes:
        """The side file: a first line saying where everything lies, then each row, then each section."""
        body: list[bytes] = []
        ends: list[int] = []
        stats: list[int] = []
        adds: list[str] = []
        size = 0
        for path in kept:
            row = self._rows.get(path)
            if row is None:
                assert self._read is not None
                at = self._stored[path]
                line = self._read.raw(at)  # never decoded: written back as it was read
                stats += self._read.stats[path]
                adds.append(self._read.adds[at])
            else:
                line = _encoded(row[3:6]) + b"\n"
                stats += row[:3]
                adds.append("1" if row[6] is True else "0")
            body.append(line)
            size += len(line)
            ends.append(size)
        where: dict[str, list[int]] = {}
        for name, data in sections.items():
            body.append(data)
            where[name] = [size, size + len(data)]
            size += len(data)
        head = {"format": FORMAT, "paths": kept, "stats": stats, "adds": "".join(adds), "ends": ends, "sections": where}
        return _encoded(head) + b"\n" + b"".join(body)


class _SideFile:
    """A side file as read: its first line decoded (paths, stats, where each row lies), the rest
    kept as bytes, each row decoded when asked for."""

    def __init__(self, data: bytes, start: int, paths: list[str], stats: list[int], adds: str, ends: list[int], sections: dict[str, Any]) -> None:
        self.data, self.start, self.paths, self.adds, self.ends, self.sections = data, start, paths, adds, ends, sections
        self.stats = {path: stats[3 * i : 3 * i + 3] for i, path in enumerate(paths)}

    @classmethod
    def read(cls, data: bytes | None) -> _SideFile | None:
        """The side file ``data``; None when it is not one (the side file is the user's own, as
        the cache is: its shape is checked, not its truth)."""
        line = data.find(b"\n") if data else -1
        if data is None or line == -1:
            return None
        head = _decoded(data[:line])
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            return None
        paths, stats, adds, ends, sections = (head.get(k) for k in ("paths", "stats", "adds", "ends", "sections"))
        if not isinstance(paths, list):
            return None
        n = len(paths)
        if not (
            all(isinstance(p, str) for p in paths)
            and isinstance(stats, list) and len(stats) == 3 * n and all(type(v) is int for v in stats)
            and isinstance(adds, str) and len(adds) == n
            and isinstance(ends, list) and len(ends) == n and all(type(v) is int for v in ends)
            and ends == sorted(ends) and (not ends or 0 <= ends[0] and ends[-1] <= len(data) - line - 1)
            and isinstance(sections, dict)
        ):
            return None
        return cls(data, line + 1, paths, stats, adds, ends, sections)

    def raw(self, at: int) -> bytes:
        """Row number ``at`` as stored."""
        return self.data[self.start + (self.ends[at - 1] if at else 0) : self.start + self.ends[at]]

    def row(self, path: str, at: int) -> list[Any]:
        """Row number ``at`` (of ``path``), decoded; one that is not a row reads as a row of no
        record whose class text and bindings are none (what was read from it is built again)."""
        value = _decoded(self.raw(at))
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
            value = [None, "?", "?"]
        return [*self.stats[path], *value, self.adds[at] == "1"]

    def section(self, name: str) -> bytes | None:
        where = self.sections.get(name)
        if not (isinstance(where, list) and len(where) == 2 and all(type(v) is int for v in where)):
            return None
        start, end = self.start + where[0], self.start + where[1]
        return self.data[start:end] if self.start <= start <= end <= len(self.data) else None


def _decoded(data: bytes) -> Any:
    """The JSON value ``data`` holds; None when it holds none. (json is imported here: a check
    without a cache never loads it.)"""
    import json

    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _encoded(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def _json_str(data: bytes) -> str | None:
    value = _decoded(data)
    return value if isinstance(value, str) else None


def _loaders(data: bytes | None) -> dict[str, tuple[frozenset[bytes], str]]:
    """The loader names kept per seeds (:meth:`FileRecords.note_loaders`); none when not that."""
    value = _decoded(data) if data is not None else None
    found: dict[str, tuple[frozenset[bytes], str]] = {}
    for seeds, entry in value.items() if isinstance(value, dict) else ():
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str) and isinstance(entry[0], list):
            if all(isinstance(n, str) for n in entry[0]):
                found[seeds] = (frozenset(n.encode("latin-1", "replace") for n in entry[0]), entry[1])
    return found


def _files_of(numbers: Any, order: list[str]) -> list[str]:
    """A key's files as :meth:`FileRecords.save` writes them (numbers in the rows' order); a
    value that is not one reads as no file (the side file is the user's own, as the cache is:
    its shape is checked, not its truth; a file listed wrongly binds nothing, as its bindings say)."""
    try:
        return [order[i] for i in numbers if type(i) is int and i >= 0]
    except (TypeError, IndexError):
        return []


def _binding_keys(text: str) -> set[str] | None:
    """The import keys a stored bindings text binds; None when it is not one."""
    keys: set[str] = set()
    for line in text.split("\n") if text else ():
        _, tab, target = line.partition("\t")
        if not tab:
            return None
        keys.add(binding_key(target))
    return keys


def _record(path: str, row: list[Any]) -> FileRecord | None:
    if not all(type(v) is int for v in row[:3]) or not isinstance(row[3], str) or not isinstance(row[5], str) or type(row[6]) is not bool:
        return None
    if not isinstance(row[4], str) or row[4].count("|") != 3:  # (what ClassText.from_text reads back)
        return None
    return FileRecord((row[0], row[1], row[2]), row[3], None, None, row[6], (path, row[5]), row[4])


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
