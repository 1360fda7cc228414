"""Who names X, and what is read from every project file's text: the text index, a part of the
project index with its own caches and :meth:`TextIndex.forget`.

One byte search over every project file joined (:meth:`TextIndex.mentions`); the names that may
be project classes and loader classes (one scan of the joined class headers); and, in a run with
a cache, each file's record (its digest, class text, import bindings: :mod:`dllint.project.records`),
read again only for the files whose stat moved. Open editor buffers are kept out of the joined
text (they change on every keystroke) and searched on their own."""

from __future__ import annotations

import os
from bisect import bisect_right
from typing import Callable

from dllint.config import Settings
from dllint.knowledge.loaders import LIBRARY_LOADER_NAMES, TORCH_LOADER_QUALNAMES
from dllint.project.base import MAX_KEPT_BYTES
from dllint.project.class_text import ClassText
from dllint.project.class_text import scan as scan_classes
from dllint.project.files import ProjectFiles
from dllint.project.imports import ImportBinding
from dllint.project.imports import scan_file as scan_imports
from dllint.project.records import FileRecord, FileRecords, content_digest

_Joined = tuple[bytes, list[int], list[str], list[str]]  # (joined bytes, starts, their paths, files kept apart)


class _Union:
    """The class text of the joined text and of the files kept apart (open buffers), and what
    was read from it: kept while the joined text and those files' class texts are the same
    (a keystroke that changes no class header rebuilds none of it)."""

    __slots__ = ("hay", "apart", "classes", "names", "loaders")

    def __init__(self, hay: bytes, apart: list[ClassText], classes: ClassText) -> None:
        self.hay, self.apart, self.classes = hay, apart, classes
        self.names: frozenset[bytes] | None = None  # see TextIndex.class_names
        self.loaders: tuple[frozenset[bytes], str] | None = None  # see TextIndex.loader_class_names


class TextIndex:
    def __init__(self, files: ProjectFiles, settings: Settings) -> None:
        self.files = files
        self.settings = settings
        self._hay: _Joined | None = None  # see _haystack
        self._offsets: dict[str, tuple[int, int]] = {}
        self._stats: dict[str, os.stat_result] = {}  # each file read for the joined text: its stat before the read
        self._members: frozenset[str] = frozenset()  # the files listed when the text was joined
        self._mentions: dict[tuple[bytes, bytes | None], list[str]] = {}
        self._classes: ClassText | None = None  # see _class_text
        self._class_names: frozenset[bytes] | None = None  # see class_names
        self._joined_classes: tuple[bytes, ClassText] | None = None  # (the joined text, its classes)
        self._apart: dict[str, tuple[bytes, ClassText]] = {}  # a file apart (a buffer): its bytes, their class text
        self._union: _Union | None = None  # see _class_text
        self._loader_classes: tuple[frozenset[bytes], str] | None = None  # see loader_class_names
        self._records_fresh = False  # see _refreshed_records

    def forget(self, path: str, rejoin: bool = True) -> None:
        """``path``'s text changed: the class names; with ``rejoin``, the joined text and every
        "who names X" answer; without (an editor buffer, searched on its own), only ``path``'s
        membership of each answer moves (a keystroke costs a search of one file per needle asked,
        not a search of the project's joined text)."""
        self._classes = None
        self._class_names = None
        self._loader_classes = None
        if rejoin:
            self._apart.pop(path, None)
            self._mentions.clear()
            self._hay = None
            self._offsets.clear()
            self._stats.clear()
            return
        data = self.read(path)
        for key, files in self._mentions.items():
            needle, gate = key
            named = data is not None and needle in data and (gate is None or gate in data)
            if named != (path in files):
                self._mentions[key] = sorted({*files, path} if named else set(files) - {path})

    def join(self) -> None:
        """Read every project file and join them now (else at the first question that searches them)."""
        self._haystack()

    def joined(self, path: str) -> bool:
        """``path``'s bytes are in the joined text."""
        return path in self._offsets

    # -- who names X -----------------------------------------------------------------------
    def mentions(self, needle: bytes, gate: bytes | None = None) -> list[str]:
        """Project files whose bytes contain ``needle`` (and ``gate``), in path order."""
        key = (needle, gate)
        found = self._mentions.get(key)
        if found is None:
            if gate is not None:  # the gate's files only: a search of each one's bytes, not of them all
                found = [p for p in self.mentions(gate) if self.names(p, needle)]
            else:
                hay, starts, paths, rest = self._haystack()
                hits: list[str] = []
                at = hay.find(needle)
                while at != -1:  # one C-speed search per needle, not a Python loop over the files
                    i = bisect_right(starts, at) - 1
                    hits.append(paths[i])
                    at = hay.find(needle, starts[i + 1] if i + 1 < len(starts) else len(hay))
                hits += [p for p in rest if (data := self.read(p)) is not None and needle in data]
                found = sorted(hits)
            self._mentions[key] = found
        return found

    def names(self, path: str, needle: bytes) -> bool:
        """``path``'s bytes contain ``needle``."""
        span = self.span(path)
        return span is not None and span[0].find(needle, span[1], span[2]) != -1

    def span(self, path: str) -> tuple[bytes, int, int] | None:
        """(bytes, start, end) where ``path``'s bytes lie: in the joined text without a copy, else
        the file's own bytes; None when it cannot be read."""
        where = self._offsets.get(path)
        if where is not None and self._hay is not None:
            return self._hay[0], where[0], where[1]
        data = self.files.read(path)  # (an editor's buffer)
        return None if data is None else (data, 0, len(data))

    def joined_span(self, path: str) -> tuple[bytes, int, int, os.stat_result] | None:
        """(joined text, start, end) where ``path``'s bytes lie in it, and the file's stat from
        before they were read (what the runner screens, rather than reading every file a second
        time); None when they are not in it."""
        where = self._offsets.get(path)
        if where is None or self._hay is None:
            return None
        return self._hay[0], where[0], where[1], self._stats[path]

    def read(self, path: str) -> bytes | None:
        """``path``'s bytes: from the joined text where they are in it (no read), else the file's."""
        where = self._offsets.get(path)
        if where is not None and self._hay is not None:
            return bytes(memoryview(self._hay[0])[where[0] : where[1]])
        return self.files.read(path)

    def _haystack(self) -> _Joined:
        """Every project file's bytes joined by NUL (an identifier never spans two files), with
        where each starts, read once; files beyond MAX_KEPT_BYTES, and open buffers, are listed
        apart, read per scan. Each file is appended as it is read (a ``bytearray``), not joined
        at the end: the files and their join were both alive then, twice the project's size at
        the peak."""
        if self._hay is None:
            self.files.stat_table()  # before the reads: a file saved after its read differs from the table next run
            joined = bytearray()
            starts: list[int] = []
            paths: list[str] = []
            rest: list[str] = []
            listed = self.files.paths()
            self._stats.clear()
            for path in listed:
                read = self.files.read_with_stat(path)
                if read is None:
                    continue
                data, self._stats[path] = read
                if len(joined) + len(data) > MAX_KEPT_BYTES:
                    rest.append(path)
                    continue
                self._offsets[path] = (len(joined), len(joined) + len(data))
                starts.append(len(joined))
                paths.append(path)
                joined += data
                joined += b"\0"
            rest += [p for p in listed if p in self.files.buffers]
            self._hay = (joined, starts, paths, rest)  # (bytes and bytearray search alike)
            self._members = frozenset(listed)
        if not self.files.buffers:
            return self._hay
        hay, starts, paths, rest = self._hay  # buffers opened since the join, of files listed then
        kept = set(rest)
        opened = [p for p in self.files.buffers if p in self._members and p not in kept and p not in self._offsets]
        return hay, starts, paths, rest + opened

    # -- classes -------------------------------------------------------------------------
    def class_names(self) -> frozenset[bytes]:
        """Every name that follows ``class `` or `` as `` in a project file (a class statement, an
        import alias, or a string or comment that looks like one): a name not among them is no
        project class, nor one re-exported under another name. One scan of the joined files
        (0.3 s for 79 MB), where a search per name asked costs 22 ms each."""
        if self._class_names is None:
            found = self._class_text()
            union = self._union if self._union is not None and self._union.classes is found else None
            if union is not None and union.names is not None:
                self._class_names = union.names
            else:
                self._class_names = frozenset(found.names | found.aliases)
                if union is not None:
                    union.names = self._class_names
        return self._class_names

    def is_class_name(self, name: bytes) -> bool:
        """``name`` is among :meth:`class_names`; with records whose class texts did not change
        since they were saved, answered by the names kept with them (no union decoded)."""
        if self._class_names is None and self.files.records is not None:
            kept = self._refreshed_records().class_names()
            if kept is not None:
                return b" " + name + b" " in kept
        return name in self.class_names()

    def loader_class_names(self) -> tuple[frozenset[bytes], str]:
        """The names that may name a DataLoader subclass of the project (see
        :mod:`~dllint.project.class_text`), and their digest (what a lint that was answered
        "no" by them records: :class:`~dllint.deps.LoaderClassesDep`). With records whose class
        texts did not change since they were saved: the names kept with them."""
        if self._loader_classes is None:
            import hashlib  # (only a project that asks: a one-file run of most files never does)

            seeds = {name.rsplit(".", 1)[-1].encode() for name in (*TORCH_LOADER_QUALNAMES, *self.settings.extend_loader_classes)}
            seeds |= {name.encode() for name in LIBRARY_LOADER_NAMES}
            key = hashlib.blake2b(b"\0".join(sorted(seeds)), digest_size=12).hexdigest()
            records = self._refreshed_records() if self.files.records is not None else None
            self._loader_classes = records.loaders(key) if records is not None else None
            if self._loader_classes is None:
                found = self._class_text()
                union = self._union if self._union is not None and self._union.classes is found else None
                self._loader_classes = union.loaders if union is not None else None
                if self._loader_classes is None:
                    names = found.reached_from(seeds)
                    digest = hashlib.blake2b(b"\0".join(sorted(names)), digest_size=12).hexdigest()
                    self._loader_classes = (names, digest)
                    if union is not None:
                        union.loaders = self._loader_classes
                    if records is not None and self._classes is records.union():
                        records.note_loaders(key, self._loader_classes)
        return self._loader_classes

    def _class_text(self) -> ClassText:
        """The project's class headers and aliases: the joined text's scanned once while it is
        kept, the files beyond it (an editor's open buffers) at each new question."""
        if self._classes is None and self.files.records is not None:
            self._classes = self._recorded_classes()
        if self._classes is None:
            hay, _, _, rest = self._haystack()
            if self._joined_classes is None or self._joined_classes[0] is not hay:
                self._joined_classes = (hay, scan_classes(hay))  # kept while the joined text is
            apart = [self._classes_apart(path) for path in rest]
            if self._union is None or self._union.hay is not hay or self._union.apart != apart:
                found = ClassText()
                found.update(self._joined_classes[1])
                for classes in apart:
                    found.update(classes)
                self._union = _Union(hay, apart, found)
            self._classes = self._union.classes
        return self._classes

    def _classes_apart(self, path: str) -> ClassText:
        """The class text of a file kept out of the joined text, scanned again when its bytes changed."""
        data = self.read(path) or b""
        kept = self._apart.get(path)
        if kept is None or kept[0] != data:
            kept = self._apart[path] = (data, scan_classes(data))
        return kept[1]

    # -- each file's record (a run with a cache) -----------------------------------------
    def _recorded_classes(self) -> ClassText:
        """The class text of every project file from the records (:mod:`dllint.project.records`):
        their union as kept, following the files whose stat moved; built from every record when
        a file lost a class name (or none was kept)."""
        records = self._refreshed_records()
        found = records.union()
        if found is None:
            found = ClassText()
            for path in self.files.stat_table():
                record = self._record(path)
                if record is not None:
                    found.update(record.classes)
            records.set_union(found)
        return found

    def _refreshed_records(self) -> FileRecords:
        """The records, each project file whose stat moved since its record was made read again
        and the files gone forgotten (once per index: the stat table is taken once)."""
        assert self.files.records is not None
        if not self._records_fresh:
            self._records_fresh = True
            table = self.files.stat_table()
            for path in self.files.records.moved(table):
                self._record(path)
            self.files.records.retain(table)
        return self.files.records

    def keyed_files(self, key: str, bindings: Callable[[str], list[ImportBinding]]) -> list[str]:
        """The project files whose imports bind the key ``key`` (the import table's question, from
        the records: only those files' bindings are read; ``bindings``: a file's, the import
        graph's, when the records must be keyed anew)."""
        records = self._refreshed_records()
        found = records.key_files(key)
        if found is None:
            keys: dict[str, list[str]] = {}
            for path in self.files.stat_table():
                for name in dict.fromkeys(binding.key for binding in bindings(path)):
                    keys.setdefault(name, []).append(path)
            records.set_keys(keys)
            found = keys.get(key, [])
        return found

    def _record(self, path: str) -> FileRecord | None:
        """``path``'s record, made now when its stat moved since the last (None: no records kept,
        or the file cannot be read)."""
        records = self.files.records
        stat = self.files.stat_table().get(path) if records is not None else None
        if records is None or stat is None:
            return None
        key = (stat[0], stat[1], stat[2])
        record = records.get(path, key)
        if record is None:
            span = self.span(path)
            if span is None:
                return None
            data, start, end = span
            digest = content_digest(memoryview(data)[start:end])
            bindings = scan_imports(path, data, start, end)
            adds = data.find(b"sys.path", start, end) != -1 or data.find(b"addsitedir", start, end) != -1
            record = FileRecord(key, digest, scan_classes(data, start, end), bindings, adds)
            records.put(path, record)
        return record

    # -- what the import graph reads ------------------------------------------------------
    def import_files(self) -> list[str]:
        """Every project file whose imports the import table reads: with records, the stat table's
        (a file's imports read again only when its stat moved); else the joined text's, then the rest."""
        if self.files.records is not None:
            return list(self.files.stat_table())
        _, _, paths, rest = self._haystack()
        return paths + rest

    def path_adding_files(self) -> list[str]:
        """The project files that name ``sys.path`` or ``addsitedir`` (in path order)."""
        if self.files.records is not None:
            return self._refreshed_records().adders(list(self.files.stat_table()))
        return sorted(set(self.mentions(b"sys.path")) | set(self.mentions(b"addsitedir")))

    def recorded_bindings(self, path: str) -> list[ImportBinding] | None:
        record = self._record(path)
        return None if record is None else record.bindings


def method_needle(name: str) -> bytes:
    """What a file defining a method ``name`` contains."""
    return f"def {name}(".encode()


def callee_needle(name: str) -> bytes:
    """What a caller of ``name`` (``build`` or ``Cls.build``) must contain: its last part."""
    return name.rsplit(".", 1)[-1].encode()
