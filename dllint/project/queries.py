"""Cross-file questions: what a project function does with an argument (followed on through
other files), and whether a function or method reaches a summary flag."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from dllint.facts.flow.records import Copies, Effects, FunctionSummary
from dllint.facts.flow.targets import Target
from dllint.deps import Deps, SummaryDep
from dllint.project import base as limits  # read at call time (tests lower them)
from dllint.project.base import (
    IndexBase,
    MAX_FOLLOW,
    entry_effects,
)


class QueryIndex(IndexBase):
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
            name = self.function(from_path, target, deps)[2]  # type: ignore[index]  # found just above
            bound = Target.parse(target).bound or name.endswith(".__init__")
            kinds = {devices[key] for key in devices if function.parameter(key, bound) in effects.copy_devices}
            if kinds:
                effects = replace(effects, cuda_copy=effects.cuda_copy.join(Copies("cuda" if "cuda" in kinds else "maybe")))
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
            deps.add(SummaryDep(path, self.known_digest(path)))
            if param is None:
                continue
            kind = kind.join(function.copies.get(param, Copies()))
            for onward, key in function.copy_onward.get(param, ()):
                kind = kind.join(self.parameter_copies(path, onward, key, deps, depth + 1))
        return kind

    def _parameter(self, from_path: str, target: str, argument: str, deps: Deps) -> tuple[str, FunctionSummary, str | None] | None:
        """(file, summary, parameter name) of the project function ``target`` receiving
        ``argument`` (a position or keyword), its summary recorded in ``deps``."""
        found = self.function(from_path, target, deps)
        if found is None:
            return None
        path, function, name = found
        deps.add(SummaryDep(path, self.known_digest(path)))
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
        found = self.function(path, target, question.deps)
        if found is None:
            return False
        question.deps.add(SummaryDep(found[0], self.known_digest(found[0])))
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


@dataclass
class _Question:
    """One question asked across files (:meth:`ProjectIndex.target_reaches`): the summary flag
    looked for, the asking lint's deps, the asking file, and the functions already looked at."""

    flag: str
    deps: Deps
    origin: str
    seen: set[tuple[str, str]] = field(default_factory=set)
