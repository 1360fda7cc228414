"""Which calls copy a tensor from the host to CUDA (DL206): ``.cuda()``, ``.to(d)`` where ``d``
is a CUDA device (:mod:`dllint.facts.device_kinds`), ``.to(..., non_blocking=True)``; whether
each copy may be asynchronous; and which expressions are (part of) a value rather than a tensor
computed from it (:func:`rooted_in`: ``batch[0]``, ``batch["x"].view(...)``, ``Variable(batch)``;
``x.contiguous()`` is the batch's own memory).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.device_kinds import MAX_DEPTH, cuda_device_kind
from dllint.facts.flow.records import Copies

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope


class CudaCopy(NamedTuple):
    call: ast.Call  # the ``.cuda()``/``.to()`` call
    unconditional: bool  # always CUDA (``.cuda()``, ``"cuda"``): not "cuda if available else cpu"
    non_blocking: bool = False  # asks for an asynchronous copy (``non_blocking=True``, or not provably False)


def copies_of(copies: list[CudaCopy]) -> Copies:
    """What these copies of a batch say, for another function or file."""
    if not copies:
        return Copies()
    return Copies("cuda" if any(c.unconditional for c in copies) else "maybe", any(c.non_blocking for c in copies))


def cuda_copy(facts: FileFacts, call: ast.Call, names: set[str], scope: Scope) -> CudaCopy | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and rooted_in(func.value, names)):
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


def is_moved(facts: FileFacts, scope: Scope, value: ast.AST, candidates: set[str]) -> bool:
    """``x = x.cuda()``, also wrapped (``x = Variable(x.cuda())``) or followed by methods
    (``x = x.to(device).float()``: the batch's data was copied first): still the batch's data."""
    for _ in range(3):
        if not isinstance(value, ast.Call):
            return False
        if cuda_copy(facts, value, candidates, scope) is not None or _copied_then(facts, value, candidates, scope):
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
        if cuda_copy(facts, value, candidates, scope) is not None:
            return True
    return False


# Methods that hand back the same memory (a view) or its parts: still the pinned batch
# (``as_subclass``: "the same data pointer", torch docs; MONAI's MetaTensor cast to a Tensor).
VIEW_METHODS = frozenset(
    {"items", "values", "get", "contiguous", "view", "view_as", "permute", "transpose", "squeeze", "unsqueeze", "narrow",
     "select", "unbind", "split", "chunk", "t", "expand", "detach", "as_strided", "unflatten", "as_subclass"}
)


def rooted_in(expr: ast.AST, names: set[str]) -> bool:
    """``expr`` is (part of) one of ``names``: ``batch``, ``batch[0]``, ``batch["x"].view(...)``,
    ``batch.items()``, ``Variable(batch)``; not a tensor computed from it (``f(batch)``,
    ``batch["x"].float()``, ``x[:, idx]``: :func:`_may_gather`)."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Subscript) and _may_gather(expr.slice):
            return False
        if isinstance(expr, (ast.Subscript, ast.Attribute, ast.Starred)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and _is_variable(expr):
            expr = expr.args[0]
        else:
            return False
    return False


def _may_gather(index: ast.expr) -> bool:
    """A tensor index that may copy rather than view (the tenth audit's K16): a list written out
    (``x[[0, 2]]``), or a tuple of indices beside a slice, so a tensor's and not a dict's key,
    with one that is neither a number, a slice, ``None`` nor ``...`` (``x[:, idx]``: a list or a
    mask index allocates a new, pageable tensor; an int one would be a view, but unknown is
    silent). A lone name (``batch[key]``) is how dict batches are read: still a field."""
    if isinstance(index, ast.List):
        return True
    if not isinstance(index, ast.Tuple) or not any(isinstance(e, ast.Slice) for e in index.elts):
        return False
    return not all(_basic_index(e) for e in index.elts)


def _basic_index(index: ast.expr) -> bool:
    """``1``, ``-1``, ``None``, ``...``, or a slice: an index that views."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Slice) or isinstance(index, ast.Constant) and (index.value is None or index.value is ... or type(index.value) is int)


def _is_variable(call: ast.Call) -> bool:
    """``Variable(t)`` (``torch.autograd.Variable``): since torch 0.4 it returns ``t`` itself."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name == "Variable" and len(call.args) >= 1 and not isinstance(call.args[0], ast.Starred)
