"""Same-file lookups the flow engine asks while it follows a value: the loops around a node,
the ``if`` arms that hold it, the loads a binding reaches, the same-file function or class a
call goes to, the callers of a function, every ``self.X`` of a class. Each answer depends on
the file only (never on the value being followed), so :class:`FileLookups` remembers them."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.facts.values import dict_entry
from dllint.facts.walk import walk

if TYPE_CHECKING:
    from dllint.facts.scopes import Binding
    from dllint.facts import FileFacts

# The syntax that repeats what it holds: a loop's body, a comprehension's element.
LOOPS = (ast.For, ast.AsyncFor, ast.While)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
MAX_NAMES = 8  # names bound to names followed to a loop's trip count


def runs_at_most_once(loop: ast.AST, facts: FileFacts | None = None) -> bool:
    """A ``for`` whose trip count is provably 0 or 1 repeats nothing: ``range(1)``, ``range(a, a + 1)``,
    ``range(2, 3)`` (audit L1: ``for i in range(1):`` around a test pass is not an epoch loop),
    also through ``enumerate``, and with ``facts``, a count known exactly through a name
    (:func:`_exact_int`: ``num_epochs = 1; for epoch in range(num_epochs):``, tenth audit)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    iterable = loop.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" and len(iterable.args) == 1:
        iterable = iterable.args[0]
    if not (
        isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
        and not iterable.keywords and 1 <= len(iterable.args) <= 2
    ):
        return False
    scope = facts.scopes.scope_of(iterable) if facts is not None else None
    bounds = [_exact_int(a, scope, facts) for a in iterable.args]
    if len(iterable.args) == 1:
        return bounds[0] is not None and bounds[0] <= 1
    if bounds[0] is not None and bounds[1] is not None:
        return bounds[1] - bounds[0] <= 1
    start, stop = iterable.args
    return (  # range(a, a + 1)
        isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Add)
        and isinstance(stop.right, ast.Constant) and type(stop.right.value) is int and stop.right.value <= 1
        and ast.dump(stop.left) == ast.dump(start)
    )


def _exact_int(expr: ast.expr, scope: Scope | None, facts: FileFacts | None) -> int | None:
    """The int ``expr`` is on every run: a literal; with ``facts``, a name bound once (by
    assignment) to one, or a dict literal's entry read under a constant key (``config["n_epoch"]``,
    the dict not changed after it is built). Never a parameter or a command-line option: a
    caller or a user may pass another count. None otherwise."""
    if facts is not None and scope is not None:
        expr, scope = written_value(expr, scope, facts)
        entry = dict_entry(expr, scope, facts) if isinstance(expr, ast.Subscript) else None
        if entry is not None:
            expr, scope = written_value(entry, scope, facts)
    return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int else None


def written_value(expr: ast.expr, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope]:
    """``expr`` followed through names bound once, by assignment, to the expression written
    there, with its scope (a parameter or a command-line option's default is no such value)."""
    for _ in range(MAX_NAMES):
        found = facts.scopes.single_value(expr.id, scope) if isinstance(expr, ast.Name) else None
        if found is None or found[1].kind != "assign" or found[1].value is None:
            break
        scope, expr = found[0], found[1].value
    return expr, scope


def _method_of(cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name), None)


class FileLookups:
    """The same-file lookups of one file, each remembered once computed."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.parents = facts.scopes.parents
        self._resolving: dict[tuple[str, ast.AST], list[tuple[ast.Name, Scope]]] = {}
        self._loads_by_name: dict[str, list[tuple[ast.Name, Scope]]] = {}
        self._self_attributes: dict[ast.ClassDef, dict[str, list[ast.Attribute]]] = {}
        self._classes: list[ast.ClassDef] | None = None  # every class of the file (for _only_method_named)
        for scope in facts.scopes.scopes.values():
            for load in scope.loads:
                self._loads_by_name.setdefault(load.id, []).append((load, scope))

    def enclosing_loops(self, node: ast.AST, scope: Scope) -> tuple[ast.AST, ...]:
        """Loops (and comprehensions) within ``scope`` that repeat ``node``, outermost first."""
        loops: list[ast.AST] = []
        child, current = node, self.parents.get(node)
        while current is not None and current is not scope.node:
            if isinstance(current, LOOPS) and child in current.body:
                if not runs_at_most_once(current, self.facts):
                    loops.append(current)
            elif isinstance(current, COMPREHENSIONS) and child is not current.generators[0].iter:
                loops.append(current)
            elif isinstance(current, ast.comprehension) and child is current.iter:
                pass  # the first generator's iterable is evaluated once; handled at the comprehension
            elif isinstance(current, FUNCTION_NODES):
                break
            child, current = current, self.parents.get(current)
        return tuple(reversed(loops))

    def if_arms(self, node: ast.AST) -> dict[ast.If, str]:
        """For each ``if`` around ``node`` in its function: which arm holds it (body or orelse)."""
        arms: dict[ast.If, str] = {}
        child, current = node, self.parents.get(node)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.If) and child is not current.test:
                arms[current] = "body" if child in current.body else "orelse"
            child, current = current, self.parents.get(current)
        return arms

    def loads_in(self, name: str, scope: Scope) -> list[ast.Name]:
        """Loads of ``name`` directly in ``scope``."""
        return [load for load, load_scope in self._loads_by_name.get(name, ()) if load_scope is scope]

    def loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        """Loads of ``name`` (in ``scope`` and the scopes nested in it) that the binding in
        ``scope`` reaches, each with the scope it is read in."""
        key = (name, scope.node)
        cached = self._resolving.get(key)
        if cached is not None:
            return cached
        found = []
        for load, candidate in self._loads_by_name.get(name, ()):
            if is_within(candidate, scope):
                resolved = self.facts.scopes.lookup(name, candidate)
                if resolved is not None and resolved[0] is scope:
                    found.append((load, candidate))
        self._resolving[key] = found
        return found

    def unbound_loads(self, name: str) -> list[tuple[ast.Name, Scope]]:
        """Loads of ``name`` that no scope of the file binds (a star import's, or a builtin)."""
        return [(load, scope) for load, scope in self._loads_by_name.get(name, ()) if self.facts.scopes.lookup(name, scope) is None]

    def call_sites(self, func: ast.AST, scope: Scope) -> list[ast.Call] | None:
        """Calls of a ``def`` or ``class`` (its constructions) bound in ``scope``, from there;
        None if it is used any other way (a value handed on, a base class, ``isinstance``)."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        sites = []
        for load, _ in self.loads_resolving_to(func.name, scope):
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
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name):
            built = self._class_named(func.value.func.id, scope)  # ``Ensemble(...).fit(loader)``
            return _method_of(built, func.attr) if built is not None else None
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        cls = self.enclosing_class(scope) if func.value.id == "self" else self._instance_class(func.value.id, scope, func)
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

    def _instance_class(self, name: str, scope: Scope, at: ast.AST | None = None) -> ast.ClassDef | None:
        """The class of this file that ``name`` (bound once, to ``Cls(...)``; or rebound in one
        block, the binding that reaches ``at``: ``res = get_models(); res = Results()``) is an
        instance of."""
        found = self.facts.scopes.single_value(name, scope)
        if found is None and at is not None:
            found = self._last_binding_before(name, scope, at)
        built = found[1].value if found is not None else None
        if not (isinstance(built, ast.Call) and isinstance(built.func, ast.Name)) or found is None:
            return None
        return self._class_named(built.func.id, found[0])

    def _class_named(self, name: str, scope: Scope) -> ast.ClassDef | None:
        """The class of this file ``name`` is bound to (only to it) where ``scope`` reads it."""
        cls = self.facts.scopes.lookup(name, scope)
        node = cls[1][0].node if cls is not None and len(cls[1]) == 1 and cls[1][0].kind == "class" else None
        return node if isinstance(node, ast.ClassDef) else None

    def _last_binding_before(self, name: str, scope: Scope, at: ast.AST) -> tuple[Scope, Binding] | None:
        """The assignment of ``name`` that reaches ``at`` where every binding of it in ``scope``
        is an assignment statement of one block and ``at`` sits in a later statement of it."""
        bindings = scope.bindings.get(name, ())
        statements = [b.node for b in bindings]
        if len(bindings) < 2 or any(b.kind != "assign" or not isinstance(b.node, ast.Assign) for b in bindings):
            return None
        parents = self.facts.scopes.parents
        block_owner = parents.get(statements[0])
        if any(parents.get(s) is not block_owner for s in statements):
            return None
        block = next((b for b in (getattr(block_owner, f, None) for f in ("body", "orelse", "finalbody")) if isinstance(b, list) and statements[0] in b), None)
        node: ast.AST | None = at
        while node is not None and parents.get(node) is not block_owner:
            node = parents.get(node)
        if block is None or node not in block or any(s not in block for s in statements):
            return None
        before = [b for b in bindings if block.index(b.node) < block.index(node)]
        return (scope, max(before, key=lambda b: block.index(b.node))) if before else None

    def same_file_init(self, func: ast.expr, scope: Scope) -> ast.AST | None:
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

    def enclosing_class(self, scope: Scope) -> ast.ClassDef | None:
        current: Scope | None = scope
        while current is not None:
            if isinstance(current.node, ast.ClassDef):
                return current.node
            current = current.parent
        return None

    def attributes_of_self(self, cls: ast.ClassDef) -> dict[str, list[ast.Attribute]]:
        """Every ``self.X`` in the class, by ``X``: one walk per class, however many methods
        and stored attributes are asked about (a 5,000-line ``Trainer`` has hundreds)."""
        table = self._self_attributes.get(cls)
        if table is None:
            table = {}
            for node in walk(cls):  # ast.walk's order, built as a list
                if is_self_attribute(node):
                    table.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined,arg-type]  # _is_self_attribute: an Attribute
            self._self_attributes[cls] = table
        return table

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
        """Same-file calls of ``func``: by its name where the name means it, ``self.name(...)``
        inside its class."""
        calls: list[ast.Call] = []
        owner = self.facts.scopes.scope_of(func)
        if isinstance(owner.node, ast.ClassDef):
            for attribute in self.attributes_of_self(owner.node).get(func.name, ()):
                parent = self.parents.get(attribute)
                if isinstance(parent, ast.Call) and parent.func is attribute:
                    calls.append(parent)
            return calls
        for load, _ in self.loads_resolving_to(func.name, owner):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and parent.func is load:
                calls.append(parent)
        return calls


def is_within(inner: Scope, outer: Scope) -> bool:
    """``inner`` is ``outer`` or nested in it."""
    current: Scope | None = inner
    while current is not None:
        if current is outer:
            return True
        current = current.parent
    return False


def outermost_function_below(inner: Scope, outer: Scope) -> ast.AST | None:
    """The function of the chain from ``outer`` down to ``inner`` that is nearest ``outer``:
    the closure whose calls repeat a load in ``inner``."""
    current: Scope | None = inner
    below = None
    while current is not None and current is not outer:
        if current.is_function:
            below = current.node
        current = current.parent
    return below


def is_self_attribute(node: ast.AST) -> bool:
    """``self.X``."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
