"""Python dict configs to the neutral tree: mmengine and detectron2 LazyConfig files.

A dict config is a module of assignments: ``train_dataloader = dict(num_workers=2, ...)``
(mmengine), ``dataloader.train = L(build_detection_train_loader)(num_workers=4)``
(detectron2). Statements are read in order the way executing them would bind names: a name
bound earlier in the file resolves, anything else (a call, an imported name we cannot
read, ``{{_base_.x}}``) is :class:`Unknown`. Relative imports of other config files
(detectron2's ``from ..common.data.coco import dataloader``, mmengine's ``read_base()``
imports) are read the same way, and mmengine's ``_base_`` is merged by
:mod:`dllint.configs.inherit`.
"""

from __future__ import annotations

import ast
import os
from bisect import bisect_right
from itertools import accumulate

from dllint.configs.document import ConfigDocument, Entry, Mapping, Node, Scalar, Sequence, Span, Unknown, clone
from dllint.files import Unreadable, read_text
from dllint.source import parse_module

LAZY_CALLS = frozenset({"L", "LazyCall"})
EMPTY_CONFIGS = frozenset({"OmegaConf.create", "dict", "DictConfig", "ConfigDict", "Config"})
MAX_IMPORT_DEPTH = 8


def is_dict_config(tree: ast.Module) -> bool:
    """A module that only binds values: no functions, classes or main guard (a script is
    checked through its loader calls instead; the engine also skips a module that calls a
    loader)."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        if isinstance(stmt, ast.If):
            return False
    return True


def read_python_config(path: str, text: str, tree: ast.Module | None = None, *, _depth: int = 0) -> ConfigDocument | None:
    """The module's top-level bindings as one mapping; None when it does not parse or is not
    a dict config."""
    if tree is None:
        try:
            tree = parse_module(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    if not is_dict_config(tree):
        return None
    reader = _Reader(path, text, _depth)
    reader.read(tree)
    return ConfigDocument(
        path, text, reader.root, "python", local_keys=frozenset(reader.local), splatted=frozenset(reader.splatted)
    )


class _Reader:
    def __init__(self, path: str, text: str, depth: int) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.depth = depth
        self.root = Mapping(Span(1, 1, 1, 1), {}, path)
        self.local: set[str] = set()
        self.splatted: set[str] = set()
        self._char_starts: dict[int, list[int]] = {}  # line -> byte offset where each character starts

    # -- positions ------------------------------------------------------------------
    def _column(self, line: int, offset: int) -> int:
        """1-based character column of an ast byte offset. A non-ASCII line's character starts
        are computed once (a long line with many keys would otherwise be re-decoded per key)."""
        if not 0 < line <= len(self.lines) or self.lines[line - 1].isascii():
            return offset + 1
        starts = self._char_starts.get(line)
        if starts is None:
            starts = list(accumulate((len(c.encode("utf-8")) for c in self.lines[line - 1]), initial=0))
            self._char_starts[line] = starts
        return bisect_right(starts, offset)

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        end = node.end_col_offset if node.end_col_offset is not None else node.col_offset  # type: ignore[attr-defined]
        return Span(line, self._column(line, node.col_offset), end_line, self._column(end_line, end))  # type: ignore[attr-defined]

    # -- statements -------------------------------------------------------------------
    def read(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg is None and isinstance(node.value, ast.Name):
                self.splatted.add(node.value.id)
        for stmt in tree.body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value))
        elif isinstance(stmt, ast.ImportFrom):
            self.import_from(stmt)
        elif isinstance(stmt, ast.With):
            for inner in stmt.body:  # mmengine's `with read_base():` imports
                self.statement(inner)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.update_call(stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.For, ast.While, ast.Try, ast.Delete)):
            for node in ast.walk(stmt):  # anything we do not follow makes what it touches unknown
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    self._forget(node.id, node)

    def _forget(self, name: str, node: ast.AST) -> None:
        if name in self.root.entries:
            self.root.entries[name].value = Unknown(self.span(node), self.path, node)

    def assign(self, target: ast.expr, value: Node) -> None:
        if isinstance(target, ast.Name):
            self.root.entries[target.id] = Entry(target.id, self.span(target), value, self.path, target)
            self.local.add(target.id)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.assign(element, Unknown(self.span(element), self.path, element))
            return
        chain = _target_chain(target)
        if chain is None:
            return
        *parents, last_node = chain
        owner = self.root
        for name, _ in parents:
            child = owner.get(name)
            if not isinstance(child, Mapping):
                return  # assigning into something we cannot see: nothing to record
            owner = child
        key, key_node = last_node
        if owner is self.root:
            self.local.add(key)
        if chain[0][0] in self.root.entries:
            self.local.add(chain[0][0])
        owner.entries[key] = Entry(key, self.span(key_node), value, self.path, key_node)

    def update_call(self, call: ast.Call) -> None:
        """``cfg.update(dict(...))`` / ``cfg.update(k=v)`` on a known mapping (mmengine's new style)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "update"):
            return
        chain = _target_chain(func.value)
        if chain is None:
            return
        owner: Node | None = self.root
        for name, _ in chain:
            owner = owner.get(name) if isinstance(owner, Mapping) else None
        if not isinstance(owner, Mapping):
            return
        self.local.add(chain[0][0])
        for arg in call.args:
            value = self.expr(arg)
            if isinstance(value, Mapping):
                owner.entries.update(value.entries)
                owner.open |= value.open
            else:
                owner.open = True
        for keyword in call.keywords:
            if keyword.arg is None:
                owner.open = True
            else:
                owner.entries[keyword.arg] = Entry(keyword.arg, self.span(keyword), self.expr(keyword.value), self.path, keyword)

    def import_from(self, stmt: ast.ImportFrom) -> None:
        """``from .other_config import name``: read the other config file (detectron2 and
        mmengine's new style); what cannot be read is unknown."""
        source = self._relative_file(stmt) if stmt.level and self.depth < MAX_IMPORT_DEPTH else None
        other = None
        if source is not None:
            try:
                other = read_python_config(source, read_text(source), _depth=self.depth + 1)
            except (Unreadable, UnicodeDecodeError):
                other = None
        for alias in stmt.names:
            if alias.name == "*":
                if isinstance(other, ConfigDocument) and isinstance(other.root, Mapping):
                    for key, entry in other.root.entries.items():
                        self.root.entries[key] = Entry(entry.key, entry.key_span, clone(entry.value), entry.path, entry.node)
                continue
            name = alias.asname or alias.name
            found = other.root.get(alias.name) if isinstance(other, ConfigDocument) and isinstance(other.root, Mapping) else None
            value = clone(found) if found is not None else Unknown(self.span(stmt), self.path, stmt)
            self.root.entries[name] = Entry(name, self.span(stmt), value, self.path, stmt)

    def _relative_file(self, stmt: ast.ImportFrom) -> str | None:
        directory = os.path.dirname(os.path.abspath(self.path))
        for _ in range(stmt.level - 1):
            directory = os.path.dirname(directory)
        parts = (stmt.module or "").split(".") if stmt.module else []
        candidate = os.path.join(directory, *parts) + ".py"
        return candidate if os.path.isfile(candidate) else None

    # -- expressions ----------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Node:
        span = self.span(node)
        if isinstance(node, ast.Constant) and _plain(node.value):
            return Scalar(span, node.value, self.path, node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return Scalar(span, -value, self.path, node)
        if isinstance(node, ast.Name):
            found = self.root.get(node.id)
            if isinstance(found, Scalar):
                return Scalar(span, found.value, self.path, node)
            if found is not None:
                return clone(found)  # the config system copies when it merges; so do we
            return Unknown(span, self.path, node)
        if isinstance(node, ast.Dict):
            return self._dict_literal(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return Sequence(span, [self.expr(e) for e in node.elts], self.path, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        return Unknown(span, self.path, node)

    def _dict_literal(self, node: ast.Dict) -> Mapping:
        mapping = Mapping(self.span(node), {}, self.path, flow=True, node=node)
        for key, value in zip(node.keys, node.values):
            if key is None:
                self._splat(mapping, value)
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                mapping.entries[key.value] = Entry(key.value, self.span(key), self.expr(value), self.path, key)
            else:
                mapping.open = True
        _set_target(mapping)
        return mapping

    def _call(self, node: ast.Call) -> Node:
        func = _dotted(node.func)
        lazy = isinstance(node.func, ast.Call) and _dotted(node.func.func) in LAZY_CALLS and node.func.args
        if not (lazy or func in EMPTY_CONFIGS or func == "dict"):
            return Unknown(self.span(node), self.path, node)
        if not lazy and node.args:
            return Unknown(self.span(node), self.path, node)
        mapping = Mapping(self.span(node), {}, self.path, flow=True, node=node)
        if lazy and isinstance(node.func, ast.Call):  # (lazy: it is)
            mapping.target = _dotted(node.func.args[0])
        for keyword in node.keywords:
            if keyword.arg is None:
                self._splat(mapping, keyword.value)
            else:
                mapping.entries[keyword.arg] = Entry(keyword.arg, self.span(keyword), self.expr(keyword.value), self.path, keyword)
        if not lazy:
            _set_target(mapping)
        return mapping

    def _splat(self, mapping: Mapping, value: ast.expr) -> None:
        found = self.expr(value)
        if isinstance(found, Mapping):
            for key, entry in found.entries.items():
                mapping.entries.setdefault(key, entry)
            mapping.open |= found.open
        else:
            mapping.open = True


def _set_target(mapping: Mapping) -> None:
    """mmengine names the class to build in ``type`` (a string, or the class itself)."""
    kind = mapping.get("type")
    if isinstance(kind, Scalar) and isinstance(kind.value, str):
        mapping.target = kind.value
    elif isinstance(kind, Unknown) and kind.node is not None:
        mapping.target = _dotted(kind.node)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _target_chain(node: ast.expr) -> list[tuple[str, ast.AST]] | None:
    """``a.b["c"].d`` as [(a, node), (b, node), (c, node), (d, node)]; None for anything else."""
    chain: list[tuple[str, ast.AST]] = []
    while True:
        if isinstance(node, ast.Attribute):
            chain.append((node.attr, node))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            chain.append((node.slice.value, node))
            node = node.value
        elif isinstance(node, ast.Name):
            chain.append((node.id, node))
            return list(reversed(chain))
        else:
            return None


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))

