"""Where a LibCST module's nodes are, resolved one top-level statement at a time.

A fix pass needs the positions of the few statements its findings are in, and the text of the
rest unchanged. LibCST's ``PositionProvider`` generates the whole module's code to position every
node (and ``MetadataWrapper`` adds a second full traversal); here a statement is positioned by
generating its own code from the line ``ast`` says it starts on, checked against the file's text,
and the whole module is positioned only when a fix asks about a node outside the statements
resolved so far. Rendering then regenerates only the statements holding an edited node.
"""

from __future__ import annotations

import ast
import bisect
import re

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

LINE_BREAK = re.compile(r"\r\n|\r|\n")


class StatementPositions:
    """Node positions (what ``PositionProvider`` resolves) of ``module``, parsed from ``text``."""

    def __init__(self, module: cst.Module, text: str) -> None:
        self.module = module
        self.text = text
        self.positions: dict[cst.CSTNode, CodeRange] = {}
        self.statement_of: dict[int, int] = {}  # id(node) -> index of its top-level statement
        self.spans: dict[int, tuple[int, int]] = {}  # statement index -> its text's offsets in ``text``
        self.complete = False
        self._nodes: dict[int, list[cst.CSTNode]] = {}  # statement index -> its nodes, in generation order
        self._starts: list[int] | None = None  # the line each statement's text starts on
        self._line_offsets: list[int] = []

    # -- lookups -----------------------------------------------------------------------------
    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        where = self.positions.get(node)
        if where is None:
            self.resolve_all()
            where = self.positions[node]
        return where

    def all(self) -> dict[cst.CSTNode, CodeRange]:
        self.resolve_all()
        return self.positions

    def nodes_on_line(self, line: int) -> list[cst.CSTNode]:
        """Every node that may start on ``line``, in the order of a whole-module position map."""
        index = self._statement_on(line)
        if index is None or not self._resolve(index) or line >= self._end_line(index):
            self.resolve_all()
            return list(self.positions)
        return self._nodes[index]

    # -- resolving -----------------------------------------------------------------------------
    def _statement_on(self, line: int) -> int | None:
        if self.complete:
            return None
        starts = self._statement_starts()
        if not starts or line < starts[0]:
            return None
        return bisect.bisect_right(starts, line) - 1

    def _end_line(self, index: int) -> int:
        start, end = self.spans[index]
        return bisect.bisect_right(self._line_offsets, end - 1) + 1

    def _statement_starts(self) -> list[int]:
        """The line each top-level statement's text starts on (its leading blank and comment lines
        included), from ``ast``'s line numbers; empty when they cannot be matched up."""
        if self._starts is None:
            self._starts = []
            try:
                body = ast.parse(self.text).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return self._starts
            self._line_offsets = [0, *(match.end() for match in LINE_BREAK.finditer(self.text))]
            starts, position = [], 0
            for stmt in self.module.body:
                if position >= len(body):
                    return self._starts
                first = body[position]
                line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
                line -= len(stmt.leading_lines)
                decorators = getattr(stmt, "decorators", ())
                if decorators:
                    line -= len(decorators[0].leading_lines)
                starts.append(line)
                position += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            if position == len(body) and all(a < b for a, b in zip(starts, starts[1:])) and starts and starts[0] >= 1:
                self._starts = starts
        return self._starts

    def _resolve(self, index: int) -> bool:
        """Position statement ``index`` by generating its code from its first line; False when
        that code is not the text found there (the whole module is then positioned instead)."""
        if index in self.spans:
            return True
        line = self._statement_starts()[index]
        if line > len(self._line_offsets):
            return False
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent, default_newline=self.module.default_newline, provider=provider
        )
        state.line = line
        self.module.body[index]._codegen(state)
        piece = "".join(state.tokens)
        offset = self._line_offsets[line - 1]
        if not self.text.startswith(piece, offset):
            return False
        nodes = list(provider._computed)
        self.positions.update(provider._computed)
        for node in nodes:
            self.statement_of[id(node)] = index
        self._nodes[index] = nodes
        self.spans[index] = (offset, offset + len(piece))
        return True

    def resolve_all(self) -> None:
        """Position every node with one code generation of the whole module."""
        if self.complete:
            return
        module = self.module
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, provider=provider
        )
        computed, tokens = provider._computed, state.tokens
        state.before_codegen(module)  # what Module._codegen does, one statement at a time
        for line in module.header:
            line._codegen(state)
        offset, mark, first = len("".join(tokens)), len(tokens), len(computed)
        spans: dict[int, tuple[int, int]] = {}
        node_ends: list[int] = []
        for index, stmt in enumerate(module.body):
            stmt._codegen(state)
            length = len("".join(tokens[mark:]))
            spans[index] = (offset, offset + length)
            offset, mark = offset + length, len(tokens)
            node_ends.append(len(computed))
        nodes = list(computed)
        statement_of: dict[int, int] = {}
        for index, end in enumerate(node_ends):
            for node in nodes[first:end]:
                statement_of[id(node)] = index
            first = end
        for line in module.footer:
            line._codegen(state)
        if module.has_trailing_newline:
            if not tokens:
                state.add_token(state.default_newline)
        else:
            state.pop_trailing_newline()
        state.after_codegen(module)
        self.positions = dict(computed)
        self.statement_of = statement_of
        self.spans = spans if "".join(tokens) == self.text else {}
        self.complete = True
