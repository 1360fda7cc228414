"""A light scope table: which names each function/module binds, and how.

This replaces LibCST's ScopeProvider, which measured several times the cost
of parsing; rules only need "is this name bound once, and to what".

It is built from the file's one shared walk (:func:`~dllint.facts.walk.walk_with_parents`):
one pass over that list, no second walk of the tree (which cost 2.8x the shared walk on
the benchmark corpus). Which parts of a ``def``/``class``/``lambda`` run where:
decorators, bases, class keywords and parameter defaults in the enclosing scope, the body
in its own; parameter annotations, return annotations and type parameters are not
recorded (nor given parents). Bindings and loads are listed in walk order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import NamedTuple

from dllint.facts.walk import walk_with_parents

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The node classes ``ScopeTable._record`` looks at (parsed trees hold exact classes, never subclasses).
_RECORDED = frozenset(
    {
        ast.Name, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.withitem, ast.NamedExpr,
        ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.Global, ast.Nonlocal, ast.Delete,
        ast.MatchAs, ast.MatchStar, ast.MatchMapping,
    }
)


class Binding(NamedTuple):
    name: str
    kind: str  # "assign", "def", "class", "import", "param", "other"
    node: ast.AST  # the statement or node that binds
    value: ast.expr | None = None  # for kind == "assign": the bound expression


@dataclass
class Scope:
    """A module, function, class or lambda scope: its bindings and the names read in it."""

    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    loads: list[ast.Name] = field(default_factory=list)  # Name loads directly in this scope

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, FUNCTION_NODES)

    @property
    def is_module(self) -> bool:
        return isinstance(self.node, ast.Module)

    def add(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)


# How a node of the walk is treated: recorded where its parent runs (_LIVE), not at all
# (_DEAD), a def's/lambda's arguments (_ARGS), a class keyword (_CLASS_KEYWORD); _INNER:
# a child recorded in the scope its parent opens.
_LIVE, _DEAD, _ARGS, _CLASS_KEYWORD, _INNER = 0, 1, 2, 3, 4
_SCOPE_MAKERS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
_SPECIAL_PARENTS = _SCOPE_MAKERS


class ScopeTable:
    """Scopes of one module plus a parent map, built in one pass over the file's walk."""

    def __init__(self, tree: ast.Module, nodes: list[ast.AST] | None = None, parent_index: list[int] | None = None) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        self.scopes: dict[ast.AST, Scope] = {}
        self.module = Scope(tree, None)
        self.scopes[tree] = self.module
        if nodes is None or parent_index is None:
            nodes, parent_index = walk_with_parents(tree)
        self._build(nodes, parent_index)

    # -- building ---------------------------------------------------------
    def _build(self, nodes: list[ast.AST], parent_index: list[int]) -> None:
        parents = self.parents
        scopes = self.scopes
        count = len(nodes)
        scope_at: list[Scope] = [self.module] * count  # the scope each node is evaluated in
        mode = bytearray(count)  # _LIVE by default
        owner: dict[int, ast.AST] = {}  # a def's/lambda's arguments, a class keyword -> the def/class
        recorded, special, makers = _RECORDED, _SPECIAL_PARENTS, _SCOPE_MAKERS
        record = self._record
        Name, Load = ast.Name, ast.Load
        for index in range(1, count):
            node = nodes[index]
            above = parent_index[index]
            parent = nodes[above]
            parent_mode = mode[above]
            if parent_mode == _LIVE and parent.__class__ not in special:
                scope = scope_at[above]  # the common case: evaluated where its parent is
            elif parent_mode == _LIVE:
                part = self._part_of(parent, node)
                if part == _DEAD:
                    mode[index] = _DEAD
                    continue
                if part == _ARGS or part == _CLASS_KEYWORD:
                    if part == _ARGS:
                        parents[node] = parent
                    mode[index] = part
                    owner[index] = parent
                    scope_at[index] = scope_at[above]
                    continue
                scope = scopes[parent] if part == _INNER else scope_at[above]
            elif parent_mode == _DEAD or (parent_mode == _ARGS and node.__class__ is ast.arg):
                mode[index] = _DEAD  # annotations, type parameters, parameters (bound by the def itself)
                continue
            else:  # a parameter default, or a class keyword's value: evaluated where the def/class is
                parent = owner[above]
                scope = scope_at[above]
            parents[node] = parent
            scope_at[index] = scope
            node_class = node.__class__
            if node_class is Name:  # a third of all nodes: its one case inline, not a call of _record
                if node.ctx.__class__ is Load:  # type: ignore[attr-defined]
                    scope.loads.append(node)  # type: ignore[arg-type]
            elif node_class in recorded:
                record(node, scope)
            elif node_class in makers:
                if node_class is not ast.Lambda:
                    kind = "class" if node_class is ast.ClassDef else "def"
                    scope.add(Binding(node.name, kind, node))  # type: ignore[attr-defined]
                self._new_scope(node, scope)

    @staticmethod
    def _part_of(parent: ast.AST, node: ast.AST) -> int:
        """Where ``node``, a child of a def, class or lambda, runs: _INNER (the body), _LIVE (the
        enclosing scope: decorators, bases), _ARGS, _CLASS_KEYWORD, or _DEAD (annotations)."""
        if parent.__class__ is ast.ClassDef:
            if node.__class__ is ast.keyword:
                return _CLASS_KEYWORD
            if node in parent.bases or node in parent.decorator_list:  # type: ignore[attr-defined]
                return _LIVE
            return _DEAD if node in getattr(parent, "type_params", ()) else _INNER
        if node is parent.args:  # type: ignore[attr-defined]
            return _ARGS
        if parent.__class__ is ast.Lambda:
            return _INNER
        if node is parent.returns or node in getattr(parent, "type_params", ()):  # type: ignore[attr-defined]
            return _DEAD
        return _LIVE if node in parent.decorator_list else _INNER  # type: ignore[attr-defined]

    def _new_scope(self, node: ast.AST, parent: Scope) -> Scope:
        scope = Scope(node, parent)
        self.scopes[node] = scope
        if not isinstance(node, ast.ClassDef):
            args = node.args  # type: ignore[attr-defined]
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    scope.add(Binding(arg.arg, "param", arg))
        return scope

    def _record(self, node: ast.AST, scope: Scope) -> None:
        if node.__class__ not in _RECORDED:
            return  # most nodes bind nothing: one set lookup instead of the isinstance chain below
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                scope.loads.append(node)
            return
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(target, node.value, node, scope)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._bind_target(node.target, node.value, node, scope)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
            self._bind_target(node.target, None, node, scope)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind_target(node.optional_vars, None, node, scope)
        elif isinstance(node, ast.NamedExpr):
            self._bind_target(node.target, node.value, node, scope)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "*":
                    scope.add(Binding(name, "import", node))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.add(Binding(node.name, "other", node))
        elif isinstance(node, ast.Global):
            scope.globals.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._bind_target(target, None, node, scope)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            scope.add(Binding(node.name, "other", node))
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.add(Binding(node.rest, "other", node))

    def _bind_target(self, target: ast.AST, value: ast.expr | None, stmt: ast.AST, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            scope.add(Binding(target.id, "assign" if value is not None else "other", stmt, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values: list[ast.expr | None]
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and not any(
                isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]
            ):
                values = list(value.elts)
            else:
                values = [None] * len(target.elts)
            for elt, elt_value in zip(target.elts, values):
                self._bind_target(elt, elt_value, stmt, scope)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, stmt, scope)

    # -- queries ------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> Scope:
        """The scope in which ``node`` is evaluated."""
        current = self.parents.get(node)
        child = node
        while current is not None:
            scope = self.scopes.get(current)
            if scope is not None and self._is_inside_body(current, child):
                return scope
            child, current = current, self.parents.get(current)
        return self.module

    @staticmethod
    def _is_inside_body(owner: ast.AST, child: ast.AST) -> bool:
        if isinstance(owner, ast.Module):
            return True
        if isinstance(owner, ast.Lambda):
            return child is owner.body
        return child in getattr(owner, "body", ())

    def lookup(self, name: str, scope: Scope) -> tuple[Scope, list[Binding]] | None:
        """Find the bindings ``name`` refers to from ``scope`` (LEGB, class bodies skipped)."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if name in current.globals:
                current = self.module
            skip_class = isinstance(current.node, ast.ClassDef) and not first
            if not skip_class and name in current.bindings and name not in current.nonlocals:
                return current, current.bindings[name]
            first = False
            current = current.parent
        return None

    def single_value(self, name: str, scope: Scope) -> tuple[Scope, Binding] | None:
        """The one assignment of ``name`` visible from ``scope``, if it is bound exactly once."""
        found = self.lookup(name, scope)
        if found is None:
            return None
        owner, bindings = found
        if len(bindings) != 1:
            return None
        return owner, bindings[0]

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        scope: Scope | None = self.scope_of(node)
        while scope is not None and not scope.is_function and not scope.is_module:
            scope = scope.parent
        return None if scope is None or scope.is_module else scope.node
