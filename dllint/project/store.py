"""The project's files: their summaries (computed when first asked for, kept by path and by
content digest), their content digests (what a cached result depends on), their stat table, and
what keeps a cached result true (``deps_valid``, ``reconcile``: a new caller in a file never read)."""

from __future__ import annotations

import os
from functools import cached_property
from typing import Any, Iterable

from dllint.deps import CallersDep, ConfigDep, ConfigFileDep, Deps, LoaderClassesDep
from dllint.facts.flow.records import FileSummary
from dllint.project.sources import PROJECT_SUFFIXES, python_text
from dllint.facts.flow.summary import summarize
from dllint.project.base import (
    MAX_SUMMARIES_BY_CONTENT,
    IndexBase,
    MAX_PROJECT_FILES,
    SKIPPED_DIRS,
    _Entry,
)
from dllint.project.records import content_digest


class StoreIndex(IndexBase):
    def forget(self, path: str, rejoin: bool = True) -> None:
        """Its entry (summary, digest), the stat table, its record."""
        self._entries.pop(path, None)
        self._stat_table = None
        if self.records is not None:
            self.records.forget(path)
        super().forget(path, rejoin)

    # -- summaries -------------------------------------------------------------------
    def summary(self, path: str) -> tuple[FileSummary, str] | None:
        """(summary, content digest) of a project file; None when it cannot be read."""
        found = self._entry(path)
        if found is None:
            return None
        entry, data = found
        if entry.summary is None:
            entry.summary = self._by_digest.pop(entry.digest, None)  # this content seen before (an undo in an editor)
        if entry.summary is None:
            if data is None:  # the entry was known by its stat: its bytes were not read this time
                data = self._read(path) or b""
            text = python_text(path, data)
            try:
                entry.summary = summarize(path, text, self.settings, own=self.own_roots)
            except Exception:  # noqa: BLE001 - a bug summarizing another file must not fail this one's lint
                entry.summary = FileSummary()
            self.summarized += 1
        self._by_digest[entry.digest] = entry.summary
        while len(self._by_digest) > MAX_SUMMARIES_BY_CONTENT:
            self._by_digest.popitem(last=False)
        return entry.summary, entry.digest

    def digest(self, path: str) -> str | None:
        """The digest of a project file's content (what a dependent file's cache entry
        records); None when it cannot be read. Nothing is summarized."""
        found = self._entry(path)
        return None if found is None else found[0].digest

    def _entry(self, path: str) -> tuple[_Entry, bytes | None] | None:
        """The file's entry, and its bytes where they had to be read to hash them."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        stat = (st.st_mtime_ns, st.st_size)
        entry = self._entries.get(path)
        if entry is not None and entry.stat == stat:
            return entry, None
        # Read by an earlier run at this stat: no read, no hash. Only once the records are read
        # for a question of every file: a warm run reads the few files its hits depend on instead.
        record = self.records.get(path, (*stat, st.st_ino), load=False) if self.records is not None else None
        if record is not None:
            if entry is None or entry.digest != record.digest:
                entry = self._entries[path] = _Entry(stat, None, record.digest)
            entry.stat = stat
            return entry, None
        data = self._read(path)
        if data is None:
            return None
        content = content_digest(data)
        if entry is not None and entry.digest == content:
            entry.stat = stat
            return entry, data
        entry = self._entries[path] = _Entry(stat, None, content)
        return entry, data

    @cached_property
    def own_roots(self) -> frozenset[str]:
        """Names dllint otherwise takes for outside packages (``timm``, ``accelerate``) that are
        packages or modules of this project, at its root or under ``src/``: linting timm's own
        repository, calls into ``timm.data`` are followed."""
        from dllint.facts.flow.targets import EXTERNAL_ROOTS

        found: set[str] = set()
        for base in (self.root, self.root / "src"):
            try:
                names = os.listdir(base)
            except OSError:
                continue
            for name in names:
                stem = name[:-3] if name.endswith(".py") else name
                if stem in EXTERNAL_ROOTS and (name.endswith(".py") or _holds_python(os.path.join(base, name))):
                    found.add(stem)
        return frozenset(found)

    def known_digest(self, path: str) -> str:
        """The digest of a summary this index has already read."""
        return self._entries[path].digest

    def use_records(self, cache: Any) -> None:
        """Answer the questions asked of every file from what ``cache`` kept of each file
        (:mod:`dllint.project.records`), reading only the files changed since."""
        from dllint.project.records import FileRecords

        self.records = FileRecords(str(self.root), cache)
        self.imports.lazy_searches = 0  # every file's imports are in the records: no search of the bytes
        self.imports.keyed_files = self._keyed_files  # which files bind a key: from the records, not every file's bindings

    def deps_valid(self, deps: Deps) -> bool:
        """Every file a file's findings were computed from is still the same (a config's base
        read whole has no digest: never the same)."""
        from dllint.project.config_values import config_digest

        for dependency in deps:
            if isinstance(dependency, (CallersDep, LoaderClassesDep)):
                continue  # kept true by reconcile(), before any lookup
            if isinstance(dependency, ConfigFileDep):
                return False
            if isinstance(dependency, ConfigDep):
                if config_digest(dependency.path) != dependency.digest:
                    return False
            elif self.digest(dependency.path) != dependency.digest:
                return False
        return True

    def reconcile(self, cache: Any) -> None:
        """Before a run's lookups: drop the cached findings of every file whose lint asked "who
        names X" when a file changed since the last run names X now and was not among the
        files that lint read (a new caller of a factory), and of every file told "no loader
        class" by names that may be loader classes that are others now. A file that stops
        naming X changes its summary, which ``deps`` already holds."""
        asked = [(path, deps) for path, deps in cache.entries_deps() if deps.asks_callers()]
        if not asked:
            return  # nothing to keep true; the files' stat is taken when such findings are stored
        before, now = cache.meta(self._meta_key()), self.stat_table()
        if before == now:
            return
        cache.put_meta(self._meta_key(), now)
        if not isinstance(before, dict):
            for path, _ in asked:
                cache.drop(path)
            return
        changed = {p: self._read(p) for p, st in now.items() if before.get(p) != st}
        for path, deps in asked:
            if _named_anew(path, deps, changed) or self._loader_classes_changed(deps):
                cache.drop(path)

    def _loader_classes_changed(self, deps: Deps) -> bool:
        """The names that may be loader classes are not those the lint was answered by."""
        return any(isinstance(d, LoaderClassesDep) and d.digest != self.loader_class_names()[1] for d in deps)

    def remember_files(self, cache: Any, deps_stored: Iterable[Deps]) -> None:
        """After a run: the project's files as this run saw them, once findings that asked
        "who names X" are stored (what the next run's :meth:`reconcile` compares with). The
        table is the one taken before the project's files were read (``_haystack``, or
        :meth:`reconcile`): a file saved during the run then differs from it next run."""
        if any(deps.asks_callers() for deps in deps_stored) and cache.meta(self._meta_key()) != self.stat_table():
            cache.put_meta(self._meta_key(), self.stat_table())
        if self.records is not None:
            self.records.save(cache, self.project_files())

    def _meta_key(self) -> str:
        return f"project-files:{self.root}"

    def stat_table(self) -> dict[str, list[int]]:
        """Each project ``.py`` file's stat (mtime, size, inode), taken once per run, before
        the files are read to answer "who names X" (never after: see :meth:`remember_files`)."""
        if self._stat_table is None:
            table: dict[str, list[int]] = {}
            for path in self.project_files():
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                table[path] = [st.st_mtime_ns, st.st_size, st.st_ino]
            self._stat_table = table
        return self._stat_table

    def project_files(self) -> list[str]:
        """The project's ``.py`` files and notebooks (hidden, virtual-environment and build folders skipped;
        at most MAX_PROJECT_FILES: a root that is a home directory must not stall a run)."""
        if self._files is None:
            files: list[str] = []
            for directory, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
                files += [os.path.join(directory, n) for n in names if n.endswith(PROJECT_SUFFIXES)]
                if len(files) >= MAX_PROJECT_FILES:
                    break
            self._files = sorted(files[:MAX_PROJECT_FILES])
        return self._files


def _named_anew(path: str, deps: Deps, changed: dict[str, bytes | None]) -> bool:
    """A changed file that the lint of ``path`` did not read now holds what one of its "who
    names X" questions searches for (its needle, and its gate when it has one): a new caller
    its cached findings were decided without."""
    needles = [(d.needle, d.gate) for d in deps if isinstance(d, CallersDep)]
    return any(
        other != path and other not in deps and data is not None and needle in data and (gate is None or gate in data)
        for needle, gate in needles
        for other, data in changed.items()
    )


def _holds_python(directory: str) -> bool:
    """A package: ``__init__.py``, or (a namespace package) ``.py`` files in it or one level down."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    if any(e.name.endswith(".py") and e.is_file() for e in entries):
        return True
    for entry in entries:
        if entry.is_dir() and not entry.name.startswith("."):
            try:
                if any(name.endswith(".py") for name in os.listdir(entry.path)):
                    return True
            except OSError:
                continue
    return False
