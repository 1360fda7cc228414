"""A wrapper object handed to another module (DL201 and DL206, the tenth audit's K13 across
modules): a module-level class stores a loader and its ``__iter__`` yields each batch unchanged
(``for i, data in enumerate(self.dataloader): if i >= limit: break; yield data``); a function of
this file returns an instance of it (``return Wrapper(opt)``, or through a method that returns
``self``: ``data_loader = Wrapper(opt); return data_loader.load_data()``), and a caller in
another module iterates what it returns and copies the items to CUDA. The items are the
loader's batches, so the caller's copies (its summary's ``Effects.cuda_copy`` for the returned
value) are the loader's (:func:`copies_elsewhere`); and each pass over the wrapper runs
``__iter__`` once, so a caller that iterates it every epoch re-iterates whatever ``__iter__``
iterates (:func:`passes_elsewhere`: any ``__iter__``, yielding unchanged or not).

Only that shape is read: an ``__iter__`` whose whole body is one ``for`` over ``self.X`` (or
``enumerate(self.X)``) whose body yields the batch name and otherwise only leaves the loop
(``if ...: break``); a class name bound once; the instance returned whole. Any other
``__iter__``, a changed yield, an instance returned inside a container: unknown, silent. The
same-file form (``for x in wrapper`` in this file) is :mod:`dllint.facts.batches`'.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.model import RemoteLoop
from dllint.facts.flow.records import Copies

if TYPE_CHECKING:
    from dllint.facts import FileFacts

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def copies_elsewhere(facts: FileFacts, node: ast.AST) -> Copies:
    """The CUDA copies other modules make of the batches the pass at ``node`` yields (see the
    module's docstring); ``Copies()`` when none is known."""
    if facts.project is None or facts.project.summarizing or not isinstance(node, ast.For):
        return Copies()
    cls = _pass_through_class(facts, node)
    if cls is None:
        return Copies()
    found = Copies()
    for function in _returning_instances(facts, cls):
        for caller in facts.project.caller_effects(function.name, None, ()) or ():
            if caller.effects.iterations:
                found = found.join(caller.effects.cuda_copy)
    return found


def passes_elsewhere(facts: FileFacts, method: ast.AST) -> tuple[RemoteLoop, ...]:
    """For a read of ``self.X`` in ``__iter__`` of a module-level class (its name bound once): the
    epoch loop of a caller in another module that iterates, more than once, the instance a
    function of this file returns (each pass over the wrapper runs ``__iter__`` once); ()
    when none is known."""
    parents = facts.scopes.parents
    cls = parents.get(method)
    if not (isinstance(method, ast.FunctionDef) and method.name == "__iter__" and isinstance(cls, ast.ClassDef)
            and isinstance(parents.get(cls), ast.Module) and facts.project is not None and not facts.project.summarizing):
        return ()
    bound = facts.scopes.lookup(cls.name, facts.scopes.module)
    if bound is None or len(bound[1]) != 1:
        return ()
    for function in _returning_instances(facts, cls):
        for caller in facts.project.caller_effects(function.name, None, ()) or ():
            if caller.effects.per_epoch or caller.effects.iterations > 1:
                return (RemoteLoop(caller.where, dataset_changes=tuple(caller.effects.dataset_changes)),)
    return ()


def _pass_through_class(facts: FileFacts, node: ast.For) -> ast.ClassDef | None:
    """The module-level class (its name bound once) whose ``__iter__`` is the pass-through
    ``for`` ``node`` over ``self.X``."""
    parents = facts.scopes.parents
    function = parents.get(node)
    cls = parents.get(function) if function is not None else None
    if not (isinstance(function, ast.FunctionDef) and function.name == "__iter__" and function.body == [node]
            and isinstance(cls, ast.ClassDef) and isinstance(parents.get(cls), ast.Module)):
        return None
    batch = _batch_name(node)
    if batch is None or not _yields_unchanged(node.body, batch):
        return None
    bound = facts.scopes.lookup(cls.name, facts.scopes.module)
    return cls if bound is not None and len(bound[1]) == 1 else None


def _batch_name(node: ast.For) -> str | None:
    """The name a ``for`` over ``self.X`` binds each batch to (the second of ``i, data`` over
    ``enumerate(self.X)``)."""
    iterated, target = node.iter, node.target
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "enumerate" \
            and len(iterated.args) == 1 and not iterated.keywords:
        iterated = iterated.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None  # type: ignore[assignment]
    if not (isinstance(iterated, ast.Attribute) and isinstance(iterated.value, ast.Name) and iterated.value.id == "self"):
        return None
    return target.id if isinstance(target, ast.Name) else None


def _yields_unchanged(body: list[ast.stmt], batch: str) -> bool:
    """One ``yield <batch>``, and nothing else than ``if ...: break`` around it."""
    yields = 0
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
            value = stmt.value.value
            if not (isinstance(value, ast.Name) and value.id == batch):
                return False
            yields += 1
        elif not (isinstance(stmt, ast.If) and all(isinstance(s, ast.Break) for s in stmt.body) and not stmt.orelse
                  and batch not in {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}):
            return False
    return yields == 1


def _returning_instances(facts: FileFacts, cls: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module-level functions of this file every ``return`` of which hands back an
    instance of ``cls`` built there (see the module's docstring)."""
    found = []
    for function in facts.tree.body:
        if not isinstance(function, FUNCTIONS):
            continue
        returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
        if returns and all(r.value is not None and _is_instance(facts, function, r.value, cls, 0) for r in returns):
            found.append(function)
    return found


def _is_instance(facts: FileFacts, function: ast.AST, expr: ast.expr, cls: ast.ClassDef, depth: int) -> bool:
    """``expr`` is ``cls(...)``, a name bound once in ``function`` to one, or ``x.m()`` where
    ``x`` is one and ``cls.m`` returns ``self``."""
    if depth > 3:
        return False
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == cls.name:
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.args and not expr.keywords:
        return _returns_self(cls, expr.func.attr) and _is_instance(facts, function, expr.func.value, cls, depth + 1)
    if isinstance(expr, ast.Name):
        scope = facts.scopes.scopes.get(function)
        bindings = scope.bindings.get(expr.id, []) if scope is not None else []
        value = bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None
        return value is not None and _is_instance(facts, function, value, cls, depth + 1)
    return False


def _returns_self(cls: ast.ClassDef, name: str) -> bool:
    """``cls``'s method ``name`` is ``return self`` and nothing else."""
    method = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name), None)
    if method is None or not method.args.args:
        return False
    receiver = method.args.args[0].arg
    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # a docstring
    return len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name) and body[0].value.id == receiver
