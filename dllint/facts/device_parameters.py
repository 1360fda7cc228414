"""The device a loader's batches are copied to, where a parameter names it (DL206).

A loader handed to another module's function that copies its batches to a device parameter
(``train(net, train_iter, test_iter, device)``) is copied to CUDA where the call passes a CUDA
device (:func:`batch_device_parameters`, ``Effects.copy_devices``); also where it copies them to
the device of a model handed in (``device = list(net.parameters())[0].device``) and the function
that calls it moved that model to a device parameter first (``net = net.to(device)``).
"""

from __future__ import annotations

import ast
from functools import partial
from typing import TYPE_CHECKING

from dllint.facts.batches import batch_region, derived_names, is_next_call, region_of, stacked_names
from dllint.facts.order import dominates
from dllint.facts.device_kinds import rebinds_itself
from dllint.facts.host_copies import rooted_in
from dllint.facts.values import ABSENT, argument_for, defaults_of, parameter_default

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Use
    from dllint.facts.scopes import Scope


def batch_device_parameters(facts: FileFacts, use: Use) -> list[str]:
    """The parameters of the function iterating a loader that name the device its batches are
    copied to (``X.to(device)`` where ``device`` is handed in and not rebound, or is the device
    of a model the calling function moved there, :func:`_through_model`): for a summary,
    whose callers in other files each resolve what they pass (:func:`~dllint.facts.device_kinds.passed_devices`)."""
    seeded = batch_region(facts, use)
    if seeded is None or not isinstance(seeded[2].node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    scope = seeded[2]
    region = region_of(facts, seeded[1])
    # ``X = X.to(device)`` rebinds the batch to what reads as a computed tensor (its device
    # unknown here): the batch's own names still count, but for those rebound to new tensors
    # before any copy (``targets = {"boxes": torch.stack(...)}``)
    names = derived_names(facts, seeded[0], region, scope, partial(_handed_copy, facts, scope))
    names |= seeded[0] - stacked_names(facts, seeded[0], region, scope)
    found: list[str] = []
    for node in region.calls:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "to" and rooted_in(func.value, names)):
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
    elif not is_next_call(inner):
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
    if len(moves) != 1 or not isinstance(moves[0].node, ast.Assign) or not dominates(facts, moves[0].node, call, loops=True):
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
    return sum(b.kind == "param" for b in bindings) == 1 and all(b.kind == "param" or rebinds_itself(b, name) for b in bindings)


def _handed_copy(facts: FileFacts, scope: Scope, value: ast.AST, candidates: set[str]) -> bool:
    """``inputs.to(device)`` with ``device`` handed in: for a summary, whose callers decide
    whether it is CUDA (``inputs, targets = batch`` then ``inputs = inputs.to(device)``)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to"):
        return False
    device = next((k.value for k in value.keywords if k.arg == "device"), None) if not value.args else value.args[0]
    return rooted_in(value.func.value, candidates) and isinstance(device, ast.Name) and _handed_in(facts, device.id, scope)
