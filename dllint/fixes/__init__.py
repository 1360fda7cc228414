"""What a rule's ``apply_fix`` works with: the file's LibCST tree, and a recorder of edits.

A rule's ``apply_fix(self, ctx, finding)`` locates its nodes with ``ctx`` and records
edits on it (``replace``, ``remove``, ``insert_before``, ``ensure_import``); it raises
:class:`FixUnavailable` when the fix cannot be made here. It never builds the new file
itself: the fixer checks that the edits of different findings do not overlap, applies
all the accepted ones in one transform, and re-lints for the next pass.

Edits are keyed by the identity of the *original* nodes and applied bottom-up to the
*updated* ones, so that a parent's edit (removing an argument from a call) sees what
its children's edits (a hoisted lambda inside that call) already did.
"""

from __future__ import annotations

import builtins
import keyword
import re
import symtable
from dataclasses import dataclass, field
from typing import Callable, Iterator, TypeVar, Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from dllint.findings import Finding

E = TypeVar("E")
Transform = Callable[[cst.CSTNode], Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]]
Point = tuple[int, int]
BUILTIN_NAMES = frozenset(dir(builtins))


class FixUnavailable(Exception):
    """The fix cannot be made safely here; the message says why."""


def edit_of(finding: Finding, kind: type[E]) -> E:
    """The finding's edit, which must be of ``kind`` (the rule's own edit type)."""
    edit = finding.fix.edit if finding.fix is not None else None
    if not isinstance(edit, kind):
        raise FixUnavailable(f"the finding carries no {kind.__name__} edit")
    return edit


@dataclass
class FileState:
    """One parse of one text, shared by every fix of a pass.

    Positions are resolved with the parse (every fix locates its finding); parents only when a
    fix first asks for them, by a plain walk: LibCST's ParentNodeProvider took twice as long as
    positions (1.2 s against 0.6 s on torch's 1,700-line dataloader.py) and the fixes that set
    an argument (DL108, DL201, DL206) never need them."""

    text: str
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]
    reserved_names: set[str] = field(default_factory=set)  # names new definitions took this pass
    _parents: dict[cst.CSTNode, cst.CSTNode] | None = None
    _module_level_names: set[str] | None = None
    layout: ModuleLayout | None = None  # the text of each top-level statement, when known

    @classmethod
    def parse(cls, text: str) -> FileState:
        module = cst.parse_module(text)
        try:
            positions, layout = positions_and_layout(module)
        except AttributeError:  # a LibCST whose code generation differs: its public metadata API
            positions, layout = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)), None
        return cls(text, module, positions, layout=layout)

    @property
    def parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        if self._parents is None:
            parents: dict[cst.CSTNode, cst.CSTNode] = {}
            stack: list[cst.CSTNode] = [self.module]
            while stack:
                node = stack.pop()
                for child in node.children:
                    parents[child] = node
                    stack.append(child)
            self._parents = parents
        return self._parents

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def module_level_names(self) -> set[str]:
        """What a new module-level name must not be: names the module binds or reads, names any
        scope reads as a global, and the builtins (locals of other functions do not count)."""
        if self._module_level_names is None:
            top = symtable.symtable(self.text, "<fix>", "exec")
            names, tables = set(top.get_identifiers()) | BUILTIN_NAMES, list(top.get_children())
            while tables:
                table = tables.pop()
                names.update(s.get_name() for s in table.get_symbols() if s.is_global() or s.is_declared_global())
                tables.extend(table.get_children())
            self._module_level_names = names
        return self._module_level_names


@dataclass
class Edits:
    """The edits of one finding's fix, and the source ranges they claim."""

    transforms: dict[int, list[Transform]] = field(default_factory=dict)
    inserts: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # modules to ``import`` at the top
    claims: list[tuple[Point, Point]] = field(default_factory=list)  # replaced/removed spans
    insert_points: list[Point] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.transforms or self.inserts or self.imports)

    def conflicts_with(self, other: Edits) -> bool:
        for start, end in self.claims:
            for other_start, other_end in other.claims:
                if start < other_end and other_start < end:
                    return True
            if any(start <= point < end for point in other.insert_points):
                return True
        return any(start <= point < end for point in self.insert_points for start, end in other.claims)

    def merge(self, other: Edits) -> None:
        for key, funcs in other.transforms.items():
            self.transforms.setdefault(key, []).extend(funcs)
        for key, stmts in other.inserts.items():
            self.inserts.setdefault(key, []).extend(stmts)
        self.imports += [name for name in other.imports if name not in self.imports]
        self.claims += other.claims
        self.insert_points += other.insert_points


class FixContext:
    """Given to ``Rule.apply_fix``: finds nodes by a finding's position and records edits."""

    def __init__(self, state: FileState) -> None:
        self.state = state
        self.module = state.module
        self.text = state.text
        self.edits = Edits()

    # -- finding nodes ------------------------------------------------------
    def span(self, node: cst.CSTNode) -> tuple[Point, Point]:
        where = self.state.positions[node]
        return (where.start.line, where.start.column), (where.end.line, where.end.column)

    def nodes_at(self, finding: Finding, *types: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Nodes of ``types`` starting where the finding starts, exact end matches first."""
        start = (finding.line, finding.column - 1)
        end = (finding.end_line, finding.end_column - 1)
        found = [n for n, _ in self.state.positions.items() if isinstance(n, types) and self.span(n)[0] == start]
        return sorted(found, key=lambda n: (self.span(n)[1] != end, _larger_first(self.span(n))))

    def node_at(self, finding: Finding, *types: type[cst.CSTNode]) -> cst.CSTNode:
        found = self.nodes_at(finding, *types)
        if not found:
            raise FixUnavailable(f"no {'/'.join(t.__name__ for t in types)} at {finding.line}:{finding.column}")
        return found[0]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.state.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def module_statement(self, node: cst.CSTNode) -> cst.BaseStatement:
        """The module-level statement containing ``node``."""
        chain = [node, *self.ancestors(node)]
        for child, parent in zip(chain, chain[1:]):
            if parent is self.module:
                return child  # type: ignore[return-value]
        raise FixUnavailable("node is not inside the module")

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement:
        for current in [node, *self.ancestors(node)]:
            if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return current
        raise FixUnavailable("node is not inside a statement")

    def code(self, node: cst.CSTNode) -> str:
        return self.state.code(node)

    # -- names ---------------------------------------------------------------
    def unique_name(self, base: str, site: cst.CSTNode | None = None) -> str:
        """``base`` (or ``base_2``, ``base_3``... only when it is taken) for a new module-level
        definition that ``site`` will refer to: free at module level, not taken by another fix of
        this pass, and not shadowed by a name of a function or class around ``site``."""
        base = re.sub(r"\W", "_", base).strip("_") or "func"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = f"_{base}"
        taken = self.state.module_level_names() | self.state.reserved_names
        if site is not None:
            for scope in self.ancestors(site):
                if isinstance(scope, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    taken = taken | names_read_or_bound(scope)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        self.state.reserved_names.add(candidate)
        return candidate

    # -- recording edits -------------------------------------------------------
    def replace(self, node: cst.CSTNode, new: cst.CSTNode | Transform, claim: cst.CSTNode | None = None) -> None:
        """Replace ``node`` with ``new``, or with ``new(updated_node)`` when it is a function.
        ``claim`` is the part of the source the edit changes (default: the whole node)."""
        func: Transform = new if callable(new) and not isinstance(new, cst.CSTNode) else (lambda _updated, n=new: n)
        self.edits.transforms.setdefault(id(node), []).append(func)
        self.edits.claims.append(self.span(claim or node))

    def remove(self, stmt: cst.CSTNode) -> None:
        self.replace(stmt, lambda _updated: cst.RemoveFromParent())

    def insert_before(self, stmt: cst.BaseStatement, new: list[cst.BaseStatement]) -> None:
        self.edits.inserts.setdefault(id(stmt), []).extend(new)
        self.edits.insert_points.append(self.span(stmt)[0])

    def ensure_import(self, module_name: str) -> None:
        """``import module_name`` after the file's imports, unless it is already imported."""
        self.edits.imports.append(module_name)


def names_read_or_bound(node: cst.CSTNode) -> set[str]:
    """The variable names in ``node`` (not attribute names or keyword-argument names)."""
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

    node.visit(Collect())
    return found


def _larger_first(span: tuple[Point, Point]) -> tuple[int, int]:
    (line, col), (end_line, end_col) = span
    return line - end_line, col - end_col


class _ApplyEdits(cst.CSTTransformer):
    def __init__(self, edits: Edits) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        result = updated_node
        for func in self.edits.transforms.get(id(original_node), ()):
            if isinstance(result, cst.CSTNode):
                result = func(result)
        inserted = self.edits.inserts.get(id(original_node))
        if inserted:
            rest = [result] if isinstance(result, cst.CSTNode) else []
            result = cst.FlattenSentinel([*inserted, *rest])
        if isinstance(result, cst.Module) and self.edits.imports:
            result = add_imports(result, self.edits.imports)
        return result


@dataclass
class ModuleLayout:
    """Where each top-level statement's nodes and text are in one code generation of a module:
    ``ends[i]`` counts the nodes positioned up to the end of statement ``i`` (in the order the
    position map lists them; the header's ``start`` come first), ``pieces[i]`` is its text."""

    header: str
    pieces: list[str]
    footer: str
    start: int
    ends: list[int]


def positions_and_layout(module: cst.Module) -> tuple[dict[cst.CSTNode, CodeRange], ModuleLayout]:
    """Every node's position (what ``PositionProvider`` resolves) and the module's layout, from one
    position-tracking code generation. Resolving through ``MetadataWrapper`` costs a second full
    traversal (a batch visit, even with no batchable provider asked for): 40% of a fix pass."""
    provider = PositionProvider()
    state = PositionProvidingCodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline, provider=provider
    )
    computed = provider._computed
    tokens = state.tokens
    state.before_codegen(module)  # what Module._codegen does, one statement at a time
    for line in module.header:
        line._codegen(state)
    header, mark, start = "".join(tokens), len(tokens), len(computed)
    pieces: list[str] = []
    ends: list[int] = []
    for stmt in module.body:
        stmt._codegen(state)
        pieces.append("".join(tokens[mark:]))
        mark = len(tokens)
        ends.append(len(computed))
    for line in module.footer:
        line._codegen(state)
    footer = "".join(tokens[mark:])
    if module.has_trailing_newline:
        if not tokens:
            state.add_token(state.default_newline)
    else:
        state.pop_trailing_newline()
    state.after_codegen(module)
    return dict(computed), ModuleLayout(header, pieces, footer, start, ends)


def apply_edits(module: cst.Module, edits: Edits, state: FileState | None = None) -> str:
    """The module's code with the edits applied. With the parse's layout, only the top-level
    statements that hold an edited node are transformed and generated again; the others keep
    their text (a pass that sets one argument no longer rebuilds and prints the whole file)."""
    touched = _touched_statements(module, edits, state) if state is not None else None
    if touched is None:
        return module.visit(_ApplyEdits(edits)).code
    layout = state.layout  # type: ignore[union-attr]
    pieces = list(layout.pieces)  # type: ignore[union-attr]
    transformer = _ApplyEdits(edits)
    for index in touched:
        result = module.body[index].visit(transformer)
        nodes = result.nodes if isinstance(result, cst.FlattenSentinel) else [] if isinstance(result, cst.RemovalSentinel) else [result]
        pieces[index] = "".join(module.code_for_node(node) for node in nodes)
    return layout.header + "".join(pieces) + layout.footer  # type: ignore[union-attr]


def _touched_statements(module: cst.Module, edits: Edits, state: FileState) -> list[int] | None:
    """Indexes of the top-level statements holding the edited nodes; None when the edits need
    the whole module transformed (imports to add, an edit of the module or outside its body)."""
    layout = state.layout
    if layout is None or edits.imports or not module.has_trailing_newline or not module.body:
        return None
    wanted = set(edits.transforms) | set(edits.inserts)
    if id(module) in wanted:
        return None
    touched: set[int] = set()
    statement, end = 0, layout.ends[0]
    for position, node in enumerate(state.positions):
        if position < layout.start:
            if id(node) in wanted:
                return None  # a header line's
            continue
        while position >= end:
            statement += 1
            if statement == len(layout.ends):
                return None  # past the body (the footer, the module): not a statement's node
            end = layout.ends[statement]
        if id(node) in wanted:
            touched.add(statement)
            wanted.discard(id(node))
            if not wanted:
                return sorted(touched)
    return None  # an edited node the parse does not hold


# -- small shared builders ------------------------------------------------------------
def blank_lines(count: int) -> list[cst.EmptyLine]:
    return [cst.EmptyLine() for _ in range(count)]


def is_blank(line: cst.EmptyLine) -> bool:
    """No comment and no form feed (a page break is kept like a comment)."""
    return line.comment is None and "\f" not in line.whitespace.value


def without_blank_prefix(lines) -> list[cst.EmptyLine]:
    """Leading lines minus the blank lines before the first comment (or form feed)."""
    lines = list(lines)
    while lines and is_blank(lines[0]):
        lines.pop(0)
    return lines


def imported_modules(module: cst.Module) -> set[str]:
    """Names bound at module level by a plain ``import x`` (``import x as x`` included)."""
    names = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None or _dotted(alias.asname.name) == _dotted(alias.name):
                            names.add(_dotted(alias.name))
    return names


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def add_imports(module: cst.Module, names: list[str]) -> cst.Module:
    """Add ``import NAME`` (a standard-library module) at the head of the file's imports, after
    the docstring and ``__future__`` imports; or, with no imports, after the docstring."""
    missing = [name for name in names if name not in imported_modules(module)]
    if not missing:
        return module
    body = list(module.body)
    index = 0
    while index < len(body) and ((index == 0 and is_docstring(body[index])) or _is_future_import(body[index])):
        index += 1
    new = [cst.parse_statement(f"import {name}", config=module.config_for_parsing) for name in sorted(missing)]
    if index < len(body) and is_import(body[index]):
        # Join the existing block: the new line takes over the block's leading blank lines/comments.
        new[0] = new[0].with_changes(leading_lines=body[index].leading_lines)
        body[index] = body[index].with_changes(leading_lines=[])
    else:
        if index > 0:
            new[0] = new[0].with_changes(leading_lines=blank_lines(1))
        if index < len(body) and not body[index].leading_lines:
            body[index] = body[index].with_changes(leading_lines=blank_lines(1))
    body[index:index] = new
    return module.with_changes(body=body)


def _is_future_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, cst.ImportFrom) and isinstance(s.module, cst.Name) and s.module.value == "__future__" for s in stmt.body
    )
