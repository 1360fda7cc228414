"""What a file's analysis may ask of the rest of its project: one typed protocol, defined
here, below the project layer that answers it (:class:`dllint.project.index.ProjectView`).
Answers are the engine's own records (:mod:`dllint.facts.flow.summary`): the project never
sees, nor calls back into, the asking file's analysis."""

from __future__ import annotations

import ast
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Protocol

from dllint.deps import Deps
from dllint.facts.flow.records import CallShape, Copies

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.config_reads import ConfigRead
    from dllint.facts.flow.model import Constant, Element, Guard
    from dllint.facts.flow.records import ClassSummary, Effects, LoaderSummary, Returned
    from dllint.facts.scopes import Scope
    from dllint.findings import ConfigKey


class CallerEffects(NamedTuple):
    """What one call in another file (``where``: "train.py:12") does with a returned value."""

    where: str
    effects: Effects
    rebuilt: str = ""  # "file:line" of the call in a loop that builds the value anew each pass (CallSummary.rebuilt)


class PassedArguments(NamedTuple):
    """What one call in another file passes to a function of this file: which arguments
    (``shape``), those that resolve to JSON constants in its file (by position "0" and
    keyword), those that are the machine's CPU count, those that are CUDA devices
    ("cuda", or "maybe": cuda if available), and those a command-line option sets ("--workers")."""

    shape: CallShape
    constants: dict[str, Constant]
    cpu_counts: tuple[str, ...] = ()
    cuda_devices: Mapping[str, str] = MappingProxyType({})
    options: Mapping[str, str] = MappingProxyType({})
    dicts: Mapping[str, list[dict[str, Constant]]] = MappingProxyType({})  # see CallSummary.dicts


class ProjectQueries(Protocol):
    """``facts.project``: the questions about other files, and the files read to answer
    them (``deps``: the :class:`~dllint.deps.Deps` the file's findings depend on)."""

    summarizing: bool  # while a file is summarized: calls are named (targets), never followed
    deps: Deps

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        """The project target a call goes to (``"0:pkg.data.build"``, ``"...@"`` bound)."""

    def parameter_effects(self, target: str, argument: str, devices: Mapping[str, str] | None = None) -> Effects | None:
        """What the project function ``target`` does with an argument (position or keyword);
        ``devices``: the call's arguments that are CUDA devices (see Effects.copy_devices)."""

    def entry_effects(self, target: str, argument: str, entry: str) -> Effects | None:
        """The same for the dict entry at path ``entry`` of a dict argument."""

    def caller_effects(self, function: str, element: Element | None, guards: tuple[Guard, ...]) -> list[CallerEffects] | None:
        """What the calls of this file's ``function`` in other files do with its result (an
        ``element`` of it); None when no other file calls it."""

    def importer_effects(self, name: str) -> list[CallerEffects] | None:
        """What each other file importing this file's module-level ``name`` does with the value
        (``where``: "train.py:4", the line that iterates it); None when none imports it."""

    def loaders_elsewhere(self, facts: FileFacts, cls: ast.ClassDef) -> list[tuple[str, LoaderSummary]]:
        """Loaders of other files built over instances of this file's class."""

    def returned(self, facts: FileFacts, func: ast.expr, scope: Scope) -> list[Returned]:
        """What the project function a call goes to returns."""

    def reaches(self, facts: FileFacts, func: ast.expr, scope: Scope, flag: str) -> bool:
        """The project function a call goes to, or what it calls, has a summary flag."""

    def method_reaches(self, name: str, flag: str) -> bool:
        """A method ``name`` of another project file, or what it calls, has a summary flag."""

    def methods_named(self, name: str) -> list[str] | None:
        """Where other project files define a method ``name``; None: too many to tell."""

    def config_value(self, facts: FileFacts, read: ConfigRead) -> tuple[Any, ConfigKey] | None:
        """The value the project's config files agree on for a config read, and its key."""

    def config_handed_whole(self, key_path: tuple[str, ...]) -> bool:
        """Some project file splats the config mapping at ``key_path`` into a DataLoader."""

    def class_fact(self, facts: FileFacts, func: ast.expr, scope: Scope, fact: str) -> bool:
        """A fact (``endless``, ``keeps_iterator``) of the project class a call constructs."""

    def project_class(self, facts: FileFacts, func: ast.expr, scope: Scope) -> ClassSummary | None:
        """The summary of the project class a call constructs."""

    def named_elsewhere(self, name: str) -> bool:
        """Another project file names ``name`` (a byte scan)."""

    def star_imported(self, names: frozenset[str]) -> dict[str, str]:
        """Of ``names`` (read in this file, bound nowhere in it), those that the project modules
        it star-imports bind by importing a module or name, through their own star imports
        too: name -> the dotted path imported (``data`` -> ``torch.utils.data``)."""

    def calls_elsewhere(self, function: str, complete: bool = True) -> list[PassedArguments] | None:
        """What each call of this file's module-level ``function`` in another project file
        passes; None when a file that names it makes no call the analysis reads (it may pass
        the function on, or discard what it returns; not asked when ``complete`` is False: the
        calls read are evidence of what some call passes), or too many files name it."""

    def class_ancestors(self, facts: FileFacts, base: ast.expr) -> list[ClassSummary]:
        """The project class a base expression names, and its ancestors in every file."""

    def loader_class(self, facts: FileFacts, func: ast.expr) -> bool:
        """The callee is a DataLoader subclass of another project module (its scope is read only
        where the callee's name may be one: most calls are answered from the text alone)."""

    def parameter_copies(self, target: str, argument: str) -> Copies:
        """How the project function ``target`` (``".m"``: a method ``m`` of some project class)
        copies the batch handed in as ``argument`` to CUDA."""

    def loader_class_may_pin(self, facts: FileFacts, func: ast.expr) -> bool:
        """That subclass (or a project base of it) may pin by default: its code names pin_memory."""


class NullProject:
    """The questions the facts ask ``facts.project`` (:class:`ProjectQueries`), answered for
    a file with nothing else in view (the base of what the project index hands out; a
    test's stand-in)."""

    summarizing = False
    deps: Deps = Deps()  # never added to: a view records in its own

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        return None

    def parameter_effects(self, target: str, argument: str, devices: Mapping[str, str] | None = None) -> Effects | None:
        return None

    def entry_effects(self, target: str, argument: str, entry: str) -> Effects | None:
        return None

    def caller_effects(self, function: str, element: Element | None, guards: tuple[Guard, ...]) -> list[CallerEffects] | None:
        return None

    def importer_effects(self, name: str) -> list[CallerEffects] | None:
        return None

    def loaders_elsewhere(self, facts: FileFacts, cls: ast.ClassDef) -> list[tuple[str, LoaderSummary]]:
        return []

    def returned(self, facts: FileFacts, func: ast.expr, scope: Scope) -> list[Returned]:
        return []

    def reaches(self, facts: FileFacts, func: ast.expr, scope: Scope, flag: str) -> bool:
        return False

    def method_reaches(self, name: str, flag: str) -> bool:
        return False

    def methods_named(self, name: str) -> list[str] | None:
        return []

    def config_value(self, facts: FileFacts, read: ConfigRead) -> tuple[Any, ConfigKey] | None:
        return None

    def config_handed_whole(self, key_path: tuple[str, ...]) -> bool:
        return False

    def class_fact(self, facts: FileFacts, func: ast.expr, scope: Scope, fact: str) -> bool:
        return False

    def project_class(self, facts: FileFacts, func: ast.expr, scope: Scope) -> ClassSummary | None:
        return None

    def named_elsewhere(self, name: str) -> bool:
        return False

    def star_imported(self, names: frozenset[str]) -> dict[str, str]:
        return {}

    def calls_elsewhere(self, function: str, complete: bool = True) -> list[PassedArguments] | None:
        return []

    def class_ancestors(self, facts: FileFacts, base: ast.expr) -> list[ClassSummary]:
        return []

    def loader_class(self, facts: FileFacts, func: ast.expr) -> bool:
        return False

    def loader_class_may_pin(self, facts: FileFacts, func: ast.expr) -> bool:
        return True

    def parameter_copies(self, target: str, argument: str) -> Copies:
        return Copies()
