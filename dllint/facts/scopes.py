"""A light scope table: which names each function/module binds, and how.

This replaces LibCST's ScopeProvider, which measured several times the cost
of parsing; rules only need "is this name bound once, and to what".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from dllint.facts.walk import iter_children

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPE_NODES = (ast.Module, ast.ClassDef, *FUNCTION_NODES)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The node classes ``ScopeTable._record`` looks at (parsed trees hold exact classes, never subclasses).
_RECORDED = frozenset(
    {
        ast.Name, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.withitem, ast.NamedExpr,
        ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.Global, ast.Nonlocal, ast.Delete,
        ast.MatchAs, ast.MatchStar, ast.MatchMapping,
    }
)


@dataclass
class Binding:
    name: str
    kind: str  # "assign", "def", "class", "import", "param", "other"
    node: ast.AST  # the statement or node that binds
    value: ast.expr | None = None  # for kind == "assign": the bound expression


@dataclass
class Scope:
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


class ScopeTable:
    """Scopes of one module plus a parent map, built in a single walk."""

    def __init__(self, tree: ast.Module) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        self.scopes: dict[ast.AST, Scope] = {}
        self.module = Scope(tree, None)
        self.scopes[tree] = self.module
        self._walk(tree, self.module)

    # -- building ---------------------------------------------------------
    def _walk(self, node: ast.AST, scope: Scope) -> None:
        """Visit the children of ``node``, which is evaluated in ``scope``."""
        stack = [(node, scope)]
        while stack:
            parent, current = stack.pop()
            for child in iter_children(parent):
                self.parents[child] = parent
                if self._visit(child, current):
                    stack.append((child, current))

    def _visit(self, child: ast.AST, current: Scope) -> bool:
        """Record ``child``; True when its children still need a plain walk in ``current``."""
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(child, ast.ClassDef) else "def"
            current.add(Binding(child.name, kind, child))
            self._walk_outer(child, current, self._new_scope(child, current))
            return False
        if isinstance(child, ast.Lambda):
            self._walk_outer(child, current, self._new_scope(child, current))
            return False
        self._record(child, current)
        return True

    def _walk_outer(self, node: ast.AST, outer: Scope, inner: Scope) -> None:
        """Walk a def/class/lambda: outer parts in ``outer``, the body in ``inner``."""
        outer_parts: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            outer_parts.extend(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            outer_parts.extend(node.bases)
            outer_parts.extend(k.value for k in node.keywords)
        else:
            args = node.args
            outer_parts.extend(d for d in [*args.defaults, *args.kw_defaults] if d is not None)
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    inner.add(Binding(arg.arg, "param", arg))
        for part in outer_parts:
            self.parents[part] = node
            if self._visit(part, outer):
                self._walk(part, outer)
        body = node.body if isinstance(node.body, list) else [node.body]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.parents[node.args] = node
        for stmt in body:
            self.parents[stmt] = node
            if self._visit(stmt, inner):
                self._walk(stmt, inner)

    def _new_scope(self, node: ast.AST, parent: Scope) -> Scope:
        scope = Scope(node, parent)
        self.scopes[node] = scope
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
        scope = self.scope_of(node)
        while scope is not None and not scope.is_function and not scope.is_module:
            scope = scope.parent
        return None if scope is None or scope.is_module else scope.node
