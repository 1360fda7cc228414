"""Where a loader's batches go: host-to-CUDA copies of the values a loop takes from it (DL206).

A batch is the target of ``for batch in loader`` (through ``enumerate``/``tqdm``),
``batch = next(iter(loader))``, or ``batch = next(it)`` where ``it`` is bound only to
``iter(loader)`` (renewed on ``StopIteration``), ``for x in wrapper`` over an instance of a
same-file class whose ``__iter__`` yields the loader's batches unchanged, and every name derived from it in the same body
(``x, y = batch``, ``images = batch["image"]``, ``for k, v in batch.items()``; a name rebound
later to a computed tensor still is the batch where a copy reads it before, ``img, label =
data; if use_gpu: img = img.cuda()``; one rebound on every pass to new tensors before any copy,
``targets = {"boxes": torch.stack(...)}``, is not). Its copies to CUDA are :mod:`dllint.facts.host_copies`'.
A batch (or an item, a field) handed to a project function or method
that copies what it receives (``x, y = model.parse_batch(batch)``, whose body sends each item
through ``utils.to_gpu``) is copied there: same-file functions are read here, other modules'
through their summaries (``FunctionSummary.copies``), ``obj.m(batch)`` on an object of unknown
class through every project method ``m``. A loader handed to another module's function that
copies its batches to a device parameter is :mod:`dllint.facts.device_parameters`'.
"""

from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING, Callable, NamedTuple

from dllint.facts.device_kinds import MAX_DEPTH, passed_devices, same_file_function
from dllint.facts.flow.base import WRAPPING_BUILTINS, WRAPPING_QUALNAMES
from dllint.facts.flow.records import Copies
from dllint.facts.flow.syntax import parameter_for
from dllint.facts.order import dominates
from dllint.facts.host_copies import CudaCopy, copies_of, cuda_copy, is_moved, rooted_in
from dllint.facts.walk import walk_body

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Use
    from dllint.facts.scopes import Scope

MAX_PASSES = 4


class Region(NamedTuple):
    """A body the batch flows through, indexed once: the nodes that bind names (and every
    value each name is bound to, with the binding's line), and the calls."""

    binders: list[ast.AST]
    assigned: dict[str, list[ast.AST]]
    lines: dict[str, list[tuple[int, ast.expr]]]  # name -> (line, value) of its plain assignments
    calls: list[ast.Call]
    statements: frozenset[int] = frozenset()  # ids of the body's own statements (run on every pass)


def region_of(facts: FileFacts, parts: list[ast.AST]) -> Region:
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
    """:func:`region_of` of a function's body, built once per function (a summary asks it for
    every parameter)."""
    table = facts.memo("copy_regions")
    found = table.get(id(function))
    if found is None:
        found = table[id(function)] = region_of(facts, list(function.body))  # type: ignore[attr-defined]
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
    seeded = batch_region(facts, use)
    if seeded is None:
        return [], Copies()
    scope = seeded[2]
    region = region_of(facts, seeded[1])
    names = derived_names(facts, seeded[0], region, scope)
    yielded_copies, yielded_handed = _through_generator(facts, use, names, seeded[1], scope, handed)
    copies = _copies_in(facts, names, region, scope) + yielded_copies
    if not handed:
        return copies, Copies()
    from dllint.facts.handed_wrappers import copies_elsewhere  # a wrapper handed to another module (K13)

    return copies, _handed(facts, names, region, scope, 0)[0].join(copies_elsewhere(facts, use.node)).join(yielded_handed)


def _through_generator(facts: FileFacts, use: Use, names: set[str], parts: list[ast.AST], scope: Scope,
                       handed: bool) -> tuple[list[CudaCopy], Copies]:
    """The batch (or an item, a field: ``yield data["gt"]``) yielded by a generator function of
    this file, followed to the function's calls (the thirteenth audit's C2): ``for image in
    images(loader, n)`` here (its copies, and with ``handed`` what it hands the items to), or
    the generator handed to another module's function (``extract_features(images(loader, n),
    model, device)``: what that function does with each item it iterates). Where the loader came
    in through a call of the function (``use.via``), that call's generator only."""
    function = scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [], Copies()
    if not any(isinstance(node, ast.Yield) and node.value is not None and rooted_in(node.value, names)
               for part in parts for node in (part, *walk_body(part))):
        return [], Copies()
    copies: list[CudaCopy] = []
    kind = Copies()
    for call, where in _calls_of(facts, function):
        if use.via and call is not use.via[-1]:
            continue  # the generator of another call, over another loader
        consumer = _consumer(facts, call)
        if isinstance(consumer, (ast.For, ast.AsyncFor)):
            region = region_of(facts, list(consumer.body))
            items = derived_names(facts, _target_names(consumer.target), region, where)
            copies += _copies_in(facts, items, region, where)
            if handed:
                kind = kind.join(_handed(facts, items, region, where, 1)[0])
        elif consumer is not None and handed:
            kind = kind.join(_handed_generator(facts, consumer[0], consumer[1], where))
    return copies, kind


def _consumer(facts: FileFacts, call: ast.Call) -> ast.For | ast.AsyncFor | tuple[ast.Call, str] | None:
    """What takes a generator function's result: the ``for`` iterating it (through
    ``enumerate``/``tqdm``), or the call it is an argument of, with its position or keyword."""
    parents = facts.scopes.parents
    node: ast.AST = call
    for _ in range(MAX_DEPTH):
        parent = parents.get(node)
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
            return parent
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            outer = parents.get(parent)
            return (outer, parent.arg) if isinstance(outer, ast.Call) else None
        if not (isinstance(parent, ast.Call) and node in parent.args):
            return None
        func = parent.func
        if parent.args[0] is node and (isinstance(func, ast.Name) and func.id in WRAPPING_BUILTINS or facts.qualname(func) in WRAPPING_QUALNAMES):
            node = parent  # enumerate(images(...)): its items hold the generator's
            continue
        return parent, str(parent.args.index(node))  # type: ignore[arg-type]
    return None


def _handed_generator(facts: FileFacts, call: ast.Call, key: str, scope: Scope) -> Copies:
    """How another module's function that ``call`` hands a generator of batches to (as ``key``)
    copies the items it iterates: its summary's, given the CUDA devices the call passes."""
    project = facts.project
    if project is None or project.summarizing or any(isinstance(a, ast.Starred) for a in call.args):
        return Copies()
    target = project.target_of(facts, call.func, scope)
    effects = project.parameter_effects(target, key, passed_devices(facts, call, scope)) if target is not None else None
    return effects.cuda_copy if effects is not None and effects.iterations else Copies()


def parameter_copies(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                     depth: int = 0) -> tuple[Copies, list[list[str]]]:
    """What ``function`` does with a batch handed in as ``name``: its copies to CUDA here or
    in the same-file functions it goes to, and [target, argument] of the calls into other
    modules it goes on to (for the project's summaries)."""
    memo: dict[tuple[int, str], tuple[Copies, list[list[str]]]] = facts.memo("parameter_copies")
    key = (id(function), name)
    if key in memo:  # once per function and parameter (a call graph reached many ways, or a cycle)
        return memo[key]
    memo[key] = (Copies(), [])
    scope = facts.scopes.scopes.get(function)
    if scope is None:
        return Copies(), []
    region = _function_region(facts, function)
    names = derived_names(facts, {name}, region, scope)
    kind = copies_of(_copies_in(facts, names, region, scope))
    handed, onward = _handed(facts, names, region, scope, depth)
    memo[key] = (kind.join(handed), onward)
    return memo[key]


def derived_names(facts: FileFacts, names: set[str], region: Region, scope: Scope,
                  also_moved: Callable[[ast.AST, set[str]], bool] | None = None) -> set[str]:
    """The names of the batch in ``region`` (see :func:`_derive`); a batch name the body binds,
    on every pass (a statement of its own, not under a branch), to a tensor computed from it
    (``data = data.long().t().contiguous()``), or to new tensors after no copy of it
    (:func:`_stacked_first`), is no longer the batch (what pinning would speed up);
    ``if gray: images = images.repeat(...)`` leaves the batch on the other path."""
    names = set(names)
    plain = partial(is_moved, facts, scope)

    def moved(value: ast.AST, candidates: set[str]) -> bool:  # ``also_moved``: what else keeps a name the batch's
        return plain(value, candidates) or (also_moved is not None and also_moved(value, candidates))

    for node, name in _rebindings(region):
        if name not in names or rooted_in(node.value, names) or moved(node.value, names):
            continue
        if _computed_from(node.value, name) or _stacked_first(facts, node, scope, partial(_spread, set(names), region, moved)):
            names.discard(name)
    return _spread(names, region, moved)


def stacked_names(facts: FileFacts, names: set[str], region: Region, scope: Scope) -> set[str]:
    """The batch's ``names`` that the body rebinds, on every pass, to new tensors before it
    copies them (:func:`_stacked_first`)."""
    moved = partial(is_moved, facts, scope)
    return {name for node, name in _rebindings(region)
            if name in names and _stacked_first(facts, node, scope, partial(_spread, set(names), region, moved))}


def _rebindings(region: Region) -> list[tuple[ast.Assign, str]]:
    """``name = ...`` statements of the body itself (run on every pass), with the name."""
    return [(node, node.targets[0].id) for node in region.binders if isinstance(node, ast.Assign) and id(node) in region.statements
            and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)]


def _spread(names: set[str], region: Region, moved: Callable[[ast.AST, set[str]], bool]) -> set[str]:
    """``names`` and the names derived from them through the body, until no new one (:func:`_derive`)."""
    for _ in range(MAX_PASSES):
        before = len(names)
        for node in region.binders:
            _derive(node, names, region.assigned, moved)
        if len(names) == before:
            break
    return names


# torch functions whose result is always new memory (a copy of their inputs)
NEW_TENSORS = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.vstack", "torch.hstack", "torch.tensor"})
# and those whose result is new memory unless handed a tensor (then it is that tensor)
NEW_UNLESS_TENSOR = frozenset({"torch.as_tensor", "torch.asarray"})


def _stacked_first(facts: FileFacts, statement: ast.Assign, scope: Scope, batch: Callable[[], set[str]]) -> bool:
    """``targets = {"boxes": torch.stack([t["boxes"] for t in targets])}`` where nothing before it
    in the body (nor the stacking itself) copies the batch to CUDA, or hands it to a function
    that does: every later read is of the stacked tensors, new memory the loader's pinning does
    not reach (ninth audit J2). ``batch``: the batch's names with ``targets`` still among them."""
    block = getattr(facts.scopes.parents.get(statement), "body", None)
    if not isinstance(block, list) or statement not in block:
        return False
    names = batch()
    if not _new_tensors(facts, statement.value, names):
        return False
    parts = [*block[: block.index(statement)], statement.value]
    calls = [n for part in parts for n in ast.walk(part) if isinstance(n, ast.Call)]
    if any(cuda_copy(facts, call, names, scope) for call in calls):
        return False
    return not _handed(facts, names, Region([], {}, {}, calls), scope, 0)[0]


def _new_tensors(facts: FileFacts, value: ast.expr, names: set[str]) -> bool:
    """A call of :data:`NEW_TENSORS` (or of :data:`NEW_UNLESS_TENSOR` on something other than
    the batch's ``names``: ``torch.as_tensor(img_ids)``, a list) that copies nothing to a device
    on the way (``torch.stack([t.cuda() ...])`` copies the batch's own pieces), also as each
    item of a dict, list or tuple written out."""
    if isinstance(value, ast.Dict):
        return bool(value.values) and None not in value.keys and all(_new_tensors(facts, v, names) for v in value.values)
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(_new_tensors(facts, e, names) for e in value.elts)
    if not isinstance(value, ast.Call) or any(isinstance(n, ast.Attribute) and n.attr in ("cuda", "to") for n in ast.walk(value)):
        return False
    name = facts.qualname(value.func)
    if name in NEW_UNLESS_TENSOR:
        return len(value.args) >= 1 and not isinstance(value.args[0], ast.Starred) and not rooted_in(value.args[0], names)
    return name in NEW_TENSORS


def _copies_in(facts: FileFacts, names: set[str], region: Region, scope: Scope) -> list[CudaCopy]:
    copies = []
    for node in region.calls:
        copy = cuda_copy(facts, node, names, scope) or cuda_copy(facts, node, names | _batch_when_copied(facts, node, names, region), scope)
        if copy is not None:
            copies.append(copy)
    return copies


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
    if not (isinstance(last, ast.Assign) and rooted_in(last.value, names) and dominates(facts, last, call)):
        return set()
    return {root.id}


def _bound_by(binder: ast.AST) -> set[str]:
    targets = binder.targets if isinstance(binder, ast.Assign) else [binder.target]  # type: ignore[attr-defined]
    return set().union(*(_target_names(t) for t in targets))


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
            local = same_file_function(facts, node.func, scope)
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
        return rooted_in(argument, names)
    before = [(line, value) for line, value in region.lines.get(root.id, ()) if line < call.lineno]
    return bool(before) and rooted_in(max(before, key=lambda pair: pair[0])[1], names)


def _method_of_object(facts: FileFacts, func: ast.expr, names: set[str], scope: Scope) -> bool:
    """``obj.m(...)`` on a name that is no module and not the batch (``model.parse_batch``)."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or func.value.id in names:
        return False
    found = facts.scopes.lookup(func.value.id, scope)
    return found is None or not any(b.kind == "import" for b in found[1])


def batch_region(facts: FileFacts, use: Use) -> tuple[set[str], list[ast.AST], Scope] | None:
    """The names one iteration's batch is bound to, the body it flows through, and its scope."""
    node = use.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _yielded_by_wrapper(facts, node) or (_target_names(node.target), list(node.body), facts.scopes.scope_of(node))
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
    for call, scope in _calls_of(facts, function):
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


def _yielded_by_wrapper(facts: FileFacts, node: ast.For | ast.AsyncFor) -> tuple[set[str], list[ast.AST], Scope] | None:
    """The batches of ``for x in wrapper`` (the tenth audit's K13), where ``node`` is the whole
    body of ``__iter__`` of a module-level class bound once, yielding each batch unchanged
    (``for data in self.dataloader: yield data``), and ``wrapper`` is bound only to an instance
    of that class in the body that iterates it. Any other ``__iter__`` is unknown."""
    function = facts.scopes.enclosing_function(node)
    parents = facts.scopes.parents
    owner = parents.get(function) if function is not None else None
    body = node.body
    if not (isinstance(function, ast.FunctionDef) and function.name == "__iter__" and function.body == [node]
            and isinstance(owner, ast.ClassDef) and isinstance(parents.get(owner), ast.Module)
            and len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Yield)
            and isinstance(body[0].value.value, ast.Name) and isinstance(node.target, ast.Name)
            and body[0].value.value.id == node.target.id):
        return None
    bound = facts.scopes.lookup(owner.name, facts.scopes.module)
    if bound is None or len(bound[1]) != 1:
        return None
    for call in ast.walk(facts.tree):
        assign = parents.get(call)
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == owner.name
                and isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
            continue
        scope = facts.scopes.scope_of(call)
        found = facts.scopes.lookup(assign.targets[0].id, scope)
        if found is None or found[0] is not scope or len(found[1]) != 1 or not isinstance(getattr(scope.node, "body", None), list):
            continue
        names: set[str] = set()
        for sub in walk_body(scope.node):
            if isinstance(sub, (ast.For, ast.AsyncFor)) and isinstance(sub.iter, ast.Name) and sub.iter.id == assign.targets[0].id:
                names |= _target_names(sub.target)
        if names:
            return names, list(scope.node.body), scope  # type: ignore[attr-defined]
    return None


def _calls_of(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Call, Scope]]:
    """The same-file calls of a module- or function-level ``def`` (the flow engine's
    :meth:`callers`), each with the scope it is made in; a method's are not read: called
    through ``self`` or instances, its arguments do not line up with its parameters."""
    if isinstance(facts.scopes.parents.get(function), ast.ClassDef):
        return []
    return [(call, facts.scopes.scope_of(call)) for call in facts.usage.callers(function)]


def _draws(value: ast.expr, generator: str) -> bool:
    """``next(generator)``."""
    return is_next_call(value) and isinstance(value.args[0], ast.Name) and value.args[0].id == generator  # type: ignore[attr-defined]


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


def is_next_call(value: ast.AST) -> bool:
    """``next(...)`` (with an argument)."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "next" and len(value.args) >= 1


def _target_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _derive(node: ast.AST, names: set[str], assigned: dict[str, list[ast.AST]], moved) -> None:
    """Names bound from the batch, whose every binding in the body is the batch itself or its
    copy to the device (``x = batch[0]; x = x.cuda()``): ``video = preprocess(video)`` later
    makes ``video`` a computed tensor."""
    if isinstance(node, ast.Assign) and rooted_in(node.value, names):
        targets = [name for target in node.targets for name in _target_names(target)]
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and rooted_in(node.iter, names):
        targets = list(_target_names(node.target))
    else:
        return
    for name in targets:
        values = assigned.get(name, ())
        candidates = names | {name}
        if any(isinstance(value, ast.expr) and rooted_in(value, names) for value in values) and all(
            isinstance(value, ast.expr) and (rooted_in(value, names) or moved(value, candidates)) for value in values
        ):
            names.add(name)
