"""A value's uses folded into :class:`Effects`, what a file's summary records for other
files: the value itself (:func:`effects_of`), and its parts: each element a call's result is
unpacked into or looped over, the fields read off it, the entries of a dict read under
constant keys. The inverse, another file's ``Effects`` as uses, is
:func:`dllint.facts.flow.model.uses_from`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from dllint.facts.flow.model import AnyEntry, DictKey, How, Move, RemoteLoop, path_key
from dllint.facts.flow.records import Effects

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Element, Path, Use
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

MAX_FIELDS = 8  # fields, keys or positions of one value a summary records
SAMPLER_SLOTS = ("sampler", "batch_sampler")


def effects_of(uses: list[Use], built: set[int], facts: FileFacts | None = None) -> Effects:
    """Fold a value's uses into :class:`Effects`; loops in ``built`` make a fresh value each pass."""
    effects = Effects()
    seen: set[tuple[int, bool]] = set()
    for use in uses:
        loops = [loop for loop in use.loops if id(loop) not in built]
        if use.kind is Move.ITERATE:
            # one pass per iterating node (two paths to it may be exclusive), but a node reached
            # once outside a loop and again inside one is iterated both ways (tenth audit B2: a
            # helper run on the loader before the epoch loop and in it)
            key = (id(use.node), bool(loops))
            if key in seen:
                continue
            seen.add(key)
            _iterated(effects, use, bool(loops), facts)
            if use.method and not loops and use.method not in effects.methods:
                effects.methods.append(use.method)
        elif use.how is How.REMOTE and use.remote is not None:
            devices = [dict(use.devices)] if use.devices else []
            effects.follow.append([use.remote[0], use.remote[1], bool(loops), *use.remote[2:], *devices])
        elif use.how is How.UNKNOWN and facts is not None and (loader := _fed_loader(facts, use.node)) is not None:
            passes = _sampler_passes(facts, loader, built)
            effects.merge(passes)
            effects.follow += passes.follow  # the loader handed on to another file: its passes there
        else:
            _escaped(effects, use.how)
    return effects


def _fed_loader(facts: FileFacts, node: ast.AST) -> LoaderCall | None:
    """The loader whose ``sampler`` (or ``batch_sampler``) ``node`` is."""
    parent = facts.scopes.parents.get(node)
    call = facts.scopes.parents.get(parent) if isinstance(parent, ast.keyword) else parent
    loader = facts.loader_at.get(call) if isinstance(call, ast.Call) else None
    if loader is None or not any(arg is not None and arg.value is node for arg in map(loader.argument, SAMPLER_SLOTS)):
        return None
    return loader


def _sampler_passes(facts: FileFacts, loader: LoaderCall, built: set[int]) -> Effects:
    """A sampler goes where its loader goes: one pass over it per pass over the loader, except
    where the loader only feeds an evaluation (the order of its samples does not matter: DL301)."""
    if facts.training.evaluation_only(loader):
        return Effects()
    uses = facts.usage.loader_uses(loader)
    passes = effects_of(uses, built, facts)
    # A framework's fit loop (Lightning's, Hugging Face's Trainer) calls set_epoch on it itself.
    passes.set_epoch |= any(isinstance(loop, RemoteLoop) and loop.framework for use in uses for loop in use.loops)
    return passes


def _iterated(effects: Effects, use: Use, repeated: bool, facts: FileFacts | None) -> None:
    """One more pass over the value (two stand for more), per epoch when a loop that does not
    build it repeats the pass, and the CUDA copies of its batches there ("cuda" once one copy
    is unconditional: a later maybe-copy does not weaken it)."""
    from dllint.facts.batches import batch_cuda_copies
    from dllint.facts.device_parameters import batch_device_parameters
    from dllint.facts.host_copies import copies_of

    evaluation = facts is not None and facts.training.evaluation_pass(use)
    effects.evaluation = evaluation and (effects.evaluation or not effects.iterations)
    effects.draws = facts is not None and one_batch_draw(facts, use) and (effects.draws or not effects.iterations)
    effects.iterations = min(2, effects.iterations + 1)
    effects.per_epoch |= repeated
    copies = batch_cuda_copies(facts, use) if facts is not None else []
    if copies:
        effects.cuda_copy = effects.cuda_copy.join(copies_of(copies))
    elif use.copies:
        effects.cuda_copy = effects.cuda_copy.join(use.copies)
    elif facts is not None and facts.project is not None and facts.project.summarizing:
        effects.copy_devices += [p for p in batch_device_parameters(facts, use) if p not in effects.copy_devices]
    if not repeated and facts is not None and facts.project is not None and facts.project.summarizing:
        from dllint.facts.inherited_loops import pending_bases  # a base's loop, read where the project answers

        effects.inherited += [b for b in pending_bases(facts, use.node) if b not in effects.inherited]
    if repeated and facts is not None:
        effects.dataset_changes += [c for c in _dataset_changes(use) if c not in effects.dataset_changes]


def one_batch_draw(facts: FileFacts, use: Use) -> bool:
    """``next(iter(loader))``: one batch per pass (a sample for logging), here or in every pass
    another file makes (a ``peek(loader)`` helper of another module)."""
    call = use.node
    if use.draws:
        return True
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "iter"):
        return False
    parent = facts.scopes.parents.get(call)
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next"


def _dataset_changes(use: Use) -> list[str]:
    """What the loops repeating a ``for ... in NAME`` change on ``NAME.dataset`` (see
    :attr:`Effects.dataset_changes`): ``loader.dataset.mapping = ...``, ``loader.dataset.shuffle_mapping()``."""
    iterated = getattr(use.node, "iter", None)
    loops = [loop for loop in use.loops if not isinstance(loop, RemoteLoop)]
    if iterated is None or not loops:
        return []
    names = _iterated_names(iterated, loops)
    changes: list[str] = []
    for loop in loops:
        for node in ast.walk(loop):
            change = next((c for c in (_dataset_change(node, name) for name in names) if c is not None), None)
            if change is not None and change not in changes:
                changes.append(change)
    return changes


def _iterated_names(iterated: ast.expr, loops: list[ast.AST]) -> set[str]:
    """The names a ``for`` draws from: those in its iterable (``tqdm(trainloader)``), and, for
    a name the loops bind to a wrapper (``loader = tqdm.tqdm(trainloader)``), those it wraps."""
    names = {n.id for n in ast.walk(iterated) if isinstance(n, ast.Name)}
    if isinstance(iterated, ast.Name):
        for loop in loops:
            for node in ast.walk(loop):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == iterated.id for t in node.targets):
                    names |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return names


def _dataset_change(node: ast.AST, name: str) -> str | None:
    """``NAME.dataset.X`` stored (also ``NAME.dataset.X[i] = ...``): "X"; ``NAME.dataset.m(...)``: "m()"."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_dataset_of(node.func.value, name):
        return f"{node.func.attr}()"
    target = node
    while isinstance(target, ast.Subscript) and isinstance(target.ctx, ast.Store):
        target = target.value
    stored = isinstance(target, ast.Attribute) and (isinstance(target.ctx, ast.Store) or target is not node)
    if stored and isinstance(target, ast.Attribute) and _is_dataset_of(target.value, name):
        return target.attr
    return None


def _is_dataset_of(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "dataset" and isinstance(expr.value, ast.Name) and expr.value.id == name


def _escaped(effects: Effects, how: How) -> None:
    """What an escape of the value says about it."""
    if how is How.RETURN:
        effects.returns = True
    elif how is How.UNCLAIMED:
        effects.stores = True
    elif how is How.SET_EPOCH:
        effects.set_epoch = True
    else:
        effects.unknown = True


def element_effects(facts: FileFacts, call: ast.Call, scope: Scope, built: set[int]) -> dict[str, Effects]:
    """What the file does with each element of a call's result that it unpacks
    (``a, b = f()``: by position) or loops over (``for x in f()``: ``"*"``); only decidable
    ones are kept."""
    parent = facts.scopes.parents.get(call)
    if isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            indices: list[int | str | DictKey] = list(range(len(target.elts)))
        elif isinstance(target, ast.Name) and used_as_dict(facts, loads := facts.usage.loads_in(target.id, scope)):
            # data = get_data(...): a dict read under constant keys, maybe handed on whole
            return dict_entry_effects(facts, loads, lambda index, rest: facts.usage.result_entry_uses(call, index, scope, rest), built)
        else:  # info = build(...): the fields read as info.X (a record the callee returns)
            indices = [*sorted(_fields_read(facts, target.id, scope), key=str)[:MAX_FIELDS]] if isinstance(target, ast.Name) else []
    elif isinstance(parent, (ast.For, ast.AsyncFor, ast.Call)):
        indices = ["*"] if facts.usage.element_loop_target(call) is not None else []
    else:
        indices = []
    elements: dict[str, Effects] = {}
    for index in indices:
        uses = facts.usage.element_uses(call, index, scope)
        found = effects_of(uses, built, facts) if uses is not None else None
        if found is not None and (isinstance(index, int) or not found.empty):  # a field nothing uses: not worth keeping
            elements[str(index)] = found
    return elements


def _fields_read(facts: FileFacts, name: str, scope: Scope) -> set[int | str | DictKey]:
    """Attributes read off loads of ``name`` in ``scope`` (``info.dataloader``), and
    constant keys or positions it is subscripted with (``loaders["train"]``,
    ``loaders.get("train")``, ``loaders[1]`` of a returned list)."""
    parents = facts.scopes.parents
    found: set[int | str | DictKey] = set()
    for load in facts.usage.loads_in(name, scope):
        found.update(_part_read(parents, parents.get(load)))
    return found


def _part_read(parents: Mapping[ast.AST, ast.AST], parent: ast.AST | None) -> list[int | str | DictKey]:
    """What one read (``parent`` of a load) takes out of the value: the constant key or
    non-negative position it is subscripted with, or the attribute (and the key of
    ``.get("k")``); nothing for any other read."""
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load) and isinstance(parent.slice, ast.Constant):
        key = parent.slice.value
        if isinstance(key, str):
            return [DictKey(key)]
        return [key] if type(key) is int and key >= 0 else []
    if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
        return [*_key_got(parents, parent), parent.attr]
    return []


def _key_got(parents: Mapping[ast.AST, ast.AST], attribute: ast.Attribute) -> list[DictKey]:
    """The constant key of ``value.get("k")`` when ``attribute`` is that ``.get``."""
    call = parents.get(attribute)
    if attribute.attr == "get" and isinstance(call, ast.Call) and call.func is attribute and call.args:
        key = call.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return [DictKey(key.value)]
    return []


def used_as_dict(facts: FileFacts, loads: list[ast.Name]) -> bool:
    """Some load is subscripted with a constant string: the value is used as a dict."""
    parents = facts.scopes.parents
    return any(
        isinstance(parent := parents.get(load), ast.Subscript)
        and isinstance(parent.slice, ast.Constant)
        and isinstance(parent.slice.value, str)
        for load in loads
    )


def dict_entry_effects(
    facts: FileFacts, loads: list[ast.Name], uses_of: Callable[[Element, Path], list[Use] | None], built: set[int] | None = None
) -> dict[str, Effects]:
    """What happens to a dict's entries (see FunctionSummary.entries); {} when undecidable."""
    any_entry = AnyEntry()
    generic = uses_of(any_entry, ())
    if generic is None:
        return {}
    if len(any_entry.met) > MAX_FIELDS:
        return {}  # keys left out would read as untouched
    built = built or set()
    found = {"?": effects_of(generic, built, facts)}
    for key in sorted(any_entry.met)[:MAX_FIELDS]:
        entry = DictKey(key)
        paths: list[Path] = [(entry,)]
        paths += [(entry, field) for field in sorted(_fields_under(facts, loads, key))[:MAX_FIELDS]]
        for path in paths:
            uses = uses_of(path[0], path[1:])
            found[path_key(path)] = effects_of(uses, built, facts) if uses is not None else Effects(stores=True)
    return found


def _fields_under(facts: FileFacts, loads: list[ast.Name], key: str) -> set[str]:
    """``name["key"].field`` read directly off these loads."""
    parents = facts.scopes.parents
    fields = set()
    for load in loads:
        subscript = parents.get(load)
        if not (isinstance(subscript, ast.Subscript) and isinstance(subscript.slice, ast.Constant) and subscript.slice.value == key):
            continue
        attribute = parents.get(subscript)
        if isinstance(attribute, ast.Attribute) and isinstance(attribute.ctx, ast.Load):
            call = parents.get(attribute)
            if not (isinstance(call, ast.Call) and call.func is attribute):
                fields.add(attribute.attr)
    return fields
