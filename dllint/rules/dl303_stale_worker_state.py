from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule, quote

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class StaleWorkerState(Rule):
    """
    ## What it does
    Checks for a loader with `persistent_workers=True` whose dataset the main process changes
    inside the loop that iterates the loader again: `loader.dataset.x = ...`,
    `loader.dataset.method(...)` for a same-file method that assigns `self.*`, or the same
    through the dataset's own name. `loader.sampler.set_epoch(...)` is fine: the sampler runs
    in the main process. Reported at the `persistent_workers` argument.

    ## Why is this bad?
    Each worker gets its own copy of the dataset when it starts. Persistent workers start
    once and keep that copy for the loader's lifetime, so a change made between epochs
    (a curriculum stage, `dataset.set_epoch(epoch)`, a new augmentation strength) is made
    only in the main process: the workers go on producing batches from the old state,
    silently.

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=4, persistent_workers=True)
    for epoch in range(100):
        dataset.set_epoch(epoch)
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, num_workers=4)  # workers restart, and copy the dataset, each epoch
    ```
    or keep the changing state in the sampler (it runs in the main process), or pass it to
    the workers explicitly (e.g. a shared `multiprocessing.Value`).

    ## Fix safety
    No automatic fix: either remedy changes performance or the code's structure.

    ## References
    - [torch.utils.data.DataLoader: persistent_workers](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    - `dllint --probe` reads back the value a persistent worker sees.
    """

    code = "DL303"
    name = "stale-worker-state"
    summary = "persistent workers keep their own copy of the dataset: changes made in the loop never reach them"
    fix_safety = "none"
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    loader.sampler.set_epoch(epoch)\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\n"
        "for epoch in range(10):\n    loader.dataset.stage = epoch\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    print(loader.dataset.stage)\n    for b in loader:\n        pass\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    loader.dataset.stage = epoch\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader, Dataset\n"
        "class Curriculum(Dataset):\n    def set_level(self, level):\n        self.level = level\n"
        "def main():\n    ds = Curriculum()\n    loader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
        "    for epoch in range(10):\n        ds.set_level(epoch)\n        for b in loader:\n            pass\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if not loader.is_multi_worker or loader.value("persistent_workers").truthy() is not True:
                continue
            mutations = facts.loops.dataset_mutations(loader)
            if not mutations:
                continue
            first = mutations[0]
            arg = loader.argument("persistent_workers")
            message = (
                f"persistent workers keep their own copy of the dataset: `{quote(facts, first)}` (line {getattr(first, 'lineno', 0)}) "
                "changes it in the main process only; drop persistent_workers or move the state out of the dataset"
            )
            yield self.report(facts, arg.node if arg is not None else loader.node, message)
