"""A config key as code reads it: ``cfg.train.loader`` or ``cfg["train"]["loader"]``.

Shared by the lint (which YAML block a ``DataLoader(**cfg.train.loader)`` hands on whole) and the
probe (which key a measured value came from), so both read a key path the same way.
"""

from __future__ import annotations

import ast

MAX_KEYS = 16  # keys followed down from an expression to its root name


def key_chain(expr: ast.expr | None) -> tuple[str, tuple[str, ...]] | None:
    """``cfg.data.num_workers`` (or ``cfg["data"]["num_workers"]``) as ``("cfg", ("data",
    "num_workers"))``: the root name and the keys, outermost first; None for anything else
    (no key, a call's result, a computed key, more than MAX_KEYS keys)."""
    keys: list[str] = []
    node = expr
    for _ in range(MAX_KEYS):
        step = key_step(node)
        if step is None:
            break
        keys.append(step[0])
        node = step[1]
    if not isinstance(node, ast.Name) or not keys:
        return None
    return node.id, tuple(reversed(keys))


def key_step(node: ast.expr | None) -> tuple[str, ast.expr] | None:
    """One key read: ``x.key`` or ``x["key"]`` as ``("key", x)``; None for anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr, node.value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value, node.value
    return None
