"""Endless iteration (the rule catalog): a loader whose sampler never ends, or a loader subclass that
keeps one iterator for its lifetime, is iterated in one pass: its workers never restart.

- a sampler class whose ``__iter__`` never returns: ``while True:`` around a ``yield``
  with no ``break``/``return`` in that loop, ``itertools.count()`` driving the yields, or
  ``itertools.cycle`` handed back;
- ``RandomSampler(..., replacement=True, num_samples=<huge>)``;
- a ``DataLoader`` subclass whose ``__init__`` keeps ``super().__iter__()`` (the YOLO-style
  ``InfiniteDataLoader`` with a repeating batch sampler).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.imports import dotted_name
from dllint.facts.values import follow
from dllint.facts.walk import NESTED_SCOPES, walk_body

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall

HUGE_NUM_SAMPLES = 10**8  # far beyond any dataset an epoch walks through


def iter_never_ends(function: ast.AST | None) -> bool:
    """``__iter__`` (or a generator) that never returns."""
    if function is None:
        return False
    for node in walk_body(function):
        if isinstance(node, ast.While) and _always_true(node.test) and _yields(node) and not _leaves(node):
            return True
        if isinstance(node, ast.For) and _is_call_to(node.iter, "count") and _yields(node) and not _leaves(node):
            return True
        if isinstance(node, (ast.Return, ast.YieldFrom)) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call) and _is_call_to(value, "iter") and value.args:
                value = value.args[0]
            if _is_call_to(value, "cycle"):
                return True
    return False


def keeps_one_iterator(cls: ast.ClassDef) -> bool:
    """A loader subclass whose ``__init__`` stores an iterator over itself."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return False
    for node in walk_body(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "__iter__":
                return True  # super().__iter__(), DataLoader.__iter__(self)
            if isinstance(func, ast.Name) and func.id == "iter" and node.value.args:
                arg = node.value.args[0]
                if isinstance(arg, ast.Name) and arg.id == "self":
                    return True
    return False


def endless_reason(facts: FileFacts, loader: LoaderCall) -> str | None:
    """Why iterating ``loader`` is one endless pass, or None."""
    name = dotted_name(loader.node.func)
    local = facts.classes.get(name) if name else None
    if local is not None and keeps_one_iterator(local.node):
        return f"'{local.name}' keeps one iterator for its lifetime"
    if local is None and name and facts.project is not None and facts.project.class_fact(facts, loader.node.func, loader.scope, "keeps_iterator"):
        return f"'{name}' keeps one iterator for its lifetime"
    for argument in ("sampler", "batch_sampler"):
        arg = loader.argument(argument)
        if arg is not None:
            reason = _endless_sampler(facts, arg.value, arg.scope, 0)
            if reason:
                return reason
    return None


def endless_sampler_call(facts: FileFacts, call: ast.Call, scope) -> str | None:
    """Why the sampler ``call`` builds never ends, or None."""
    return _endless_sampler(facts, call, scope, 0)


def _endless_sampler(facts: FileFacts, expr: ast.expr, scope, depth: int) -> str | None:
    expr, scope = follow(expr, scope, facts)
    if not isinstance(expr, ast.Call) or depth > 4:
        return None
    if facts.project is not None and any(r.kind == "sampler" and r.endless for r in facts.project.returned(facts, expr.func, scope)):
        return f"the sampler '{dotted_name(expr.func)}()' returns never ends"
    name = dotted_name(expr.func) or ""
    last = (facts.qualname(expr.func) or name).rsplit(".", 1)[-1]
    if last == "RandomSampler" and _huge_with_replacement(facts, expr, scope):
        return "RandomSampler draws a practically endless number of samples"
    local = facts.classes.get(name)
    if local is not None:
        method = local.method("__iter__")
        if iter_never_ends(method):
            return f"sampler '{local.name}' never ends"
    elif facts.project is not None and facts.project.class_fact(facts, expr.func, scope, "endless"):
        return f"sampler '{name}' never ends"
    if expr.args and (last.endswith("BatchSampler") or local is not None or last.startswith("_Repeat")):
        return _endless_sampler(facts, expr.args[0], scope, depth + 1)  # BatchSampler(Infinite(...))
    return None


def _huge_with_replacement(facts: FileFacts, call: ast.Call, scope) -> bool:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    replacement = keywords.get("replacement", call.args[1] if len(call.args) > 1 else None)
    samples = keywords.get("num_samples", call.args[2] if len(call.args) > 2 else None)
    if replacement is None or samples is None or facts.resolve(replacement, scope).truthy() is not True:
        return False
    value = _number(follow(samples, scope, facts)[0])
    return value is not None and value >= HUGE_NUM_SAMPLES


def _number(expr: ast.expr, depth: int = 0) -> float | None:
    if depth > 4:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("int", "float") and len(expr.args) == 1:
        return _number(expr.args[0], depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Pow, ast.Mult)):
        left, right = _number(expr.left, depth + 1), _number(expr.right, depth + 1)
        if left is None or right is None or (isinstance(expr.op, ast.Pow) and right > 30):
            return None
        return left**right if isinstance(expr.op, ast.Pow) else left * right
    return None



def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


def _yields(loop: ast.AST) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_body(loop))


def _leaves(loop: ast.AST) -> bool:
    """A ``break`` of this loop or a ``return`` inside it."""
    stack = [(child, 0) for child in ast.iter_child_nodes(loop)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.Return) or isinstance(node, ast.Break) and depth == 0:
            return True
        if isinstance(node, NESTED_SCOPES):
            continue
        inner = depth + 1 if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else depth
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return False


def _is_call_to(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Call) and (dotted_name(expr.func) or "").rsplit(".", 1)[-1] == name
