"""The project index: summaries of the project's files, computed lazily, and the questions
rules ask across files.

Lazy and byte-gated, so a one-file run stays fast: a file is summarized only when a rule
follows a call into it (:meth:`ProjectIndex.summary`), and "who calls ``build_loader``"
summarizes only the files whose bytes contain ``build_loader``
(:meth:`ProjectIndex.callers_of`); inside a file, only the functions asked about
(:class:`~dllint.facts.flow.records.Deferred`). Summaries live as long as the index (a run, a
process of it, an editor session); what a cached finding depends on is its files' content
digests, so a warm run summarizes nothing until a file changed. Its parts: :mod:`dllint.project.store`,
:mod:`~dllint.project.search`, :mod:`~dllint.project.resolve`, :mod:`~dllint.project.queries`,
the module resolver (:mod:`~dllint.project.modules`, a part with its own state), the import graph (:mod:`~dllint.project.imports`) and, in a run with a cache, the files' records
kept between runs (:mod:`~dllint.project.records`); :mod:`dllint.project.view` is what one file sees.
"""

from __future__ import annotations

from pathlib import Path

from dllint.discovery import ROOT_MARKERS, find_project_root  # noqa: F401 - found without the index (a one-file run)
from dllint.project.base import CallRecord, entry_effects  # noqa: F401 - re-exported
from dllint.project.queries import QueryIndex
from dllint.project.resolve import ResolveIndex
from dllint.project.search import SearchIndex, callee_needle, method_needle  # noqa: F401 - re-exported
from dllint.project.store import StoreIndex
from dllint.project.view import ProjectView


class ProjectIndex(StoreIndex, SearchIndex, ResolveIndex, QueryIndex):
    """The whole project as the lint of its files sees it (one per run and process)."""

    def prepare(self) -> None:
        """Build what the first cross-file question of any file builds: the joined text and the
        names that may be classes and loader classes, the import table (before forking workers that share them)."""
        self.loader_class_names()
        self.class_names()
        self.imports.prepare()

    def view(self, path: str) -> ProjectView:
        return ProjectView(self, str(Path(path).resolve()))
