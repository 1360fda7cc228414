"""Values held in attributes and in names bound more than once to one expression.

``self.num_workers = num_workers`` in one method, read back as ``self.num_workers``;
``args.device = torch.device(...)`` after ``parse_args()``; a notebook that repeats
``device = torch.device('cuda' if ... else 'cpu')`` in a later section. Each is followed
to the expression written only where the file stores that attribute once (or binds the name
only to equal expressions; ``self.X`` stored by a method of a class that shares no instance
with the reader's does not count): a second store, an augmented one, ``setattr`` or a store
through another object leaves the value unknown, as before; a ``setattr(self, name, value)`` whose name
is not written out does not (see :func:`_onto_own_instance`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def attribute_stores(nodes: list[ast.AST]) -> dict[str, list[ast.AST]]:
    """Every place a file stores or deletes an attribute, by the attribute's name: the target
    nodes (any receiver, any statement) and ``setattr(x, "NAME", ...)`` calls."""
    found: dict[str, list[ast.AST]] = {}
    for node in nodes:
        if node.__class__ is ast.Attribute and not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
            found.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined]
        elif node.__class__ is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "setattr":  # type: ignore[attr-defined]
            name = node.args[1] if len(node.args) >= 2 else None  # type: ignore[attr-defined]
            key = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*"
            found.setdefault(key, []).append(node)
    return found


def only_store(attribute: str, facts: FileFacts) -> ast.AST | None:
    """The file's one store of ``attribute`` (``x.attribute = ...``), where no ``setattr`` with
    a name not written out may be another; None otherwise."""
    stores = facts.attribute_stores.get(attribute, [])
    return stores[0] if len(stores) == 1 and not facts.attribute_stores.get("*") else None


def bound_once(expr: ast.expr, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope] | None:
    """The expression ``expr`` (``self.X``, ``args.X`` or a name) holds, with the scope it is
    evaluated in, where the file writes it once (:func:`stored_once`, :func:`equal_bindings`);
    None when unknown."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return stored_once(expr, scope, facts)
    if isinstance(expr, ast.Name):
        return equal_bindings(expr, scope, facts)
    return None


def stored_once(expr: ast.Attribute, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope] | None:
    """``self.X`` read in a method of the class whose methods store ``self.X = value`` once (the
    only store of an attribute ``X`` in the file, but for stores on its members: ``self.opts.X``,
    and on the instances of classes unrelated to the reader's: :func:`_on_another_class`), or ``args.X`` of a parse_args() namespace
    that is no option's destination, stored once as ``args.X = value`` in the scope it is read
    from: ``value`` and the scope of the store."""
    if not isinstance(expr.value, ast.Name):
        return None
    reader = _own_class(expr.value.id, scope, facts)
    stores = [
        t for t in facts.attribute_stores.get(expr.attr, [])
        if not _on_a_member(t, expr.value.id) and not (reader is not None and _on_another_class(t, reader, facts))
    ]
    if len(stores) != 1 or any(not _onto_own_instance(call, facts) for call in facts.attribute_stores.get("*", ())):
        return None
    target = stores[0]
    statement = facts.scopes.parents.get(target)
    if not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name):
        return None
    if isinstance(statement, ast.Assign) and statement.targets == [target]:
        value = statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        value = statement.value
    else:
        return None  # a tuple target, an augmented assignment, a loop variable: unknown
    store_scope = facts.scopes.scope_of(statement)
    receiver = expr.value.id
    if receiver != target.value.id and _config_object(expr.value, scope, target, store_scope, facts):
        return value, store_scope  # args.num_workers of ``args = Args()``, whose __init__ stores ``self.num_workers = 0``
    if receiver != target.value.id or any(isinstance(n, ast.Name) and n.id == receiver for n in ast.walk(value)):
        return None
    if _same_instance(receiver, scope, store_scope, facts) or _same_namespace(expr, scope, store_scope, facts):
        return value, store_scope
    return None


def _config_object(read: ast.Name, scope: Scope, target: ast.Attribute, store_scope: Scope, facts: FileFacts) -> bool:
    """``read`` names, bound once, an instance of a class of the file made with no arguments
    (``args = Args()``, a notebook's stand-in for ``parse_args()``), whose ``__init__`` stores
    ``self.X`` (``target``, the file's one store of ``X``) a value written out: a constant, or a
    literal of constants (the fourteenth audit's C6)."""
    found = facts.scopes.single_value(read.id, scope)
    made = found[1].value if found is not None and found[1].kind == "assign" else None
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and not made.args and not made.keywords):
        return False
    cls = facts.classes.get(made.func.id)
    init = store_scope.node
    if cls is None or not isinstance(init, FUNCTIONS) or init.name != "__init__" or facts.scopes.parents.get(init) is not cls.node:
        return False
    statement = facts.scopes.parents.get(target)
    value = getattr(statement, "value", None)
    return method_receiver(init) == target.value.id and value is not None and not any(isinstance(n, ast.Name) for n in ast.walk(value))  # type: ignore[attr-defined]


def _on_a_member(target: ast.AST, receiver: str) -> bool:
    """``self.opts.device = ...`` read beside ``self.device``: a store on an object ``receiver``
    holds, not on ``receiver`` itself."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)):
        return False
    root: ast.expr = target.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id == receiver


def _own_class(receiver: str, scope: Scope, facts: FileFacts) -> ast.ClassDef | None:
    """The class whose method ``scope`` is, where ``receiver`` is that method's ``self``
    (bound only as the parameter); None otherwise."""
    method = scope.node
    owner = facts.scopes.parents.get(method)
    if not isinstance(owner, ast.ClassDef) or method_receiver(method) != receiver:  # type: ignore[arg-type]
        return None
    return owner if len(scope.bindings.get(receiver, ())) == 1 else None


def _on_another_class(target: ast.AST, reader: ast.ClassDef, facts: FileFacts) -> bool:
    """``self.X = ...`` in a method of another class of the file that shares no instance with
    ``reader`` (neither derives from the other, no class of the file derives from both): it
    stores onto that class's instances, never onto the one ``reader``'s method reads (tenth audit
    B3: two DataModules of one file, each storing ``self.num_workers`` from its own ``__init__``)."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return False
    owner = _own_class(target.value.id, facts.scopes.scope_of(target), facts)
    return owner is not None and owner is not reader and not _share_instances(owner, reader, facts)


def _share_instances(a: ast.ClassDef, b: ast.ClassDef, facts: FileFacts) -> bool:
    """Some class of the file is (or derives from) both ``a`` and ``b``, by the names of its
    bases in the file; True (may share) where either name is bound to another class too."""
    if facts.classes.get(a.name) is None or facts.classes[a.name].node is not a:
        return True
    if facts.classes.get(b.name) is None or facts.classes[b.name].node is not b:
        return True
    return any({a.name, b.name} <= _lineage(name, facts) for name in facts.classes)


def _lineage(name: str, facts: FileFacts) -> frozenset[str]:
    """``name`` and the names of its ancestors among the file's classes (once per class and file:
    :func:`_share_instances` asks for every class of the file at each store it weighs)."""
    cache: dict[str, frozenset[str]] = facts.memo("class_lineages")
    known = cache.get(name)
    if known is None:
        known = cache[name] = frozenset(_ancestor_names(name, facts))
    return known


def _ancestor_names(name: str, facts: FileFacts) -> set[str]:
    found: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        info = facts.classes.get(current)
        if current in found or info is None:
            continue
        found.add(current)
        pending += info.base_names
    return found


def _onto_own_instance(call: ast.AST, facts: FileFacts) -> bool:
    """``setattr(self, name, value)`` with a name not written out, in a method of a class
    (tabnet's ``load_class_attrs``: ``for k, v in d.items(): setattr(self, k, v)``): it names no
    attribute the file reads, so, as pyflakes and mypy do, it is not counted as a store of
    ``self.X``, whose value written by name stays the evidence. One onto another object
    (``setattr(args, k, v)`` of a config's overrides) may replace any of its attributes: unknown."""
    receiver = call.args[0] if isinstance(call, ast.Call) and call.args else None
    if not isinstance(receiver, ast.Name):
        return False
    method = facts.scopes.scope_of(call).node
    if not isinstance(method, FUNCTIONS) or not isinstance(facts.scopes.parents.get(method), ast.ClassDef):
        return False
    arguments = [*method.args.posonlyargs, *method.args.args]
    return bool(arguments) and arguments[0].arg == receiver.id and not any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list
    )


def _same_instance(receiver: str, scope: Scope, store_scope: Scope, facts: FileFacts) -> bool:
    """``receiver`` is the first parameter (``self``), never rebound, of a method of one class
    in both scopes."""
    owners = []
    for each in (scope, store_scope):
        method = each.node
        if not isinstance(method, FUNCTIONS) or not isinstance(facts.scopes.parents.get(method), ast.ClassDef):
            return False
        arguments = [*method.args.posonlyargs, *method.args.args]
        if not arguments or arguments[0].arg != receiver or len(each.bindings.get(receiver, ())) != 1:
            return False
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list):
            return False
        owners.append(facts.scopes.parents[method])
    return owners[0] is owners[1]


def _same_namespace(expr: ast.Attribute, scope: Scope, store_scope: Scope, facts: FileFacts) -> bool:
    """``args.X`` where ``args`` is a parse_args() namespace of the scope the value is stored in,
    and ``X`` no option's destination (an option's value comes from the command line)."""
    assert isinstance(expr.value, ast.Name)
    namespace = expr.value.id
    if namespace not in facts.argparse.namespaces or expr.attr in facts.argparse.defaults or expr.attr in facts.argparse.options:
        return False
    found = facts.scopes.lookup(namespace, scope)
    return found is not None and found[0] is store_scope


def equal_bindings(name: ast.Name, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope] | None:
    """A name bound more than once, every time by assignment to the same expression that reads
    only imported modules (``device = torch.device('cuda' if torch.cuda.is_available() else
    'cpu')`` repeated in a notebook's later section): that expression."""
    found = facts.scopes.lookup(name.id, scope)
    if found is None or len(found[1]) < 2:
        return None
    owner, bindings = found
    values = [b.value for b in bindings if b.kind == "assign" and b.value is not None]
    if len(values) != len(bindings):
        return None
    first = ast.dump(values[0])
    if any(ast.dump(v) != first for v in values[1:]):
        return None
    if any(isinstance(n, ast.Name) and n.id not in facts.imports for n in ast.walk(values[0])):
        return None  # it reads a name that may hold something else at each binding
    return values[0], owner


def method_receiver(method: ast.stmt) -> str | None:
    """The first parameter of a method that is not a static or class method."""
    if not isinstance(method, FUNCTIONS):
        return None
    arguments = [*method.args.posonlyargs, *method.args.args]
    if not arguments or any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list):
        return None
    return arguments[0].arg
