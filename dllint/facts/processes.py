"""Where a file starts processes: pools, ``spawn``, ``Process(...).start()``, executors."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.imports import dotted_name

if TYPE_CHECKING:
    from dllint.facts import FileFacts

POOLS = frozenset(
    {
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "torch.multiprocessing.Pool",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
    }
)
EXECUTORS = frozenset({"concurrent.futures.ProcessPoolExecutor", "concurrent.futures.process.ProcessPoolExecutor"})
PROCESS_CLASSES = frozenset({"multiprocessing.Process", "torch.multiprocessing.Process", "multiprocessing.context.Process"})
GET_CONTEXT = frozenset({"multiprocessing.get_context", "torch.multiprocessing.get_context"})


class ProcessStart(NamedTuple):
    call: ast.Call  # the call that starts processes (for a Process: its ``.start()``)
    description: str  # how the message names it, e.g. "`mp.Pool(...)`"
    is_executor: bool = False


def find_process_starts(facts: FileFacts) -> list[ProcessStart]:
    # Every name above resolves through code or an import that spells `multiprocessing` (torch's
    # too) or `ProcessPoolExecutor`: without either, no call needs resolving (most files).
    if "multiprocessing" not in facts.source and "ProcessPoolExecutor" not in facts.source:
        return []
    starts: list[ProcessStart] = []
    process_names: set[str] = set()
    for call in facts.calls:
        name = facts.qualname(call.func)
        if name in POOLS or name in EXECUTORS or _is_context_method(facts, call, "Pool"):
            starts.append(ProcessStart(call, f"`{dotted_name(call.func)}(...)`", name in EXECUTORS))
        elif name in PROCESS_CLASSES or _is_context_method(facts, call, "Process"):
            parent = facts.scopes.parents.get(call)
            if isinstance(parent, ast.Assign):
                process_names.update(t.id for t in parent.targets if isinstance(t, ast.Name))
    for call in facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "start"):
            continue
        target = func.value
        if isinstance(target, ast.Name) and target.id in process_names or (
            isinstance(target, ast.Call)
            and (facts.qualname(target.func) in PROCESS_CLASSES or _is_context_method(facts, target, "Process"))
        ):
            starts.append(ProcessStart(call, "`Process(...).start()`"))
    return starts


def _is_context_method(facts: FileFacts, call: ast.Call, method: str) -> bool:
    """``ctx.Pool(...)``/``ctx.Process(...)`` where ``ctx = multiprocessing.get_context(...)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == method):
        return False
    base = func.value
    if isinstance(base, ast.Name):
        found = facts.scopes.single_value(base.id, facts.scopes.scope_of(call))
        if found is None or found[1].value is None:
            return False
        base = found[1].value
    return isinstance(base, ast.Call) and facts.qualname(base.func) in GET_CONTEXT
