"""What one file's facts see of the project: :class:`ProjectView`, the project's answers to
the :class:`~dllint.facts.flow.queries.ProjectQueries` a file's analysis asks."""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping

from dllint.facts.flow.queries import CallerEffects, PassedArguments
from dllint.facts.flow.queries import NullProject
from dllint.facts.flow.records import ClassSummary, Copies, Effects, LoaderSummary, Returned
from dllint.facts.flow.targets import Target, call_target, target_text
from dllint.knowledge.loaders import library_loader
from dllint.project.base import (
    LOADER_GATE,
    CallRecord,
    MAX_FOLLOW,
)
from dllint.project import base as limits  # read at call time (tests lower them)
from dllint.deps import CallersDep, Deps, LoaderClassesDep, SummaryDep
from dllint.project.search import callee_needle

MAX_STARS = 3  # star imports followed from a file: its own, theirs, and theirs (bat67's main -> FusionNet -> Basic_blocks)

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.config_reads import ConfigRead
    from dllint.facts.flow.model import Element, Guard
    from dllint.facts.scopes import Scope
    from dllint.findings import ConfigKey
    from dllint.project.index import ProjectIndex


class ProjectView(NullProject):
    """What one file's facts see of the project (``facts.project``). Every summary it reads
    is recorded in ``deps`` (a :class:`~dllint.deps.SummaryDep`: path and digest): the file's
    findings depend on them."""

    summarizing = False

    def __init__(self, index: ProjectIndex, path: str, deps: Deps | None = None) -> None:
        self.index = index
        self.path = path
        self.deps = Deps() if deps is None else deps

    def _imports(self, facts: FileFacts) -> dict[str, str]:
        table = getattr(facts, "_project_imports", None)
        if table is None:
            from dllint.facts.flow.targets import project_imports

            table = project_imports(facts.tree, self.index.files.own_roots, facts.nodes)
            facts._project_imports = table  # type: ignore[attr-defined]
        return table

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        return target_text(call_target(facts, self._imports(facts), func, scope))

    # -- flow across files ---------------------------------------------------------------
    def parameter_effects(self, target: str, argument: str, devices: Mapping[str, str] | None = None) -> Effects | None:
        return self.index.queries.parameter_effects(self.path, target, argument, self.deps, devices=devices)

    def entry_effects(self, target: str, argument: str, entry: str) -> Effects | None:
        """What another file's function does with the dict entry at path ``entry`` of a dict
        handed to it whole."""
        return self.index.queries.entry_effects(self.path, target, argument, entry, self.deps)

    def caller_effects(self, function: str, element: Element | None, guards: tuple[Guard, ...]) -> list[CallerEffects] | None:
        """What the project's other files do with the value ``function`` returns (with
        ``element``: with that element of the tuple or list it returns; ``guards``: the
        parameter tests under which it is returned, which a caller's constants may fail)."""
        return self._effects_by_callers(self.path, function, element, 0, guards)

    def _effects_by_callers(
        self, path: str, name: str, element: Element | None, depth: int, guards: tuple[Guard, ...] = ()
    ) -> list[CallerEffects] | None:
        """What the callers of ``name`` in other files do with its result; None when it has none
        (a caller that discards the result, or never receives it, adds nothing)."""
        found_all: list[CallerEffects] = []
        callers = self._callers_in_reach(path, name)
        if not callers:
            return None
        from dllint.facts.flow.model import admitted  # (the flow model: only once callers are found)

        for caller, found in callers:
            if not admitted(guards, found.args):
                continue  # get_loader("finetune") never receives the "pretrain" loader
            self.deps.add(SummaryDep(caller, self.index.summaries.known_digest(caller)))
            effects = found.effects if element is None else found.element(element)
            if found.returned_by and depth < MAX_FOLLOW:
                # ``def build_loader(cfg): return _build_loader(cfg)``: its callers decide
                further = self._effects_by_callers(caller, found.returned_by, element, depth + 1)
                if further is not None:
                    found_all += further
                    effects = replace(effects, stores=False)  # not kept: handed on to them
            entry = str(element) if element is not None and str(element).startswith("[") else ""
            effects = self.index.queries.expand(caller, effects, self.deps, 0, entry)
            where = os.path.relpath(caller, self.index.root)
            rebuilt = f"{where}:{found.rebuilt}" if found.rebuilt and not found.returned_by else ""
            found_all.append(CallerEffects(f"{where}:{found.line}", effects, rebuilt))
        return found_all

    def importer_effects(self, name: str) -> list[CallerEffects] | None:
        """What each other file whose imports bind this file's module-level ``name`` does with
        it (``from data import train_loader``, ``import data`` then ``data.train_loader``, ``as``
        names, re-exports), each file's summary read; None when none does, or more than
        MAX_CALLER_FILES do (out of view, as a function's callers are)."""
        files = self._importers(self.path, name)
        if not files or len(files) > limits.MAX_CALLER_FILES:
            return None
        found: list[CallerEffects] = []
        for importer in self.index.imports.importers(self.path, name):
            summary = self.index.summaries.summary(importer.file) if importer.file != self.path else None
            use = summary[0].imported(name if importer.local == "*" else importer.local) if summary is not None else None
            if use is None:
                continue  # bound inside a function, or not read: nothing known of its passes
            effects = self.index.queries.expand(importer.file, use.effects, self.deps)
            where = os.path.relpath(importer.file, self.index.root)
            found.append(CallerEffects(f"{where}:{use.line}" if use.line else where, effects))
        return found or None

    def _callers_in_reach(self, path: str, name: str) -> list[tuple[str, CallRecord]] | None:
        """The calls of ``name`` (of file ``path``) in the files that import it, the question
        recorded in ``deps``; None when more than MAX_CALLER_FILES files import it."""
        importers = self._importers(path, name)
        if len(importers) > limits.MAX_CALLER_FILES:
            # Too many importers to read each (a helper every script calls): its callers stay out
            # of view, as for a function no other file calls (a loader it returns counts only
            # when it is evidently a training loader), as flake8 sees it one file at a time.
            return None
        return self.index.queries.callers_of(path, name)

    def _importers(self, path: str, name: str) -> list[str]:
        """The other files whose imports bind ``name`` of ``path``, recorded in ``deps``: each
        one's digest, and the question itself (a file that starts importing it names it, which
        :meth:`ProjectIndex.reconcile` sees)."""
        self.deps.add(CallersDep(callee_needle(name)))
        files = [other for other in self.index.imports.importer_files(path, name) if other != self.path]
        self._record_digests(files[: limits.MAX_CALLER_FILES + 1])
        return files

    def _record_digests(self, files: list[str]) -> None:
        """Each file's content digest in ``deps``: a change to one re-lints this file."""
        for other in files:
            digest = self.index.summaries.digest(other)
            if digest is not None:
                self.deps.add(SummaryDep(other, digest))

    def loaders_elsewhere(self, facts: FileFacts, cls: ast.ClassDef) -> list[tuple[str, LoaderSummary]]:
        """Loaders in other project files built over instances of this file's class ``cls``."""
        if not isinstance(facts.scopes.parents.get(cls), ast.Module):
            return []
        self.deps.add(CallersDep(cls.name.encode(), LOADER_GATE))
        self._record_digests(self.index.queries.class_importers(self.path, cls.name))
        found = self.index.queries.loaders_of_class(self.path, cls.name)
        for other, _ in found:
            self.deps.add(SummaryDep(other, self.index.summaries.known_digest(other)))
        return [(f"{os.path.relpath(other, self.index.root)}:{loader.line}", loader) for other, loader in found]

    def returned(self, facts: FileFacts, func: ast.expr, scope: Scope) -> list[Returned]:
        """What the project function ``func`` calls returns (:class:`Returned` entries)."""
        target = self.target_of(facts, func, scope)
        if target is None:
            return []
        found = self.index.definitions.function(self.path, target, self.deps)
        return found[1].returns if found is not None else []

    def reaches(self, facts: FileFacts, func: ast.expr, scope: Scope, flag: str) -> bool:
        """The project function ``func`` calls (in another module), or what it calls on, has
        the summary flag ``flag`` (``worker_info``, ``epoch_state``)."""
        target = self.target_of(facts, func, scope)
        return target is not None and self.index.queries.target_reaches(self.path, Target.parse(target).unbound, flag, self.deps)

    def method_reaches(self, name: str, flag: str) -> bool:
        """A method ``name`` of another project file, or what it calls on, has ``flag``."""
        return self.index.queries.method_reaches(name, flag, self.deps, self.path)

    def methods_named(self, name: str) -> list[str] | None:
        """Where the project's other files define a method ``name`` (placeholders left out);
        None when too many files define one to tell."""
        named = self.index.queries.methods_named(name, exclude=self.path)
        self.index.queries.record_method_mentions(self.deps, self.path, name)
        if named is None:
            return None
        found = [(path, qualified) for path, qualified, _ in named]
        return [f"{os.path.relpath(path, self.index.root)}:{qualified}" for path, qualified in found]

    # -- config files -------------------------------------------------------------------------
    def config_value(self, facts: FileFacts, read: ConfigRead) -> tuple[Any, ConfigKey] | None:
        """(value, :class:`~dllint.findings.ConfigKey`) of the config key ``read``
        (:class:`~dllint.facts.config_reads.ConfigRead`) in the project's config files; the
        files read become deps."""
        from dllint.project.config_values import config_value

        return config_value(read, self.path, str(self.index.root), self.deps)

    def config_handed_whole(self, key_path: tuple[str, ...]) -> bool:
        """Some project file splats the config mapping at ``key_path`` into a DataLoader
        (:mod:`dllint.project.config_links`); the files asked become deps."""
        return self.index.config_links.handed_whole(key_path, self.deps)

    # -- classes ----------------------------------------------------------------------------
    def class_fact(self, facts: FileFacts, func: ast.expr, scope: Scope, fact: str) -> bool:
        """A fact of the project class ``func`` constructs (``endless``, ``keeps_iterator``)."""
        found = self.project_class(facts, func, scope)
        return bool(found and getattr(found, fact))

    def project_class(self, facts: FileFacts, func: ast.expr, scope: Scope) -> ClassSummary | None:
        target = self.target_of(facts, func, scope)
        if target is None or Target.parse(target).bound:
            return None
        found = self.index.definitions.class_summary(self.path, target, self.deps)
        if found is None:
            return None
        self.deps.add(SummaryDep(found[0], self.index.summaries.known_digest(found[0])))
        return found[1]

    def named_elsewhere(self, name: str) -> bool:
        """Another project file imports this file's ``name`` (a module-level function or class):
        it may use it. Same-named definitions in files that do not import this one are others';
        a file that starts importing it invalidates the findings (see :meth:`ProjectIndex.reconcile`)."""
        return bool(self._importers(self.path, name))

    def star_imported(self, names: frozenset[str]) -> dict[str, str]:
        """Of ``names``, those bound by the imports of the project modules this file
        star-imports (``from blocks import *`` where ``blocks`` has ``import torch.utils.data as
        data``), through their own star imports up to MAX_STARS deep; the last star import
        binding a name wins, as Python binds it. The modules read are recorded in ``deps``."""
        found: dict[str, str] = {}
        self._star_bindings(self.path, set(names), found, 0, {self.path})
        return found

    def _star_bindings(self, path: str, wanted: set[str], found: dict[str, str], depth: int, seen: set[str]) -> None:
        stars = [b.target for b in self.index.imports.bindings(path) if b.local == "*"]
        for star in reversed(stars):  # the last one binds first (it runs last); earlier ones only fill the rest
            module = self.index.modules.resolve_module(path, star)
            if module is None or module in seen or not wanted:
                continue
            seen.add(module)
            summary = self.index.summaries.summary(module)
            if summary is None:
                continue
            self.deps.add(SummaryDep(module, summary[1]))
            if self.index.text.names(module, b"\n__all__"):
                continue  # only what a module-level __all__ lists is bound (not read here): unknown
            bindings = self.index.imports.bindings(module)
            for binding in reversed(bindings):  # the module's last import of a name is what it holds
                target = Target.parse(binding.target)
                if binding.local in wanted and not binding.local.startswith("_") and target.level == 0:
                    found[binding.local] = target.dotted  # (a relative import names a project module: left to resolve())
                    wanted.discard(binding.local)
            if depth + 1 < MAX_STARS:
                self._star_bindings(module, wanted, found, depth + 1, seen)

    def calls_elsewhere(self, function: str, complete: bool = True) -> list[PassedArguments] | None:
        """What the calls of ``function`` (module-level, this file's) in other files pass. Every
        file importing it must hold a call read to it (a package's ``__init__.py`` that only
        re-exports it excepted), unless not ``complete`` is asked: another use (a callback, a
        result discarded) passes what no summary records."""
        calls = self._callers_in_reach(self.path, function)
        if calls is None:
            return None
        callers = {caller for caller, _ in calls}
        importers = set(self._importers(self.path, function))
        if complete and any(other not in callers and not other.endswith("__init__.py") for other in importers):
            return None
        return [PassedArguments(found.shape, found.args, found.cpu_counts, found.cuda_devices, found.options, found.dicts) for _, found in calls]

    def loader_class(self, facts: FileFacts, func: ast.expr) -> bool:
        """``func`` names a DataLoader subclass of another project module (through its chain
        of project bases), none of whose classes replaces ``__iter__`` with one that never
        reaches torch's iterator (a thread-pool loader starts no worker processes)."""
        names, digest = self.index.text.loader_class_names()
        if self.index.files.listed(self.path) and not _may_name(facts, func, names):
            self.deps.add(LoaderClassesDep(digest))  # (before the target is resolved: most calls stop here)
            return False
        target = self.target_of(facts, func, facts.scopes.scope_of(func))  # (the scopes: built for the few calls left)
        if target is None or Target.parse(target).bound:
            return False
        if Target.parse(target).dotted.rsplit(".", 1)[-1].encode() not in names:
            self.deps.add(LoaderClassesDep(digest))  # no chain of headers reaches a loader: nothing parsed
            return False
        chain = self.index.definitions.ancestors(self.path, target, self.deps)
        return any(cls.loader for cls in chain) and not any(cls.own_iter for cls in chain)

    def parameter_copies(self, target: str, argument: str) -> Copies:
        return self.index.queries.parameter_copies(self.path, target, argument, self.deps)

    def loader_class_may_pin(self, facts: FileFacts, func: ast.expr) -> bool:
        """The project loader class ``func`` names, or a project base of it, names
        ``pin_memory``, or one of them subclasses a library's loader (its own default)."""
        target = self.target_of(facts, func, facts.scopes.scope_of(func))
        chain = self.index.definitions.ancestors(self.path, target, self.deps) if target else []
        return not chain or any(
            cls.names_pin or any(library_loader(base) is not None for base in cls.bases) for cls in chain
        )

    def class_ancestors(self, facts: FileFacts, base: ast.expr) -> list[ClassSummary]:
        """The project class the base expression ``base`` (of a class of this file) names, and
        its ancestors in every project file (their summaries become deps)."""
        target = self.target_of(facts, base, facts.scopes.module)
        if target is None or Target.parse(target).bound:
            return []
        return self.index.definitions.ancestors(self.path, target, self.deps)


def _may_name(facts: FileFacts, func: ast.expr, names: frozenset[bytes]) -> bool:
    """The callee's last name, as written or as imported (``A`` of ``from m import A as B``),
    is among ``names``: the target it resolves to ends in one of them when that may be a
    loader class (an alias of a name among them is among them: this file's ``as`` clauses were
    scanned with the project's, see :mod:`dllint.project.class_text`)."""
    if isinstance(func, ast.Attribute):
        return func.attr.encode() in names
    if not isinstance(func, ast.Name):
        return True
    imported = facts.imports.get(func.id, func.id).rsplit(".", 1)[-1]
    return func.id.encode() in names or imported.encode() in names
