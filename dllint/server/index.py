"""The project index as an editor sees it: open buffers stand for the files on disk.

A language server keeps one index per project warm for the whole session. What it adds to
the command line's index is that a file's text may be an unsaved buffer, and that files change
while the index lives. Open buffers are kept out of the joined text that answers "which files
name X" (they change on every keystroke; that text holds every other file and is rebuilt only
when a file changes on disk), and scanned on their own instead: the index's parts do that for
any buffer in ``files.buffers`` (:class:`~dllint.project.files.ProjectFiles`,
:meth:`~dllint.project.search.TextIndex.forget`); this class sets them and says what is stale.
"""

from __future__ import annotations

import os

from dllint.deps import CallersDep, Deps, LoaderClassesDep
from dllint.project import ProjectIndex

Changed = dict[str, tuple[bytes | None, ...]]  # a changed file -> its texts (before, after; None: none)


class BufferIndex(ProjectIndex):
    """A :class:`ProjectIndex` whose files may be open editor buffers."""

    def set_buffer(self, path: str, data: bytes | None) -> None:
        """``path``'s text is ``data`` until it is set to None (closed: the disk again)."""
        path = os.path.realpath(path)
        was_joined = self.text.joined(path)
        if data is None:
            self.files.buffers.pop(path, None)
        else:
            self.files.buffers[path] = data
        self.forget(path, rejoin=was_joined or data is None)

    def file_changed(self, path: str) -> None:
        """A file changed, appeared or went away on disk."""
        path = os.path.realpath(path)
        if path not in self.files.buffers:
            self.files.relist()  # a new file is a new member of the project
            self.forget(path, rejoin=True)

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
            if isinstance(dependency, LoaderClassesDep) and dependency.digest != self.text.loader_class_names()[1]:
                return True
        return False


def _names(question: CallersDep, deps: Deps, changed: Changed) -> bool:
    """A changed file the lint did not read names the question's needle (and gate), before or after."""
    return any(
        text is not None and question.needle in text and (question.gate is None or question.gate in text)
        for path, texts in changed.items()
        if path not in deps
        for text in texts
    )
