"""Values stored on an object the caller hands in: ``args.device = torch.device(...)`` in the
main block after ``parse_args()``, read back as ``device = args.device`` (or ``x.to(args.device)``)
in a function every call of which is passed that object (DL206, the tenth audit's K2).

:func:`dllint.facts.attributes.stored_once` reads ``args.X`` only in the scope that stores it;
here the read is in a callee: ``p.X`` where ``p`` is a parameter (never rebound) of a
module-level function called only in this file, and every call passes, for ``p``, the object
the store was made on, after the store, or a parameter of its own function that is handed the
object the same way. The store must be the file's only store of an attribute ``X`` (no
``setattr`` of a name not written out); where ``X`` is also a command-line option
(``--device``), the store, made before every call, replaces what the command line said.
Anything else (a second store, a caller passing another object, calls in other files) is
unknown, and unknown is silent.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.attributes import only_store
from dllint.facts.inherited_devices import on_namespace, on_own_instance
from dllint.facts.order import dominates
from dllint.facts.values import argument_for, function_calls

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

MAX_DEPTH = 4


def handed_attribute(expr: ast.Attribute, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope] | None:
    """The value of ``p.X`` read in ``scope`` where ``p`` is handed the object the file's only
    store of ``X`` was made on (see the module's docstring), with the scope of the store; None
    when unknown."""
    if not isinstance(expr.value, ast.Name):
        return None
    target = only_store(expr.attr, facts) or _namespace_store(expr.attr, facts)
    if target is None:
        return None
    statement = facts.scopes.parents.get(target)
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and isinstance(statement, ast.Assign) and statement.targets == [target]):
        return None  # a tuple target, an augmented assignment, a store on a member: unknown
    receiver = target.value.id
    if any(isinstance(n, ast.Name) and n.id == receiver for n in ast.walk(statement.value)):
        return None  # ``args.device = torch.device(args.device)``: reads what it replaces
    store_scope = facts.scopes.scope_of(statement)
    if _handed(facts, expr.value.id, scope, (statement, receiver, store_scope), 0):
        return statement.value, store_scope
    return None


def _namespace_store(attribute: str, facts: FileFacts) -> ast.AST | None:
    """The file's one store of ``attribute`` on a ``parse_args()`` namespace, where its other
    stores are all on ``self`` in methods (``self.device = device`` in a class's ``__init__``):
    those are instances of the file's classes, never the ``argparse.Namespace``."""
    stores = facts.attribute_stores.get(attribute, [])
    namespaced = [s for s in stores if on_namespace(s, facts)]
    if len(namespaced) != 1 or facts.attribute_stores.get("*"):
        return None
    return namespaced[0] if all(s is namespaced[0] or on_own_instance(s, facts) for s in stores) else None


def _handed(facts: FileFacts, name: str, scope: Scope, store: tuple[ast.Assign, str, Scope], depth: int) -> bool:
    """``name`` is a parameter of ``scope``'s module-level function, bound only there, and every
    call of the function passes the store's object for it (:func:`_passes`)."""
    function = scope.node
    if depth > MAX_DEPTH or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    found = facts.scopes.lookup(name, scope)
    if found is None or found[0] is not scope or [b.kind for b in found[1]] != ["param"]:
        return False
    calls = function_calls(facts, function)
    if not calls.here or calls.elsewhere.calls or not calls.elsewhere.readable:
        return False  # methods (no calls read), and callers in other files: what they pass is not read here
    return all(_passes(facts, call, function, name, store, depth) for call in calls.here)


def _passes(facts: FileFacts, call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
            store: tuple[ast.Assign, str, Scope], depth: int) -> bool:
    """``call`` passes for ``name`` the object the store was made on, in the store's scope and
    after it on every path, or a parameter its own function is handed that object for."""

    argument = argument_for(call, function, name)
    if not isinstance(argument, ast.Name):
        return False
    statement, receiver, store_scope = store
    caller = facts.scopes.scope_of(call)
    if caller is store_scope and argument.id == receiver:
        found = facts.scopes.lookup(receiver, caller)
        # the object bound once (not rebound between the store and the call)
        return found is not None and len(found[1]) == 1 and dominates(facts, statement, call, loops=True)
    return _handed(facts, argument.id, caller, store, depth + 1)
