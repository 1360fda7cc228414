"""Qualified names through a file's imports: ``tud.DataLoader`` -> ``torch.utils.data.DataLoader``.

A dictionary of import aliases answers every qualified-name question the
rules ask, at a fraction of the cost of a full qualified-name analysis.
"""

from __future__ import annotations

import ast
import builtins
from typing import Sequence

from dllint.facts.walk import walk


# Module names a star import binds when its module imports them (``from utils import *`` with
# ``import torch`` in utils.py, and no ``__all__``): a file that uses one it never binds itself
# can only have it from a star import, and the module a project binds under that name is it.
STAR_BOUND_MODULES = ("torch",)
BUILTIN_NAMES = frozenset(dir(builtins))


def build_import_table(
    tree: ast.Module, nodes: list[ast.AST] | None = None, statements: list[ast.Import | ast.ImportFrom] | None = None
) -> dict[str, str]:
    """Map each imported local name to the dotted path it stands for (``nodes``: ``walk(tree)`` if
    at hand; ``statements``: its import statements in that order, if the caller picked them out)."""
    table: dict[str, str] = {}
    Import, ImportFrom = ast.Import, ast.ImportFrom
    nodes = walk(tree) if nodes is None else nodes
    star = False
    for node in nodes if statements is None else statements:
        cls = node.__class__  # exact classes: a parsed tree holds no subclasses
        if cls is not Import and cls is not ImportFrom:
            continue
        # (the exact-class tests narrow node, which mypy cannot see through node.__class__)
        if cls is Import:
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    table[root] = root
            continue
        module: str | None = node.module  # type: ignore[attr-defined]
        star = star or any(alias.name == "*" for alias in node.names)  # type: ignore[attr-defined]
        if module and node.level == 0:  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    table[alias.asname or alias.name] = f"{module}.{alias.name}"
    if star:
        table.update({name: name for name in _bound_by_stars(nodes, table)})
    # A class or function defined at module level shadows an import of the same name.
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            table.pop(stmt.name, None)
    return table


def has_star_import(nodes: Sequence[ast.AST]) -> bool:
    """The file has a ``from m import *`` (``nodes``: its nodes, or its import statements)."""
    ImportFrom = ast.ImportFrom
    return any(node.__class__ is ImportFrom and any(a.name == "*" for a in node.names) for node in nodes)  # type: ignore[attr-defined]


def unbound_reads(nodes: list[ast.AST], table: dict[str, str]) -> frozenset[str]:
    """The names the file reads but binds nowhere (no import in ``table``, assignment,
    parameter, loop or ``with`` target, ``def``/``class``, builtin): what a star import may bind."""
    read: set[str] = set()
    bound: set[str] = set(table)
    for node in nodes:
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return frozenset(read - bound - BUILTIN_NAMES)


def _bound_by_stars(nodes: list[ast.AST], table: dict[str, str]) -> set[str]:
    """The :data:`STAR_BOUND_MODULES` the file reads but binds nowhere (no import, assignment,
    parameter, loop or ``with`` target, ``def``/``class``)."""
    wanted = {name for name in STAR_BOUND_MODULES if name not in table}
    read: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in wanted:
            if not isinstance(node.ctx, ast.Load):
                wanted.discard(node.id)
            read.add(node.id)
        elif isinstance(node, ast.arg) and node.arg in wanted or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in wanted:
            wanted.discard(node.arg if isinstance(node, ast.arg) else node.name)
    return wanted & read


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if node.__class__ is ast.Name:  # most callees: no list, no join
        return node.id  # type: ignore[attr-defined]
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def qualified_name(node: ast.AST, imports: dict[str, str]) -> str | None:
    """The imported dotted path of a Name/Attribute chain, or None if its root is not imported."""
    root_node = node
    while isinstance(root_node, ast.Attribute):
        root_node = root_node.value
    if not isinstance(root_node, ast.Name) or root_node.id not in imports:
        return None  # (most callees: their dotted name is never built)
    dotted = dotted_name(node)
    if dotted is None:
        return None
    root, _, rest = dotted.partition(".")
    base = imports.get(root)
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base
