"""Folders a file adds to ``sys.path``: ``sys.path.insert(0, os.path.join(os.path.dirname(__file__),
"..", "lib"))``, ``sys.path.append(str(Path(__file__).resolve().parents[1]))``, a literal path,
``site.addsitedir(...)``, also through a small helper (``def add_path(p): sys.path.insert(0, p)``,
the ``_init_paths.py`` idiom) and names bound to such paths in the same file.

Only what can be computed without running anything is read: string constants, ``__file__``,
``os.path`` (``dirname``, ``abspath``, ``realpath``, ``normpath``, ``join``, ``expanduser`` is
not), ``pathlib.Path`` (``parent``, ``parents[n]``, ``resolve()``, ``absolute()``, ``/``) and
``str()``/``os.fspath()``. A relative literal is taken from the file's folder (where ``python
script.py`` is usually run from). Anything else adds nothing (unknown: imports it would make
resolvable stay unresolved, and the rules that need them stay silent).
"""

from __future__ import annotations

import ast
import os
from typing import Union

from dllint.facts.walk import walk_with_parents

MAX_ADDITIONS = 16
_PathValue = Union[str, None]
_INSERTERS = ("insert", "append")


def path_additions(path: str, data: bytes) -> list[str]:
    """The folders ``path`` (whose bytes are ``data``) adds to ``sys.path``, in its order."""
    if b"sys.path" not in data and b"addsitedir" not in data:
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    return _Reader(path, tree).additions()[:MAX_ADDITIONS]


class _Reader:
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.file = os.path.abspath(path)
        self.names: dict[str, ast.expr] = {}
        self.helpers: dict[str, str] = {}  # function name -> its parameter that it adds to sys.path
        # one walk (ast.walk's order) and the nodes that add to sys.path, with what they add
        self.nodes, parents = walk_with_parents(tree)
        self.added: dict[int, ast.expr] = {}
        functions: list[int] = []
        for index, node in enumerate(self.nodes):
            added = _added_expression(node)
            if added is not None:
                self.added[index] = added
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                self.names[name] = node.value if name not in self.names else ast.Constant(None)  # bound twice: unknown
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(index)
        for index in functions:
            function = self.nodes[index]
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            params = [a.arg for a in function.args.args]
            for inner, added in self.added.items():
                if isinstance(added, ast.Name) and added.id in params and _inside(parents, inner, index):
                    self.helpers[function.name] = added.id

    def additions(self) -> list[str]:
        found: list[str] = []
        for index, node in enumerate(self.nodes):
            added = self.added.get(index)
            if added is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.helpers:
                added = node.args[0] if node.args else None
            value = self.value(added, 0) if added is not None else None
            if value is not None:
                folder = os.path.normpath(value if os.path.isabs(value) else os.path.join(os.path.dirname(self.file), value))
                if folder not in found:
                    found.append(folder)
        return found

    def value(self, expr: ast.expr, depth: int) -> _PathValue:
        """The path ``expr`` computes, or None."""
        if depth > 8:
            return None
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, str) else None
        if isinstance(expr, ast.Name):
            if expr.id == "__file__":
                return self.file
            bound = self.names.get(expr.id)
            return self.value(bound, depth + 1) if bound is not None else None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):  # Path / "x"
            left, right = self.value(expr.left, depth + 1), self.value(expr.right, depth + 1)
            return os.path.join(left, right) if left is not None and right is not None else None
        if isinstance(expr, ast.Attribute) and expr.attr == "parent":
            inner = self.value(expr.value, depth + 1)
            return os.path.dirname(inner) if inner is not None else None
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "parents":
            inner = self.value(expr.value.value, depth + 1)
            index = expr.slice.value if isinstance(expr.slice, ast.Constant) else None
            if inner is None or not isinstance(index, int) or index < 0:
                return None
            for _ in range(index + 1):
                inner = os.path.dirname(inner)
            return inner
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        return None

    def _call(self, call: ast.Call, depth: int) -> _PathValue:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        args = [self.value(a, depth + 1) for a in call.args]
        if name in ("resolve", "absolute") and isinstance(func, ast.Attribute) and not call.args:
            return self.value(func.value, depth + 1)
        if any(a is None for a in args):
            return None
        values = [a for a in args if a is not None]
        if name in ("dirname",) and len(values) == 1:
            return os.path.dirname(values[0])
        if name in ("abspath", "realpath", "normpath", "str", "fspath", "Path", "PurePath") and len(values) == 1:
            return values[0]
        if name == "join" and values:
            return os.path.join(*values)
        return None


def _inside(parents: list[int], index: int, ancestor: int) -> bool:
    """Node ``index`` of a :func:`walk_with_parents` list is node ``ancestor`` or lies inside it."""
    while index >= 0:
        if index == ancestor:
            return True
        index = parents[index]
    return False


def _added_expression(node: ast.AST) -> ast.expr | None:
    """The folder expression of ``sys.path.insert(i, X)``, ``sys.path.append(X)`` or
    ``site.addsitedir(X)``."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    func = node.func
    if func.attr in _INSERTERS and isinstance(func.value, ast.Attribute) and func.value.attr == "path" and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys":
        wanted = 1 if func.attr == "insert" else 0
        return node.args[wanted] if len(node.args) > wanted else None
    if func.attr == "addsitedir" and node.args:
        return node.args[0]
    return None
