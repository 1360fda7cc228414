"""DL101's fix: the module's executable statements move under ``if __name__ == "__main__":``.

What stays at module level, in order: the docstring, imports (also inside a ``try``/``if``
of imports), ``def``, ``class``, constant assignments (literals, and names of other kept
constants), setup code before the last import (``sys.path`` edits the imports need), and
whatever a kept definition needs when it is defined (a base class, a decorator, a default
value). A name bound by several module-level statements moves with all of them, so that
the code under the guard still sees each value in the original order.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Sequence

import libcst as cst

from dllint.facts import is_main_guard
from dllint.fixes import FixUnavailable, blank_lines, is_blank, without_blank_prefix

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
CONSTANT_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp, ast.unaryop, ast.operator, ast.Load)


def guarded_module(module: cst.Module, reported: cst.BaseStatement | None) -> cst.Module:
    """``module`` with its executable statements moved under the main guard (an existing guard's
    body comes after them). FixUnavailable when ``reported`` (the statement that starts workers)
    has to stay at module level, or when nothing would move."""
    body: list[cst.BaseStatement] = list(module.body)
    trees = [_ast_of(module, stmt) for stmt in body]
    stays = statements_that_stay(trees)
    if reported is not None and reported in body and stays[body.index(reported)]:
        raise FixUnavailable("the statement that starts workers is needed at module level (setup code or a definition uses it)")
    guard_index = _guard_index(trees)
    moved: list[cst.BaseStatement] = []
    for i, stmt in enumerate(body):
        if i == guard_index:
            moved.extend(stmt.body.body)  # type: ignore[attr-defined]
        elif not stays[i]:
            if moved and stays[i - 1] and all(is_blank(line) for line in stmt.leading_lines):  # type: ignore[attr-defined]
                # It followed a definition that stays outside: the blank lines that only set it
                # off from that definition would stand alone inside the guard (issue 35); a
                # comment above it keeps its blank line, as a group of its own.
                stmt = stmt.with_changes(leading_lines=[])
            moved.append(stmt)
    if not moved:
        raise FixUnavailable("no module-level statements to move")
    if buries_a_definition(trees):
        raise FixUnavailable(BURIES_A_DEFINITION)
    kept = [(stmt, tree) for stmt, tree, stay in zip(body, trees, stays) if stay]
    guard = body[guard_index] if guard_index is not None else None
    return module.with_changes(body=[*(stmt for stmt, _ in kept), _guard_around(module, guard, moved, kept)])


BURIES_A_DEFINITION = "a class or function defined inside a block that would move under the guard (spawn workers could not find it)"


def buries_a_definition(trees: Sequence[ast.stmt | None]) -> bool:
    """Whether wrapping would move a ``def``/``class`` nested in a module-level block (``if
    True:``, ``try:``, ``for``) under the guard: DL107 would then report it, and its fix cannot
    lift it out of the block. DL101 offers no fix then."""
    stays = statements_that_stay(trees)
    guard_index = _guard_index(trees)
    for i, tree in enumerate(trees):
        if tree is None or stays[i] or i == guard_index or isinstance(tree, DEFINITIONS):
            continue
        if any(isinstance(node, DEFINITIONS) for node in _walk_same_scope(tree) if node is not tree):
            return True
    return False


def statements_that_stay(trees: Sequence[ast.stmt | None]) -> list[bool]:
    """For each module-level statement (``None``: one ``ast`` cannot read alone), whether it stays
    at module level when the script moves under the main guard (the module docstring says which
    do). The guard itself does not stay: its body joins the moved statements."""
    guard_index = _guard_index(trees)
    bound = [_bound_names(tree) for tree in trees]
    counts = Counter(name for i, names in enumerate(bound) if i != guard_index for name in names)
    last_import = max((i for i, tree in enumerate(trees) if _is_import_block(tree)), default=-1)
    stays = [False] * len(trees)
    constants: set[str] = set()
    for i, tree in enumerate(trees):
        if i == guard_index or tree is None:
            continue
        bound_once = all(counts[name] == 1 for name in bound[i])
        if (i == 0 and _is_docstring(tree)) or _is_import_block(tree) or i < last_import:
            stays[i] = True
        elif isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and bound_once:
            stays[i] = True
        elif _is_constant_assignment(tree, constants) and bound_once:
            stays[i] = True
            constants |= bound[i]
    # What kept definitions need when they are defined stays with them (to a fixed point).
    changed = True
    while changed:
        changed = False
        needed = set().union(*(_definition_time_names(tree) for tree, stay in zip(trees, stays) if stay))
        for i in range(len(trees)):
            if not stays[i] and i != guard_index and bound[i] & needed:
                stays[i] = changed = True
    return stays


def _guard_index(trees: Sequence[ast.stmt | None]) -> int | None:
    return next((i for i, tree in enumerate(trees) if tree is not None and is_main_guard(tree)), None)


def _guard_around(
    module: cst.Module,
    guard: cst.BaseStatement | None,
    moved: list[cst.BaseStatement],
    kept: list[tuple[cst.BaseStatement, ast.stmt | None]],
) -> cst.BaseStatement:
    """The guard (the existing one, or a new one) with ``moved`` as its body, laid out as PEP 8
    would: one blank line inside between groups, two before it after a definition."""
    moved = [_for_block(stmt) for stmt in moved]
    moved = [stmt.with_changes(leading_lines=_at_most_one_blank(stmt.leading_lines)) for stmt in moved]  # type: ignore[attr-defined]  # LibCST's statements all have them; BaseStatement does not say so
    page_break, first_lines = _split_page_break(moved[0].leading_lines)  # type: ignore[attr-defined]
    moved[0] = moved[0].with_changes(leading_lines=without_blank_prefix(first_lines))
    if guard is None:
        guard = cst.parse_statement('if __name__ == "__main__":\n    pass\n', config=module.config_for_parsing)
    guard = guard.with_changes(body=guard.body.with_changes(body=moved))  # type: ignore[attr-defined]
    if not kept:
        return guard.with_changes(leading_lines=[])
    after_definition = isinstance(kept[-1][1], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return guard.with_changes(leading_lines=page_break or blank_lines(2 if after_definition else 1))


def main_guard_of(module: cst.Module) -> cst.If | None:
    """The module's ``if __name__ == "__main__":``, recognised as the facts layer recognises it."""
    for stmt in module.body:
        if isinstance(stmt, cst.If):
            try:
                test = ast.parse(module.code_for_node(stmt.test).strip(), mode="eval").body
            except SyntaxError:
                continue
            if is_main_guard(ast.If(test=test, body=[], orelse=[])):
                return stmt
    return None


def _ast_of(module: cst.Module, stmt: cst.BaseStatement) -> ast.stmt | None:
    try:
        tree = ast.parse(module.code_for_node(stmt.with_changes(leading_lines=[])))
    except SyntaxError:
        return None
    return tree.body[0] if len(tree.body) == 1 else None


class _Unindent(cst.CSTTransformer):
    """Blank lines would otherwise carry the new block's indentation as trailing whitespace."""

    def leave_EmptyLine(self, original_node, updated_node):
        if updated_node.comment is None:
            page_break = "\f" if "\f" in updated_node.whitespace.value else ""
            return updated_node.with_changes(indent=False, whitespace=cst.SimpleWhitespace(page_break))
        return updated_node


def _for_block(stmt: cst.BaseStatement) -> cst.BaseStatement:
    return stmt.visit(_Unindent())  # type: ignore[return-value]


def _split_page_break(lines) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """Leading lines split after their last form feed (before any comment): the page break
    stays at module level, in front of the guard."""
    lines = list(lines)
    end = 0
    for i, line in enumerate(lines):
        if line.comment is not None:
            break
        if "\f" in line.whitespace.value:
            end = i + 1
    return lines[:end], lines[end:]


def _at_most_one_blank(lines) -> list[cst.EmptyLine]:
    """Inside the guard's block, runs of blank lines shrink to one (PEP 8's two are for top level)."""
    result: list[cst.EmptyLine] = []
    for line in lines:
        if is_blank(line) and result and is_blank(result[-1]):
            continue
        result.append(line)
    return result


def _is_docstring(tree: ast.stmt) -> bool:
    return isinstance(tree, ast.Expr) and isinstance(tree.value, ast.Constant) and isinstance(tree.value.value, str)


def _is_import_block(tree: ast.stmt | None) -> bool:
    if isinstance(tree, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(tree, ast.Try):
        parts = [*tree.body, *(s for h in tree.handlers for s in h.body), *tree.orelse, *tree.finalbody]
        return any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body) and all(
            _is_import_block(s) or isinstance(s, ast.Pass) or _is_constant_assignment(s, set()) for s in parts
        )
    if isinstance(tree, ast.If):
        return bool(tree.body) and all(_is_import_block(s) for s in [*tree.body, *tree.orelse])
    return False


def _is_constant_assignment(tree: ast.stmt, constants: set[str]) -> bool:
    if isinstance(tree, ast.Assign):
        targets, value = tree.targets, tree.value
    elif isinstance(tree, ast.AnnAssign) and tree.value is not None and tree.simple:
        targets, value = [tree.target], tree.value
    else:
        return False
    if not all(isinstance(n, ast.Name) for t in targets for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", [None]))):
        return False
    return all(
        isinstance(n, CONSTANT_NODES) or (isinstance(n, ast.Name) and n.id in constants) for n in ast.walk(value)
    )


def _bound_names(tree: ast.stmt | None) -> set[str]:
    if tree is None:
        return set()
    if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {tree.name}
    names: set[str] = set()
    for node in _walk_same_scope(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _walk_same_scope(tree: ast.AST):
    """``ast.walk`` that does not enter function bodies or comprehensions (their own scopes)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if node is not tree and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _definition_time_names(tree: ast.stmt | None) -> set[str]:
    """Names a kept statement reads when it runs at import: decorators, defaults and annotations
    of a ``def``; all of a class body except its methods' bodies; an assignment's value."""
    if tree is None:
        return set()
    parts: list[ast.AST] = []
    if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts += [*tree.decorator_list, *tree.args.defaults, *(d for d in tree.args.kw_defaults if d)]
        arguments = [*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs, tree.args.vararg, tree.args.kwarg]
        parts += [a.annotation for a in arguments if a is not None and a.annotation is not None]
        parts += [tree.returns] if tree.returns is not None else []
    elif isinstance(tree, ast.ClassDef):
        parts += [*tree.decorator_list, *tree.bases, *(k.value for k in tree.keywords)]
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts += [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d)]
            else:
                parts.append(stmt)
    else:
        parts.append(tree)
    return {n.id for part in parts for n in ast.walk(part) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
