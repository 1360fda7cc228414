"""What a fix may write for a value the rule resolved.

A rule resolves ``num_workers=args.workers`` to its argparse default, but the user may
run ``--workers 0``: a fix that writes the consequence of the default
(``persistent_workers=True``) would break that command line. A fix may assume a value
only where it is a literal at the call; otherwise it writes a test of the expression
(``persistent_workers=args.workers > 0``) or says that it holds only for the resolved
value. No rule lives here.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.findings import Fix, SetArgument

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

# Expressions that bind at least as tightly as a comparison or a conditional's operands.
TIGHT = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict, ast.Set, ast.JoinedStr, ast.BinOp)


def is_literal(expr: ast.expr) -> bool:
    """``4``, ``-1``, ``None``: a value written out, that no command line changes."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant)


def operand_source(facts: FileFacts, expr: ast.expr) -> str:
    """``expr``'s source on one line, in brackets where an operator next to it would bind first."""
    source = facts.source_segment(expr) or ast.unparse(expr)
    if "\n" in source:
        source = ast.unparse(expr)  # a line break in the middle of an argument list reads badly
    tight = isinstance(expr, TIGHT) or (isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not))
    return source if tight else f"({source})"


def workers_test(facts: FileFacts, loader: LoaderCall) -> str | None:
    """``<num_workers> > 0`` for a ``num_workers`` that is not a literal at the call; None when it
    is a literal, a CPU count (``os.cpu_count()``, directly or through a name bound once),
    absent, or comes from a ``**`` dict (its expression is not visible here)."""
    workers = loader.argument("num_workers")
    if workers is None or workers.from_splat or is_literal(workers.value):
        return None
    if loader.value("num_workers").is_cpu_count:
        # os.cpu_count() is at least 1 (or None, which torch refuses anyway): `os.cpu_count() > 0`
        # would be always true, and a TypeError where it is None.
        return None
    return f"{operand_source(facts, workers.value)} > 0"


def splat_workers_test(loader: LoaderCall) -> str | None:
    """``opts.get("num_workers", 0) > 0`` for a ``num_workers`` that a ``**opts`` splat of a
    name holds: the count the call itself reads, so the test holds on every run; None for a
    splat of another expression."""
    workers = loader.argument("num_workers")
    keyword = workers.node if workers is not None and workers.from_splat else None
    if not (isinstance(keyword, ast.keyword) and isinstance(keyword.value, ast.Name)):
        return None
    return f'{keyword.value.id}.get("num_workers", 0) > 0'


def workers_from_splat(loader: LoaderCall) -> bool:
    """``num_workers`` comes from a ``**`` dict and is not a literal there."""
    workers = loader.argument("num_workers")
    return workers is not None and workers.from_splat and not is_literal(workers.value)


def from_command_line(facts: FileFacts, expr: ast.expr, scope: Scope) -> bool:
    """Whether ``expr`` reads an argparse option, directly or through names bound once."""
    for _ in range(8):
        if facts.argparse.destination(expr) is not None:
            return True
        if not isinstance(expr, ast.Name):
            break
        found = facts.scopes.single_value(expr.id, scope)
        if found is None or found[1].kind != "assign" or found[1].value is None:
            break
        scope, expr = found[0], found[1].value
    return any(facts.argparse.destination(node) is not None for node in ast.walk(expr))


def comprehension_reads(node: ast.AST) -> set[int]:
    """The ``Name`` nodes inside ``node`` that read a variable of an enclosing comprehension inside
    ``node`` (``b`` in ``[b[0] for b in batch]``): local to the comprehension, whatever the scope
    table (which does not track comprehensions) says. By ``id``."""
    own: set[int] = set()
    for comp in ast.walk(node):
        if not isinstance(comp, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        bound = {n.id for g in comp.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        outer_iter = comp.generators[0].iter  # evaluated in the enclosing scope
        parts = [comp.elt] if not isinstance(comp, ast.DictComp) else [comp.key, comp.value]
        parts += [g.target for g in comp.generators] + [g.iter for g in comp.generators[1:]]
        parts += [cond for g in comp.generators for cond in g.ifs]
        for part in parts:
            own.update(id(n) for n in ast.walk(part) if isinstance(n, ast.Name) and n.id in bound and part is not outer_iter)
    return own


def forwarded_function(tree: ast.Module, lam: ast.Lambda, statement: ast.stmt) -> str | None:
    """``collate`` for ``lambda b: collate(b)``: the lambda only forwards its parameters, in
    order and unchanged, to a name that a module-level ``def``, ``class`` or import binds once,
    before ``statement`` (the module-level statement holding the lambda). Then the name itself
    does what the lambda does (eta-reduction): the lambda looked the name up when called, and
    the name is already bound, and never rebound, when the loader is built. None otherwise."""
    args = lam.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return None
    params = [a.arg for a in args.args]
    call = lam.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.keywords):
        return None
    if [a.id if isinstance(a, ast.Name) else None for a in call.args] != params or call.func.id in params:
        return None
    name = call.func.id
    bound_before, bound_elsewhere = False, False
    for top in tree.body:
        binds = name in _module_level_names(top)
        if not binds:
            continue
        if top is statement:
            return None
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) and not bound_before and not bound_elsewhere:
            bound_before = bound_before or _precedes(top, statement)
            bound_elsewhere = not bound_before
        else:
            return None  # rebound (an assignment may bind a lambda, which pickles no better)
    return name if bound_before and not bound_elsewhere else None


def _precedes(one: ast.stmt, other: ast.stmt) -> bool:
    return (one.lineno, one.col_offset) < (other.lineno, other.col_offset)


def _module_level_names(statement: ast.stmt) -> set[str]:
    """The names a module-level statement binds in the module (not inside its functions)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    names = set()
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if node is not statement and not isinstance(node, ast.Lambda):
                names.add(node.name)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return names


def added_keyword_fix(loader: LoaderCall, fix: Fix) -> Fix | None:
    """``fix`` adds a keyword to ``loader``'s call: kept where the callee takes it; none where a
    custom loader class's ``__init__`` provably does not (the call would raise ``TypeError``);
    unsafe where that class is read elsewhere (it may not take it)."""
    edit = fix.edit
    assert isinstance(edit, SetArgument)
    takes = loader.takes_keyword(edit.name)
    if takes:
        return fix
    if takes is False:
        return None
    callee = ast.unparse(loader.node.func)
    return Fix("unsafe", f"{fix.message} (right only if `{callee}` takes `{edit.name}`)", edit)


def keyword_place(message: str, loader: LoaderCall, name: str) -> str:
    """``message`` with its ``add NAME=True`` placed where the keyword can go: a custom loader
    class whose ``__init__`` takes no such keyword gets it in the DataLoader call it makes."""
    if loader.takes_keyword(name) is not False:
        return message
    callee = ast.unparse(loader.node.func)
    return message.replace(f"add {name}=True", f"add {name}=True to the DataLoader call in `{callee}.__init__` (it takes no `{name}`)", 1)
