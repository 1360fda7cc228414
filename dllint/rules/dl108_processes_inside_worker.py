from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding, Fix, SetArgument
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


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

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        worker_code = facts.worker_code
        if not worker_code.functions:
            return
        inner_loaders = facts.loader_at
        starts = {start.call: start.description for start in facts.process_starts}
        for call in facts.calls:
            what = fix = None
            inner = inner_loaders.get(call)
            if inner is not None:
                if not inner.is_multi_worker:
                    continue
                what = "a multi-worker DataLoader"
                fix = _loader_fix(inner)
            else:
                what = starts.get(call)
                if what is None:
                    continue
            where = worker_code.worker_function_of(call)
            if where is None:
                continue
            line = where.loaders[0].node.lineno
            message = (
                f"{what} is started in {where.entry}, which runs in the workers of the loader on line {line}: "
                "workers are daemonic and cannot have child processes"
            ) + where.loaders[0].when_workers()
            yield self.report(facts, call, message, fix)


def _loader_fix(loader) -> Fix | None:
    arg = loader.argument("num_workers")
    if loader.unknown_splat or (arg is not None and arg.from_splat):
        return None
    return Fix("safe", "Set the inner loader's `num_workers=0`", SetArgument("num_workers", "0"))
