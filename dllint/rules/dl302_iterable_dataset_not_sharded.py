from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.worker_code import BUILTIN_METHOD_NAMES, WORKER_INFO, consults_worker_info, is_abstract
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class IterableDatasetNotSharded(Rule):
    """
    ## What it does
    Checks for an `IterableDataset` subclass whose `__iter__` never consults
    `get_worker_info()` (or a `worker_info`, `split_by_worker`), when a loader of the same file
    uses it with `num_workers` that is not provably 0 or 1. Reported at `def __iter__`.
    Followed from `__iter__`: the methods of the class and the same-file functions it calls,
    the functions of other project modules it calls, and `obj.m()` on another object (or a
    `self.m()` no same-file class defines): the `m` methods of this file's other classes and of
    the project's other files, transitively through their calls (bounded). Any of them that
    consults the worker info counts: the object's class is not known, so one that may run is
    enough. A method that only raises `NotImplementedError` is a placeholder: its overrides run.

    Undecidable, so silent: `__iter__` hands its whole stream to a held object's method
    (`return self.task.samples()`, `yield from self.source.rows()`) that no class of the
    project defines (or that more files define than can be looked at): the code that yields
    is not in view. A built-in type's method (`self.rows.items()`) is taken to be the
    built-in's. A class that no loader of the file uses is left to the probe, and so is an
    `__iter__` that iterates a wrapped dataset (`self.dataset`, `super().__iter__()`): the
    wrapped one may do the split.

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
            if worker_code.reaches([iter_method], cls, WORKER_INFO):
                continue  # a method of another class, or a function of another project module
            if _hands_stream_to_unseen_code(facts, cls, iter_method):
                continue
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


def _hands_stream_to_unseen_code(facts: FileFacts, cls, iter_method: ast.AST) -> bool:
    """``__iter__`` returns, or yields from, ``self.X.m(...)`` (also inside ``iter()``) where
    no class of the project (placeholders aside) defines ``m``, or too many files do to tell:
    the stream comes from code not in view. A built-in type's method name is the built-in's."""
    for stream in _streams(iter_method):
        if isinstance(stream, ast.Call) and isinstance(stream.func, ast.Name) and stream.func.id == "iter" and stream.args:
            stream = stream.args[0]
        if not (isinstance(stream, ast.Call) and isinstance(stream.func, ast.Attribute) and _held(stream.func.value)):
            continue
        name = stream.func.attr
        here = [
            method
            for other in facts.classes.values()
            if other is not cls and (method := other.method(name)) is not None and not is_abstract(method)
        ]
        if here:
            continue
        if name in BUILTIN_METHOD_NAMES:
            continue
        elsewhere = facts.project.methods_named(name) if facts.project is not None else None
        if not elsewhere:
            return True
    return False


def _streams(iter_method: ast.AST):
    """What ``__iter__`` hands out: its ``return`` values, ``yield from`` sources and the
    iterables of its own ``for`` loops (not those of nested functions)."""
    for node in ast.walk(iter_method):
        if isinstance(node, ast.Return) and node.value is not None:
            yield node.value
        elif isinstance(node, ast.YieldFrom):
            yield node.value
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            yield node.iter


def _held(expr: ast.expr) -> bool:
    """``self.X`` (or ``self.X.Y``): an object the dataset holds."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
        if isinstance(expr, ast.Name) and expr.id == "self":
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
