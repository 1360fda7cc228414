"""The project index: summaries of the project's files, computed lazily, and the questions
rules ask across files.

Lazy and byte-gated, so a one-file run stays fast: a file is summarized only when a rule
follows a call into it (:meth:`Summaries.summary`), and "who calls ``build_loader``"
summarizes only the files whose imports bind it (:meth:`CrossFileQueries.callers_of`); inside
a file, only the functions asked about (:class:`~dllint.facts.flow.records.Deferred`).
Summaries live as long as the index (a run, a process of it, an editor session); what a cached
finding depends on is its files' content digests, so a warm run summarizes nothing until a file
changed.

:class:`ProjectIndex` composes parts, each with its own caches and ``forget``, each handed the
parts it asks (never the index):

- ``files`` (:class:`~dllint.project.files.ProjectFiles`): which files, their stats and bytes,
  the records kept between runs (:mod:`~dllint.project.records`);
- ``text`` (:class:`~dllint.project.search.TextIndex`): who names X, the class names, each
  file's record;
- ``summaries`` (:class:`~dllint.project.summaries.Summaries`): summaries and content digests;
- ``modules`` (:class:`~dllint.project.modules.ModuleResolver`) and ``imports``
  (:class:`~dllint.project.imports.ImportGraph`): where an import goes, who imports what;
- ``definitions`` (:class:`~dllint.project.resolve.Definitions`): what a target names, re-exports followed;
- ``queries`` (:class:`~dllint.project.queries.CrossFileQueries`): the cross-file questions;
- ``config_links`` (:class:`~dllint.project.config_links.ConfigLinks`): which config blocks code hands on whole.

The index itself keeps cached results true (``deps_valid``, ``reconcile``, ``remember_files``);
:mod:`dllint.project.view` is what one file sees (the ``ProjectQueries`` protocol).
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from dllint.config import Settings
from dllint.deps import CallersDep, ConfigDep, ConfigFileDep, Deps, LoaderClassesDep
from dllint.discovery import ROOT_MARKERS, find_project_root  # noqa: F401 - found without the index (a one-file run)
from dllint.project.base import CallRecord, entry_effects  # noqa: F401 - re-exported
from dllint.project.config_links import ConfigLinks
from dllint.project.files import ProjectFiles, moved_since
from dllint.project.imports import ImportGraph
from dllint.project.modules import ModuleResolver
from dllint.project.queries import CrossFileQueries
from dllint.project.resolve import Definitions
from dllint.project.search import TextIndex, callee_needle, method_needle  # noqa: F401 - re-exported
from dllint.project.summaries import Summaries
from dllint.project.view import ProjectView


class ProjectIndex:
    """The whole project as the lint of its files sees it (one per run and process)."""

    def __init__(self, root: str | os.PathLike[str], settings: Settings) -> None:
        self.root = os.path.realpath(root)  # (a string: pathlib is not imported by a run, see modules.py)
        self.settings = settings
        self.files = ProjectFiles(self.root)
        self.text = TextIndex(self.files, settings)
        self.summaries = Summaries(self.files, self.text, settings)
        self.modules = ModuleResolver(self.root, lambda path: self.imports.added_folders(path))
        text = self.text
        self.imports = ImportGraph(
            text.import_files, text.span, text.recorded_bindings, self.modules.resolve_once,
            self.modules.resolve_module, text.mentions, text.path_adding_files,
        )
        self.definitions = Definitions(self.summaries, self.modules, self.imports, text)
        self.queries = CrossFileQueries(self.summaries, self.definitions, self.modules, self.imports, text)
        self.config_links = ConfigLinks(self.text, self.summaries)

    def forget(self, path: str, rejoin: bool = True) -> None:
        """Drop what was learnt from ``path``'s old text (it changed): each part its own.
        ``rejoin``: whether ``path`` goes back into the joined text that answers "who names X"
        (False: an editor buffer, searched on its own)."""
        self.files.forget(path)
        self.summaries.forget(path)
        self.text.forget(path, rejoin)
        self.queries.forget(path)
        self.config_links.forget(path)
        self.modules.forget(path)
        self.imports.forget(path)

    @property
    def summarized(self) -> int:
        """Files summarized so far (for tests and benchmarks)."""
        return self.summaries.summarized

    def prepare(self) -> None:
        """Build what the first cross-file question of any file builds: the joined text and the
        names that may be classes and loader classes, the import table, the files that add to ``sys.path``
        (before forking workers that share them)."""
        self.text.loader_class_names()
        self.text.class_names()
        self.imports.prepare()

    def view(self, path: str) -> ProjectView:
        return ProjectView(self, os.path.realpath(path))

    # -- cached results kept true ------------------------------------------------------------
    def use_records(self, cache: Any) -> None:
        """Answer the questions asked of every file from what ``cache`` kept of each file
        (:mod:`dllint.project.records`), reading only the files changed since."""
        from dllint.project.records import FileRecords

        self.files.records = FileRecords(self.root, cache)
        self.imports.lazy_searches = 0  # every file's imports are in the records: no search of the bytes
        # which files bind a key: from the records, not every file's bindings
        self.imports.keyed_files = lambda key: self.text.keyed_files(key, self.imports.bindings)

    def deps_valid(self, deps: Deps) -> bool:
        """Every file a file's findings were computed from is still the same (a config's base
        read whole has no digest: never the same)."""
        for dependency in deps:
            if isinstance(dependency, (CallersDep, LoaderClassesDep)):
                continue  # kept true by reconcile(), before any lookup
            if isinstance(dependency, ConfigFileDep):
                return False
            if isinstance(dependency, ConfigDep):
                from dllint.project.config_values import config_digest  # (its config readers: only for a config read)

                if config_digest(dependency.path) != dependency.digest:
                    return False
            elif self.summaries.digest(dependency.path) != dependency.digest:
                return False
        return True

    def taken_stat(self, path: str) -> os.stat_result | None:
        """A project file's stat as this run took it (:meth:`ProjectFiles.taken_stat`)."""
        return self.files.taken_stat(path)

    def reconcile(self, cache: Any) -> None:
        """Before a run's lookups: drop the cached findings of every file whose lint asked "who
        names X" when a file changed since the last run names X now and was not among the
        files that lint read (a new caller of a factory), and of every file told "no loader
        class" by names that may be loader classes that are others now. A file that stops
        naming X changes its summary, which ``deps`` already holds."""
        asked = [(path, deps) for path, deps in cache.entries_deps() if deps.asks_callers()]
        if not asked:
            return  # nothing to keep true; the files' stat is taken when such findings are stored
        before, now = cache.meta(self._meta_key()), self.files.packed_stat_table()
        if before == now:
            return
        cache.put_meta(self._meta_key(), now)
        moved = moved_since(before, self.files.stat_table())
        if moved is None:  # no table (or not one this version wrote): every such finding goes
            for path, _ in asked:
                cache.drop(path)
            return
        changed = {p: self.text.read(p) for p in moved}
        for path, deps in asked:
            if _named_anew(path, deps, changed) or self._loader_classes_changed(deps):
                cache.drop(path)

    def _loader_classes_changed(self, deps: Deps) -> bool:
        """The names that may be loader classes are not those the lint was answered by."""
        return any(isinstance(d, LoaderClassesDep) and d.digest != self.text.loader_class_names()[1] for d in deps)

    def remember_files(self, cache: Any, deps_stored: Iterable[Deps]) -> None:
        """After a run: the project's files as this run saw them, once findings that asked
        "who names X" are stored (what the next run's :meth:`reconcile` compares with). The
        table is the one taken before the project's files were read (the joined text, or
        :meth:`reconcile`): a file saved during the run then differs from it next run."""
        if any(deps.asks_callers() for deps in deps_stored) and cache.meta(self._meta_key()) != self.files.packed_stat_table():
            cache.put_meta(self._meta_key(), self.files.packed_stat_table())
        if self.files.records is not None:
            if self.files.records.loaded:
                self.files.records.save(cache, self.files.paths())
            self.files.records.save_folders(cache, self.files.folders)

    def _meta_key(self) -> str:
        return f"project-files:{self.root}"


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
