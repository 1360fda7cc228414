"""The flow engine's shared ground: the file's scopes and parents, the loops around a node,
the same-file functions and classes a call reaches, and the recursion's entry points that the
modules split by how values move (names, calls, returns, containers) implement."""

from __future__ import annotations

import ast
from abc import abstractmethod
from typing import TYPE_CHECKING

from dllint.facts.flow.model import Element, FlowState, Guard, Loops, Path, Use, Via, uses_from, without_loops
from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.facts.walk import walk

if TYPE_CHECKING:
    from dllint.facts import FileFacts
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
LOOPS = (ast.For, ast.AsyncFor, ast.While)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
MAX_CALL_DEPTH = 6
MAX_STEPS = 2000  # flow steps for one question; real code needs a few dozen



def _method_of(cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name), None)


class FlowBase:
    """State and same-file lookups shared by the flow modules (see :mod:`dllint.facts.usage`)."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.parents = facts.scopes.parents
        self._loader_uses: dict[ast.Call, list[Use]] = {}
        self._entry_loops: dict[tuple[ast.Call, Via], Loops] = {}  # (call, via before it) -> loops around the call's caller
        self._reach: dict[tuple[ast.AST, ast.Name], bool] = {}
        self._resolving: dict[tuple[str, ast.AST], list[tuple[ast.Name, Scope]]] = {}
        self._loads_by_name: dict[str, list[tuple[ast.Name, Scope]]] = {}
        self._self_attributes: dict[ast.ClassDef, dict[str, list[ast.Attribute]]] = {}
        self._method_loops_of: dict[ast.AST, tuple[ast.AST, ...]] = {}
        self._classes: list[ast.ClassDef] | None = None  # every class of the file (_only_method_named)
        for scope in facts.scopes.scopes.values():
            for load in scope.loads:
                self._loads_by_name.setdefault(load.id, []).append((load, scope))

    def enclosing_loops(self, node: ast.AST, scope: Scope) -> tuple[ast.AST, ...]:
        """Loops (and comprehensions) within ``scope`` that repeat ``node``, outermost first."""
        loops: list[ast.AST] = []
        child, current = node, self.parents.get(node)
        while current is not None and current is not scope.node:
            if isinstance(current, LOOPS) and child in current.body:
                loops.append(current)
            elif isinstance(current, COMPREHENSIONS) and child is not current.generators[0].iter:
                loops.append(current)
            elif isinstance(current, ast.comprehension) and child is current.iter:
                pass  # the first generator's iterable is evaluated once; handled at the comprehension
            elif isinstance(current, FUNCTION_NODES):
                break
            child, current = current, self.parents.get(current)
        return tuple(reversed(loops))

    def _if_arms(self, node: ast.AST) -> dict[ast.If, str]:
        """For each ``if`` around ``node`` in its function: which arm holds it (body or orelse)."""
        arms: dict[ast.If, str] = {}
        child, current = node, self.parents.get(node)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.If) and child is not current.test:
                arms[current] = "body" if child in current.body else "orelse"
            child, current = current, self.parents.get(current)
        return arms

    # -- containers: loaders in tuples and lists --------------------------------------
    def loads_in(self, name: str, scope: Scope) -> list[ast.Name]:
        """Loads of ``name`` directly in ``scope``."""
        return [load for load, load_scope in self._loads_by_name.get(name, ()) if load_scope is scope]

    # -- helpers ---------------------------------------------------------------
    def loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        """Loads of ``name`` (in ``scope`` and the scopes nested in it) that the binding in
        ``scope`` reaches, each with the scope it is read in."""
        return self._loads_resolving_to(name, scope)

    def _loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        key = (name, scope.node)
        cached = self._resolving.get(key)
        if cached is not None:
            return cached
        found = []
        for load, candidate in self._loads_by_name.get(name, ()):
            if self._is_within(candidate, scope):
                resolved = self.facts.scopes.lookup(name, candidate)
                if resolved is not None and resolved[0] is scope:
                    found.append((load, candidate))
        self._resolving[key] = found
        return found

    @staticmethod
    def _is_within(inner: Scope, outer: Scope) -> bool:
        current: Scope | None = inner
        while current is not None:
            if current is outer:
                return True
            current = current.parent
        return False

    @staticmethod
    def _outermost_function_below(inner: Scope, outer: Scope) -> ast.AST | None:
        current: Scope | None = inner
        below = None
        while current is not None and current is not outer:
            if current.is_function:
                below = current.node
            current = current.parent
        return below

    def _call_sites(self, func: ast.AST, scope: Scope) -> list[ast.Call] | None:
        """Calls of a nested ``def`` from ``scope``; None if it is used any other way."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        sites = []
        for load, _ in self._loads_resolving_to(func.name, scope):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and parent.func is load:
                sites.append(parent)
            else:
                return None
        return sites

    def same_file_function(self, func: ast.expr, scope: Scope) -> ast.AST | None:
        """The ``def`` a call goes to, when it is in this file: ``f(...)``, ``self.method(...)``,
        or ``obj.method(...)`` where ``obj`` is a name bound once to an instance of a class of
        this file (``model = SAGE(); model.inference(x, loader)``)."""
        if isinstance(func, ast.Name):
            found = self.facts.scopes.lookup(func.id, scope)
            if found and len(found[1]) == 1 and found[1][0].kind == "def":
                return found[1][0].node
            return None
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        cls = self._enclosing_class(scope) if func.value.id == "self" else self._instance_class(func.value.id, scope)
        if cls is not None:
            return _method_of(cls, func.attr)
        if func.value.id != "self" and self._of_unknown_class(func.value.id, scope):
            return self._only_method_named(func.attr)
        return None

    def _of_unknown_class(self, name: str, scope: Scope) -> bool:
        """``name`` is a parameter (``def test(model, loader): model.inference(...)``), not a
        module, a class or a value whose class this file tells."""
        found = self.facts.scopes.lookup(name, scope)
        return found is not None and len(found[1]) == 1 and found[1][0].kind == "param"

    def _only_method_named(self, name: str) -> ast.AST | None:
        """The method ``name`` when exactly one class of this file defines it (a dunder or a
        private name says nothing about which object it is called on)."""
        if name.startswith("_"):
            return None
        found = [m for m in (_method_of(c, name) for c in self._module_classes()) if m is not None]
        return found[0] if len(found) == 1 else None

    def _module_classes(self) -> list[ast.ClassDef]:
        if self._classes is None:
            self._classes = [node for node in walk(self.facts.tree) if isinstance(node, ast.ClassDef)]
        return self._classes

    def _instance_class(self, name: str, scope: Scope) -> ast.ClassDef | None:
        """The class of this file that ``name`` (bound once, to ``Cls(...)``) is an instance of."""
        found = self.facts.scopes.single_value(name, scope)
        built = found[1].value if found is not None else None
        if not (isinstance(built, ast.Call) and isinstance(built.func, ast.Name)) or found is None:
            return None
        cls = self.facts.scopes.lookup(built.func.id, found[0])
        node = cls[1][0].node if cls is not None and len(cls[1]) == 1 and cls[1][0].kind == "class" else None
        return node if isinstance(node, ast.ClassDef) else None

    def _same_file_init(self, func: ast.expr, scope: Scope) -> ast.AST | None:
        """``__init__`` of the same-file class a call constructs (a name bound only to it)."""
        if not isinstance(func, ast.Name):
            return None
        found = self.facts.scopes.lookup(func.id, scope)
        if not found or len(found[1]) != 1 or found[1][0].kind != "class":
            return None
        for stmt in found[1][0].node.body:  # type: ignore[attr-defined]
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init__":
                return stmt
        return None

    def _enclosing_class(self, scope: Scope) -> ast.ClassDef | None:
        current: Scope | None = scope
        while current is not None:
            if isinstance(current.node, ast.ClassDef):
                return current.node
            current = current.parent
        return None

    def _attributes_of_self(self, cls: ast.ClassDef) -> dict[str, list[ast.Attribute]]:
        """Every ``self.X`` in the class, by ``X``: one walk per class, however many methods
        and stored attributes are asked about (a 5,000-line ``Trainer`` has hundreds)."""
        table = self._self_attributes.get(cls)
        if table is None:
            table = {}
            for node in walk(cls):  # ast.walk's order, built as a list
                if self._is_self_attribute(node):
                    table.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined,arg-type]  # _is_self_attribute: an Attribute
            self._self_attributes[cls] = table
        return table

    @staticmethod
    def _is_self_attribute(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"

    def qualified_name(self, function: ast.AST) -> str | None:
        """``f`` or ``Cls.m``: how other files' summaries name a module-level function or method."""
        parent = self.parents.get(function)
        name = getattr(function, "name", None)
        if isinstance(parent, ast.Module):
            return name
        if isinstance(parent, ast.ClassDef) and isinstance(self.parents.get(parent), ast.Module):
            return f"{parent.name}.{name}"
        return None

    def callers(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """Same-file calls of ``func`` (see :meth:`_callers`)."""
        return self._callers(func)

    def _callers(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """Same-file calls of ``func``: by its name where the name means it, ``self.name(...)``
        inside its class."""
        calls: list[ast.Call] = []
        owner = self.facts.scopes.scope_of(func)
        if isinstance(owner.node, ast.ClassDef):
            for attribute in self._attributes_of_self(owner.node).get(func.name, ()):
                parent = self.parents.get(attribute)
                if isinstance(parent, ast.Call) and parent.func is attribute:
                    calls.append(parent)
            return calls
        for load, _ in self._loads_resolving_to(func.name, owner):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and parent.func is load:
                calls.append(parent)
        return calls

    def _fresh_at(self, call: ast.Call, scope: Scope, here: Loops, uses: list[Use]) -> list[Use]:
        """``uses`` of the value ``call`` returns, seen from a frame whose loops are ``here``: the
        loops around ``call`` build a fresh value on every pass, so they repeat no use of one."""
        return without_loops(uses, set(map(id, self.enclosing_loops(call, scope))), here)

    def _callers_elsewhere(
        self, func: ast.AST, expr: ast.AST, here: Loops, via: Via, element: Element | None, guards: tuple[Guard, ...]
    ) -> list[Use] | None:
        """What calls of ``func`` in other project files do with the value it returns (an
        ``element`` of it), as uses; None when no other file calls it."""
        project = self.facts.project
        name = self.qualified_name(func)
        found = project.caller_effects(name, element, guards) if project is not None and name is not None else None
        if found is None or name is None:
            return None
        return [u._replace(caller=(name, c.where)) for c in found for u in uses_from(c.effects, expr, expr, here, via, c.where)]

    # -- the recursion's entry points, implemented by the flow modules --------------

    @abstractmethod
    def _uses_of_expr(self, expr: ast.AST, state: FlowState) -> list[Use]:
        ...

    @abstractmethod
    def _uses_of_name(self, name: str, state: FlowState, binding: ast.AST | None = None) -> list[Use]:
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
    def _stored(self, target: ast.Attribute, expr: ast.AST, state: FlowState) -> list[Use]:
        ...

    @abstractmethod
    def _stored_in_dict(
        self, statement: ast.Assign | ast.AnnAssign | ast.NamedExpr, target: ast.AST, path: Path, state: FlowState
    ) -> list[Use] | None:
        ...

    @abstractmethod
    def _method_loops(self, function: ast.AST, depth: int) -> tuple[ast.AST, ...]:
        ...

    @abstractmethod
    def _reaches_cached(self, binding: ast.AST, load: ast.Name, bindings: list[Binding]) -> bool:
        ...

    @abstractmethod
    def _returned_element(self, container: ast.AST, index: Element, state: FlowState, rest: Path = ()) -> list[Use] | None:
        ...
