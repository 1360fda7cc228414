"""Where a LibCST module's nodes are, resolved one statement at a time.

A fix pass needs the positions of the few statements its findings are in, and the text of the
rest unchanged. LibCST's ``PositionProvider`` generates the whole module's code to position every
node (and ``MetadataWrapper`` adds a second full traversal); here a statement is positioned by
generating its own code from the line ``ast`` says it starts on, checked against the file's text,
and the whole module is positioned only when a fix asks about a node outside the statements
resolved so far. A statement is found inside the bodies around it (a ``return DataLoader(...)`` in
a method of a 500-line class is positioned, and later generated, on its own), so that a fix costs
what the statement it edits costs, not what its class costs. Rendering then regenerates only the
outermost statements holding an edited node.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Iterable, NamedTuple, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from dllint.source import line_starts

Path = tuple[int, ...]  # a statement: its index in the module's body, then in each body below
# Characters of one line that LibCST is given to fix. It builds an object per token: a 2 MB line
# of generated data took 15 s and 1.3 GB to parse, and minutes to position and render.
MAX_FIXED_LINE = 20_000


class _Body(NamedTuple):
    """The statements of one body (the module's, or a compound statement's indented one)."""

    starts: list[int]  # the line each starts on, its leading blank and comment lines included
    firsts: list[ast.stmt]  # the ``ast`` statement each begins with
    indents: tuple[str, ...]  # the indentation their code is generated with


class StatementPositions:
    """Node positions (what ``PositionProvider`` resolves) of ``module``, parsed from ``text``: the
    file's, or the part of it that starts on the file's line ``first_line`` (positions are the file's)."""

    def __init__(self, module: cst.Module, text: str, first_line: int = 1) -> None:
        self.module = module
        self.text = text
        self.first_line = first_line
        self.positions: dict[cst.CSTNode, CodeRange] = {}
        self.statement_of: dict[int, Path] = {}  # id(node) -> the innermost positioned statement holding it
        self.spans: dict[Path, tuple[int, int]] = {}  # statement -> its text's offsets in ``text``
        self.complete = False
        self._nodes: dict[Path, list[cst.CSTNode]] = {}  # statement -> its nodes, in generation order
        self._bodies: dict[Path, _Body | None] = {}
        self._failed: set[Path] = set()  # statements whose generated code is not the text found there
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
        """Every node that may start on ``line``, in the order of a whole-module position map: those
        of the innermost statement holding the line (of a statement around it when that one cannot
        be positioned alone)."""
        line -= self.first_line - 1
        path = self._statement_on(line)
        while path:
            if self._resolve(path) and line < self._end_line(path):
                return self._nodes[path]
            path = path[:-1]
        self.resolve_all()
        return list(self.positions)

    def statement(self, path: Path) -> cst.BaseStatement:
        node: cst.BaseStatement = self.module.body[path[0]]
        for index in path[1:]:
            node = node.body.body[index]  # type: ignore[attr-defined]  # a path goes through compound statements
        return node

    def code(self, nodes: list[cst.CSTNode], path: Path) -> str:
        """The code of ``nodes`` standing where statement ``path`` stands (at its indentation)."""
        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        state.indent_tokens.extend(self._body(path[:-1]).indents)  # type: ignore[union-attr]
        for node in nodes:
            node._codegen(state)
        return "".join(state.tokens)

    # -- resolving -----------------------------------------------------------------------------
    def _statement_on(self, line: int) -> Path:
        """The innermost statement whose lines may hold ``line``: () when none can be told."""
        if self.complete:
            return ()
        path: Path = ()
        while True:
            body = self._body(path)
            if body is None or line < body.starts[0]:
                return path
            path = (*path, bisect.bisect_right(body.starts, line) - 1)

    def _end_line(self, path: Path) -> int:
        start, end = self.spans[path]
        return bisect.bisect_right(self._line_offsets, end - 1) + 1

    def _body(self, path: Path) -> _Body | None:
        """The body below statement ``path`` (the module's for ``()``), its starts from ``ast``'s line
        numbers; None when the statement has no indented body, or when LibCST's statements and
        ``ast``'s cannot be matched up."""
        if path in self._bodies:
            return self._bodies[path]
        self._bodies[path] = None
        if not path:
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            self._line_offsets = line_starts(self.text)
            statements: Sequence[cst.BaseStatement] = self.module.body
            firsts, indents = tree.body, ()
        else:
            outer = self._body(path[:-1])
            node, first = self.statement(path), outer.firsts[path[-1]]  # type: ignore[union-attr]
            block, below = getattr(node, "body", None), getattr(first, "body", None)
            if not isinstance(block, cst.IndentedBlock) or not isinstance(below, list) or not block.body:
                return None
            indent = self.module.default_indent if block.indent is None else block.indent
            statements, firsts, indents = block.body, below, (*outer.indents, indent)  # type: ignore[union-attr]
        matched = _match(statements, firsts)
        if matched is not None:
            self._bodies[path] = _Body(*matched, indents)
        return self._bodies[path]

    def _resolve(self, path: Path) -> bool:
        """Position statement ``path`` by generating its code from its first line; False when
        that code is not the text found there (a statement around it is positioned instead)."""
        if path in self.spans:
            return True
        if path in self._failed:
            return False
        starts, _, indents = self._body(path[:-1])  # type: ignore[misc]  # resolved by _statement_on
        line = starts[path[-1]]
        if line > len(self._line_offsets):
            self._failed.add(path)
            return False
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent, default_newline=self.module.default_newline, provider=provider
        )
        state.indent_tokens.extend(indents)
        state.line = line + self.first_line - 1
        self.statement(path)._codegen(state)
        piece = "".join(state.tokens)
        offset = self._line_offsets[line - 1]
        if not self.text.startswith(piece, offset):
            self._failed.add(path)
            return False
        nodes = list(provider._computed)
        self.positions.update(provider._computed)  # type: ignore[arg-type]  # LibCST's private table: CodeRanges, computed
        for node in nodes:  # a statement below, positioned before, keeps its nodes
            if len(self.statement_of.get(id(node), ())) < len(path):
                self.statement_of[id(node)] = path
        self._nodes[path] = nodes
        self.spans[path] = (offset, offset + len(piece))
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
        state.line = self.first_line
        state.before_codegen(module)  # what Module._codegen does, one statement at a time
        for line in module.header:
            line._codegen(state)
        offset, mark, first = len("".join(tokens)), len(tokens), len(computed)
        spans: dict[Path, tuple[int, int]] = {}
        node_ends: list[int] = []
        for index, stmt in enumerate(module.body):
            stmt._codegen(state)
            length = len("".join(tokens[mark:]))
            spans[(index,)] = (offset, offset + length)
            offset, mark = offset + length, len(tokens)
            node_ends.append(len(computed))
        nodes = list(computed)
        for index, end in enumerate(node_ends):
            for node in nodes[first:end]:  # a statement below, positioned before, keeps its nodes
                self.statement_of.setdefault(id(node), (index,))
            first = end
        for line in module.footer:
            line._codegen(state)
        if module.has_trailing_newline:
            if not tokens:
                state.add_token(state.default_newline)
        else:
            state.pop_trailing_newline()
        state.after_codegen(module)
        self.positions = dict(computed)  # type: ignore[arg-type]  # LibCST's private table: CodeRanges, computed
        if "".join(tokens) == self.text:
            self.spans.update(spans)
        self.complete = True


def _match(statements: Sequence[cst.BaseStatement], firsts: list[ast.stmt]) -> tuple[list[int], list[ast.stmt]] | None:
    """LibCST's statements of one body against ``ast``'s (a line of ``a; b`` is one of LibCST's
    and two of ``ast``'s): the line each of LibCST's starts on, its leading lines included, and
    the ``ast`` statement it begins with; None when they do not line up."""
    starts: list[int] = []
    begins: list[ast.stmt] = []
    position = 0
    for stmt in statements:
        if position >= len(firsts):
            return None
        first = firsts[position]
        line = _first_line(first) - len(stmt.leading_lines)  # type: ignore[attr-defined]  # LibCST's statements all have them; BaseStatement does not say so
        decorators = getattr(stmt, "decorators", ())
        if decorators:
            line -= len(decorators[0].leading_lines)
        starts.append(line)
        begins.append(first)
        position += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    if position != len(firsts) or not starts or starts[0] < 1 or any(a >= b for a, b in zip(starts, starts[1:])):
        return None
    return starts, begins


def overlong_line(text: str) -> str | None:
    """Why ``text`` is not handed to LibCST (a line over :data:`MAX_FIXED_LINE`); None when it may be."""
    if len(text) <= MAX_FIXED_LINE:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_FIXED_LINE:
            return f"line {number} has {len(line):,} characters (over {MAX_FIXED_LINE:,}): generated code is not fixed"
    return None


class Part(NamedTuple):
    """A part of a file that LibCST can parse on its own: ``text[start:end]``, after ``header`` (an
    ``if 1:`` that gives an indented statement its body), whose first line is the file's
    ``first_line`` (the header's line is the one before the statement's)."""

    start: int
    end: int
    first_line: int
    header: str = ""


def parts_holding(text: str, lines: Iterable[int]) -> list[Part]:
    """The parts of ``text`` that hold ``lines``, smallest first: the innermost statement holding
    them all, at any depth, when it is alone on its lines; then the top-level statements holding
    them (and those between them, or sharing a line with them). Empty when ``text`` does not parse
    or a line is in no statement."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    wanted = sorted(set(lines))
    spans = [(_first_line(s), _last_line(s)) for s in body]
    if not wanted or not all(any(start <= line <= end for start, end in spans) for line in wanted):
        return []
    offsets = line_starts(text)

    def part(first: int, last: int, header: str = "") -> Part:
        return Part(offsets[first - 1], _line_end(text, offsets, last), first - bool(header), header)

    parts: list[Part] = []
    siblings: list[ast.stmt] | None = body
    while siblings:  # down the bodies, as long as one statement holds every line
        holder = next((s for s in siblings if _first_line(s) <= wanted[0] and wanted[-1] <= _last_line(s)), None)
        if holder is None or not _alone(holder, siblings, text, offsets):
            break
        first = _first_line(holder)
        header = "if 1:" + _newline(text, offsets, first) if siblings is not body else ""  # a body to be indented in
        parts.insert(0, part(first, _last_line(holder), header))
        siblings = next((b for b in _bodies(holder) if _first_line(b[0]) <= wanted[0] and wanted[-1] <= _last_line(b[-1])), None)
    if not parts or parts[-1].header:
        first, last, widened = wanted[0], wanted[-1], True
        while widened:  # a statement reaching into the part (`x = (1,` / `2); y = f()`) widens it
            widened = False
            for start, end in spans:
                if start <= last and end >= first and (start < first or end > last):
                    first, last, widened = min(first, start), max(last, end), True
        parts.append(part(first, last))
    return parts


def _line_end(text: str, offsets: list[int], line: int) -> int:
    """The offset just past ``line`` (its line break included)."""
    return offsets[line] if line < len(offsets) else len(text)


def _first_line(stmt: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _last_line(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    found = [getattr(stmt, name, None) for name in ("body", "orelse", "finalbody")]
    found += [h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
    return [b for b in found if isinstance(b, list) and b]


def _alone(stmt: ast.stmt, siblings: list[ast.stmt], text: str, offsets: list[int]) -> bool:
    """``stmt`` has its lines to itself: no other statement on them, and only its indentation
    before it (not a header's `if x:` nor an `elif`)."""
    first, last = _first_line(stmt), _last_line(stmt)
    if any(s is not stmt and _first_line(s) <= last and first <= _last_line(s) for s in siblings):
        return False
    line = text[offsets[first - 1] : _line_end(text, offsets, first)]
    code = line.lstrip(" \t\f")
    decorators = getattr(stmt, "decorator_list", None)
    column = decorators[0].col_offset - 1 if decorators else stmt.col_offset
    return len(line) - len(code) == column and not code.startswith("elif")


def _newline(text: str, offsets: list[int], line: int) -> str:
    end = _line_end(text, offsets, line)
    return "\r\n" if text.endswith("\r\n", 0, end) else "\r" if text.endswith("\r", 0, end) else "\n"


# -- wrapping a call that a fix made too long ------------------------------------------------
def wrap_to_fit(ctx, old: cst.Call, new: cst.Call) -> cst.Call:
    """``new`` (``old`` with an argument set) laid out to keep its lines within the project's
    line length (``ctx.line_length``), the way the call is already laid out. A call on one line
    that would now be too long breaks after ``(`` with its arguments on one line (black's first
    choice), or one per line with a trailing comma when that line is too long too. A call already
    on several lines keeps its layout (``set_argument`` followed it: one argument per line stays
    so) unless a line is now too long: its arguments on one line below ``(`` (black's) become one
    per line; otherwise the new argument goes on a line of its own, where the last one starts.
    Only a call in a simple statement is wrapped; lines are measured with their comments."""
    statement = next((a for a in ctx.ancestors(old) if isinstance(a, cst.SimpleStatementLine)), None)
    if statement is None or not new.args:
        return new
    indent = _indentation(ctx, statement)
    if indent.strip():
        return new  # after a header on its line (`if x: y = f(...)`): no indentation to follow
    if "\n" in ctx.code(old):
        return _fit_split_call(ctx, statement, indent, old, new)
    bare = statement.with_changes(leading_lines=())  # its own line(s), without blank or comment lines above
    if "\n" in ctx.module.code_for_node(bare).rstrip("\n"):
        return new
    if _fits(ctx, statement, indent, old, new):
        return new
    # One unit of indentation more for the arguments: 4 spaces (black's, ruff's), or a tab in a
    # file indented with tabs; not the module's default_indent, which for a part parsed under
    # `if 1:` is the whole depth.
    unit = "\t" if ctx.module.default_indent.startswith("\t") else "    "
    hugged = _break_after_parenthesis(new, indent, indent + unit)
    arguments = len(indent + unit) + sum(len(ctx.code(arg)) for arg in hugged.args)
    return hugged if arguments <= ctx.line_length else _one_per_line(new, indent, indent + unit)


def _fit_split_call(ctx, statement: cst.SimpleStatementLine, indent: str, old: cst.Call, new: cst.Call) -> cst.Call:
    """``new`` within the line length, ``old`` being on several lines already."""
    if len(new.args) < 2 or len(new.args) == len(old.args) or _fits(ctx, statement, indent, old, new):
        return new  # one argument, or a value replaced: nothing to break before
    inner = _argument_indentation(ctx, old)
    if _hugged(old):  # `f(` / `a, b, c` / `)`: black's layout, whose next one is one argument per line
        return _one_per_line(new, indent, inner)
    before = new.args[-2]
    comma = before.comma if isinstance(before.comma, cst.Comma) else cst.Comma()
    before = before.with_changes(comma=comma.with_changes(whitespace_after=_line_break(inner)))
    return new.with_changes(args=[*new.args[:-2], before, new.args[-1]])


def _fits(ctx, statement: cst.SimpleStatementLine, indent: str, old: cst.Call, new: cst.Call) -> bool:
    """Every line of ``statement`` with ``new`` for ``old`` keeps to the line length."""
    bare = statement.with_changes(leading_lines=()).deep_replace(old, new)
    state = CodegenState(default_indent=ctx.module.default_indent, default_newline="\n")
    state.indent_tokens.append(indent)  # the statement's own indentation, as the file has it
    bare._codegen(state)
    return all(len(line) <= ctx.line_length for line in "".join(state.tokens).splitlines())


def _file_line(ctx, line: int) -> str:
    """The file's line ``line`` (positions are the file's; ``ctx.text`` may be a part of it).
    Split where Python ends lines (``\n``, ``\r\n``, ``\r``), not where ``str.splitlines`` does:
    a form feed (a page break) or a vertical tab ends no line."""
    lines = re.split(r"\r\n|\r|\n", ctx.text)
    index = line - ctx.state.where.first_line
    return lines[index] if 0 <= index < len(lines) else ""


def _indentation(ctx, statement: cst.CSTNode) -> str:
    (line, column), _ = ctx.span(statement)
    return _file_line(ctx, line)[:column]


def _argument_indentation(ctx, call: cst.Call) -> str:
    """Where the call's last argument's line puts its arguments: that line's indentation when
    they start it, else (``f(a,`` / ``  b)``: aligned with the parenthesis) the first one's column."""
    line = ctx.span(call.args[-1])[0][0]
    first = next(arg for arg in call.args if ctx.span(arg)[0][0] == line)
    column = ctx.span(first)[0][1]
    head = _file_line(ctx, line)[:column]
    return head if not head.strip() else " " * column


def _hugged(call: cst.Call) -> bool:
    """``f(`` / every argument on one line / ``)``."""
    if not isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return False
    inside = [a.comma.whitespace_after for a in call.args[:-1] if isinstance(a.comma, cst.Comma)]
    return not any(isinstance(w, cst.ParenthesizedWhitespace) for w in inside)


def _line_break(indentation: str) -> cst.ParenthesizedWhitespace:
    """A line break inside brackets, then ``indentation``."""
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), indent=False, last_line=cst.SimpleWhitespace(indentation))


def _break_after_parenthesis(call: cst.Call, outer: str, inner: str) -> cst.Call:
    args = list(call.args)
    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=_line_break(outer))
    return call.with_changes(whitespace_before_args=_line_break(inner), args=args)


def _one_per_line(call: cst.Call, outer: str, inner: str) -> cst.Call:
    args = []
    for index, arg in enumerate(call.args):
        last = index == len(call.args) - 1
        comma = cst.Comma(whitespace_after=_line_break(outer if last else inner))
        args.append(arg.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(whitespace_before_args=_line_break(inner), args=args)
