from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.worker_code import consults_worker_info
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

# Names whose presence shows the stream is split between workers (torch's get_worker_info,
# a worker_info variable or attribute, webdataset's / torchdata's split_by_worker).


class IterableDatasetNotSharded(Rule):
    """
    ## What it does
    Checks for an `IterableDataset` subclass whose `__iter__` (with the methods of the class
    and the same-file functions it calls, the functions of other project modules it calls, and
    `obj.m()` where a class of the file defines an `m` that does) never consults
    `get_worker_info()` (or a `worker_info`, `split_by_worker`), when a loader of the same file uses it with
    `num_workers` that is not provably 0 or 1. Reported at `def __iter__`. A class that no
    loader of the file uses is left to the probe, and so is an `__iter__` that iterates a
    wrapped dataset (`self.dataset`, `super().__iter__()`): the wrapped one may do the split.

    ## Why is this bad?
    Each worker gets its own copy of the dataset and calls `__iter__` on it. Unless the
    iterator skips what the other workers yield, every worker yields the whole stream and
    each sample appears `num_workers` times per epoch: training silently repeats data, and
    evaluation metrics are computed over duplicates.

    ## Example
    ```python
    class Lines(IterableDataset):
        def __iter__(self):
            with open(self.path) as f:
                yield from f

    loader = DataLoader(Lines("data.txt"), num_workers=4)
    ```

    ## Use instead
    ```python
    class Lines(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            start, step = (info.id, info.num_workers) if info else (0, 1)
            with open(self.path) as f:
                yield from itertools.islice(f, start, None, step)
    ```

    ## Fix safety
    No fix: how to split the stream (by file, by line, by shard) depends on the data.

    ## References
    - [IterableDataset: splitting work across workers](https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset)
    - `dllint --probe` counts the samples one pass yields with 0 and with 2 workers.
    """

    code = "DL302"
    name = "iterable-dataset-not-sharded"
    summary = "IterableDataset.__iter__ ignores get_worker_info(): every worker yields the whole stream; split it by worker id"
    triggers = (b"IterableDataset",)
    valid = (
        "from torch.utils.data import DataLoader, IterableDataset, get_worker_info\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        info = get_worker_info()\n"
        "        yield from self.rows[info.id::info.num_workers]\n"
        "DataLoader(S(), num_workers=4)\n",
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield from self.rows\n"
        "DataLoader(S(), num_workers=1)\n",
        "from torch.utils.data import IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield from self.rows\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield from self.rows\n"
        "DataLoader(S(), num_workers=4)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for cls in facts.classes.values():
            if not cls.is_iterable_dataset:
                continue
            iter_method = cls.method("__iter__")
            if iter_method is None:
                continue
            worker_code = facts.worker_code
            users = [
                loader
                for other in facts.classes.values()
                if worker_code.find_method(other, "__iter__") is iter_method
                for loader in worker_code.loaders_using(other)
            ]
            multi = [loader for loader in users if not _at_most_one_worker(loader)]
            if not multi:
                continue  # no loader here, or only single-worker ones: nothing is duplicated
            reached = worker_code.reached_from([iter_method], cls)
            if any(consults_worker_info(function) or _delegates(function) for function in reached):
                continue
            if any(_calls_sharding_code(facts, cls, function) for function in reached):
                continue  # a method of another class, or a function of another project module
            workers = multi[0].num_workers
            count = f"num_workers={workers.value}" if workers.is_const else "several workers"
            message = (
                f"'{cls.name}.__iter__' never consults get_worker_info(): with {count} (loader on line "
                f"{multi[0].node.lineno}) every worker yields the whole stream; split it by worker id"
            )
            yield self.report(facts, iter_method, message)


def _at_most_one_worker(loader) -> bool:
    value = loader.num_workers
    return value.is_absent or (value.is_int() and value.value <= 1)


def _calls_sharding_code(facts: FileFacts, cls, function: ast.AST) -> bool:
    """``function`` calls code that consults the worker info outside the class's own methods:
    a function of another project module (``rng_for_worker()`` imported from ``.seeding``), or
    ``self.task.samples()`` where a class of this file defines a ``samples`` that does."""
    worker_code = facts.worker_code
    scopes = facts.scopes
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        summary = facts.project.function_summary(facts, func, scopes.scope_of(node)) if facts.project is not None else None
        if summary is not None and summary.worker_info:
            return True
        if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id == "self"):
            for other in facts.classes.values():
                method = other.method(func.attr)
                if other is not cls and method is not None and any(
                    consults_worker_info(f) for f in worker_code.reached_from([method], other)
                ):
                    return True
    return False


def _delegates(function: ast.AST) -> bool:
    """Iterates a wrapped dataset (``self.dataset``, ``super().__iter__()``), which shards itself."""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "__iter__":
            base = node.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                return True
        iterated = None
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            iterated = node.iter
        elif isinstance(node, ast.YieldFrom):
            iterated = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "iter" and node.args:
            iterated = node.args[0]
        if isinstance(iterated, ast.Attribute) and "dataset" in iterated.attr.lower():
            return True
    return False
