"""Where a loader's batches go: host-to-CUDA copies of the values a loop takes from it (DL206).

A batch is the target of ``for batch in loader`` (through ``enumerate``/``tqdm``), or
``batch = next(iter(loader))``, and every name derived from it in the same body
(``x, y = batch``, ``images = batch["image"]``, ``for k, v in batch.items()``). A copy
to CUDA is ``.cuda()``, ``.to(..., non_blocking=True)``, or ``.to(d)`` where ``d``
resolves to a CUDA device (``"cuda"``, ``f"cuda:{rank}"``, ``torch.device("cuda", ...)``,
``torch.device("cuda" if torch.cuda.is_available() else "cpu")``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.values import follow
from dllint.facts.walk import walk_body

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope
    from dllint.facts.flow.model import Use

TORCH_DEVICE = "torch.device"
CUDA_DEVICE_CALLS = frozenset({"torch.cuda.current_device"})
MAX_DEPTH = 8
MAX_PASSES = 4


class CudaCopy(NamedTuple):
    call: ast.Call  # the ``.cuda()``/``.to()`` call
    unconditional: bool  # always CUDA (``.cuda()``, ``"cuda"``): not "cuda if available else cpu"


def batch_cuda_copies(facts: FileFacts, use: Use) -> list[CudaCopy]:
    """Copies to CUDA of the batches one iteration of a loader yields, in the same function:
    of the batch itself (the loop target, its items and fields, views of them), not of
    tensors computed from it, which pinning would not affect."""
    seeded = _batch_region(facts, use)
    if seeded is None:
        return []
    names, region = seeded
    nodes = [n for part in region for n in (part, *walk_body(part))]
    assigned: dict[str, list[ast.AST]] = {}  # every value each name is bound to in the region
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _target_names(target):
                    assigned.setdefault(name, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(node.value if node.value is not None else node)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            for name in _target_names(node.target):
                assigned.setdefault(name, []).append(node.iter)
    scope = facts.scopes.scope_of(use.node)

    def moved(value: ast.AST, candidates: set[str]) -> bool:  # ``x = x.cuda()``: still the batch's data
        return isinstance(value, ast.Call) and _cuda_copy(facts, value, candidates, scope) is not None

    for _ in range(MAX_PASSES):  # propagate through the body until no new derived names
        before = len(names)
        for node in nodes:
            _derive(node, names, assigned, moved)
        if len(names) == before:
            break
    copies = []
    for node in nodes:
        if isinstance(node, ast.Call):
            copy = _cuda_copy(facts, node, names, scope)
            if copy is not None:
                copies.append(copy)
    return copies


def _batch_region(facts: FileFacts, use: Use) -> tuple[set[str], list[ast.AST]] | None:
    node = use.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _target_names(node.target), list(node.body)
    if isinstance(node, ast.Call):  # iter(loader): ``batch = next(iter(loader))``
        parents = facts.scopes.parents
        outer = parents.get(node)
        if isinstance(outer, ast.Call) and isinstance(outer.func, ast.Name) and outer.func.id == "next":
            assign = parents.get(outer)
            if isinstance(assign, ast.Assign) and assign.value is outer:
                function = facts.scopes.scope_of(node).node
                body = getattr(function, "body", None)
                if isinstance(body, list):
                    names = set().union(*(_target_names(t) for t in assign.targets))
                    return names, list(body)
    return None


def _target_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


# Methods that hand back the same memory (a view) or its parts: still the pinned batch.
VIEW_METHODS = frozenset(
    {"items", "values", "get", "view", "view_as", "permute", "transpose", "squeeze", "unsqueeze", "narrow",
     "select", "unbind", "split", "chunk", "t", "expand", "detach", "as_strided", "unflatten"}
)


def _rooted_in(expr: ast.AST, names: set[str]) -> bool:
    """``expr`` is (part of) one of ``names``: ``batch``, ``batch[0]``, ``batch["x"].view(...)``,
    ``batch.items()``; not a tensor computed from it (``f(batch)``, ``batch["x"].float()``)."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, (ast.Subscript, ast.Attribute, ast.Starred)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
            expr = expr.func.value
        else:
            return False
    return False


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
    if func.attr == "cuda":
        return CudaCopy(call, True)
    if func.attr != "to":
        return None
    for keyword in call.keywords:
        if keyword.arg == "non_blocking" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
            return CudaCopy(call, False)
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if device is None:
        return None
    kind = cuda_device_kind(facts, device, scope)
    return CudaCopy(call, kind == "cuda") if kind else None


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
    if isinstance(expr, ast.IfExp):
        kinds = {cuda_device_kind(facts, e, scope, depth + 1) for e in (expr.body, expr.orelse)}
        return "maybe" if kinds & {"cuda", "maybe"} else None
    if isinstance(expr, ast.Call):
        name = facts.qualname(expr.func)
        if name in CUDA_DEVICE_CALLS:
            return "cuda"
        if name == TORCH_DEVICE:
            arg = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "type"), None)
            return cuda_device_kind(facts, arg, scope, depth + 1) if arg is not None else None
    return None


def _is_cuda_string(text: str) -> bool:
    return text == "cuda" or text.startswith("cuda:")


def torch_alias(facts: FileFacts) -> str | None:
    """The local name ``torch`` is imported under, if any."""
    return next((local for local, full in facts.imports.items() if full == "torch"), None)
