"""Moving code to module level: a lambda becomes a ``def`` (DL102); a closure or a local class
becomes a module-level definition whose captured names are bound with ``functools.partial``
(DL103)."""

from __future__ import annotations

import ast
import builtins
import symtable
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from dllint.fixes import FixContext, FixUnavailable, blank_lines, names_read_or_bound, without_blank_prefix

BUILTIN_NAMES = frozenset(dir(builtins))


def place_before(ctx: FixContext, anchor: cst.BaseStatement, definition: cst.BaseStatement) -> None:
    """Insert a module-level definition before ``anchor`` with PEP 8's two blank lines around it.
    The anchor's own comments stay attached to it."""
    first = ctx.module.body and ctx.module.body[0] is anchor
    comments = without_blank_prefix(definition.leading_lines)  # type: ignore[attr-defined]  # LibCST's statements all have them; BaseStatement does not say so
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


# -- DL103: a local definition to module level --------------------------------------------
@dataclass(frozen=True)
class Binding:
    """One keyword parameter of the hoisted definition and what ``functools.partial`` binds it to."""

    parameter: str
    value: str  # source: ``pad_value``, ``self.tokenizer``


def hoist_local_definition(ctx: FixContext, handed_over: cst.CSTNode, name: str) -> None:
    """Move the local ``def``/``class name`` that ``handed_over`` refers to to module level, just
    above the module-level statement that contains it. Names it reads from its function become
    keyword-only parameters bound with ``functools.partial`` at each use; of an object it only reads
    attributes from (``self.pad``), it takes the attributes, so that the workers do not receive
    the whole object (a Lightning module, a trainer) by pickle."""
    owner, definition = _owner_and_definition(ctx, handed_over, name)
    captured = _captured_names(ctx, owner, definition, name)
    uses = references(owner, name, definition)
    if any(isinstance(ctx.parent(use), (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)) for use in uses):
        raise FixUnavailable(f"'{name}' is reassigned in '{owner.name.value}'")
    new_name = name
    if name in ctx.state.reserved_names or clashes_at_module_level(ctx.text, name, _lines(ctx, owner)):
        new_name = ctx.unique_name(name)
    ctx.state.reserved_names.add(new_name)
    hoisted = definition.with_changes(name=cst.Name(new_name))
    bindings: list[Binding] = []
    for captured_name in captured:
        attributes = _attributes_read(ctx, owner, definition, captured_name)
        if attributes is None:
            bindings.append(Binding(captured_name, captured_name))
            continue
        taken = names_read_or_bound(definition) | set(captured) | {b.parameter for b in bindings} | {new_name}
        renames = {a: a if a not in taken else f"{captured_name}_{a}" for a in attributes}
        hoisted = hoisted.visit(_AttributesToNames(captured_name, renames))  # type: ignore[assignment]
        bindings += [Binding(renames[a], f"{captured_name}.{a}") for a in attributes]
    if bindings:
        params = hoisted.params  # type: ignore[union-attr]
        new_params = [cst.Param(cst.Name(b.parameter)) for b in bindings]
        hoisted = hoisted.with_changes(params=params.with_changes(kwonly_params=[*params.kwonly_params, *new_params]))
        bound = ", ".join(f"{b.parameter}={b.value}" for b in bindings)
        replacement: cst.BaseExpression = cst.parse_expression(f"functools.partial({new_name}, {bound})")
        ctx.ensure_import("functools")
    else:
        replacement = cst.Name(new_name)
    place_before(ctx, ctx.module_statement(owner), hoisted)
    ctx.remove(definition)
    block = ctx.parent(definition)
    if isinstance(block, cst.IndentedBlock) and block.body[0] is definition and len(block.body) > 1:
        adjust_leading_lines(ctx, block.body[1], without_blank_prefix)
    if bindings or new_name != name:
        for use in uses:
            ctx.replace(use, replacement)


def _captured_names(ctx: FixContext, owner: cst.FunctionDef, definition: cst.FunctionDef | cst.ClassDef, name: str) -> list[str]:
    """The names ``definition`` reads from ``owner``; FixUnavailable where hoisting would change
    what it means (the same conditions DL103's check tests before it offers the fix)."""
    if has_nonlocal(definition):
        raise FixUnavailable(f"'{name}' rebinds names of its function (nonlocal)")
    owner_lines = _lines(ctx, owner)
    captured = captured_names(definition_table(ctx.text, name, _lines(ctx, definition)))
    if name in captured:
        raise FixUnavailable(f"'{name}' refers to itself through its function")
    if captured and isinstance(definition, cst.ClassDef):
        raise FixUnavailable(f"class '{name}' reads local names ({', '.join(captured)}): pass them to its constructor")
    owner_table = definition_table(ctx.text, owner.name.value, owner_lines)
    owner_locals = {s.get_name() for s in owner_table.get_symbols() if s.is_local() or s.is_free()}
    header: list[cst.CSTNode] = [*definition.decorators]
    if isinstance(definition, cst.FunctionDef):
        header += [definition.params, *([definition.returns] if definition.returns else [])]
    else:
        header += [*definition.bases, *definition.keywords]
    evaluated_locals = set().union(*(names_in(part) for part in header)) & owner_locals if header else set()
    if evaluated_locals:
        raise FixUnavailable(f"'{name}' is defined with local names ({', '.join(sorted(evaluated_locals))})")
    for captured_name in captured:
        try:
            local_cst_definition(ctx, owner, captured_name)
        except FixUnavailable:
            continue
        raise FixUnavailable(f"'{name}' uses the local '{captured_name}', which cannot be pickled either")
    return captured


def _attributes_read(ctx: FixContext, owner: cst.FunctionDef, definition: cst.CSTNode, captured: str) -> list[str] | None:
    """The attributes ``definition`` reads from ``captured``, in first-use order, when every use
    of it is such a read (``self.pad``, ``cfg.size``); None when it uses the object itself, assigns
    an attribute, or reads a method of the class around ``owner`` (a bound method pickles ``self``)."""
    try:
        tree = ast.parse(ctx.code(definition.with_changes(leading_lines=[])).strip())
    except SyntaxError:
        return None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    attributes: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == captured):
            continue
        parent = parents.get(node)
        if not (isinstance(parent, ast.Attribute) and parent.value is node and isinstance(parent.ctx, ast.Load)):
            return None
        if parent.attr not in attributes:
            attributes.append(parent.attr)
    if not attributes or set(attributes) & _methods_of_class_around(ctx, owner, captured):
        return None
    return sorted(attributes, key=lambda a: _first_use(tree, captured, a))


def _first_use(tree: ast.AST, captured: str, attribute: str) -> tuple[int, int]:
    return min(
        (n.lineno, n.col_offset)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr == attribute and isinstance(n.value, ast.Name) and n.value.id == captured
    )


def _methods_of_class_around(ctx: FixContext, owner: cst.FunctionDef, captured: str) -> set[str]:
    """The names a class defines in its body, when ``owner`` is one of its methods and ``captured``
    is the method's first parameter (``self``); empty otherwise."""
    block = ctx.parent(owner)
    cls = ctx.parent(block) if block is not None else None
    params = [*owner.params.posonly_params, *owner.params.params]
    if not isinstance(cls, cst.ClassDef) or not params or params[0].name.value != captured:
        return set()
    names: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
    return names


class _AttributesToNames(cst.CSTTransformer):
    """``self.pad`` -> ``pad``: the hoisted definition takes the attributes as parameters."""

    def __init__(self, captured: str, renames: dict[str, str]) -> None:
        super().__init__()
        self.captured, self.renames = captured, renames

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        value = updated_node.value
        if isinstance(value, cst.Name) and value.value == self.captured and updated_node.attr.value in self.renames:
            return cst.Name(self.renames[updated_node.attr.value], lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node


def _lines(ctx: FixContext, node: cst.CSTNode) -> range:
    (start, _), (end, _) = ctx.span(node)
    return range(start, end + 1)


def _owner_and_definition(ctx: FixContext, node: cst.CSTNode, name: str) -> tuple[cst.FunctionDef, cst.FunctionDef | cst.ClassDef]:
    """The function that defines ``name`` locally (the nearest one around ``node``) and the definition."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            try:
                return ancestor, local_cst_definition(ctx, ancestor, name)
            except FixUnavailable:
                continue
    raise FixUnavailable(f"cannot find the local definition of '{name}'")
