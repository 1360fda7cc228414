from __future__ import annotations

import ast
from typing import Iterator

from dllint.facts.imports import dotted_name
from dllint.findings import Finding, Fix
from dllint.rules import Rule

POOL_CLASSES = frozenset(
    {
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "torch.multiprocessing.Pool",
        "concurrent.futures.ProcessPoolExecutor",
        "concurrent.futures.process.ProcessPoolExecutor",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
    }
)
PROCESS_CLASSES = frozenset({"multiprocessing.Process", "multiprocessing.context.Process", "torch.multiprocessing.Process"})


class ProcessesInsideWorker(Rule):
    """
    ## What it does
    Checks for code that runs in a multi-worker loader's workers (the dataset's
    `__getitem__`/`__getitems__`/`__iter__`, `collate_fn`, `worker_init_fn`, and what they
    call in the same file) that starts processes of its own: a multi-worker `DataLoader`, a
    `multiprocessing.Pool`, a `ProcessPoolExecutor`, or `Process(...).start()`.

    ## Why is this bad?
    Loader workers are daemonic processes, and a daemonic process may not have children:
    `AssertionError: daemonic processes are not allowed to have children`, raised in the
    worker on the first batch that reaches the call.

    ## Example
    ```python
    class Shards(IterableDataset):
        def __iter__(self):
            for shard in self.shards:
                yield from DataLoader(ShardDataset(shard), num_workers=4)

    loader = DataLoader(Shards(paths), num_workers=2)
    ```

    ## Use instead
    ```python
    class Shards(IterableDataset):
        def __iter__(self):
            for shard in self.shards:
                yield from DataLoader(ShardDataset(shard), num_workers=0)
    ```

    ## Fix safety
    Safe for an inner `DataLoader`: its `num_workers` is set to 0, so it loads in the worker
    that runs it (the outer loader's workers already provide the parallelism). No fix for a
    pool or process: the work has to be restructured.

    ## References
    - [multiprocessing.Process.daemon](https://docs.python.org/3/library/multiprocessing.html#multiprocessing.Process.daemon)
    - [Multi-process data loading](https://pytorch.org/docs/stable/data.html#multi-process-data-loading)
    """

    code = "DL108"
    name = "processes-inside-worker"
    summary = "processes started inside a loader worker: workers are daemonic and cannot have children"
    fix_safety = "sometimes"
    valid = (
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield from DataLoader(self.inner, num_workers=0)\n"
        "DataLoader(S(), num_workers=2)\n",
        "from multiprocessing import Pool\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        with Pool(4) as p:\n            return p.map(f, i)\n"
        "DataLoader(Ds(), num_workers=0)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield from DataLoader(self.inner, num_workers=4)\n"
        "DataLoader(S(), num_workers=2)\n",
        "from multiprocessing import Pool\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        with Pool(4) as p:\n            return p.map(f, i)\n"
        "DataLoader(Ds(), num_workers=2)\n",
    )

    def check(self, facts) -> Iterator[Finding]:
        worker_code = facts.worker_code
        if not worker_code.functions:
            return
        inner_loaders = {loader.node: loader for loader in facts.loader_calls}
        process_names = _process_names(facts)
        for call in facts.calls:
            what = fix = None
            inner = inner_loaders.get(call)
            if inner is not None:
                if not inner.is_multi_worker:
                    continue
                what = "a multi-worker DataLoader"
                fix = _loader_fix(inner)
            else:
                what = _process_start(facts, call, process_names)
                if what is None:
                    continue
            where = worker_code.worker_function_of(call)
            if where is None:
                continue
            line = where.loaders[0].node.lineno
            message = (
                f"{what} is started in {where.entry}, which runs in the workers of the loader on line {line}: "
                "workers are daemonic and cannot have child processes"
            )
            yield self.report(facts, call, message, fix)

    def apply_fix(self, ctx, finding: Finding) -> None:
        from dllint.fixes.arguments import set_reported_argument

        set_reported_argument(ctx, finding)


def _loader_fix(loader) -> Fix | None:
    arg = loader.argument("num_workers")
    if loader.unknown_splat or (arg is not None and arg.from_splat):
        return None
    return Fix("safe", "Set the inner loader's `num_workers=0`", (("set", ("num_workers", "0")),))


def _process_names(facts) -> set[str]:
    """Names bound to a ``Process(...)`` so that ``name.start()`` can be recognised."""
    names: set[str] = set()
    for call in facts.calls:
        if facts.qualname(call.func) in PROCESS_CLASSES or _is_context_method(facts, call, "Process"):
            parent = facts.scopes.parents.get(call)
            if isinstance(parent, ast.Assign):
                names.update(t.id for t in parent.targets if isinstance(t, ast.Name))
    return names


def _process_start(facts, call: ast.Call, process_names: set[str]) -> str | None:
    name = facts.qualname(call.func)
    if name in POOL_CLASSES or _is_context_method(facts, call, "Pool"):
        return f"`{dotted_name(call.func)}(...)`"
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "start":
        target = func.value
        if isinstance(target, ast.Call) and (
            facts.qualname(target.func) in PROCESS_CLASSES or _is_context_method(facts, target, "Process")
        ):
            return "`Process(...).start()`"
        if isinstance(target, ast.Name) and target.id in process_names:
            return "`Process(...).start()`"
    return None


def _is_context_method(facts, call: ast.Call, method: str) -> bool:
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
    return isinstance(base, ast.Call) and facts.qualname(base.func) in (
        "multiprocessing.get_context",
        "torch.multiprocessing.get_context",
    )
