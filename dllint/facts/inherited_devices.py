"""A device an inherited ``__init__`` stores: ``self.device = self.get_device()`` in a base
class (in this file or another module), read as ``x.to(self.device)`` in a subclass's method
(DL206, the tenth audit's K3).

Each class records what its methods store on ``self`` (:func:`stored_devices`, also in its
file's summary, :attr:`ClassSummary.devices`): for a store in ``__init__`` that is the file's
only store of that attribute, the device kind of its value ("cuda", "maybe"; a method of the
class returning a device written out counts, :func:`own_method`); "?" for any other store (a
second one, one in another method, a value that is not a CUDA device or is unknown). A read of
``self.X`` in a method is decided by the first class along the bases (the class itself, then
its bases depth first, left to right, as Python's MRO does for these hierarchies) that stores
``X``: its kind, or unknown for "?". Unknown is silent; so is a read in a class of this file
that overrides, or has a class between it and the storing class in this file that overrides,
the method the store calls (``self.X = self.get_device()``; a store calling a method of the
class inside a larger expression is "?"). Classes between them in other modules are not
checked for overrides.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from dllint.facts.attributes import method_receiver
from dllint.facts.constructor_devices import base_init_after

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

    # What device an expression denotes (device_kinds.cuda_device_kind, which reads this module's
    # answers in turn: handed in, so that the two modules do not import each other).
    KindOf = Callable[[FileFacts, ast.expr, Scope], str | None]

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
UNKNOWN = "?"
MAX_DEPTH = 8


def stored_devices(facts: FileFacts, cls: ast.ClassDef, kind_of: KindOf) -> dict[str, str]:
    """``X`` -> the kind of the device ``self.X`` holds, for every attribute the methods of
    ``cls`` store on ``self`` (see the module's docstring)."""

    memo: dict[int, dict[str, str]] = facts.memo("stored_devices")
    if id(cls) in memo:
        return memo[id(cls)]
    found: dict[str, str] = memo.setdefault(id(cls), {})  # (a method reading its own class's store while it is read)
    stores = _attribute_stores_by_function(facts)
    for method in cls.body:
        receiver = method_receiver(method)
        if receiver is None or not isinstance(method, FUNCTIONS):
            continue
        for node in stores.get(id(method), ()):
            for target in _targets(node):
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == receiver):
                    continue
                kind = None
                if method.name == "__init__" and isinstance(node, ast.Assign) and node.targets == [target] and _kept_on_instances(target, facts) \
                        and not _calls_own_method_inside(node.value, receiver) and not base_init_after(facts, cls, method, node):
                    kind = kind_of(facts, node.value, facts.scopes.scope_of(node))
                found[target.attr] = UNKNOWN if target.attr in found else kind or UNKNOWN
    return found


def inherited_device_kind(facts: FileFacts, expr: ast.Attribute, scope: Scope, kind_of: KindOf) -> str | None:
    """"cuda"/"maybe" for ``self.X`` read in a method of a class whose nearest class storing
    ``X`` is a base (here or in another module) whose ``__init__`` stores a CUDA device; None
    when unknown (the reading class stores it itself: :func:`stored_once` decides that)."""
    cls = _instance_class(facts, expr, scope)
    if cls is None:
        return None
    kind = _first_store(facts, cls, expr.attr, 0, kind_of)
    return kind if kind in ("cuda", "maybe") else None


def _kept_on_instances(target: ast.Attribute, facts: FileFacts) -> bool:
    """``target`` (``self.X = ...``) is the file's one store of ``X`` but for stores on a
    ``parse_args()`` namespace (``args.device = torch.device(...)`` in the main block: an
    ``argparse.Namespace``, never an instance of a class of the file), and no ``setattr`` with
    a name not written out may be another."""
    stores = [s for s in facts.attribute_stores.get(target.attr, []) if not on_namespace(s, facts)]
    return stores == [target] and not facts.attribute_stores.get("*")


def on_namespace(store: ast.AST, facts: FileFacts) -> bool:
    """``args.X = ...`` where ``args`` is bound once to ``parser.parse_args()`` (no
    ``namespace=`` of the caller's own: then it is a plain ``argparse.Namespace``)."""
    if not (isinstance(store, ast.Attribute) and isinstance(store.value, ast.Name)):
        return False
    found = facts.scopes.single_value(store.value.id, facts.scopes.scope_of(store))
    value = found[1].value if found is not None and found[1].kind == "assign" else None
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "parse_args"
            and len(value.args) <= 1 and not any(k.arg in ("namespace", None) for k in value.keywords))


def on_own_instance(store: ast.AST, facts: FileFacts) -> bool:
    """``self.X = ...`` in a method of a class, ``self`` its receiver (never rebound)."""
    if not (isinstance(store, ast.Attribute) and isinstance(store.value, ast.Name)):
        return False
    scope = facts.scopes.scope_of(store)
    method = scope.node
    return (isinstance(facts.scopes.parents.get(method), ast.ClassDef) and method_receiver(method) == store.value.id  # type: ignore[arg-type]
            and len(scope.bindings.get(store.value.id, ())) == 1)


def own_method(facts: FileFacts, func: ast.expr, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method ``self.m`` names where ``self`` is the receiver of the method ``scope`` is
    (never rebound) and ``m`` a method of its class, not a static or class method."""
    if not isinstance(func, ast.Attribute):
        return None
    cls = _instance_class(facts, func, scope)
    method = next((s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == func.attr), None) if cls else None
    return method if method is not None and method_receiver(method) is not None else None


def _first_store(facts: FileFacts, cls: ast.ClassDef, attribute: str, depth: int, kind_of: KindOf,
                 below: tuple[ast.ClassDef, ...] = ()) -> str | None:
    """The kind the nearest class storing ``attribute`` records, from ``cls`` up its bases;
    "?" where a class ``below`` it (between it and the reading class) overrides the method
    whose result the store holds (``self.device = self.get_device()``)."""
    from dllint.facts.frameworks import class_stores

    own = stored_devices(facts, cls, kind_of)
    if attribute in own or depth > MAX_DEPTH:
        stores: dict[ast.ClassDef, dict[str, list[str]]] = facts.memo("class_stores")  # (asked per attribute read)
        if cls not in stores:
            stores[cls] = class_stores(cls)
        return _unless_overridden(own.get(attribute), stores[cls], attribute, below)
    for base in cls.bases:
        local = facts.classes.get(base.id) if isinstance(base, ast.Name) else None
        if local is not None and isinstance(facts.scopes.parents.get(local.node), ast.Module):
            found = _first_store(facts, local.node, attribute, depth + 1, kind_of, (*below, cls))
        else:
            found = _elsewhere(facts, base, attribute, (*below, cls))
        if found is not None:
            return found
    return None


def _elsewhere(facts: FileFacts, base: ast.expr, attribute: str, below: tuple[ast.ClassDef, ...]) -> str | None:
    """The kind the nearest of ``base``'s classes in other project modules records; "?" where
    this file stores the attribute too (outside what :func:`stored_devices` read here). The
    classes between them in other modules are not checked for overrides."""
    if facts.project is None or facts.project.summarizing:
        return None
    for ancestor in facts.project.class_ancestors(facts, base):
        if attribute in ancestor.devices:
            kind = UNKNOWN if facts.attribute_stores.get(attribute) else ancestor.devices[attribute]
            return _unless_overridden(kind, ancestor.stores, attribute, below)
    return None


def _unless_overridden(kind: str | None, stores: dict[str, list[str]], attribute: str,
                       below: tuple[ast.ClassDef, ...]) -> str | None:
    """``kind``, or "?" where one of the classes ``below`` defines a method ``m`` whose result
    the store holds (``stores``: method -> attributes, :func:`class_stores`)."""
    methods = {m for m, attributes in stores.items() if attribute in attributes}
    if any(isinstance(s, FUNCTIONS) and s.name in methods for cls in below for s in cls.body):
        return UNKNOWN
    return kind


def _instance_class(facts: FileFacts, expr: ast.Attribute, scope: Scope) -> ast.ClassDef | None:
    """The class of ``self`` in ``self.X`` read in one of its methods (``self`` its first
    parameter, bound only there)."""
    method = scope.node
    cls = facts.scopes.parents.get(method)
    if not (isinstance(expr.value, ast.Name) and isinstance(method, FUNCTIONS) and isinstance(cls, ast.ClassDef)):
        return None
    if method_receiver(method) != expr.value.id or len(scope.bindings.get(expr.value.id, ())) != 1:
        return None
    return cls


def _attribute_stores_by_function(facts: FileFacts) -> dict[int, list[ast.AST]]:
    """The file's assignments to an attribute of a name, by each function they lie in (nested
    functions' too, in the order of the file's walk): found once per file, where a walk of each
    method of each class asked about cost more than the file's walk."""
    found: dict[int, list[ast.AST]] | None = facts.__dict__.get("_attribute_stores_by_function")
    if found is None:
        found = facts.__dict__["_attribute_stores_by_function"] = {}
        parents = facts.scopes.parents
        assignments = (ast.Assign, ast.AugAssign, ast.AnnAssign)
        for node in facts.nodes:
            if node.__class__ not in assignments or not any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) for t in _targets(node)):
                continue
            current = parents.get(node)
            while current is not None:
                if isinstance(current, FUNCTIONS):
                    found.setdefault(id(current), []).append(node)
                current = parents.get(current)
    return found


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def _calls_own_method_inside(value: ast.expr, receiver: str) -> bool:
    """``torch.device(self.pick())``: a call of the instance's own method that is not the
    whole value (an override of it could not be told from :func:`class_stores`)."""
    return any(
        isinstance(n, ast.Call) and n is not value and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name) and n.func.value.id == receiver
        for n in ast.walk(value)
    )
