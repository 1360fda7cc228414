"""The project's files' summaries and content digests: a part of the project index with its
own caches (each file's entry, by its stat; summaries by content) and :meth:`Summaries.forget`.

A file is summarized when a question first needs it (:meth:`Summaries.summary`); its digest
(what a dependent file's cached findings record) needs no summary, and, where an earlier run's
record says what the file held at its stat, no read."""

from __future__ import annotations

import os
from collections import OrderedDict

from dllint.config import Settings
from dllint.facts.flow.records import FileSummary
from dllint.project.base import MAX_SUMMARIES_BY_CONTENT
from dllint.project.files import ProjectFiles
from dllint.project.records import content_digest
from dllint.project.search import TextIndex
from dllint.project.sources import python_text


class _Entry:
    __slots__ = ("stat", "summary", "digest")

    def __init__(self, stat: tuple[int, int], summary: FileSummary | None, digest: str) -> None:
        self.stat = stat
        self.summary = summary  # summarized when first asked for
        self.digest = digest  # the file's content digest (what dependents record)


class Summaries:
    def __init__(self, files: ProjectFiles, text: TextIndex, settings: Settings) -> None:
        self.files = files
        self.text = text  # a file's bytes, from the joined text where they are in it
        self.settings = settings
        self.summarized = 0  # files summarized: for tests and benchmarks
        self._entries: dict[str, _Entry] = {}
        self._by_digest: OrderedDict[str, FileSummary] = OrderedDict()  # see MAX_SUMMARIES_BY_CONTENT

    def forget(self, path: str) -> None:
        """``path``'s entry (its summary stays known by its content)."""
        self._entries.pop(path, None)

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
                data = self.text.read(path) or b""
            text = python_text(path, data)
            from dllint.facts.flow.summary import summarize  # (the flow engine: only where a file is summarized)

            try:
                entry.summary = summarize(path, text, self.settings, own=self.files.own_roots)
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

    def known_digest(self, path: str) -> str:
        """The digest of a summary already read."""
        return self._entries[path].digest

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
        records = self.files.records
        record = records.get(path, (*stat, st.st_ino), load=False) if records is not None else None
        if record is not None:
            if entry is None or entry.digest != record.digest:
                entry = self._entries[path] = _Entry(stat, None, record.digest)
            entry.stat = stat
            return entry, None
        data = self.text.read(path)
        if data is None:
            return None
        content = content_digest(data)
        if entry is not None and entry.digest == content:
            entry.stat = stat
            return entry, data
        entry = self._entries[path] = _Entry(stat, None, content)
        return entry, data
