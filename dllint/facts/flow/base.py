"""The flow engine's shared ground: the file's scopes and parents, the loops around a node,
the same-file functions and classes a call reaches, and the recursion's entry points that the
modules split by how values move (names, calls, returns, containers) implement."""

from __future__ import annotations

import ast
from abc import abstractmethod
from typing import TYPE_CHECKING

from dllint.facts.flow.lookups import FileLookups
from dllint.facts.flow.model import FlowState, Use

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.containers import Containers
    from dllint.facts.flow.dicts import Dicts
    from dllint.facts.flow.names import Names
    from dllint.facts.flow.returns import Returns
    from dllint.facts.flow.stores import Stores

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

    containers: Containers
    dicts: Dicts
    names: Names
    returns: Returns
    stores: Stores

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.parents = facts.scopes.parents
        self.lookups = FileLookups(facts)
        self._loader_uses: dict[ast.Call, list[Use]] = {}

    # -- the recursion's entry points, implemented by the flow modules --------------

    @abstractmethod
    def _uses_of_expr(self, expr: ast.AST, state: FlowState) -> list[Use]:
        ...

