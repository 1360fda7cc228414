"""Who names X: one byte search over every project file joined (mentions), the callers of a
function in other files, the files defining a method."""

from __future__ import annotations

import re
from bisect import bisect_right

from dllint.files import Unreadable, read_bytes
from dllint.facts.flow.records import FunctionSummary, LoaderSummary
from dllint.facts.loaders import LOADER_QUALNAMES
from dllint.knowledge.loaders import LIBRARY_LOADER_NAMES
from dllint.project.class_text import ClassText
from dllint.project.class_text import scan as scan_classes
from dllint.project.imports import ImportBinding
from dllint.project.imports import scan_file as scan_imports
from dllint.project.records import FileRecord, FileRecords, content_digest
from dllint.project import base as limits  # read at call time (tests lower them)
from dllint.deps import CallersDep, Deps, SummaryDep
from dllint.project.base import (
    CallRecord,
    IndexBase,
    LOADER_GATE,
    MAX_KEPT_BYTES,
)


class SearchIndex(IndexBase):
    def forget(self, path: str, rejoin: bool = True) -> None:
        """Every cross-file answer; the joined text and "who names X" when ``path`` rejoins it
        (a buffer's own membership of each answer is the buffer index's to move)."""
        self._callers.clear()
        self._methods.clear()
        self._classes = None
        self._class_names = None
        self._loader_classes = None
        if rejoin:
            self._mentions.clear()
            self._hay = None
            self._offsets.clear()
        super().forget(path, rejoin)

    # -- who names X -----------------------------------------------------------------------
    def mentions(self, needle: bytes, gate: bytes | None = None) -> list[str]:
        """Project files whose bytes contain ``needle`` (and ``gate``), in path order."""
        key = (needle, gate)
        found = self._mentions.get(key)
        if found is None:
            if gate is not None:  # the gate's files only: a search of each one's bytes, not of them all
                found = [p for p in self.mentions(gate) if self._names(p, needle)]
            else:
                hay, starts, paths, rest = self._haystack()
                hits: list[str] = []
                at = hay.find(needle)
                while at != -1:  # one C-speed search per needle, not a Python loop over the files
                    i = bisect_right(starts, at) - 1
                    hits.append(paths[i])
                    at = hay.find(needle, starts[i + 1] if i + 1 < len(starts) else len(hay))
                hits += [p for p in rest if (data := self._read(p)) is not None and needle in data]
                found = sorted(hits)
            self._mentions[key] = found
        return found

    def _names(self, path: str, needle: bytes) -> bool:
        """``path``'s bytes contain ``needle``."""
        span = self._span(path)
        return span is not None and span[0].find(needle, span[1], span[2]) != -1

    def _span(self, path: str) -> tuple[bytes, int, int] | None:
        """(bytes, start, end) where ``path``'s bytes lie: in the joined text without a copy, else
        the file's own bytes; None when it cannot be read."""
        where = self._offsets.get(path)
        if where is not None and self._hay is not None:
            return self._hay[0], where[0], where[1]
        data = self._read(path)  # (an editor's buffer, in the server's index)
        return None if data is None else (data, 0, len(data))

    def class_names(self) -> frozenset[bytes]:
        """Every name that follows ``class `` or `` as `` in a project file (a class statement, an
        import alias, or a string or comment that looks like one): a name not among them is no
        project class, nor one re-exported under another name. One scan of the joined files
        (0.3 s for 79 MB), where a search per name asked costs 22 ms each."""
        if self._class_names is None:
            found = self._class_text()
            self._class_names = frozenset(found.names | found.aliases)
        return self._class_names

    def loader_class_names(self) -> tuple[frozenset[bytes], str]:
        """The names that may name a DataLoader subclass of the project (see
        :mod:`~dllint.project.class_text`), and their digest (what a lint that was answered
        "no" by them records: :class:`~dllint.deps.LoaderClassesDep`)."""
        if self._loader_classes is None:
            import hashlib  # (only a project that asks: a one-file run of most files never does)

            seeds = {name.rsplit(".", 1)[-1].encode() for name in (*LOADER_QUALNAMES, *self.settings.extend_loader_classes)}
            names = self._class_text().reached_from(seeds | {name.encode() for name in LIBRARY_LOADER_NAMES})
            digest = hashlib.blake2b(b"\0".join(sorted(names)), digest_size=12).hexdigest()
            self._loader_classes = (names, digest)
        return self._loader_classes

    def _class_text(self) -> ClassText:
        """The project's class headers and aliases: the joined text's scanned once while it is
        kept, the files beyond it (an editor's open buffers) at each new question."""
        if self._classes is None and self.records is not None:
            self._classes = self._recorded_classes()
        if self._classes is None:
            hay, _, _, rest = self._haystack()
            if self._joined_classes is None or self._joined_classes[0] is not hay:
                self._joined_classes = (hay, scan_classes(hay))  # kept while the joined text is
            found = ClassText()
            found.update(self._joined_classes[1])
            for path in rest:
                found.update(scan_classes(self._read(path) or b""))
            self._classes = found
        return self._classes

    def _recorded_classes(self) -> ClassText:
        """The class text of every project file from the records (:mod:`dllint.project.records`):
        their union as kept, following the files whose stat moved; built from every record when
        a file lost a class name (or none was kept)."""
        records = self._refreshed_records()
        found = records.union()
        if found is None:
            found = ClassText()
            for path in self.stat_table():
                record = self._record(path)
                if record is not None:
                    found.update(record.classes)
            records.set_union(found)
        return found

    def _refreshed_records(self) -> FileRecords:
        """The records, each project file whose stat moved since its record was made read again
        and the files gone forgotten (once per index: the stat table is taken once)."""
        assert self.records is not None
        if not self._records_fresh:
            self._records_fresh = True
            table = self.stat_table()
            for path in self.records.moved(table):
                self._record(path)
            self.records.retain(table)
        return self.records

    def _keyed_files(self, key: str) -> list[str]:
        """The project files whose imports bind the key ``key`` (the import table's question, from
        the records: only those files' bindings are read)."""
        records = self._refreshed_records()
        found = records.key_files(key)
        if found is None:
            keys: dict[str, list[str]] = {}
            for path in self.stat_table():
                for name in dict.fromkeys(binding.key for binding in self.imports.bindings(path)):
                    keys.setdefault(name, []).append(path)
            records.set_keys(keys)
            found = keys.get(key, [])
        return found

    def _record(self, path: str) -> FileRecord | None:
        """``path``'s record, made now when its stat moved since the last (None: no records kept,
        or the file cannot be read)."""
        stat = self.stat_table().get(path) if self.records is not None else None
        if self.records is None or stat is None:
            return None
        key = (stat[0], stat[1], stat[2])
        record = self.records.get(path, key)
        if record is None:
            span = self._span(path)
            if span is None:
                return None
            data, start, end = span
            digest = content_digest(memoryview(data)[start:end])
            bindings = scan_imports(path, data, start, end)
            adds = data.find(b"sys.path", start, end) != -1 or data.find(b"addsitedir", start, end) != -1
            record = FileRecord(key, digest, scan_classes(data, start, end), bindings, adds)
            self.records.put(path, record)
        return record

    def record_mentions(self, deps: Deps, path: str, needle: bytes, gate: bytes | None = None) -> None:
        """Record in ``deps`` that ``path``'s lint asked who names ``needle``, with the content
        digest of every other file that does: a change to one of them invalidates the findings,
        and :meth:`reconcile` a file that starts naming it. Nothing is summarized."""
        deps.add(CallersDep(needle, gate))
        for other in self.mentions(needle, gate):
            digest = self.digest(other) if other != path else None  # its own edits re-lint it anyway
            if digest is not None:
                deps.add(SummaryDep(other, digest))

    def _haystack(self) -> tuple[bytes, list[int], list[str], list[str]]:
        """Every project file's bytes joined by NUL (an identifier never spans two files), with
        where each starts, read once; files beyond MAX_KEPT_BYTES are listed apart, read per scan.
        Each file is appended as it is read (a ``bytearray``), not joined at the end: the files
        and their join were both alive then, twice the project's size at the peak."""
        if self._hay is None:
            self.stat_table()  # before the reads: a file saved after its read differs from the table next run
            joined = bytearray()
            starts: list[int] = []
            paths: list[str] = []
            rest: list[str] = []
            for path in self.project_files():
                data = self._read(path)
                if data is None:
                    continue
                if len(joined) + len(data) > MAX_KEPT_BYTES:
                    rest.append(path)
                    continue
                self._offsets[path] = (len(joined), len(joined) + len(data))
                starts.append(len(joined))
                paths.append(path)
                joined += data
                joined += b"\0"
            self._hay = (joined, starts, paths, rest)  # (bytes and bytearray search alike)
        return self._hay

    def _import_files(self) -> list[str]:
        """Every project file whose imports the import table reads: with records, the stat table's
        (a file's imports read again only when its stat moved); else the joined text's, then the rest."""
        if self.records is not None:
            return list(self.stat_table())
        _, _, paths, rest = self._haystack()
        return paths + rest

    def _path_adding_files(self) -> list[str]:
        """The project files that name ``sys.path`` or ``addsitedir`` (in path order)."""
        if self.records is not None:
            return self._refreshed_records().adders(list(self.stat_table()))
        return sorted(set(self.mentions(b"sys.path")) | set(self.mentions(b"addsitedir")))

    def _recorded_bindings(self, path: str) -> list[ImportBinding] | None:
        record = self._record(path)
        return None if record is None else record.bindings

    def _read(self, path: str) -> bytes | None:
        where = self._offsets.get(path)
        if where is not None and self._hay is not None:
            return bytes(memoryview(self._hay[0])[where[0] : where[1]])
        try:
            return read_bytes(path)  # a regular file, within max-file-size (dllint.files)
        except Unreadable:
            return None

    def callers_of(self, path: str, name: str) -> list[tuple[str, CallRecord]]:
        """Calls of ``name`` (a function or ``Cls.method`` of file ``path``) in other project
        files, with what each caller does with the result. Only the files whose imports bind
        the definition are summarized (:class:`~dllint.project.imports.ImportGraph`)."""
        key = (path, name)
        cached = self._callers.get(key)
        if cached is not None:
            return cached
        found: list[tuple[str, CallRecord]] = []
        for other in self.imports.importer_files(path, name):
            summary = self.summary(other)
            if summary is None:
                continue
            for call in summary[0].calls_named(name.rsplit(".", 1)[-1]):
                direct = self.modules.resolve_once(other, call.target)
                if direct == (path, name) or direct is not None and self.resolve(other, call.target) == (path, name):
                    found.append((other, CallRecord(call.line, call.effects, call.elements, call.returned_by, call.args, call.shape, call.cpu_counts, call.cuda_devices, call.options)))
        self._callers[key] = found
        return found

    def methods_named(self, name: str, exclude: str = "") -> list[tuple[str, str, FunctionSummary]] | None:
        """(file, ``Cls.name``, summary) of every method ``name`` of a project class outside
        ``exclude`` that is not a placeholder (only ``raise NotImplementedError``); None when
        more than MAX_CANDIDATES files define a ``name`` (too common a name to say which
        runs). Only files whose bytes contain ``def name(`` are summarized."""
        if name not in self._methods:
            mentioned = self.mentions(method_needle(name))
            self._methods[name] = mentioned if len(mentioned) <= limits.MAX_CANDIDATES else None
        paths = self._methods[name]
        if paths is None:
            return None
        found: list[tuple[str, str, FunctionSummary]] = []
        for path in paths:
            summary = self.summary(path) if path != exclude else None
            functions = summary[0].functions if summary is not None else {}
            for qualified in [q for q in functions if q.endswith(f".{name}")]:  # only these are summarized
                function = functions[qualified]
                if function.method and not function.abstract:
                    found.append((path, qualified, function))
        return found

    def record_method_mentions(self, deps: Deps, path: str, name: str) -> None:
        """Record that ``path``'s lint asked which files define a method ``name`` (a file that
        starts defining one re-lints it; see :meth:`reconcile`), with their summaries; when too
        many do to be read, the question alone."""
        needle = method_needle(name)
        if self._methods.get(name) is None:
            deps.add(CallersDep(needle))
        else:
            self.record_mentions(deps, path, needle)

    def loaders_of_class(self, path: str, name: str) -> list[tuple[str, LoaderSummary]]:
        """Loaders in other project files whose dataset is ``name`` (a class of ``path``); only
        files that import the class and name DataLoader are summarized."""
        found: list[tuple[str, LoaderSummary]] = []
        for other in self.class_importers(path, name):
            summary = self.summary(other)
            for loader in summary[0].loaders if summary is not None else ():
                if loader.dataset.endswith(name) and self.resolve(other, loader.dataset) == (path, name):
                    found.append((other, loader))
        return found

    def class_importers(self, path: str, name: str) -> list[str]:
        """The other files that import the class ``name`` of ``path`` and name DataLoader."""
        return [other for other in self.imports.importer_files(path, name) if self._names(other, LOADER_GATE)]


def method_needle(name: str) -> bytes:
    """What a file defining a method ``name`` contains."""
    return f"def {name}(".encode()


def callee_needle(name: str) -> bytes:
    """What a caller of ``name`` (``build`` or ``Cls.build``) must contain: its last part."""
    return name.rsplit(".", 1)[-1].encode()
