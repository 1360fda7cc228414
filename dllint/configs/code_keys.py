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
        if isinstance(node, ast.Attribute):
            keys.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            keys.append(node.slice.value)
            node = node.value
        else:
            break
    if not isinstance(node, ast.Name) or not keys:
        return None
    return node.id, tuple(reversed(keys))
