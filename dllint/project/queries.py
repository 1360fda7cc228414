"""Cross-file questions: the callers of a function in other files and what each does with its
result, the files defining a method, the loaders built over a class elsewhere, what a project
function does with an argument (followed on through other files), and whether a function or
method reaches a summary flag. A part of the project index with its own caches (callers, method
definitions) and :meth:`CrossFileQueries.forget`."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace

from dllint.facts.flow.records import Copies, Effects, FunctionSummary, LoaderSummary
from dllint.facts.flow.targets import Target
from dllint.deps import CallersDep, Deps, SummaryDep
from dllint.project import base as limits  # read at call time (tests lower them)
from dllint.project.base import LOADER_GATE, MAX_FOLLOW, CallRecord, entry_effects
from dllint.project.imports import ImportGraph
from dllint.project.modules import ModuleResolver
from dllint.project.resolve import Definitions
from dllint.project.search import TextIndex, method_needle
from dllint.project.summaries import Summaries


class CrossFileQueries:
    def __init__(
        self, summaries: Summaries, definitions: Definitions, modules: ModuleResolver, imports: ImportGraph, text: TextIndex
    ) -> None:
        self.summaries = summaries
        self.definitions = definitions
        self.modules = modules
        self.imports = imports
        self.text = text
        self._callers: dict[tuple[str, str], list[tuple[str, CallRecord]]] = {}
        self._methods: dict[str, list[str] | None] = {}  # files defining a method name (None: too many)

    def forget(self, path: str) -> None:
        """``path`` changed: every answer may be another (a caller, a definition, a re-export
        anywhere on the way may be in it)."""
        self._callers.clear()
        self._methods.clear()

    # -- who calls, who defines --------------------------------------------------------------
    def callers_of(self, path: str, name: str) -> list[tuple[str, CallRecord]]:
        """Calls of ``name`` (a function or ``Cls.method`` of file ``path``) in other project
        files, with what each caller does with the result. Only the files whose imports bind
        the definition (:class:`~dllint.project.imports.ImportGraph`) and whose bytes may call
        it (:meth:`_may_call`) are summarized."""
        key = (path, name)
        cached = self._callers.get(key)
        if cached is not None:
            return cached
        found: list[tuple[str, CallRecord]] = []
        last = name.rsplit(".", 1)[-1]
        for other in self.imports.importer_files(path, name):
            summary = self.summaries.summary(other) if self._may_call(other, name) else None
            if summary is None:
                continue
            for call in summary[0].calls_named(last):
                direct = self.modules.resolve_once(other, call.target)
                if direct == (path, name) or direct is not None and self.definitions.resolve(other, call.target) == (path, name):
                    found.append((other, CallRecord(call.line, call.effects, call.elements, call.returned_by, call.args, call.shape, call.cpu_counts, call.cuda_devices, call.options, call.dicts, call.rebuilt)))
        self._callers[key] = found
        return found

    def _may_call(self, path: str, name: str) -> bool:
        """``path`` may hold a call whose target ends as ``name``'s does (what
        :meth:`FileSummary.calls_named` finds): a target's last name is an identifier the file
        spells (in the call, or in the import it goes through), so a file whose bytes lack it
        holds none and is not summarized (most importers of a class call none of the methods
        asked about). A method (``Cls.build``) is called as an attribute of a name (a target
        is a chain of names): ``.build`` (spaces, line ends and comments may follow the dot),
        never ``super().build`` nor ``Cls().build``. Unless the file is a notebook, or holds
        non-ASCII bytes, which Python may normalize into an ASCII name (NFKC)."""
        data = self.text.read(path)
        if data is None or path.endswith(".ipynb") or not data.isascii():
            return True
        last = name.rsplit(".", 1)[-1]
        if last.encode() not in data:
            return False
        return "." not in name or _attribute(last).search(data) is not None

    def methods_named(self, name: str, exclude: str = "") -> list[tuple[str, str, FunctionSummary]] | None:
        """(file, ``Cls.name``, summary) of every method ``name`` of a project class outside
        ``exclude`` that is not a placeholder (only ``raise NotImplementedError``); None when
        more than MAX_CANDIDATES files define a ``name`` (too common a name to say which
        runs). Only files whose bytes contain ``def name(`` are summarized."""
        if name not in self._methods:
            mentioned = self.text.mentions(method_needle(name))
            self._methods[name] = mentioned if len(mentioned) <= limits.MAX_CANDIDATES else None
        paths = self._methods[name]
        if paths is None:
            return None
        found: list[tuple[str, str, FunctionSummary]] = []
        for path in paths:
            summary = self.summaries.summary(path) if path != exclude else None
            functions = summary[0].functions if summary is not None else {}
            for qualified in [q for q in functions if q.endswith(f".{name}")]:  # only these are summarized
                function = functions[qualified]
                if function.method and not function.abstract:
                    found.append((path, qualified, function))
        return found

    def record_method_mentions(self, deps: Deps, path: str, name: str) -> None:
        """Record that ``path``'s lint asked which files define a method ``name`` (a file that
        starts defining one re-lints it; see ``ProjectIndex.reconcile``), with their summaries; when too
        many do to be read, the question alone."""
        needle = method_needle(name)
        if self._methods.get(name) is None:
            deps.add(CallersDep(needle))
        else:
            self._record_mentions(deps, path, needle)

    def _record_mentions(self, deps: Deps, path: str, needle: bytes) -> None:
        """Record in ``deps`` that ``path``'s lint asked who names ``needle``, with the content
        digest of every other file that does: a change to one of them invalidates the findings,
        and ``ProjectIndex.reconcile`` a file that starts naming it. Nothing is summarized."""
        deps.add(CallersDep(needle))
        for other in self.text.mentions(needle):
            digest = self.summaries.digest(other) if other != path else None  # its own edits re-lint it anyway
            if digest is not None:
                deps.add(SummaryDep(other, digest))

    def loaders_of_class(self, path: str, name: str) -> list[tuple[str, LoaderSummary]]:
        """Loaders in other project files whose dataset is ``name`` (a class of ``path``); only
        files that import the class and name DataLoader are summarized."""
        found: list[tuple[str, LoaderSummary]] = []
        for other in self.class_importers(path, name):
            summary = self.summaries.summary(other)
            for loader in summary[0].loaders if summary is not None else ():
                if loader.dataset.endswith(name) and self.definitions.resolve(other, loader.dataset) == (path, name):
                    found.append((other, loader))
        return found

    def class_importers(self, path: str, name: str) -> list[str]:
        """The other files that import the class ``name`` of ``path`` and name DataLoader."""
        return [other for other in self.imports.importer_files(path, name) if self.text.names(other, LOADER_GATE)]

    # -- effects across files -------------------------------------------------------------
    def parameter_effects(self, from_path: str, target: str, argument: str, deps: Deps, depth: int = 0,
                          devices: Mapping[str, str] | None = None) -> Effects | None:
        """What the project function ``target`` does with the argument, following it on
        through other project functions; None when the target is not the project's.
        ``devices``: the call's arguments that are CUDA devices, deciding the copies to a
        device parameter (see Effects.copy_devices)."""
        found = self._parameter(from_path, target, argument, deps)
        if found is None:
            return None
        path, function, param = found
        effects = function.effects.get(param) if param is not None else None
        if effects is not None and effects.copy_devices and devices:
            name = self.definitions.function(from_path, target, deps)[2]  # type: ignore[index]  # found just above
            bound = Target.parse(target).bound or name.endswith(".__init__")
            kinds = {devices[key] for key in devices if function.parameter(key, bound) in effects.copy_devices}
            if kinds:
                effects = replace(effects, cuda_copy=effects.cuda_copy.join(Copies("cuda" if "cuda" in kinds else "maybe")))
        if effects is not None and effects.inherited:  # a base's epoch loop (facts/inherited_loops.py)
            from dllint.facts.inherited_loops import resolved  # (the loop model: only where effects are followed)

            effects = resolved(effects, lambda base: self.definitions.ancestors(path, base, deps))
        return self.expand(path, effects or Effects(), deps, depth)

    def entry_effects(self, from_path: str, target: str, argument: str, entry: str, deps: Deps, depth: int = 0) -> Effects | None:
        """What the project function ``target`` does with the dict entry at path ``entry`` of
        the argument (see FunctionSummary.entries); None when the target is not the project's."""
        found = self._parameter(from_path, target, argument, deps)
        if found is None:
            return None
        path, function, param = found
        entries = function.entries.get(param) if param is not None else None
        effects = entry_effects(entries, entry) if entries else Effects(stores=True)
        return self.expand(path, effects, deps, depth, entry)

    def parameter_copies(self, from_path: str, target: str, argument: str, deps: Deps, depth: int = 0) -> Copies:
        """What the project function ``target`` (``".m"``: every method ``m`` of a project class
        of another file) copies to CUDA of the batch handed in as ``argument``, following it on
        through other files."""
        if depth >= MAX_FOLLOW:
            return Copies()
        if target.startswith("."):
            name = target[1:]
            self.record_method_mentions(deps, from_path, name)
            found = [(path, function, function.parameter(argument, True)) for path, _, function in self.methods_named(name, from_path) or ()]
        else:
            one = self._parameter(from_path, target, argument, deps)
            found = [one] if one is not None else []
        kind = Copies()
        for path, function, param in found:
            deps.add(SummaryDep(path, self.summaries.known_digest(path)))
            if param is None:
                continue
            kind = kind.join(function.copies.get(param, Copies()))
            for onward, key in function.copy_onward.get(param, ()):
                kind = kind.join(self.parameter_copies(path, onward, key, deps, depth + 1))
        return kind

    def _parameter(self, from_path: str, target: str, argument: str, deps: Deps) -> tuple[str, FunctionSummary, str | None] | None:
        """(file, summary, parameter name) of the project function ``target`` receiving
        ``argument`` (a position or keyword), its summary recorded in ``deps``."""
        found = self.definitions.function(from_path, target, deps)
        if found is None:
            return None
        path, function, name = found
        deps.add(SummaryDep(path, self.summaries.known_digest(path)))
        return path, function, function.parameter(argument, Target.parse(target).bound or name.endswith(".__init__"))

    def expand(self, path: str, effects: Effects, deps: Deps, depth: int = 0, entry: str = "") -> Effects:
        """``effects`` with its ``follow`` entries resolved (unknown where they lead outside;
        ``entry``: the dict entry a follow of a whole dict is about)."""
        if not effects.follow:
            return effects
        total = replace(effects, follow=[])
        for target, argument, in_loop, *rest in effects.follow:
            whole = [item for item in rest if isinstance(item, str)]
            devices = next((item for item in rest if isinstance(item, dict)), None)
            if whole:  # the dict holding it goes on: that function's entry decides
                asked = entry if whole[0] == "*" else whole[0]
                inner = self.entry_effects(path, target, argument, asked, deps, depth + 1) if depth < MAX_FOLLOW and asked else None
            else:
                inner = self.parameter_effects(path, target, argument, deps, depth + 1, devices) if depth < MAX_FOLLOW else None
            if inner is None:
                total.unknown = True
                continue
            # What the inner function hands back is not followed further here: a summary
            # records calls by their targets only, not what its file does with their results.
            total.merge(inner, repeated=in_loop)
        return total

    def target_reaches(self, path: str, target: str, flag: str, deps: Deps) -> bool:
        """The project function ``target`` (called from ``path``), or what it calls on, has the
        summary flag ``flag`` (``worker_info``, ``epoch_state``)."""
        return self._target_reaches(path, target, _Question(flag, deps, path))

    def method_reaches(self, name: str, flag: str, deps: Deps, origin: str) -> bool:
        """Some method ``name`` of a project file other than ``origin`` (the file asking), or
        what it calls on, has ``flag``. A name more than MAX_CANDIDATES files define is not
        followed."""
        return self._method_reaches(name, _Question(flag, deps, origin), 0)

    def _target_reaches(self, path: str, target: str, question: _Question, depth: int = 0) -> bool:
        found = self.definitions.function(path, target, question.deps)
        if found is None:
            return False
        question.deps.add(SummaryDep(found[0], self.summaries.known_digest(found[0])))
        return self._reaches(found[0], found[2], found[1], question, depth)

    def _method_reaches(self, name: str, question: _Question, depth: int) -> bool:
        candidates = self.methods_named(name, question.origin)
        self.record_method_mentions(question.deps, question.origin, name)
        for path, qualified, function in candidates or ():
            if self._reaches(path, qualified, function, question, depth):
                return True
        return False

    def _reaches(self, path: str, qualified: str, function: FunctionSummary, question: _Question, depth: int) -> bool:
        key = (path, qualified)
        if key in question.seen or len(question.seen) >= limits.MAX_REACH_FUNCTIONS:
            return False
        question.seen.add(key)
        if getattr(function, question.flag):
            return True
        if depth >= limits.MAX_REACH_DEPTH:
            return False
        for onward in function.onward:
            if onward.startswith("."):
                if self._method_reaches(onward[1:], question, depth + 1):
                    return True
            elif self._target_reaches(path, onward, question, depth + 1):
                return True
        return False


class _Question:
    """One question asked across files (:meth:`CrossFileQueries.target_reaches`): the summary flag
    looked for, the asking lint's deps, the asking file, and the functions already looked at."""

    __slots__ = ("flag", "deps", "origin", "seen")

    def __init__(self, flag: str, deps: Deps, origin: str) -> None:
        self.flag, self.deps, self.origin = flag, deps, origin
        self.seen: set[tuple[str, str]] = set()


@functools.lru_cache(maxsize=256)
def _attribute(last: str) -> re.Pattern[bytes]:
    """An attribute whose name ends in ``last``, not of an empty call's result: ``.build``,
    ``h.rebuild``, ``(loader).build``, ``x.\\<newline> build``; not ``super().build``."""
    return re.compile(rb"(?<!\(\))\.(?:\s|\\|#[^\n]*)*\w*" + re.escape(last.encode()))
