"""What the index reads from every project file's bytes, kept between runs: kept by the files
part of the index (``ProjectFiles.records``), with its own store and :meth:`FileRecords.forget`.

Some questions are asked of every project file ("which names may be DataLoader subclasses",
:meth:`~dllint.project.search.TextIndex.loader_class_names`). A run with a cache keeps, per
file, its content digest, its class headers and aliases (:class:`ClassText`) and its import
bindings, by the file's stat (mtime, size, inode: the stat table that ``reconcile`` takes), in a
side file of the cache (``project-<root digest>.records``, read in place: :mod:`~dllint.project.side_file`). A later run reads again only the files whose stat moved: after
one file changed, the question costs the stats and one file's scan, not the project's bytes;
and a file's digest (what a dependent's cached findings record) needs no read of an unchanged
file.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from dllint.project.class_text import ClassText
from dllint.project.files import moved_between
from dllint.project.imports import ImportBinding, binding_key
from dllint.project.side_file import Row, SideFile, decoded, encoded, row_line, written

if TYPE_CHECKING:
    from dllint.cache import Cache

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
        self._read: SideFile | None = None
        self._known: dict[str, FileRecord] = {}  # decoded
        self._union: ClassText | None = None  # every row's class text
        self._union_stored = False  # the side file read holds the union, not read until first asked for
        self._names: bytes | None = None  # " name name ... ": the union's names and aliases (see class_names)
        self._loaders: dict[str, tuple[frozenset[bytes], str]] = {}  # seeds -> the union's loader names, digest
        self._keys: dict[str, list[str]] | None = None  # import key -> the files binding it, in path order
        self._stored_keys = b""  # as stored: a line "\nKEY\tN,N" per key (file numbers), each decoded when asked for
        # The folders as the last run that saved them listed them (ProjectFiles.paths): a side file
        # of their own (184 KB on the corpus), so that a walk never reads the records' megabytes.
        self.folders_name = self.name.replace(".records", ".folders")
        self._folders_store: Cache | None = cache
        self._folders: dict[str, list[Any]] = {}
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
        read, rows, stored = self._read, self._rows, self._stored
        if read is None:
            return [p for p, stat in table.items() if p not in rows or rows[p][:3] != stat]
        if not rows and len(stored) == len(read.paths):  # every row as read
            return moved_between(read.paths, read.stats, table)
        return [p for p, stat in table.items() if (rows[p][:3] if p in rows else read.stat(stored[p]) if p in stored else None) != stat]

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

    @property
    def loaded(self) -> bool:
        """The side file was read (or found missing): a run that never read it learnt nothing to save."""
        return self._cache is None

    def folders(self) -> dict[str, list[Any]]:
        """Each folder the saved run walked: ``[mtime_ns, inode, file names, folder names]``
        (:meth:`dllint.project.files.ProjectFiles.paths`); empty when none was kept."""
        if self._folders_store is not None:
            self._folders = _folders(self._folders_store.side(self.folders_name))
            self._folders_store = None
        return self._folders

    def save_folders(self, cache: Cache, folders: dict[str, list[Any]]) -> None:
        """Write the ``folders`` a walk listed when they are not those kept (a folder listed again)."""
        if folders and folders != self.folders():
            cache.put_side(self.folders_name, folders)
            self._folders = folders

    def retain(self, paths: dict[str, Any]) -> None:
        """Forget the rows of files no longer among ``paths`` (deleted, or no longer the project's)."""
        for path in [p for p in (*self._rows, *self._stored) if p not in paths]:
            self.forget(path)

    def adders(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` whose row says they name ``sys.path`` or ``addsitedir`` (found from
        the few rows that do: asking each of 4,853 files cost 2 ms)."""
        found = {path for path, row in self._rows.items() if row[6] is True}
        if self._read is not None:
            adds, names, stored = self._read.adds, self._read.paths, self._stored
            at = adds.find("1")
            while at != -1:
                if stored.get(names[at]) == at:  # (a row replaced since says for itself)
                    found.add(names[at])
                at = adds.find("1", at + 1)
        return [path for path in paths if path in found]

    def _stat(self, path: str) -> list[int] | None:
        row = self._rows.get(path)
        if row is not None:
            return row[:3]
        return self._read.stat(self._stored[path]) if self._read is not None and path in self._stored else None

    def _row(self, path: str) -> list[Any] | None:
        """``path``'s row, decoded from the side file when first asked for."""
        row = self._rows.get(path)
        if row is None and self._read is not None and path in self._stored:
            row = self._rows[path] = self._read.row(self._stored.pop(path))
        return row

    # -- what every file's rows say ---------------------------------------------------------
    def union(self) -> ClassText | None:
        """The class text of every row; None: to be built (:meth:`set_union`)."""
        self._ensure_loaded()
        return self._decoded_union()

    def _decoded_union(self) -> ClassText | None:
        if self._union is None and self._union_stored and self._read is not None:
            stored = self._read.section("union")
            text = _json_str(stored) if stored is not None else None
            self._union, self._union_stored = ClassText.from_text(text) if text is not None else None, False
        return self._union

    def set_union(self, union: ClassText) -> None:
        self._union, self._union_stored, self._rebuilt = union, False, True
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
        return None if self._keys is None else self._key(key)

    def _key(self, key: str) -> list[str]:
        """``key``'s files, decoded from its stored line when first asked for (one search of the
        stored keys: 0.7 MB on the corpus, where decoding them all took 8 ms)."""
        assert self._keys is not None
        found = self._keys.get(key)
        if found is None:
            line = b"\n" + key.encode() + b"\t"
            at = self._stored_keys.find(line)
            end = self._stored_keys.find(b"\n", at + 1) if at != -1 else -1
            numbers = self._stored_keys[at + len(line) : end if end != -1 else None] if at != -1 else b""
            found = self._keys[key] = _files_of(numbers, self._read.paths if self._read is not None else [])
        return found

    def set_keys(self, keys: dict[str, list[str]]) -> None:
        self._keys, self._stored_keys, self._rebuilt = keys, b"", True

    def _follow(self, path: str, old: list[Any] | None, new: list[Any] | None) -> None:
        """Keep the union and the keys true as ``path``'s row goes from ``old`` to ``new``."""
        self._changed += 1
        before, after = (old[4] if old else _NO_CLASSES), (new[4] if new else _NO_CLASSES)
        if before != after:
            self._follow_classes(before, after)
        before, after = (old[5] if old else ""), (new[5] if new else "")
        if before != after and self._keys is not None:
            self._follow_keys(path, before, after)

    def _follow_classes(self, before: str, after: str) -> None:
        self._names, self._loaders = None, {}  # answered by the union as it was
        union = self._decoded_union()
        added, held = ClassText.from_text(after), ClassText.from_text(before)
        if added is None or held is None or not added.covers(held):  # a name may be lost (other files may still spell it): built again
            self._union = None
        elif union is not None:
            union.update(added)

    def _follow_keys(self, path: str, before: str, after: str) -> None:
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
        found = SideFile.read(cache.side_reader(self.name))
        if found is None:
            return
        self._read = found
        self._stored = {path: i for i, path in enumerate(found.paths) if path not in self._rows}
        if self._rows or not found.has_section("keys"):
            return  # rows replaced before the load: what was read from every row may not hold
        self._union_stored = found.has_section("union")  # (its megabyte read only when a class text changed)
        keys = found.section("keys")
        if keys is None or keys[:1] not in (b"", b"\n"):
            return
        self._keys, self._stored_keys = {}, keys
        if self._union_stored:
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
        cache.put_side_bytes(self.name, self._written(kept, {**self._union_sections(), **self._key_sections(kept)}))
        self._changed, self._rebuilt = 0, False

    def _union_sections(self) -> dict[str, bytes]:
        """The union, and what it answered (the class names, the loader names per seeds)."""
        union = self.union()
        if union is None:
            return {}
        loaders = {seeds: [sorted(n.decode("latin-1") for n in names), digest] for seeds, (names, digest) in self._loaders.items()}
        return {
            "union": encoded(union.to_text()),
            "names": self._names or b" " + b" ".join(sorted(union.names | union.aliases)) + b" ",
            "loaders": encoded(loaders),
        }

    def _key_sections(self, kept: list[str]) -> dict[str, bytes]:
        """Which files bind each import key (file numbers in the order of ``kept``)."""
        if self._keys is None:
            return {}
        for line in self._stored_keys.split(b"\n")[1:]:  # every key, decoded
            self._key(line.partition(b"\t")[0].decode("utf-8", "replace"))
        at = {path: i for i, path in enumerate(kept)}
        lines = (f"\n{key}\t{','.join(str(at[p]) for p in found if p in at)}" for key, found in self._keys.items() if found)
        return {"keys": "".join(lines).encode()}

    def _written(self, kept: list[str], sections: dict[str, bytes]) -> bytes:
        """The side file of the rows of ``kept``: a row never decoded as it was read."""
        rows: list[Row] = []
        if self._read is not None and self._stored:
            self._read.load_rows()  # (one read of the rows never decoded, not one each)
        for path in kept:
            row = self._rows.get(path)
            if row is None:
                assert self._read is not None
                rows.append(self._read.kept(self._stored[path]))
            else:
                rows.append(Row(row_line(row[3], row[4], row[5]), row[:3], row[6] is True))
        return written(kept, rows, sections)


def _json_str(data: bytes) -> str | None:
    value = decoded(data)
    return value if isinstance(value, str) else None


def _loaders(data: bytes | None) -> dict[str, tuple[frozenset[bytes], str]]:
    """The loader names kept per seeds (:meth:`FileRecords.note_loaders`); none when not that."""
    value = decoded(data) if data is not None else None
    found: dict[str, tuple[frozenset[bytes], str]] = {}
    for seeds, entry in value.items() if isinstance(value, dict) else ():
        names, digest = entry if isinstance(entry, list) and len(entry) == 2 else (None, None)
        if isinstance(names, list) and isinstance(digest, str) and all(isinstance(n, str) for n in names):
            found[seeds] = (frozenset(n.encode("latin-1", "replace") for n in names), digest)
    return found


def _folders(value: Any) -> dict[str, list[Any]]:
    """The folders kept (:meth:`FileRecords.folders`); none when the side file's JSON is not that."""
    if not isinstance(value, dict):
        return {}
    for folder in value.values():
        if not (isinstance(folder, list) and len(folder) == 4 and type(folder[0]) is int and type(folder[1]) is int):
            return {}
        if not all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in folder[2:]):
            return {}
    return value


def _files_of(numbers: bytes, order: list[str]) -> list[str]:
    """A key's files as :meth:`FileRecords.save` writes them (``N,N``: numbers in the rows'
    order); what is not that reads as no file (the side file is the user's own, as the cache is:
    its shape is checked, not its truth; a file listed wrongly binds nothing, as its bindings say)."""
    try:
        return [order[i] for i in map(int, numbers.split(b",")) if i >= 0] if numbers else []
    except (ValueError, IndexError):
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
