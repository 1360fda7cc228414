"""Moving code to module level: a lambda becomes a ``def``; a closure becomes a module-level
function whose captured names are bound with ``functools.partial``."""

from __future__ import annotations

import builtins
import symtable
from typing import Iterator

import libcst as cst

from dllint.fixes import FixContext, FixUnavailable, blank_lines, without_blank_prefix

BUILTIN_NAMES = frozenset(dir(builtins))


def place_before(ctx: FixContext, anchor: cst.BaseStatement, definition: cst.BaseStatement) -> None:
    """Insert a module-level definition before ``anchor`` with PEP 8's two blank lines around it.
    The anchor's own comments stay attached to it."""
    first = ctx.module.body and ctx.module.body[0] is anchor
    comments = without_blank_prefix(definition.leading_lines)
    definition = definition.with_changes(leading_lines=comments if first else blank_lines(2) + comments)
    ctx.insert_before(anchor, [definition])
    adjust_leading_lines(ctx, anchor, lambda lines: blank_lines(2) + without_blank_prefix(lines))


def adjust_leading_lines(ctx: FixContext, stmt: cst.CSTNode, change) -> None:
    """Change only a statement's leading lines: claims a point, so edits inside it still compose."""
    ctx.edits.transforms.setdefault(id(stmt), []).append(
        lambda updated: updated.with_changes(leading_lines=change(updated.leading_lines))
        if isinstance(updated, cst.CSTNode) and hasattr(updated, "leading_lines")
        else updated
    )
    ctx.edits.insert_points.append(ctx.span(stmt)[0])


def lambda_to_def(ctx: FixContext, lam: cst.Lambda, name: str) -> cst.FunctionDef:
    body = lam.body
    if "\n" in ctx.code(body) and not body.lpar:
        body = body.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # line breaks need brackets
    params = lam.params
    return cst.FunctionDef(
        name=cst.Name(name),
        params=params,
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(body)])]),
    )


def derived_lambda_name(ctx: FixContext, lam: cst.Lambda, sink: str) -> str:
    """A name for a hoisted lambda from where it is used: ``collate_fn=`` -> ``collate``,
    ``transform=`` -> ``transform``, ``T.Lambda(...)`` -> ``transform``, ``f = lambda`` -> ``f``."""
    parent = ctx.parent(lam)
    if isinstance(parent, cst.Arg):
        if parent.keyword is not None:
            keyword = parent.keyword.value
            return keyword[: -len("_fn")] if keyword.endswith("_fn") and len(keyword) > 3 else keyword
        call = ctx.parent(parent)
        if isinstance(call, cst.Call):
            func = call.func
            callee = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if callee == "Lambda":
                return "transform"
            if callee:
                return f"{_snake(callee)}_fn"
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    return f"{sink}_fn" if not sink.endswith("_fn") else sink


def _snake(name: str) -> str:
    out = []
    for i, char in enumerate(name):
        if char.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(char.lower())
    return "".join(out)


# -- closures -----------------------------------------------------------------------
def _tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def definition_table(text: str, name: str, lines: range) -> symtable.SymbolTable:
    """The symbol table of the ``def``/``class`` named ``name`` whose header is on ``lines``."""
    top = symtable.symtable(text, "<fix>", "exec")
    for table in _tables(top):
        if table.get_type() in ("function", "class") and table.get_name() == name and table.get_lineno() in lines:
            return table
    raise FixUnavailable(f"cannot analyse '{name}'")


def captured_names(table: symtable.SymbolTable) -> list[str]:
    """Names the definition reads from enclosing functions, in first-use order."""
    return [s.get_name() for s in table.get_symbols() if s.is_free()]


def clashes_at_module_level(text: str, name: str, owner_lines: range) -> bool:
    """Whether a module-level ``name`` would collide: it is bound at module level, is a builtin,
    or is read as a global by code outside the function that owned the definition."""
    if name in BUILTIN_NAMES:
        return True
    top = symtable.symtable(text, "<fix>", "exec")
    if name in top.get_identifiers():
        return True
    for table in _tables(top):
        if table is top or table.get_lineno() in owner_lines:
            continue
        try:
            symbol = table.lookup(name)
        except KeyError:
            continue
        if symbol.is_global():
            return True
    return False


def names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(Collect())
    return found


def has_nonlocal(node: cst.CSTNode) -> bool:
    return any(True for _ in _find(node, cst.Nonlocal))


def _find(node: cst.CSTNode, kind: type[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, child: cst.CSTNode) -> bool:
            if isinstance(child, kind):
                found.append(child)
            return True

    node.visit(Collect())
    return iter(found)


def local_cst_definition(ctx: FixContext, owner: cst.FunctionDef, name: str) -> cst.FunctionDef | cst.ClassDef:
    """The one ``def``/``class name`` bound directly in ``owner``'s body (not in nested functions)."""
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, child: cst.CSTNode) -> bool:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)) and child is not owner:
                if child.name.value == name:
                    found.append(child)
                return False
            if isinstance(child, cst.Lambda):
                return False
            return True

    owner.body.visit(Collect())
    if len(found) != 1:
        raise FixUnavailable(f"'{name}' is defined {len(found)} times in '{owner.name.value}'")
    return found[0]  # type: ignore[return-value]


def references(owner: cst.FunctionDef, name: str, definition: cst.CSTNode) -> list[cst.Name]:
    """``name`` as an expression inside ``owner`` (not attribute names, keywords or the definition)."""
    found: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, child: cst.CSTNode) -> bool:
            if child is definition:
                return False
            if isinstance(child, cst.Attribute):
                child.value.visit(self)
                return False
            if isinstance(child, cst.Arg):
                child.value.visit(self)
                return False
            if isinstance(child, cst.Name) and child.value == name:
                found.append(child)
            return True

    owner.body.visit(Collect())
    return found
