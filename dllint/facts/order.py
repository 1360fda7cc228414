"""The order statements of one file run in: whether one runs before a node on every path to it.

Read by DL206's device and batch facts (a store made before the call that hands its object on,
a move of a model before the loop that copies to its device).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dllint.facts import FileFacts

LOOPS = (ast.For, ast.AsyncFor, ast.While)

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def dominates(facts: FileFacts, statement: ast.stmt, node: ast.AST, loops: bool = False) -> bool:
    """``statement`` runs before ``node`` on every path to it, and (unless ``loops``) no other
    pass reaches it: ``node`` is under a later statement of the same body, with no loop or
    scope between."""
    parents = facts.scopes.parents
    owner = parents.get(statement)
    current: ast.AST | None = node
    while current is not None and parents.get(current) is not owner:
        if isinstance(current, SCOPES) or not loops and isinstance(current, LOOPS):
            return False
        current = parents.get(current)
    if current is None:
        return False
    for field in ("body", "orelse", "finalbody"):
        block = getattr(owner, field, None)
        if isinstance(block, list) and statement in block and current in block:
            return block.index(statement) < block.index(current)
    return False
