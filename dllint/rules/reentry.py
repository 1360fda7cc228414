"""What DL201 and DL306 say of a loader iterated again inside its own pass (shared by both:
DL201 offers no fix there, DL306 reports it where persistent workers are already on)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.model import How, Use

if TYPE_CHECKING:
    from dllint.facts import FileFacts


def reported_at(use: Use) -> ast.AST:
    """Where an inner pass is reported: the expression a ``for`` or comprehension iterates,
    else the node itself (``iter(loader)``, or the call that hands the loader to another
    file's function that iterates it)."""
    node = use.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return node.iter
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return node.generators[0].iter
    return node


def reentry_message(facts: FileFacts, inner: Use, outer: Use, effect: str) -> str:
    """``the loader is iterated again (line N[, through a call at line M]) inside its own pass
    ...``: where the inner pass starts, and what persistent workers make of it."""
    line = getattr(reported_at(inner), "lineno", 0)
    through = next((call.lineno for call in inner.via), None) if inner.how is How.HERE else None
    via = f", through the call at line {through}" if through is not None and through != line else ""
    where = f"by the call at line {line}" if inner.how is not How.HERE else f"line {line}"
    outer_line = getattr(reported_at(outer), "lineno", 0)
    return (f"the loader is iterated again ({where}{via}) inside its own pass: with persistent workers "
            f"that {effect} {outer_line}; give the inner pass a loader of its own")
