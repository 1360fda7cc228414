"""The flow engine's shared ground: the file's scopes and parents, the loops around a node,
the same-file functions and classes a call reaches, and the recursion's entry points that the
modules split by how values move (names, calls, returns, containers) implement."""

from __future__ import annotations

import ast
from abc import abstractmethod
from typing import TYPE_CHECKING

from dllint.facts.flow.lookups import FileLookups
from dllint.facts.flow.model import Element, FlowState, Guard, Loops, Path, Use, Via, uses_from, without_loops
from dllint.facts.scopes import Scope

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.names import Names
    from dllint.facts.flow.stores import Stores
    from dllint.facts.scopes import Binding

# Builtins that consume an iterable on the spot.
ITERATING_BUILTINS = frozenset({"iter", "list", "tuple", "sorted", "set", "sum", "any", "all", "min", "max", "dict"})
# Calls that wrap an iterable and hand back something that iterates it.
WRAPPING_BUILTINS = frozenset({"enumerate", "zip", "map", "filter", "reversed"})
WRAPPING_QUALNAMES = frozenset(
    {
        "tqdm.tqdm",
        "tqdm.auto.tqdm",
        "tqdm.notebook.tqdm",
        "tqdm.std.tqdm",
        "itertools.islice",
        "itertools.chain",
        "itertools.cycle",
        "rich.progress.track",
    }
)
# Builtins that look at a value without iterating it.
NEUTRAL_BUILTINS = frozenset(
    {"len", "print", "isinstance", "hasattr", "getattr", "type", "id", "repr", "str", "vars", "callable", "setattr"}
)
MAX_CALL_DEPTH = 6
MAX_STEPS = 2000  # flow steps for one question; real code needs a few dozen


class FlowBase:
    """State shared by the flow modules (see :mod:`dllint.facts.usage`)."""

    names: Names
    stores: Stores

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.parents = facts.scopes.parents
        self.lookups = FileLookups(facts)
        self._loader_uses: dict[ast.Call, list[Use]] = {}
        self._entry_loops: dict[tuple[ast.Call, Via], Loops] = {}  # (call, via before it) -> loops around the call's caller

    def _fresh_at(self, call: ast.Call, scope: Scope, here: Loops, uses: list[Use]) -> list[Use]:
        """``uses`` of the value ``call`` returns, seen from a frame whose loops are ``here``: the
        loops around ``call`` build a fresh value on every pass, so they repeat no use of one."""
        return without_loops(uses, set(map(id, self.lookups.enclosing_loops(call, scope))), here)

    def _callers_elsewhere(
        self, func: ast.AST, expr: ast.AST, here: Loops, via: Via, element: Element | None, guards: tuple[Guard, ...]
    ) -> list[Use] | None:
        """What calls of ``func`` in other project files do with the value it returns (an
        ``element`` of it), as uses; None when no other file calls it."""
        project = self.facts.project
        name = self.lookups.qualified_name(func)
        found = project.caller_effects(name, element, guards) if project is not None and name is not None else None
        if found is None or name is None:
            return None
        return [u._replace(caller=(name, c.where)) for c in found for u in uses_from(c.effects, expr, expr, here, via, c.where)]

    # -- the recursion's entry points, implemented by the flow modules --------------

    @abstractmethod
    def _uses_of_expr(self, expr: ast.AST, state: FlowState) -> list[Use]:
        ...

    @abstractmethod
    def _uses_of_element(self, container: ast.AST, index: Element, state: FlowState, rest: Path = ()) -> list[Use] | None:
        ...

    @abstractmethod
    def _handed_on(self, func: ast.AST, expr: ast.AST, state: FlowState) -> list[Use] | None:
        ...

    @abstractmethod
    def _returned(self, expr: ast.AST, state: FlowState) -> list[Use]:
        ...

    @abstractmethod
    def _stored_in_dict(
        self, statement: ast.Assign | ast.AnnAssign | ast.NamedExpr, target: ast.AST, path: Path, state: FlowState
    ) -> list[Use] | None:
        ...

    @abstractmethod
    def _returned_element(self, container: ast.AST, index: Element, state: FlowState, rest: Path = ()) -> list[Use] | None:
        ...
