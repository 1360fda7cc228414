"""Small readings of the syntax the flow engine asks about: where a node is, which key or
position a value sits under in a display, which constants a call passes."""

from __future__ import annotations

import ast

from dllint.facts.flow.model import Constant, DictKey
from dllint.facts.flow.records import CallShape


def position_of(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


# Calls that end the process: no statement after one runs (read from the syntax, as written).
EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit", "os.abort"})


def ends_the_path(stmt: ast.stmt) -> bool:
    """No statement after ``stmt`` runs: a ``return``, a ``raise``, or a call that ends the
    process (``exit(0)``, ``sys.exit()``, ``os._exit(1)``: an evaluation branch that ends the
    script before the training loop does not add a pass to it)."""
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return True
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    if isinstance(func, ast.Name):
        return func.id in EXITS
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and f"{func.value.id}.{func.attr}" in EXITS


def end_of(node: ast.AST) -> tuple[int, int]:
    """Where a binding statement takes effect: after its value is evaluated (a ``for``'s
    target: after its iterable, before its body)."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        node = node.iter
    elif isinstance(node, ast.withitem):  # no position of its own
        node = node.context_expr
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def dict_key(display: ast.Dict, value: ast.AST) -> DictKey | None:
    """The constant string key ``value`` is stored under in a dict display, unless a later
    entry (the same key, a ``**splat``) may replace it."""
    if value not in display.values:
        return None
    position = display.values.index(value)  # type: ignore[arg-type]  # a parent's child: an expr
    key = display.keys[position]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    for later in display.keys[position + 1:]:
        if later is None or not isinstance(later, ast.Constant) or later.value == key.value:
            return None
    return DictKey(key.value)


def literal_keys(node: ast.AST) -> tuple[str, ...] | None:
    """The keys a list, tuple or set display of distinct string literals gives, in order
    (``["train", "val"]``); None for anything else."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not node.elts:
        return None
    keys = tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return keys if len(keys) == len(node.elts) == len(set(keys)) else None


def comprehension_keys(comp: ast.DictComp) -> tuple[str, ...] | None:
    """The keys of ``{k: ... for k in ["train", "val"]}``: one ``for`` (no ``if``) over literal
    string keys whose target is the key; None for any other dict comprehension."""
    if len(comp.generators) != 1:
        return None
    loop = comp.generators[0]
    if loop.ifs or loop.is_async or not (isinstance(loop.target, ast.Name) and isinstance(comp.key, ast.Name)):
        return None
    return literal_keys(loop.iter) if comp.key.id == loop.target.id else None


def element_index(container: ast.Tuple | ast.List, element: ast.AST) -> int | None:
    """The position of ``element`` in a tuple or list display; None after a ``*starred`` one."""
    position = container.elts.index(element)  # type: ignore[arg-type]  # a parent's child: an expr
    return None if any(isinstance(e, ast.Starred) for e in container.elts[:position]) else position


def constant_args(call: ast.Call) -> dict[str, Constant]:
    """The JSON constants a call passes, by position ("0", "1", ...) up to a ``*starred``
    argument and by keyword (none after a ``**splat``, which may replace them)."""
    args: dict[str, Constant] = {}
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, float, bool, type(None))):
            args[str(position)] = arg.value
    if not any(k.arg is None for k in call.keywords):
        for keyword in call.keywords:
            if isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, (str, int, float, bool, type(None))):
                args[keyword.arg] = keyword.value.value  # type: ignore[index]
    return args


def call_shape(call: ast.Call) -> CallShape:
    """How many positional arguments and which keywords ``call`` passes (see CallShape)."""
    starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), None)
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
    hidden = starred is not None or any(k.arg is None for k in call.keywords)
    return CallShape(len(call.args) if starred is None else starred, keywords, hidden)


def parameter_for(func: ast.AST, keyword: str | None, index: int | None, bound_method: bool) -> str | None:
    """The parameter of ``func`` that an argument lands in: passed by ``keyword``, or at
    position ``index`` (``bound_method``: after ``self``, unless a staticmethod)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = func.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)
    if bound_method and positional and not static:
        positional = positional[1:]  # self (a staticmethod called on self or a class takes no self)
    if keyword is not None:
        names = positional + [a.arg for a in args.kwonlyargs]
        return keyword if keyword in names else None
    if index is not None and index < len(positional):
        return positional[index]
    return None
