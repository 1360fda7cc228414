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
from typing import Callable, Iterable, Iterator, TypeVar, Union, overload

import libcst as cst
from libcst.metadata import CodeRange

from dllint.findings import Finding, RemoveArguments, SetArgument
from dllint.fixes.layout import StatementPositions, overlong_line, parts_holding

E = TypeVar("E")
N = TypeVar("N", bound=cst.CSTNode)
Transform = Callable[[cst.CSTNode], Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]]
Point = tuple[int, int]
BUILTIN_NAMES = frozenset(dir(builtins))
# Edits that change nothing outside the call their finding reports: a pass of only these parses
# only the statements around its findings (no imports to add, no module-level names to choose).
LOCAL_EDITS = (SetArgument, RemoveArguments)


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
    an argument (DL108, DL201, DL206) never need them.

    When every fix of the pass edits only inside the call its finding reports
    (:data:`LOCAL_EDITS`), only the statement holding the findings is parsed (``parts_holding``):
    LibCST builds an object for every token, and parsing the 1,500-line ``main()`` around a
    ``DataLoader(...)`` was most of the cost of fixing it. ``text`` is then that part of the
    file, ``before`` and ``after`` the rest; positions are the file's."""

    text: str
    module: cst.Module
    where: StatementPositions  # node positions, resolved per statement as fixes ask
    before: str = ""  # the file's text before ``text`` (when only a part was parsed)
    after: str = ""
    header: str = ""  # what ``text`` starts with that the file does not (see ``Part``)
    reserved_names: set[str] = field(default_factory=set)  # names new definitions took this pass
    _parents: dict[cst.CSTNode, cst.CSTNode] | None = None
    _module_level_names: set[str] | None = None

    @classmethod
    def parse(cls, text: str, local_to: Iterable[int] = ()) -> FileState:
        """``local_to``: the lines of the findings to fix, when their edits are all local."""
        for start, end, first_line, header in parts_holding(text, local_to) if local_to else ():
            part = header + text[start:end]
            if overlong_line(part) is not None:
                break  # refused below
            try:
                module = cst.parse_module(part)
            except Exception:  # noqa: BLE001 - whatever LibCST rejects in a part, a larger part (or the file) decides
                continue
            return cls(part, module, StatementPositions(module, part, first_line), text[:start], text[end:], header)
        too_long = overlong_line(text)
        if too_long is not None:
            raise FixUnavailable(too_long)
        module = cst.parse_module(text)
        return cls(text, module, StatementPositions(module, text))

    def render(self, edits: Edits) -> str:
        """The file's text with ``edits`` applied."""
        code = apply_edits(self.module, edits, self)
        if not code.startswith(self.header):
            raise FixUnavailable("an edit reached outside the part of the file parsed for it")
        return self.before + code[len(self.header) :] + self.after

    @property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        """Every node's position (the whole module positioned)."""
        return self.where.all()

    def nodes_on_line(self, line: int) -> list[cst.CSTNode]:
        """The nodes that may start on ``line`` (those of its top-level statement), in position-map order."""
        return self.where.nodes_on_line(line)

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
            if self.before or self.after:
                raise FixUnavailable("module-level names asked of a part of the file (a bug: only LOCAL_EDITS parse a part)")
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


def _constant(node: cst.CSTNode) -> Transform:
    """The transform that replaces whatever it is given with ``node``."""
    return lambda _updated: node


class FixContext:
    """Given to ``Rule.apply_fix``: finds nodes by a finding's position and records edits."""

    def __init__(self, state: FileState, line_length: int = 88) -> None:
        self.state = state
        self.line_length = line_length  # the project's (ruff's or black's): fixed lines are wrapped to it
        self.module = state.module
        self.text = state.text
        self.edits = Edits()

    # -- finding nodes ------------------------------------------------------
    def span(self, node: cst.CSTNode) -> tuple[Point, Point]:
        where = self.state.where[node]
        return (where.start.line, where.start.column), (where.end.line, where.end.column)

    def nodes_at(self, finding: Finding, *types: type) -> list[cst.CSTNode]:
        """Nodes of ``types`` starting where the finding starts, exact end matches first."""
        start = (finding.line, finding.column - 1)
        end = (finding.end_line, finding.end_column - 1)
        found = [n for n in self.state.nodes_on_line(start[0]) if isinstance(n, types) and self.span(n)[0] == start]
        return sorted(found, key=lambda n: (self.span(n)[1] != end, _larger_first(self.span(n))))

    @overload
    def node_at(self, finding: Finding, kind: type[N], /) -> N: ...
    @overload
    def node_at(self, finding: Finding, *types: type) -> cst.CSTNode: ...
    def node_at(self, finding: Finding, *types: type) -> cst.CSTNode:
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
        func: Transform = new if callable(new) and not isinstance(new, cst.CSTNode) else _constant(new)
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

    def on_leave(self, original_node, updated_node):
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


def apply_edits(module: cst.Module, edits: Edits, state: FileState | None = None) -> str:
    """The module's code with the edits applied. Given the pass's state, only the outermost
    statements that hold an edited node are transformed and generated again; the rest of the
    text is kept as it is (a pass that sets one argument no longer rebuilds the whole file)."""
    spliced = _splice(edits, state) if state is not None and not edits.imports else None
    return module.visit(_ApplyEdits(edits)).code if spliced is None else spliced


def _splice(edits: Edits, state: FileState) -> str | None:
    """None when the edits need the whole module transformed (an edit of the module, a node
    whose statement was never positioned, a last statement without its newline, a body left
    without statements)."""
    where = state.where
    found = [where.statement_of.get(key) for key in (*edits.transforms, *edits.inserts)]
    if not found or None in found:
        return None
    touched: set[tuple[int, ...]] = set(found)  # type: ignore[arg-type]
    # A statement inside another edited one is transformed with it.
    outermost = sorted(path for path in touched if not any(path[:depth] in touched for depth in range(1, len(path))))
    text, out, cursor = state.text, [], 0
    transformer = _ApplyEdits(edits)
    for path in outermost:
        span = where.spans.get(path)
        if span is None or span[1] > len(text):
            return None
        result = where.statement(path).visit(transformer)
        nodes = result.nodes if isinstance(result, cst.FlattenSentinel) else [] if isinstance(result, cst.RemovalSentinel) else [result]
        if not nodes and len(path) > 1:
            return None  # the body around it may need a `pass`
        out.append(text[cursor : span[0]])
        out.append(where.code(list(nodes), path))
        cursor = span[1]
    out.append(text[cursor:])
    return "".join(out)


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
