"""What reaches worker processes: the callables and objects a loader pickles under spawn."""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Iterator, NamedTuple

from dllint.facts.values import ABSENT, argument_for, parameter_default
from dllint.knowledge.loaders import EAGER_DATASET_METHODS, EAGER_DATASET_SOURCES

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Binding, Scope

# Loader arguments that workers receive as they are.
CALLABLE_SINKS = ("collate_fn", "worker_init_fn", "sampler", "batch_sampler")
BUILTIN_NAMES = frozenset(dir(builtins))
MAX_DEPTH = 10  # hops: a lambda in a list, the list in Compose(...) bound to a name, that in a dataset (8)


class Shipped(NamedTuple):
    """An expression whose value is sent to workers, and the loader argument it reaches them by."""

    expr: ast.expr
    scope: Scope
    sink: str  # "dataset", "collate_fn", ...


def shipped_expressions(facts: FileFacts, loader: LoaderCall, through_functions: bool = False) -> Iterator[Shipped]:
    """Expressions (followed through names bound once, constructor arguments and containers) that
    end up pickled into the loader's workers. A name unpacked from a call's result (``train, val
    = random_split(ds, [8, 2])``) is followed into that call's arguments, as the call itself
    is: each piece (a ``Subset``) holds what the call was given. With ``through_functions``,
    also into this file's functions: what a function returns (``dataset = get_dataset()``, B7),
    and what this file's calls pass for a parameter (``def make_loader(dataset): return
    DataLoader(dataset, ...)``, B6); DL106 and DL102 (the fourteenth audit's C8) ask for it."""
    seen: set[int] = set()
    for sink in ("dataset", *CALLABLE_SINKS):
        arg = loader.argument(sink)
        if arg is not None:
            yield from _walk(facts, arg.value, arg.scope, _Walk(sink, seen, loader if through_functions else None), 0)


class _Walk(NamedTuple):
    """What one walk carries: the sink, the expressions seen, the loader when calls are followed
    (None: not followed), and the element of a tuple a name was unpacked from (``train_set,
    val_set = datasets``: (0, 2))."""

    sink: str
    seen: set[int]
    loader: LoaderCall | None
    element: tuple[int, int] | None = None

    @property
    def through_functions(self) -> bool:
        return self.loader is not None


def _walk(facts: FileFacts, expr: ast.expr, scope: Scope, walk: _Walk, depth: int) -> Iterator[Shipped]:
    if depth > MAX_DEPTH or id(expr) in walk.seen:
        return
    walk.seen.add(id(expr))
    yield Shipped(expr, scope, walk.sink)
    element, walk = walk.element, walk._replace(element=None)
    if isinstance(expr, ast.Name):
        yield from _walk_name(facts, expr, scope, walk, depth, element)
    elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        stored = _stored_on_self(facts, expr, scope)
        if stored is not None:
            yield from _walk(facts, stored[0], stored[1], walk, depth + 1)
    elif isinstance(expr, ast.Call):
        # Builtins such as sorted(key=lambda ...) or map() consume their arguments on the spot.
        if isinstance(expr.func, ast.Name) and expr.func.id in BUILTIN_NAMES and facts.scopes.lookup(expr.func.id, scope) is None:
            return
        if _eager_dataset(facts, expr, scope, 0):  # hf.map(tokenize): the table it made, not the function
            return
        for arg in [*expr.args, *(k.value for k in expr.keywords)]:
            inner = arg.value if isinstance(arg, ast.Starred) else arg
            yield from _walk(facts, inner, scope, walk, depth + 1)
        if walk.through_functions:
            for returned, inside in _returned(facts, expr, scope):
                yield from _walk(facts, returned, inside, walk, depth + 1)
    elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        elements = expr.elts
        if element is not None and len(elements) == element[1] and not any(isinstance(e, ast.Starred) for e in elements):
            elements = [elements[element[0]]]  # the one a name was unpacked from
        for elt in elements:
            yield from _walk(facts, elt, scope, walk, depth + 1)
    elif isinstance(expr, ast.Dict):
        for value in expr.values:
            yield from _walk(facts, value, scope, walk, depth + 1)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):  # ``base + augment``: lists joined
        yield from _walk(facts, expr.left, scope, walk, depth + 1)
        yield from _walk(facts, expr.right, scope, walk, depth + 1)
    elif isinstance(expr, ast.Subscript):
        for item, where in _indexed(facts, expr, scope):
            yield from _walk(facts, item, where, walk, depth + 1)


def _indexed(facts: FileFacts, read: ast.Subscript, scope: Scope) -> list[tuple[ast.expr, Scope]]:
    """The items ``read`` takes of a list or tuple written out (directly, or bound once to a name):
    ``steps[-1]``, ``steps[:3]``, with constant bounds; none where the items or the index
    cannot be told (a rule that needs them stays silent)."""
    value, where = read.value, scope
    if isinstance(value, ast.Name):
        found = facts.reaching_value(value.id, scope, value)
        if found is None or found[1].kind != "assign" or found[1].value is None:
            return []
        where, value = found[0], found[1].value
    if not isinstance(value, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in value.elts):
        return []
    index = read.slice
    if isinstance(index, ast.Slice):
        bounds = [_constant_int(part) for part in (index.lower, index.upper, index.step)]
        if any(bound is False for bound in bounds) or bounds[2] == 0:
            return []
        return [(item, where) for item in value.elts[slice(*bounds)]]
    position = _constant_int(index)
    if position is None or position is False or not -len(value.elts) <= position < len(value.elts):
        return []
    return [(value.elts[position], where)]


def _constant_int(node: ast.expr | None) -> int | None | bool:
    """An integer written out (``-1`` too), None for an absent bound, False for anything else."""
    if node is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        node, sign = node.operand, -1
    else:
        sign = 1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return False


def _walk_name(facts: FileFacts, name: ast.Name, scope: Scope, walk: _Walk, depth: int, element: tuple[int, int] | None) -> Iterator[Shipped]:
    """A name: the value bound to it where it is read (an element of that value where the name
    was unpacked), or, through functions, what the calls pass for a parameter."""
    found = facts.reaching_value(name.id, scope, name)
    if found is None and walk.through_functions:
        found = _reaching_in_block(facts, name, scope)
    if found is None:
        for value, where in _extended(facts, name, scope):  # ``steps = [...]``, then ``steps += [...]``
            yield from _walk(facts, value, where, walk, depth + 1)
        return
    binding = found[1]
    if binding.kind == "assign" and binding.value is not None:
        yield from _walk(facts, binding.value, found[0], walk._replace(element=element), depth + 1)
    elif isinstance(binding.node, ast.Assign) and isinstance(binding.node.value, ast.Call):
        yield from _walk(facts, binding.node.value, found[0], walk, depth + 1)  # unpacked from its result
    elif walk.through_functions and isinstance(binding.node, ast.Assign) and isinstance(binding.node.value, ast.Name):
        unpacked = walk._replace(element=_position(binding.node, name.id))  # ``train_set, val_set = datasets``
        yield from _walk(facts, binding.node.value, found[0], unpacked, depth + 1)
    elif walk.through_functions and binding.kind == "param" and isinstance(found[0].node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for passed, where in passed_for(facts, found[0].node, name.id, walk.loader):
            yield from _walk(facts, passed, where, walk._replace(element=element), depth + 1)


def _extended(facts: FileFacts, name: ast.Name, scope: Scope) -> list[tuple[ast.expr, Scope]]:
    """A list bound once and extended with ``+=`` (under an ``if`` too, the fourteenth audit's MONAI
    transforms): the first value and every extension, each of which may be in the list read."""
    found = facts.scopes.lookup(name.id, scope)
    if found is None:
        return []
    owner, bindings = found
    assigned = [b.value for b in bindings if b.kind == "assign" and b.value is not None]
    extended = [b.node for b in bindings if isinstance(b.node, ast.AugAssign)]
    if len(assigned) != 1 or len(assigned) + len(extended) != len(bindings) or not all(isinstance(n.op, ast.Add) for n in extended):
        return []
    return [(value, owner) for value in (assigned[0], *(n.value for n in extended)) if value is not None]


def _reaching_in_block(facts: FileFacts, name: ast.Name, scope: Scope) -> tuple[Scope, Binding] | None:
    """The binding of ``name`` that an earlier statement of the read's own block makes, with no
    other binding of it between them: ``if solver == "base":`` binding ``train_set`` and reading
    it two lines down the same arm. Anything else (the binding in an outer block, or another
    binding in between, a nested branch included) is unknown (None)."""
    found = facts.scopes.lookup(name.id, scope)
    read_at = facts.statement_of(name)
    if found is None or read_at is None:
        return None
    block = _block_of(facts, read_at)
    if block is None:
        return None
    before = block[: block.index(read_at)]
    for binding in reversed(found[1]):
        bound_at = facts.statement_of(binding.node)
        if bound_at in before:
            later = before[before.index(bound_at) + 1 :]
            intervening = [b for b in found[1] if any(facts.contains(stmt, b.node) for stmt in later)]
            return (found[0], binding) if not intervening and bound_at is binding.node else None
    return None


def _block_of(facts: FileFacts, statement: ast.stmt) -> list[ast.stmt] | None:
    """The statement list (a body, an ``else``) that holds ``statement``."""
    parent = facts.scopes.parents.get(statement)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and statement in block:
            return block
    return None


def _position(assign: ast.Assign, name: str) -> tuple[int, int] | None:
    """(index, length) of ``name`` in the one flat tuple target of ``assign``; None otherwise."""
    target = assign.targets[0] if len(assign.targets) == 1 else None
    names = [e.id for e in target.elts if isinstance(e, ast.Name)] if isinstance(target, (ast.Tuple, ast.List)) else []
    if len(names) != len(getattr(target, "elts", ())) or names.count(name) != 1:
        return None
    return names.index(name), len(names)


def _returned(facts: FileFacts, call: ast.Call, scope: Scope) -> Iterator[tuple[ast.expr, Scope]]:
    """What the function of this file that ``call`` goes to returns, each in the function's scope."""
    function = facts.usage.same_file_function(call.func, scope)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    inside = facts.scopes.scopes[function]
    for node in facts.own_returns(function):
        if node.value is not None:
            yield node.value, inside


def passed_for(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str, loader: LoaderCall | None = None) -> Iterator[tuple[ast.expr, Scope]]:
    """What each call of ``function`` in this file passes for ``param``, in the caller's scope
    (none for a method: its calls through instances do not line up with its parameters), but,
    given a ``loader`` built in ``function``, for the calls that give it no workers."""
    if isinstance(facts.scopes.parents.get(function), ast.ClassDef):
        return
    for call in facts.usage.callers(function):
        passed = argument_for(call, function, param)
        if isinstance(passed, ast.expr) and not (loader is not None and _no_workers(facts, call, function, loader)):
            yield passed, facts.scopes.scope_of(call)


def _no_workers(facts: FileFacts, call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, loader: LoaderCall) -> bool:
    """``make_loader(ds, workers=0)``, where the loader in ``function`` has ``num_workers=workers``
    (or the parameter's default, 0, where the call leaves it out): this call's loader starts none."""
    workers = loader.argument("num_workers")
    if workers is None or not isinstance(workers.value, ast.Name):
        return False
    found = facts.scopes.lookup(workers.value.id, workers.scope)
    if found is None or found[0].node is not function or [b.kind for b in found[1]] != ["param"]:
        return False
    passed = argument_for(call, function, workers.value.id)
    if passed is ABSENT:
        passed = parameter_default(function, workers.value.id)
    return isinstance(passed, ast.Constant) and passed.value == 0


def _stored_on_self(facts: FileFacts, read: ast.Attribute, scope: Scope) -> tuple[ast.expr, Scope] | None:
    """``self.train_dataset`` read in a method: the value its class assigns it, where the
    class assigns it once (``self.train_dataset = ClassicDataset(...)`` in ``__init__``)."""
    method = facts.scopes.enclosing_function(read)
    cls = facts.scopes.parents.get(method) if method is not None else None
    if not isinstance(cls, ast.ClassDef):
        return None
    stores = [node for node in facts.usage.attributes_of_self(cls).get(read.attr, ()) if not isinstance(node.ctx, ast.Load)]
    assign = facts.scopes.parents.get(stores[0]) if len(stores) == 1 else None
    if not (isinstance(assign, ast.Assign) and assign.targets == [stores[0]]):
        return None
    return assign.value, facts.scopes.scope_of(assign.value)


def _eager_dataset(facts: FileFacts, expr: ast.expr, scope: Scope, depth: int) -> bool:
    """``expr`` makes a Hugging Face dataset whose ``map``/``filter`` functions ran when called
    (knowledge.loaders.EAGER_DATASET_SOURCES): ``load_dataset(...).map(fn)``, also through
    names bound once and indexing (``data["train"]``)."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            found = facts.scopes.lookup(expr.id, scope)
            # bound once (a ``del`` after it binds nothing: ``del raw`` once the mapped copy is made)
            bound = [b for b in found[1] if not isinstance(b.node, ast.Delete)] if found is not None else []
            if found is None or len(bound) != 1 or bound[0].kind != "assign" or bound[0].value is None:
                return False
            expr, scope = bound[0].value, found[0]
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in EAGER_DATASET_METHODS:
            expr = expr.func.value
        else:
            return isinstance(expr, ast.Call) and facts.qualname(expr.func) in EAGER_DATASET_SOURCES
    return False


def named_definitions(facts: FileFacts, expr: ast.expr, scope: Scope) -> tuple[Scope, list[Binding]] | None:
    """The scope and bindings of the name ``expr``, when only ``def``/``class`` statements bind it."""
    if not isinstance(expr, ast.Name):
        return None
    found = facts.scopes.lookup(expr.id, scope)
    if found is None or not found[1] or any(b.kind not in ("def", "class") for b in found[1]):
        return None
    return found


def local_definition(facts: FileFacts, expr: ast.expr, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The ``def``/``class`` a name refers to when it is defined inside a function (not picklable)."""
    found = named_definitions(facts, expr, scope)
    if found is None or not found[0].is_function or len(found[1]) != 1:
        return None
    return found[1][0].node  # type: ignore[return-value]
