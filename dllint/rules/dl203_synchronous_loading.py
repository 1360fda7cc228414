from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.flow.effects import one_batch_draw
from dllint.facts.imports import dotted_name
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

# In-memory tensors: indexing costs less than handing batches over from a worker.
IN_MEMORY_DATASETS = frozenset({"TensorDataset", "torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})


class SynchronousLoading(Rule):
    """
    ## What it does
    Checks for a loader with `num_workers=0` (or no `num_workers`, whose default is 0) that is
    iterated in an epoch loop. Off by default: enable it with `--select DL203` or
    `extend-select = ["DL203"]`.

    ## Why is this bad?
    With no workers, the training loop itself reads, decodes and collates every batch, and
    the accelerator waits while it does. For datasets that load from disk or augment
    images, a few workers usually multiply throughput. This is TorchFix's TOR401, narrowed
    to loaders that are iterated repeatedly in the same file. In-memory `TensorDataset`s
    are left alone: workers only add inter-process copies there; so are loaders that only
    give one batch per `next(iter(loader))` (a sample for logging, here or in a helper of
    another module), where workers would start again for every draw (DL205).

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64)
    for epoch in range(100):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True)
    ```

    ## Fix safety
    No automatic fix: the right count depends on the machine and the dataset.
    `dllint --probe` sweeps `num_workers` and recommends the smallest count within 5% of
    the best throughput.

    ## References
    - [Single- and multi-process data loading](https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading)
    - [TorchFix TOR401](https://github.com/pytorch-labs/torchfix#tor401-use-of-dataloader-without-num_workers)
    """

    code = "DL203"
    name = "synchronous-loading"
    summary = "batches load in the training process (num_workers=0) every epoch: set num_workers > 0"
    fix_safety = "none"
    default_enabled = False
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def evaluate(ds):\n    for b in DataLoader(ds):\n        pass\n",
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(x, y))\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, **opts)\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=8)\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def train(loader):\n    for b in loader:\n        pass\n"
        "def main(ds):\n    loader = DataLoader(ds, num_workers=0)\n    for epoch in range(3):\n        train(loader)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if not loader.num_workers.is_zero_or_absent():
                continue
            if loader.keywords_only and loader.argument("num_workers") is None:
                continue  # a DataLoader subclass may choose its own workers
            if self._in_memory(facts, loader):
                continue
            if not any(facts.loops.epoch_loops(use) and not one_batch_draw(facts, use) for use in facts.loops.iterations(loader)):
                continue
            arg = loader.argument("num_workers")
            node = arg.node if arg is not None and not arg.from_splat else loader.node
            yield self.report(facts, node)

    @staticmethod
    def _in_memory(facts, loader) -> bool:
        dataset = loader.argument("dataset")
        if dataset is None:
            return False
        expr = dataset.value
        if isinstance(expr, ast.Name):
            found = facts.scopes.single_value(expr.id, dataset.scope)
            if found is not None and found[1].value is not None:
                expr = found[1].value
        if not isinstance(expr, ast.Call):
            return False
        name = facts.qualname(expr.func) or dotted_name(expr.func)
        return name in IN_MEMORY_DATASETS
