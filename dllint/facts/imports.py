"""Qualified names through a file's imports: ``tud.DataLoader`` -> ``torch.utils.data.DataLoader``.

A dictionary of import aliases answers every qualified-name question the
rules ask, at a fraction of the cost of a full qualified-name analysis.
"""

from __future__ import annotations

import ast

from dllint.facts.walk import walk


def build_import_table(tree: ast.Module, nodes: list[ast.AST] | None = None) -> dict[str, str]:
    """Map each imported local name to the dotted path it stands for (``nodes``: ``walk(tree)`` if at hand)."""
    table: dict[str, str] = {}
    Import, ImportFrom = ast.Import, ast.ImportFrom
    for node in walk(tree) if nodes is None else nodes:
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
        if module and node.level == 0:  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    table[alias.asname or alias.name] = f"{module}.{alias.name}"
    # A class or function defined at module level shadows an import of the same name.
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            table.pop(stmt.name, None)
    return table


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
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
    dotted = dotted_name(node)
    if dotted is None:
        return None
    root, _, rest = dotted.partition(".")
    base = imports.get(root)
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base
