from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import Value
from dllint.findings import Finding, Fix, SetArgument
from dllint.rules import Rule
from dllint.rules.fix_values import workers_from_splat, workers_test

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class NonPersistentWorkers(Rule):
    """
    ## What it does
    Checks for a multi-worker loader without `persistent_workers=True` that is iterated more
    than once: in an epoch loop, several times, or handed elsewhere (returned, stored on
    `self`, passed to another module), where it counts as re-iterated.

    ## Why is this bad?
    Without persistent workers, every `for batch in loader` starts all worker processes
    afresh and, under `spawn`/`forkserver`, re-imports the main module and re-pickles the
    dataset in each of them. Measured here: about 0.1 s per epoch under `fork` and 4.5-5.8 s
    per epoch under `spawn`/`forkserver`, against 5-14 ms with persistent workers. GPUs sit
    idle for that stall at the start of every epoch.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8)
    for epoch in range(100):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8, persistent_workers=True)
    ```

    ## Fix safety
    Safe: adds `persistent_workers=True` where `num_workers` is a number written at the call,
    else `persistent_workers=<num_workers> > 0`, so that `--workers 0` on the command line
    keeps working. Unsafe where the call says `persistent_workers=False` explicitly: that
    may be deliberate. No fix is offered where the loop changes the dataset (DL303): persistent
    workers would keep a stale copy.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    - `dllint --probe train.py` measures the stall on your machine.
    """

    code = "DL201"
    name = "non-persistent-workers"
    summary = "workers restart every epoch: add persistent_workers=True"
    fix_safety = "safe"
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def evaluate(ds):\n    loader = DataLoader(ds, num_workers=4)\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds)\nfor epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, **opts)\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\n"
        "for epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def make_loader(ds):\n    return DataLoader(ds, num_workers=4)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        usage = None
        for loader in facts.loader_calls:
            if not loader.is_multi_worker or _negative(loader.num_workers):
                continue  # a negative count raises ValueError (DL005): no workers start
            persistent = loader.value("persistent_workers")
            if persistent.truthy() is not False:  # truthy, or unknown (a splat, a variable)
                continue
            usage = usage or facts.usage
            if usage.construction_loops(loader.node) and any(u.kind == "iterate" for u in usage.loader_uses(loader)):
                continue  # DL204 (loader built and iterated inside a loop) reports this one
            if usage.iteration_count(loader) < 2:
                continue
            yield self.report(facts, loader.node, fix=self._fix(facts, loader))

    def check_config(self, block) -> Iterator[Finding]:
        """An evidently-training block (``train_ds``, ``train_dataloader``) with workers and
        without ``persistent_workers: true``: the framework re-iterates it every epoch."""
        from dllint.configs.lint import config_finding, setting_fix

        if not block.is_training or block.endless or block.entry("num_workers") is None:
            return
        if not restarts_workers(block):
            return
        if block.entry("persistent_workers") is None and block.builder is not None and not block.torch_defaults:
            return  # the class the block builds (a DataModule, a loader factory) has its own default
        written_here = block.report_span("num_workers", "persistent_workers")
        if written_here is None:
            return  # both inherited: the file that writes them reports it
        span = block.block_span or written_here
        if span is not None:
            yield config_finding(self, block, span, fix=setting_fix(block, "persistent_workers", True))

    @staticmethod
    def _fix(facts, loader) -> Fix | None:
        if loader.argument("persistent_workers") is not None and loader.argument("persistent_workers").from_splat:
            return None
        if facts.dataset_mutated_in_loop(loader):
            return None  # persistent workers would keep a stale dataset (DL303)
        # `True` only where num_workers is written as a number: `--workers 0` must keep working.
        value = workers_test(facts, loader) or "True"
        if workers_from_splat(loader):
            return Fix("unsafe", "Add `persistent_workers=True` (right only while the `**` dict's num_workers > 0)", SetArgument("persistent_workers", value))
        if loader.argument("persistent_workers") is not None:
            # An explicit `persistent_workers=False` may be deliberate (e.g. per-epoch state the
            # workers read at start-up): flipping it is the user's call.
            return Fix("unsafe", f"Set `persistent_workers={value}`", SetArgument("persistent_workers", value))
        return Fix("safe", f"Add `persistent_workers={value}`", SetArgument("persistent_workers", value))

    def apply_fix(self, ctx, finding: Finding) -> None:
        from dllint.fixes.arguments import set_reported_argument

        set_reported_argument(ctx, finding)


def restarts_workers(loader) -> bool:
    """Workers that may run (num_workers not provably 0) and are not kept between passes
    (``persistent_workers`` known to be falsy): a loader call or a config block."""
    return not loader.value("num_workers").is_zero_or_absent() and loader.value("persistent_workers").truthy() is False


def _negative(value: Value) -> bool:
    return value.is_int() and value.value < 0
