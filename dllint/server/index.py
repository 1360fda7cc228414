"""The project index as an editor sees it: open buffers stand for the files on disk.

A language server keeps one index per project warm for the whole session. What it adds to
the command line's index is that a file's text may be an unsaved buffer, and that files change
while the index lives. Open buffers are kept out of the joined text that answers "which files
name X" (they change on every keystroke; that text holds every other file and is rebuilt only
when a file changes on disk), and scanned on their own instead.
"""

from __future__ import annotations

import os

from dllint.config import Settings
from dllint.deps import CallersDep, Deps, LoaderClassesDep
from dllint.project import ProjectIndex

Changed = dict[str, tuple[bytes | None, ...]]  # a changed file -> its texts (before, after; None: none)


class BufferIndex(ProjectIndex):
    """A :class:`ProjectIndex` whose files may be open editor buffers."""

    def __init__(self, root: str, settings: Settings) -> None:
        super().__init__(root, settings)  # summaries kept for the session, while a file's content stays
        self._buffers: dict[str, bytes] = {}
        self._members: frozenset[str] = frozenset()

    def set_buffer(self, path: str, data: bytes | None) -> None:
        """``path``'s text is ``data`` until it is set to None (closed: the disk again)."""
        path = os.path.realpath(path)
        was_joined = path in self._offsets
        if data is None:
            self._buffers.pop(path, None)
        else:
            self._buffers[path] = data
        self._forget(path, rejoin=was_joined or data is None)

    def file_changed(self, path: str) -> None:
        """A file changed, appeared or went away on disk."""
        path = os.path.realpath(path)
        if path not in self._buffers:
            self._files = None  # a new file is a new member of the project
            self._forget(path, rejoin=True)

    def stale(self, deps: Deps, changed: Changed | None = None) -> bool:
        """Whether findings computed with ``deps`` may have changed since: a summary they read
        changed, or a question they asked of every file may be answered otherwise now.

        ``changed``: the files that changed, each with its texts before and after (None: not
        known, and any question asked of every file counts as stale). A "who names X" question
        is answered otherwise only when a changed file it did not read names X before or after
        (a caller added or removed: what the command line's ``reconcile`` asks); one it read is
        a summary, whose digest ``deps_valid`` checks. Typing in a file that names nothing
        involved re-lints nothing else."""
        if not self.deps_valid(deps):
            return True
        if changed is None:
            return deps.asks_callers()
        for dependency in deps:
            if isinstance(dependency, CallersDep) and _names(dependency, deps, changed):
                return True
            if isinstance(dependency, LoaderClassesDep) and dependency.digest != self.loader_class_names()[1]:
                return True
        return False

    def _forget(self, path: str, rejoin: bool) -> None:
        """Drop what was learnt from ``path``'s old text (each part its own: :meth:`forget`)."""
        self.forget(path, rejoin)
        if not rejoin:  # a buffer: kept out of the joined text, so only its own membership of each answer moves
            self._mentions_anew(path)

    def _mentions_anew(self, path: str) -> None:
        """Each "which files name X" answer kept, with ``path`` (a buffer, searched on its own)
        in or out by its text now: a keystroke costs a search of one file per needle asked, not
        a search of the project's joined text."""
        data = self._read(path)
        for key, files in self._mentions.items():
            needle, gate = key
            named = data is not None and needle in data and (gate is None or gate in data)
            if named != (path in files):
                self._mentions[key] = sorted({*files, path} if named else set(files) - {path})

    # -- the reads the index makes ------------------------------------------------------
    # A buffer's summary needs no override: _read gives the buffer, and set_buffer drops the
    # entry, so the entry kept by the disk's stat is the buffer's until it is set again.
    def _read(self, path: str) -> bytes | None:
        buffer = self._buffers.get(path)
        return buffer if buffer is not None else super()._read(path)

    def _haystack(self):
        if self._hay is None:
            files = self.project_files()
            hidden = [p for p in files if p in self._buffers]
            self._files = [p for p in files if p not in self._buffers]
            try:
                hay, starts, paths, rest = super()._haystack()
            finally:
                self._files = files
            self._hay = (hay, starts, paths, rest + hidden)
            self._members = frozenset(files)  # project files, for buffers opened after the join
        hay, starts, paths, rest = self._hay
        kept = set(rest)
        opened = [p for p in self._buffers if p in self._members and p not in kept and p not in self._offsets]
        return hay, starts, paths, rest + opened


def _names(question: CallersDep, deps: Deps, changed: Changed) -> bool:
    """A changed file the lint did not read names the question's needle (and gate), before or after."""
    return any(
        text is not None and question.needle in text and (question.gate is None or question.gate in text)
        for path, texts in changed.items()
        if path not in deps
        for text in texts
    )
