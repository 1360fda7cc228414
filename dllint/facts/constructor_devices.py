"""A device handed to a constructor and kept on the instance (DL206, the tenth audit's K2
through a class): ``self.device = device`` or ``self.device = kwargs["device"]`` in
``__init__`` (of a class that may subclass an outside library's class, as an ensemble
subclassing torchensemble's), read back as ``self.device`` in a method that hands it to the
function copying the batches.

:mod:`~dllint.facts.inherited_devices` reads the store; this module says what its value, a
parameter of ``__init__`` or an entry of a function's ``**kwargs``, holds: what every call in
the project passes for it (the constructions of the class, ``Ensemble(device=device)``; for
an entry of ``**kwargs``, also the calls of a module-level function), each as its file
resolves it. An entry of ``**kwargs`` counts only where the function reads the dict and never
changes it (``kwargs["device"]``, ``kwargs.get(...)``, ``**kwargs`` handed on); a call that
leaves the entry out, or hides it in a splat, is unknown, as is a call the project cannot
read, and a value stored before ``__init__`` calls a base's ``__init__`` (an outside
library's may store the attribute again). Unknown is silent.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from dllint.facts.values import ABSENT, parameter_default, project_calls
from dllint.facts.walk import walk

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope
    from dllint.facts.values import ProjectCalls

    # What device an expression denotes (device_kinds.cuda_device_kind: handed in, so that the two
    # modules do not import each other).
    KindOf = Callable[[FileFacts, ast.expr, Scope, int], str | None]

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def handed_device_kind(facts: FileFacts, expr: ast.expr, scope: Scope, kind_of: KindOf, depth: int) -> str | None:
    """"cuda"/"maybe" for a parameter of ``__init__`` (``device``) or an entry of a function's
    ``**kwargs`` (``kwargs["device"]``) that every call in the project passes a CUDA device for;
    None when unknown (see the module's docstring)."""
    entry = _kwargs_entry(expr, scope)
    if entry is not None:
        holder, key = entry
    elif isinstance(expr, ast.Name) and isinstance(scope.node, FUNCTIONS) and scope.node.name == "__init__":
        holder, key = expr, expr.id  # (a function's own parameter: device_kinds._parameter_kind)
    else:
        return None
    if _kept_after_base_init(facts, expr, scope):
        return None
    calls = project_calls(holder, scope, facts)
    if calls is None or not calls.decided:
        return None
    if entry is not None and not _only_read(calls.function, holder.id):
        return None
    kinds = _kinds_here(facts, calls, key, kind_of, depth) | _kinds_elsewhere(facts, calls, key, kind_of, depth)
    if not kinds or None in kinds:
        return None
    return "cuda" if kinds == {"cuda"} else "maybe"


def _kept_after_base_init(facts: FileFacts, expr: ast.expr, scope: Scope) -> bool:
    """``self.X = expr`` in ``__init__`` before a call of a base's ``__init__``, which may store
    ``X`` again (:func:`base_init_after`)."""
    statement = facts.scopes.parents.get(expr)
    cls = facts.scopes.parents.get(scope.node)
    function = scope.node
    return (isinstance(statement, ast.Assign) and isinstance(cls, ast.ClassDef) and isinstance(function, FUNCTIONS)
            and function.name == "__init__" and base_init_after(facts, cls, function, statement))


def _kwargs_entry(expr: ast.expr, scope: Scope) -> tuple[ast.Name, str] | None:
    """``kwargs["device"]`` where ``kwargs`` is the ``**`` parameter of ``scope``'s function:
    the name and the key."""
    function = scope.node
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(function, FUNCTIONS)):
        return None
    key = expr.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    kwarg = function.args.kwarg
    return (expr.value, key.value) if kwarg is not None and kwarg.arg == expr.value.id else None


def _only_read(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Every use of the dict ``name`` in ``function`` reads it: ``name[key]``, ``name.get(...)``,
    ``**name`` handed on (a copy); anything else may change an entry (``name["device"] =``,
    ``name.update(...)``, the dict handed to a function)."""
    for node in ast.walk(function):
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.Name) and child.id == name):
                continue
            if isinstance(node, ast.Subscript) and node.value is child and isinstance(node.ctx, ast.Load):
                continue
            if isinstance(node, ast.Attribute) and node.attr == "get":
                continue
            if isinstance(node, ast.keyword) and node.arg is None:
                continue
            return False
    return True


def _kinds_here(facts: FileFacts, calls: ProjectCalls, key: str, kind_of: KindOf, depth: int) -> set[str | None]:
    """What this file's calls pass for ``key``: its kind, or None (a splat, left out with no
    default that is a device)."""
    kinds: set[str | None] = set()
    for call in calls.here:
        argument = calls.argument(call, key)
        if argument is ABSENT:
            kinds.add(_default_kind(facts, calls, key, kind_of, depth))
        elif isinstance(argument, ast.expr):
            kinds.add(kind_of(facts, argument, facts.scopes.scope_of(call), depth + 1))
        else:
            kinds.add(None)
    return kinds


def _kinds_elsewhere(facts: FileFacts, calls: ProjectCalls, key: str, kind_of: KindOf, depth: int) -> set[str | None]:
    """What the calls in other project files pass for ``key``, as their summaries read it."""
    kinds: set[str | None] = set()
    position = calls.position(key)
    for arguments in calls.elsewhere.calls:
        passes = arguments.shape.passes(position, key)
        if passes is False:
            kinds.add(_default_kind(facts, calls, key, kind_of, depth))
        elif passes is None:
            kinds.add(None)
        else:
            kinds.add(arguments.cuda_devices.get(key if key in arguments.shape.keywords else str(position)))
    return kinds


def _default_kind(facts: FileFacts, calls: ProjectCalls, key: str, kind_of: KindOf, depth: int) -> str | None:
    """The kind of ``key``'s default, for a call that leaves it out (none for a ``**kwargs``
    entry: the read would raise)."""
    default = parameter_default(calls.function, key)
    return kind_of(facts, default, facts.scopes.scope_of(default), depth + 1) if default is not None else None


def base_init_after(facts: FileFacts, cls: ast.ClassDef, init: ast.FunctionDef | ast.AsyncFunctionDef, store: ast.stmt) -> bool:
    """``__init__`` of a class with bases calls a base's ``__init__`` (``super().__init__(...)``,
    ``Base.__init__(self, ...)``) after ``store``: that ``__init__`` (an outside library's,
    say) may store the attribute again, over the value."""
    if not cls.bases:
        return False
    last = _last_base_init(facts, init)
    return last is not None and last > (store.end_lineno or store.lineno, store.end_col_offset or 0)


def _last_base_init(facts: FileFacts, init: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
    """Where the last call of an ``__init__`` attribute in ``init`` starts (None: none), found
    once per ``__init__`` of the file: asked for each store it holds."""
    known: dict[ast.AST, tuple[int, int] | None] = facts.memo("last_base_init")
    if init not in known:
        known[init] = max(
            ((node.lineno, node.col_offset) for node in walk(init)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"),
            default=None,
        )
    return known[init]
