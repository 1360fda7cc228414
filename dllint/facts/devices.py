"""Where a loader's batches go: host-to-CUDA copies of the values a loop takes from it (DL206).

A batch is the target of ``for batch in loader`` (through ``enumerate``/``tqdm``),
``batch = next(iter(loader))``, or ``batch = next(it)`` where ``it`` is bound only to
``iter(loader)`` (renewed on ``StopIteration``), and every name derived from it in the same body
(``x, y = batch``, ``images = batch["image"]``, ``for k, v in batch.items()``; a name rebound
later to a computed tensor still is the batch where a copy reads it before, ``img, label =
data; if use_gpu: img = img.cuda()``). A copy
to CUDA is ``.cuda()``, ``.to(..., non_blocking=True)``, or ``.to(d)`` where ``d``
resolves to a CUDA device (``"cuda"``, ``f"cuda:{rank}"``, ``torch.device("cuda", ...)``,
``args.device`` stored in the caller (:mod:`~dllint.facts.handed_attributes`), ``self.device``
an inherited ``__init__`` stores (:mod:`~dllint.facts.inherited_devices`),
``torch.device("cuda" if torch.cuda.is_available() else "cpu")``, ``try_gpu()`` where that
function of the file returns such devices on each path), also when ``d`` is a
parameter of the function that copies and every call of that function passes one, in the file
or in the project's other files as each resolves it (``validate(model, loader, device)`` called
with ``main``'s CUDA device, ``fit(torch.device("cuda"))`` from a script, through as many
functions as it is handed on; a parameter rebound to an expression of itself,
``device = torch.device(device)``, keeps what it was handed); ``"cuda:" + str(args.device)``
is a CUDA device too. A batch (or an item, a field) handed to a project function or method
that copies what it receives (``x, y = model.parse_batch(batch)``, whose body sends each item
through ``utils.to_gpu``) is copied there: same-file functions are read here, other modules'
through their summaries (``FunctionSummary.copies``), ``obj.m(batch)`` on an object of unknown
class through every project method ``m``. ``x.contiguous()`` is the batch's own memory. A
loader handed to another module's function that copies its batches to a device parameter
(``train(net, train_iter, test_iter, device)``) is copied to CUDA where the call passes a CUDA
device (:func:`batch_device_parameters`, ``Effects.copy_devices``); also where it copies them to
the device of a model handed in (``device = list(net.parameters())[0].device``) and the function
that calls it moved that model to a device parameter first (``net = net.to(device)``).
"""

from __future__ import annotations

import ast
import itertools
from functools import partial
from typing import TYPE_CHECKING, Callable, NamedTuple

from dllint.facts.attributes import bound_once
from dllint.facts.flow.records import Copies
from dllint.facts.handed_attributes import handed_attribute
from dllint.facts.inherited_devices import branch_device_kind, inherited_device_kind, own_method
from dllint.facts.flow.syntax import parameter_for
from dllint.facts.values import ABSENT, argument_for, defaults_of, follow, function_calls, parameter_default, parameter_position
from dllint.facts.walk import walk_body

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.queries import PassedArguments
    from dllint.facts.scopes import Scope
    from dllint.facts.flow.model import Use

TORCH_DEVICE = "torch.device"
CUDA_DEVICE_CALLS = frozenset({"torch.cuda.current_device"})
MAX_DEPTH = 8
MAX_PASSES = 4


class CudaCopy(NamedTuple):
    call: ast.Call  # the ``.cuda()``/``.to()`` call
    unconditional: bool  # always CUDA (``.cuda()``, ``"cuda"``): not "cuda if available else cpu"
    non_blocking: bool = False  # asks for an asynchronous copy (``non_blocking=True``, or not provably False)


class Region(NamedTuple):
    """A body the batch flows through, indexed once: the nodes that bind names (and every
    value each name is bound to, with the binding's line), and the calls."""

    binders: list[ast.AST]
    assigned: dict[str, list[ast.AST]]
    lines: dict[str, list[tuple[int, ast.expr]]]  # name -> (line, value) of its plain assignments
    calls: list[ast.Call]
    statements: frozenset[int] = frozenset()  # ids of the body's own statements (run on every pass)


def _region(facts: FileFacts, parts: list[ast.AST]) -> Region:
    nodes = [n for part in parts for n in (part, *walk_body(part))]
    binders: list[ast.AST] = []
    assigned: dict[str, list[ast.AST]] = {}
    lines: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            binders.append(node)
            for target in node.targets:
                for name, value in _bound_values(target, node.value):
                    assigned.setdefault(name, []).append(value)
                    lines.setdefault(name, []).append((node.lineno, value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(node.value if node.value is not None else node)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            binders.append(node)
            for name in _target_names(node.target):
                assigned.setdefault(name, []).append(node.iter)
    return Region(binders, assigned, lines, [n for n in nodes if isinstance(n, ast.Call)], frozenset(map(id, parts)))


def _bound_values(target: ast.AST, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """The names ``target`` binds, each with its value: element by element where a tuple is
    assigned a tuple of as many (``x, y = x.cuda().float(), y.cuda().float()``), else the
    whole value."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts) \
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]):
        return [pair for elt, part in zip(target.elts, value.elts) for pair in _bound_values(elt, part)]
    return [(name, value) for name in _target_names(target)]


def _function_region(facts: FileFacts, function: ast.AST) -> Region:
    """:func:`_region` of a function's body, built once per function (a summary asks it for
    every parameter)."""
    table = facts.__dict__.setdefault("_copy_regions", {})
    found = table.get(id(function))
    if found is None:
        found = table[id(function)] = _region(facts, list(function.body))  # type: ignore[attr-defined]
    return found


def batch_cuda_copies(facts: FileFacts, use: Use) -> list[CudaCopy]:
    """Copies to CUDA of the batches one iteration of a loader yields, in the same function:
    of the batch itself (the loop target, its items and fields, views of them), not of
    tensors computed from it, which pinning would not affect."""
    return batch_copies(facts, use, handed=False)[0]


def batch_copies(facts: FileFacts, use: Use, handed: bool = True) -> tuple[list[CudaCopy], Copies]:
    """:func:`batch_cuda_copies`, and (``handed``) how the project function or method the batch
    of one iteration is handed to whole (or an item, a field) copies it to CUDA
    (``x, y = model.parse_batch(batch)``): the batch's region is read once for both."""
    seeded = _batch_region(facts, use)
    if seeded is None:
        return [], Copies()
    scope = seeded[2]
    region = _region(facts, seeded[1])
    names = _derived(facts, seeded[0], region, scope)
    return _copies_in(facts, names, region, scope), _handed(facts, names, region, scope, 0)[0] if handed else Copies()


def batch_device_parameters(facts: FileFacts, use: Use) -> list[str]:
    """The parameters of the function iterating a loader that name the device its batches are
    copied to (``X.to(device)`` where ``device`` is handed in and not rebound, or is the device
    of a model the calling function moved there, :func:`_through_model`): for a summary,
    whose callers in other files each resolve what they pass (:func:`passed_devices`)."""
    seeded = _batch_region(facts, use)
    if seeded is None or not isinstance(seeded[2].node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    scope = seeded[2]
    region = _region(facts, seeded[1])
    # ``X = X.to(device)`` rebinds the batch to what reads as a computed tensor (its device
    # unknown here): the batch's own names still count
    names = _derived(facts, seeded[0], region, scope, partial(_handed_copy, facts, scope)) | seeded[0]
    found: list[str] = []
    for node in region.calls:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "to" and _rooted_in(func.value, names)):
            continue
        device = next((k.value for k in node.keywords if k.arg == "device"), None) if not node.args else node.args[0]
        if not isinstance(device, ast.Name):
            continue
        if _handed_in(facts, device.id, scope):
            outer = _through_calls(facts, device.id, scope, use.via)
        else:  # ``device = next(net.parameters()).device``: where the caller moved ``net``
            outer = _through_model(facts, device.id, scope, use.via)
        if outer is not None and outer not in found:
            found.append(outer)
    return found


def _through_model(facts: FileFacts, name: str, scope: Scope, via: tuple[ast.Call, ...]) -> str | None:
    """The parameter of the outermost function that names the device ``name`` is, where
    ``name`` is the device of a model handed in (``device = next(net.parameters()).device``,
    also when the function takes ``device=None`` that the call leaves out) and the call hands
    in a model its function moved to its own device parameter first (``net = net.to(device)``
    in ``train(net, ..., device)``, then ``evaluate(test_iter, net)``)."""
    model = _model_of_device(facts, name, scope)
    function = scope.node
    if model is None or not via or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    call = via[-1]
    if name in defaults_of(function) and argument_for(call, function, name) != ABSENT:
        return None  # the call hands a device in (or may, through a splat): that one decides
    argument = argument_for(call, function, model)
    caller = facts.scopes.scope_of(call)
    moved = _moved_to(facts, argument.id, caller, call) if isinstance(argument, ast.Name) else None
    return _through_calls(facts, moved, caller, via[:-1]) if moved is not None else None


def _model_of_device(facts: FileFacts, name: str, scope: Scope) -> str | None:
    """``net`` where ``name`` is bound (besides a parameter defaulting to None) only to the
    device of the parameters of ``net``, a parameter: ``next(net.parameters()).device``,
    ``list(net.parameters())[0].device``."""
    found = facts.scopes.lookup(name, scope)
    if found is None or found[0] is not scope:
        return None
    assigned = [b.value for b in found[1] if b.kind == "assign"]
    if len(assigned) != 1 or not all(b.kind == "assign" or b.kind == "param" and _defaults_to_none(scope.node, name) for b in found[1]):
        return None
    value = assigned[0]
    if not (isinstance(value, ast.Attribute) and value.attr == "device"):
        return None
    inner = value.value
    if isinstance(inner, ast.Subscript) and isinstance(inner.slice, ast.Constant) and inner.slice.value == 0:
        inner = inner.value  # list(net.parameters())[0]
    elif not _is_next_call(inner):
        return None
    if not (isinstance(inner, ast.Call) and len(inner.args) == 1 and isinstance(inner.func, ast.Name) and inner.func.id in ("next", "list")):
        return None
    parameters = inner.args[0]
    if isinstance(parameters, ast.Call) and isinstance(parameters.func, ast.Name) and parameters.func.id == "iter" and len(parameters.args) == 1:
        parameters = parameters.args[0]  # next(iter(net.parameters()))
    if not (isinstance(parameters, ast.Call) and isinstance(parameters.func, ast.Attribute) and parameters.func.attr == "parameters"):
        return None
    model = parameters.func.value
    return model.id if isinstance(model, ast.Name) and _handed_in(facts, model.id, scope) else None


def _defaults_to_none(function: ast.AST, name: str) -> bool:
    default = parameter_default(function, name)
    return isinstance(default, ast.Constant) and default.value is None


def _moved_to(facts: FileFacts, name: str, scope: Scope, call: ast.Call) -> str | None:
    """The parameter of ``scope``'s function that ``name`` (a parameter: the model) is moved
    to before ``call``: its one other binding ``net = net.to(device)``."""
    found = facts.scopes.lookup(name, scope)
    if found is None or found[0] is not scope or not _handed_in(facts, name, scope):
        return None
    moves = [b for b in found[1] if b.kind == "assign"]
    # the one move runs before the call on every path (a loop around the call repeats it, no
    # other binding)
    if len(moves) != 1 or not isinstance(moves[0].node, ast.Assign) or not _dominates(facts, moves[0].node, call, loops=True):
        return None
    value = moves[0].value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" and len(value.args) == 1):
        return None
    device = value.args[0]
    return device.id if isinstance(device, ast.Name) and _handed_in(facts, device.id, scope) else None


def _through_calls(facts: FileFacts, name: str, scope: Scope, via: tuple[ast.Call, ...]) -> str | None:
    """The parameter of the outermost function that the same-file calls ``via`` (outermost
    first) hand on as the parameter ``name`` of ``scope``'s function; None where one of them
    passes anything else."""
    for call in reversed(via):
        function = scope.node
        argument = argument_for(call, function, name) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        scope = facts.scopes.scope_of(call)
        if not (isinstance(argument, ast.Name) and _handed_in(facts, argument.id, scope)):
            return None
        name = argument.id
    return name


def _handed_in(facts: FileFacts, name: str, scope: Scope) -> bool:
    """``name`` is a parameter of ``scope``'s function, rebound at most to an expression of itself."""
    found = facts.scopes.lookup(name, scope)
    if found is None or found[0] is not scope:
        return False
    bindings = found[1]
    return sum(b.kind == "param" for b in bindings) == 1 and all(b.kind == "param" or _rebinds_itself(b, name) for b in bindings)


def parameter_copies(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                     depth: int = 0) -> tuple[Copies, list[list[str]]]:
    """What ``function`` does with a batch handed in as ``name``: its copies to CUDA here or
    in the same-file functions it goes to, and [target, argument] of the calls into other
    modules it goes on to (for the project's summaries)."""
    memo: dict[tuple[int, str], tuple[Copies, list[list[str]]]] = facts.__dict__.setdefault("_parameter_copies", {})
    key = (id(function), name)
    if key in memo:  # once per function and parameter (a call graph reached many ways, or a cycle)
        return memo[key]
    memo[key] = (Copies(), [])
    scope = facts.scopes.scopes.get(function)
    if scope is None:
        return Copies(), []
    region = _function_region(facts, function)
    names = _derived(facts, {name}, region, scope)
    kind = copies_of(_copies_in(facts, names, region, scope))
    handed, onward = _handed(facts, names, region, scope, depth)
    memo[key] = (kind.join(handed), onward)
    return memo[key]


def copies_of(copies: list[CudaCopy]) -> Copies:
    """What these copies of a batch say, for another function or file."""
    if not copies:
        return Copies()
    return Copies("cuda" if any(c.unconditional for c in copies) else "maybe", any(c.non_blocking for c in copies))


def _handed_copy(facts: FileFacts, scope: Scope, value: ast.AST, candidates: set[str]) -> bool:
    """``inputs.to(device)`` with ``device`` handed in: for a summary, whose callers decide
    whether it is CUDA (``inputs, targets = batch`` then ``inputs = inputs.to(device)``)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to"):
        return False
    device = next((k.value for k in value.keywords if k.arg == "device"), None) if not value.args else value.args[0]
    return _rooted_in(value.func.value, candidates) and isinstance(device, ast.Name) and _handed_in(facts, device.id, scope)


def _derived(facts: FileFacts, names: set[str], region: Region, scope: Scope,
             also_moved: Callable[[ast.AST, set[str]], bool] | None = None) -> set[str]:
    """The names of the batch in ``region`` (see :func:`_derive`); a batch name the body binds,
    on every pass (a statement of its own, not under a branch), to a tensor computed from it
    (``data = data.long().t().contiguous()``) is no longer the batch (what pinning would speed
    up); ``if gray: images = images.repeat(...)`` leaves the batch on the other path."""
    names = set(names)
    plain = partial(_moved, facts, scope)

    def moved(value: ast.AST, candidates: set[str]) -> bool:  # ``also_moved``: what else keeps a name the batch's
        return plain(value, candidates) or (also_moved is not None and also_moved(value, candidates))

    for node in region.binders:
        if isinstance(node, ast.Assign) and id(node) in region.statements and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in names and _computed_from(node.value, name) and not _rooted_in(node.value, names) and not moved(node.value, names):
                names.discard(name)
    for _ in range(MAX_PASSES):  # propagate through the body until no new derived names
        before = len(names)
        for node in region.binders:
            _derive(node, names, region.assigned, moved)
        if len(names) == before:
            break
    return names


def _copies_in(facts: FileFacts, names: set[str], region: Region, scope: Scope) -> list[CudaCopy]:
    copies = []
    for node in region.calls:
        copy = _cuda_copy(facts, node, names, scope) or _cuda_copy(facts, node, names | _batch_when_copied(facts, node, names, region), scope)
        if copy is not None:
            copies.append(copy)
    return copies


LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _batch_when_copied(facts: FileFacts, call: ast.Call, names: set[str], region: Region) -> set[str]:
    """``{"img"}`` for ``img.cuda()`` in ``img, label = data; if use_gpu: img = img.cuda()``
    followed by ``img = Variable(img)``: a name the body rebinds to another tensor later (so
    not one of the batch's ``names``) is the batch where the copy reads it when its last
    binding before the copy is to the batch and comes first on every path to it (a statement
    of a body the copy is in, under no loop of its own: nothing else reaches the copy)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("cuda", "to")):
        return set()
    root = func.value
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if not isinstance(root, ast.Name) or root.id in names:
        return set()
    binders = [b for b in region.binders if root.id in _bound_by(b)]
    if len(binders) != len(region.assigned.get(root.id, ())):
        return set()  # also bound by ``+=`` or an annotation: not followed
    # (a comprehension's target is its own scope's name)
    before = [b for b in binders if not isinstance(b, ast.comprehension) and (b.end_lineno, b.end_col_offset) <= (call.lineno, call.col_offset)]  # type: ignore[attr-defined]
    last = max(before, key=lambda b: (b.lineno, b.col_offset), default=None)  # type: ignore[attr-defined]
    if not (isinstance(last, ast.Assign) and _rooted_in(last.value, names) and _dominates(facts, last, call)):
        return set()
    return {root.id}


def _bound_by(binder: ast.AST) -> set[str]:
    targets = binder.targets if isinstance(binder, ast.Assign) else [binder.target]  # type: ignore[attr-defined]
    return set().union(*(_target_names(t) for t in targets))


def _dominates(facts: FileFacts, statement: ast.stmt, node: ast.AST, loops: bool = False) -> bool:
    """``statement`` runs before ``node`` on every path to it, and (unless ``loops``) no other
    pass reaches it: ``node`` is under a later statement of the same body, with no loop or
    scope between."""
    parents = facts.scopes.parents
    owner = parents.get(statement)
    current: ast.AST | None = node
    while current is not None and parents.get(current) is not owner:
        if isinstance(current, SCOPES) or not loops and isinstance(current, LOOPS):
            return False
        current = parents.get(current)
    if current is None:
        return False
    for field in ("body", "orelse", "finalbody"):
        block = getattr(owner, field, None)
        if isinstance(block, list) and statement in block and current in block:
            return block.index(statement) < block.index(current)
    return False


def _handed(facts: FileFacts, names: set[str], region: Region, scope: Scope, depth: int) -> tuple[Copies, list[list[str]]]:
    """Calls in ``region`` that take the batch (or an item, a field) as an argument: the copies
    the project's functions they reach make of it, and the [target, argument] of those in other
    modules (asked of the project when it is in view; recorded for a summary)."""
    kind, onward = Copies(), list[list[str]]()
    project = facts.project
    if depth >= MAX_DEPTH:
        return kind, onward
    for node in region.calls:
        arguments = [(str(i), a) for i, a in enumerate(node.args)] + [(k.arg, k.value) for k in node.keywords if k.arg]
        for key, argument in arguments:
            if isinstance(argument, ast.Starred) or not _holds_batch(argument, node, names, region):
                continue
            local = _same_file_function(facts, node.func, scope)
            if local is not None:
                param = parameter_for(local, None if key.isdigit() else key, int(key) if key.isdigit() else None, False)
                if param is not None:
                    inner, more = parameter_copies(facts, local, param, depth + 1)
                    kind = kind.join(inner)
                    onward += [pair for pair in more if pair not in onward]
                continue
            target = project.target_of(facts, node.func, scope) if project is not None else None
            if target is None and _method_of_object(facts, node.func, names, scope):
                target = "." + node.func.attr  # type: ignore[attr-defined]  # obj.m(batch) on an object of unknown class
            if target is None:
                continue
            if [target, key] not in onward:
                onward.append([target, key])
            if project is not None and not project.summarizing:
                kind = kind.join(project.parameter_copies(target, key))
    return kind, onward


def _holds_batch(argument: ast.expr, call: ast.Call, names: set[str], region: Region) -> bool:
    """``argument`` is (part of) the batch where ``call`` reads it: one of ``names``, or a name
    whose last binding before the call is (``text, lengths = batch`` then ``to_gpu(text)``,
    though ``text = to_gpu(text).long()`` rebinds it after)."""
    root = argument
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root.id in names:
        return _rooted_in(argument, names)
    before = [(line, value) for line, value in region.lines.get(root.id, ()) if line < call.lineno]
    return bool(before) and _rooted_in(max(before, key=lambda pair: pair[0])[1], names)


def _method_of_object(facts: FileFacts, func: ast.expr, names: set[str], scope: Scope) -> bool:
    """``obj.m(...)`` on a name that is no module and not the batch (``model.parse_batch``)."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or func.value.id in names:
        return False
    found = facts.scopes.lookup(func.value.id, scope)
    return found is None or not any(b.kind == "import" for b in found[1])


def _same_file_function(facts: FileFacts, func: ast.expr, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if not isinstance(func, ast.Name):
        return own_method(facts, func, scope)  # ``self.get_device()``
    found = facts.scopes.single_value(func.id, scope)
    node = found[1].node if found is not None else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _moved(facts: FileFacts, scope: Scope, value: ast.AST, candidates: set[str]) -> bool:
    """``x = x.cuda()``, also wrapped (``x = Variable(x.cuda())``) or followed by methods
    (``x = x.to(device).float()``: the batch's data was copied first): still the batch's data."""
    for _ in range(3):
        if not isinstance(value, ast.Call):
            return False
        if _cuda_copy(facts, value, candidates, scope) is not None or _copied_then(facts, value, candidates, scope):
            return True
        if len(value.args) != 1:
            return False
        value = value.args[0]
    return False


def _copied_then(facts: FileFacts, value: ast.Call, candidates: set[str], scope: Scope) -> bool:
    """``x.to(device).float()``: a chain of method calls whose first is a copy of ``x`` to CUDA."""
    for _ in range(MAX_DEPTH):
        if not (isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Call)):
            return False
        value = value.func.value
        if _cuda_copy(facts, value, candidates, scope) is not None:
            return True
    return False


def _batch_region(facts: FileFacts, use: Use) -> tuple[set[str], list[ast.AST], Scope] | None:
    """The names one iteration's batch is bound to, the body it flows through, and its scope."""
    node = use.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _target_names(node.target), list(node.body), facts.scopes.scope_of(node)
    if isinstance(node, ast.Call):  # iter(loader): ``batch = next(iter(loader))``
        parents = facts.scopes.parents
        outer = parents.get(node)
        if isinstance(outer, ast.Call) and isinstance(outer.func, ast.Name) and outer.func.id == "next":
            assign = parents.get(outer)
            if isinstance(assign, ast.Assign) and assign.value is outer:
                scope = facts.scopes.scope_of(node)
                body = getattr(scope.node, "body", None)
                if isinstance(body, list):
                    names = set().union(*(_target_names(t) for t in assign.targets))
                    return names, list(body), scope
        if isinstance(outer, ast.Assign) and outer.value is node:  # ``it = iter(loader)``, drawn with ``next(it)``
            return _drawn_from_iterator(facts, node, outer)
    if isinstance(node, ast.YieldFrom):  # ``while True: yield from loader`` in a generator of this file
        return _drawn_from_generator(facts, node)
    return None


def _drawn_from_iterator(facts: FileFacts, node: ast.Call, assign: ast.Assign) -> tuple[set[str], list[ast.AST], Scope] | None:
    """The batches drawn with ``batch = next(it)`` in the body that binds ``it = iter(loader)``
    (also renewed there on ``StopIteration``, the tenth audit's K7), where every binding of
    ``it`` is an ``iter()`` of the same loader expression (another loader's iterator bound
    to the same name: unknown)."""
    scope = facts.scopes.scope_of(node)
    body = getattr(scope.node, "body", None)
    target = assign.targets[0] if len(assign.targets) == 1 else None
    found = facts.scopes.lookup(target.id, scope) if isinstance(target, ast.Name) else None
    if not isinstance(body, list) or not isinstance(target, ast.Name) or found is None or found[0] is not scope:
        return None
    same = ast.dump(node)
    if any(b.kind != "assign" or b.value is None or ast.dump(b.value) != same for b in found[1]):
        return None
    iterator = target.id
    names: set[str] = set()
    for sub in walk_body(scope.node):
        if isinstance(sub, ast.Assign) and _draws(sub.value, iterator):
            names |= set().union(*(_target_names(t) for t in sub.targets))
    return (names, list(body), scope) if names else None


def _drawn_from_generator(facts: FileFacts, node: ast.YieldFrom) -> tuple[set[str], list[ast.AST], Scope] | None:
    """The batches a generator function yields from a loader, where a same-file call of it is
    bound to a name (``data = load_data()``) that is drawn from in the same body
    (``batch, cond = next(data)``, ``for batch in data``)."""
    function = facts.scopes.enclosing_function(node)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    parents = facts.scopes.parents
    for call, scope in calls_of(facts, function):
        bound = parents.get(call)
        body = getattr(scope.node, "body", None)
        if not (isinstance(bound, ast.Assign) and len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name) and isinstance(body, list)):
            continue
        generator = bound.targets[0].id
        names: set[str] = set()
        for sub in walk_body(scope.node):
            if isinstance(sub, ast.Assign) and _draws(sub.value, generator):
                names |= set().union(*(_target_names(t) for t in sub.targets))
            elif isinstance(sub, (ast.For, ast.AsyncFor)) and isinstance(sub.iter, ast.Name) and sub.iter.id == generator:
                names |= _target_names(sub.target)
        if names:
            return names, list(body), scope
    return None


def _draws(value: ast.expr, generator: str) -> bool:
    """``next(generator)``."""
    return _is_next_call(value) and isinstance(value.args[0], ast.Name) and value.args[0].id == generator  # type: ignore[attr-defined]


def _computed_from(value: ast.expr, name: str) -> bool:
    """``name.long().t()``: a chain of methods and indexing on ``name`` itself."""
    for _ in range(MAX_DEPTH):
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
        elif isinstance(value, (ast.Subscript, ast.Attribute)):
            value = value.value
        else:
            return isinstance(value, ast.Name) and value.id == name
    return False


def _is_next_call(value: ast.AST) -> bool:
    """``next(...)`` (with an argument)."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "next" and len(value.args) >= 1


def _target_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


# Methods that hand back the same memory (a view) or its parts: still the pinned batch.
VIEW_METHODS = frozenset(
    {"items", "values", "get", "contiguous", "view", "view_as", "permute", "transpose", "squeeze", "unsqueeze", "narrow",
     "select", "unbind", "split", "chunk", "t", "expand", "detach", "as_strided", "unflatten"}
)


def _rooted_in(expr: ast.AST, names: set[str]) -> bool:
    """``expr`` is (part of) one of ``names``: ``batch``, ``batch[0]``, ``batch["x"].view(...)``,
    ``batch.items()``, ``Variable(batch)``; not a tensor computed from it (``f(batch)``,
    ``batch["x"].float()``)."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, (ast.Subscript, ast.Attribute, ast.Starred)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and _is_variable(expr):
            expr = expr.args[0]
        else:
            return False
    return False


def _is_variable(call: ast.Call) -> bool:
    """``Variable(t)`` (``torch.autograd.Variable``): since torch 0.4 it returns ``t`` itself."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name == "Variable" and len(call.args) >= 1 and not isinstance(call.args[0], ast.Starred)


def _derive(node: ast.AST, names: set[str], assigned: dict[str, list[ast.AST]], moved) -> None:
    """Names bound from the batch, whose every binding in the body is the batch itself or its
    copy to the device (``x = batch[0]; x = x.cuda()``): ``video = preprocess(video)`` later
    makes ``video`` a computed tensor."""
    if isinstance(node, ast.Assign) and _rooted_in(node.value, names):
        targets = [name for target in node.targets for name in _target_names(target)]
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and _rooted_in(node.iter, names):
        targets = list(_target_names(node.target))
    else:
        return
    for name in targets:
        values = assigned.get(name, ())
        candidates = names | {name}
        if any(isinstance(value, ast.expr) and _rooted_in(value, names) for value in values) and all(
            isinstance(value, ast.expr) and (_rooted_in(value, names) or moved(value, candidates)) for value in values
        ):
            names.add(name)


def _cuda_copy(facts: FileFacts, call: ast.Call, names: set[str], scope: Scope) -> CudaCopy | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and _rooted_in(func.value, names)):
        return None
    non_blocking = _non_blocking(facts, call, scope)
    if func.attr == "cuda":
        return CudaCopy(call, True, non_blocking)
    if func.attr != "to":
        return None
    if non_blocking and any(k.arg == "non_blocking" for k in call.keywords):
        return CudaCopy(call, False, True)  # .to(x, non_blocking=True): only a device copy asks for it
    device = next((k.value for k in call.keywords if k.arg == "device"), None) if not call.args else call.args[0]
    if device is None:
        return None
    kind = cuda_device_kind(facts, device, scope)
    return CudaCopy(call, kind == "cuda", non_blocking) if kind else None


def _non_blocking(facts: FileFacts, call: ast.Call, scope: Scope) -> bool:
    """The copy may be asynchronous: ``non_blocking=`` not provably false (``non_blocking=True``,
    ``non_blocking=args.async_copy``), or passed positionally (``.cuda(0, True)``,
    ``.to(device, dtype, True)``)."""
    keyword = next((k for k in call.keywords if k.arg == "non_blocking"), None)
    if keyword is None:
        position = 1 if isinstance(call.func, ast.Attribute) and call.func.attr == "cuda" else 2
        return len(call.args) > position
    return facts.resolve(keyword.value, scope).truthy() is not False


def cuda_device_kind(facts: FileFacts, expr: ast.expr, scope: Scope, depth: int = 0) -> str | None:
    """"cuda" for a device that is always CUDA, "maybe" for "cuda if available else cpu",
    None when it is not (or cannot be told to be) a CUDA device."""
    if depth > MAX_DEPTH:
        return None
    expr, scope = follow(expr, scope, facts)
    if isinstance(expr, ast.Constant):
        return "cuda" if isinstance(expr.value, str) and _is_cuda_string(expr.value) else None
    if isinstance(expr, ast.JoinedStr):  # f"cuda:{rank}"
        first = expr.values[0] if expr.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and _is_cuda_string(first.value):
            return "cuda"
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):  # "cuda:" + str(args.device)
        first = expr.left
        while isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add):
            first = first.left
        return "cuda" if isinstance(first, ast.Constant) and isinstance(first.value, str) and _is_cuda_string(first.value) else None
    if isinstance(expr, ast.IfExp):
        kinds = {cuda_device_kind(facts, e, scope, depth + 1) for e in (expr.body, expr.orelse)}
        return "maybe" if kinds & {"cuda", "maybe"} else None
    if isinstance(expr, ast.Call):
        name = facts.qualname(expr.func)
        if name in CUDA_DEVICE_CALLS:
            return "cuda"
        if name == TORCH_DEVICE:
            arg = next((k.value for k in expr.keywords if k.arg == "type"), None) if not expr.args else expr.args[0]
            return cuda_device_kind(facts, arg, scope, depth + 1) if arg is not None else None
        return _returned_kind(facts, expr, scope, depth)
    held = bound_once(expr, scope, facts) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    if held is None and isinstance(expr, ast.Attribute):
        held = handed_attribute(expr, scope, facts)
        if held is None:
            return inherited_device_kind(facts, expr, scope)
    if held is not None:
        return cuda_device_kind(facts, held[0], held[1], depth + 1)
    if isinstance(expr, ast.Name):
        return _arms_kind(facts, expr, scope, depth) or _parameter_kind(facts, expr, scope, depth) or branch_device_kind(facts, expr, scope, depth)
    return None


def _arms_kind(facts: FileFacts, expr: ast.Name, scope: Scope, depth: int) -> str | None:
    """A name bound only in the two arms of one ``if`` statement (``if torch.cuda.is_available():
    device = "cuda"`` / ``else: device = "cpu"``) says what ``"cuda" if ... else "cpu"`` says:
    "cuda" when both arms are CUDA, "maybe" when one is and the other is a device written out;
    None for anything else (a third binding, an arm that is unknown)."""
    found = facts.scopes.lookup(expr.id, scope)
    if found is None:
        return None
    owner, bindings = found
    if len(bindings) != 2 or any(b.kind != "assign" or b.value is None for b in bindings):
        return None
    statement = facts.scopes.parents.get(bindings[0].node)
    if not isinstance(statement, ast.If) or statement is not facts.scopes.parents.get(bindings[1].node):
        return None
    if {bindings[0].node in statement.body, bindings[1].node in statement.body} != {True, False}:
        return None
    return _either_device({_written_device(facts, b.value, owner, depth) for b in bindings})


def _returned_kind(facts: FileFacts, call: ast.Call, scope: Scope, depth: int) -> str | None:
    """``try_gpu()``, a function of this file whose every ``return`` hands back a device
    written out (``torch.device("cuda:0")`` under ``if torch.cuda.is_available():``,
    ``torch.device("cpu")`` otherwise, through a local name bound on each path): "cuda" when
    every one is CUDA, "maybe" when some are; None when a return is anything else (a
    parameter, another call: unknown is silent)."""
    function = _same_file_function(facts, call.func, scope)
    inner = facts.scopes.scopes.get(function) if function is not None else None
    if function is None or inner is None:
        return None
    kinds: set[str | None] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and facts.scopes.enclosing_function(node) is function:
            for value in _returned_values(facts, node.value, inner):
                kinds.add(_written_device(facts, value, inner, depth))
    return _either_device(kinds)


def _written_device(facts: FileFacts, value: ast.expr | None, scope: Scope, depth: int) -> str | None:
    """"cuda"/"maybe" as :func:`cuda_device_kind` says, "cpu" for another device written out,
    None for anything else."""
    return None if value is None else cuda_device_kind(facts, value, scope, depth + 1) or _cpu_device(facts, value, scope)


def _either_device(kinds: set[str | None]) -> str | None:
    """One of several devices (the arms of an ``if``, a function's returns): "cuda" when all are,
    "maybe" when some are and the rest are written out; None when one is unknown or none is CUDA."""
    if not kinds or None in kinds or kinds == {"cpu"}:
        return None
    return "cuda" if kinds == {"cuda"} else "maybe"


def _returned_values(facts: FileFacts, value: ast.expr | None, scope: Scope) -> list[ast.expr | None]:
    """What a ``return`` hands back: its expression, or each value a local name is assigned
    in the function (``device = torch.device("cuda:0")`` on one path, ``"cpu"`` on the other);
    [None] where the name is bound otherwise (a parameter, a loop)."""
    if not isinstance(value, ast.Name):
        return [value]
    found = facts.scopes.lookup(value.id, scope)
    if found is None or found[0] is not scope:
        return [value]
    return [b.value if b.kind == "assign" else None for b in found[1]]


def _cpu_device(facts: FileFacts, expr: ast.expr | None, scope: Scope) -> str | None:
    """"cpu" for a device written out that is not CUDA (``"cpu"``, ``torch.device("mps")``)."""
    if expr is None:
        return None
    expr, scope = follow(expr, scope, facts)
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) == TORCH_DEVICE and len(expr.args) == 1:
        expr = expr.args[0]
    return "cpu" if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None


def passed_devices(facts: FileFacts, call: ast.Call, scope: Scope) -> dict[str, str]:
    """The arguments of ``call`` that are CUDA devices as this file resolves them, by position
    ("0") and keyword: "cuda" or "maybe" (what another file's callee copies to, its summary's
    :attr:`CallSummary.cuda_devices`)."""
    found: dict[str, str] = {}
    positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
    for key, expr in [*((str(i), a) for i, a in enumerate(positional)), *((k.arg, k.value) for k in call.keywords if k.arg)]:
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.JoinedStr, ast.IfExp, ast.BinOp)):
            kind = cuda_device_kind(facts, expr, scope)
            if kind is not None:
                found[key] = kind
    return found


def _parameter_kind(facts: FileFacts, expr: ast.Name, scope: Scope, depth: int) -> str | None:
    """A device handed in as a parameter: what every call of its function passes, in this file
    and in the project's other files (as each resolves it: :func:`passed_devices`), "maybe"
    when one of them passes a "cuda if available" device; None when a call passes anything
    else, or when the calls cannot all be read (unknown)."""
    name = expr.id
    found = facts.scopes.lookup(name, scope)
    if found is None:
        return None
    owner, bindings = found
    function = owner.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if sum(b.kind == "param" for b in bindings) != 1:
        return None
    rebound = _rebound_kinds(facts, bindings, name, owner, depth)
    if None in rebound:
        return None  # a parameter rebound only to an expression of itself (torch.device(device)) keeps its kind
    calls = function_calls(facts, function)
    if not calls.elsewhere.readable:
        return None  # other files' calls cannot all be read: what they pass is unknown
    here = [(call, facts.scopes.scope_of(call)) for call in calls.here]
    here = [(call, caller) for call, caller in here if not _never_runs(facts, call)] or here  # callers that never run decide only where no other caller does
    kinds = {cuda_device_kind(facts, argument, caller, depth + 1) if argument is not None else None
             for argument, caller in (_argument_for(call, function, name, facts, caller) for call, caller in here)}
    kinds |= _kinds_elsewhere(facts, expr, function, calls.elsewhere.calls, depth)
    if kinds:
        kinds |= rebound
    if not kinds or None in kinds:
        return None
    return "cuda" if kinds == {"cuda"} else "maybe"


def _rebound_kinds(facts: FileFacts, bindings: list, name: str, owner: Scope, depth: int) -> set[str | None]:
    """The device kinds a parameter is rebound to besides its own value: none for an
    expression of itself (``torch.device(device)``); "cuda" for ``device =
    torch.cuda.current_device()``; None (unknown) for anything else."""
    kinds: set[str | None] = set()
    for binding in bindings:
        if binding.kind == "param" or _rebinds_itself(binding, name):
            continue
        value = binding.value if binding.kind == "assign" else None
        kinds.add(cuda_device_kind(facts, value, owner, depth + 1) if value is not None else None)
    return kinds


def _never_runs(facts: FileFacts, call: ast.Call) -> bool:
    """``call`` is made in a module-level function that nothing in the project calls or names
    (not handed on as ``target=f`` either): in view, it never runs, and what it passes decides
    nothing beside a caller that does run."""
    function = facts.scopes.enclosing_function(call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
        return False
    if not isinstance(facts.scopes.parents.get(function), ast.Module) or facts.usage.callers(function):
        return False
    if any(node.__class__ is ast.Name and node.id == function.name for node in facts.nodes):  # type: ignore[attr-defined]
        return False
    project = facts.project
    return project is None or not project.summarizing and not project.named_elsewhere(function.name)


def _kinds_elsewhere(facts: FileFacts, expr: ast.Name, function: ast.FunctionDef | ast.AsyncFunctionDef,
                     elsewhere: tuple[PassedArguments, ...], depth: int) -> set[str | None]:
    """What the calls of ``function`` in other project files pass for the parameter ``expr``
    names (None for a call whose value is not a CUDA device, or that leaves it at its default
    when that is none)."""
    position = parameter_position(function, expr.id)
    default = parameter_default(function, expr.id)
    kinds: set[str | None] = set()
    for arguments in elsewhere:
        passes = arguments.shape.passes(position, expr.id)
        if passes is False:  # left at its default
            kinds.add(cuda_device_kind(facts, default, facts.scopes.scope_of(default), depth + 1) if default is not None else None)
            continue
        key = expr.id if expr.id in arguments.shape.keywords else str(position)
        kinds.add(arguments.cuda_devices.get(key) if passes else None)
    return kinds


def _rebinds_itself(binding, name: str) -> bool:
    """``device = torch.device(device)``: an assignment whose value reads the name it rebinds."""
    return binding.kind == "assign" and binding.value is not None and any(
        isinstance(node, ast.Name) and node.id == name for node in ast.walk(binding.value))


def calls_of(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Call, Scope]]:
    """The same-file calls of a module- or function-level ``def`` (the flow engine's
    :meth:`callers`), each with the scope it is made in; a method's are not read: called
    through ``self`` or instances, its arguments do not line up with its parameters."""
    if isinstance(facts.scopes.parents.get(function), ast.ClassDef):
        return []
    return [(call, facts.scopes.scope_of(call)) for call in facts.usage.callers(function)]


def _argument_for(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                  facts: FileFacts, caller: Scope) -> tuple[ast.expr | None, Scope]:
    """The expression ``call`` passes for parameter ``name`` (its default when it passes none)."""
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword, caller
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if name in positional:
        index = positional.index(name)
        if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return None, caller
        if index < len(call.args):
            return call.args[index], caller
        defaults = function.args.defaults
        first_default = len(positional) - len(defaults)
        if index >= first_default:
            return defaults[index - first_default], facts.scopes.scope_of(function)
    return None, caller


def _is_cuda_string(text: str) -> bool:
    return text == "cuda" or text.startswith("cuda:")


def torch_alias(facts: FileFacts) -> str | None:
    """The local name ``torch`` is imported under, if any."""
    return next((local for local, full in facts.imports.items() if full == "torch"), None)
