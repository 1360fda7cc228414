from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import maybe_none
from dllint.findings import Finding, Fix, RemoveArguments
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class ShuffleWithSampler(Rule):
    """
    ## What it does
    Checks for a truthy `shuffle` together with a `sampler`.

    ## Why is this bad?
    The sampler decides the order, so `shuffle` has nothing to do: torch raises
    `ValueError: sampler option is mutually exclusive with shuffle` when the loader is built.
    A `DistributedSampler` shuffles by itself (`DistributedSampler(ds, shuffle=True)`).

    ## Example
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, shuffle=True, sampler=sampler)
    ```

    ## Use instead
    ```python
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, sampler=sampler)
    ```

    ## Fix safety
    Safe: removing `shuffle` keeps the sampler's order, which is what torch would use. In a
    config file the fix sets `shuffle: false` (`shuffle=False`) instead, keeping the key the code reads.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    """

    code = "DL003"
    fix_at_argument = True  # a SetArgument fix edits the call whose argument is reported
    name = "shuffle-with-sampler"
    summary = "shuffle=True with a sampler: torch raises ValueError (mutually exclusive); let the sampler shuffle"
    fix_safety = "safe"
    value_arguments = ("shuffle", "sampler")
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, sampler=s)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, shuffle=(s is None), sampler=s)\n",
        "from torch.utils.data import DataLoader\ns = DistributedSampler(ds) if ddp else None\nDataLoader(ds, shuffle=True, sampler=s)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nfrom torch.utils.data import RandomSampler\n"
        "DataLoader(ds, shuffle=True, sampler=RandomSampler(ds))\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            shuffle = loader.argument("shuffle")
            sampler = loader.argument("sampler")
            if shuffle is None or sampler is None or not shuffles(loader):
                continue
            if maybe_none(sampler.value, sampler.scope, facts):
                continue
            fix = None if shuffle.from_splat else Fix("safe", "Remove `shuffle`", RemoveArguments(("shuffle",)))
            yield self.report(facts, shuffle.node, fix=fix)

    def check_config(self, block) -> Iterator[Finding]:
        from dllint.configs.lint import config_finding, key_value, value_fix

        if block.entry("shuffle") is None or not block.given("sampler") or not shuffles(block):
            return
        if not block.values_reach_torch:
            return  # a framework's loader settings (super-gradients moves `shuffle` into its sampler)
        span = block.report_span("shuffle", "sampler")
        if span is not None:
            # The key is set, not deleted: the code may read it (cfg.loader.shuffle).
            written = key_value(block, "shuffle", "true", "True")
            message = f"{written} with a sampler: torch raises ValueError (mutually exclusive); set {key_value(block, 'shuffle', 'false', 'False')}"
            yield config_finding(self, block, span, message, value_fix(block, "shuffle", "false", "False", after="sampler"))


def shuffles(loader) -> bool:
    """``shuffle`` is known to be truthy (a loader call or a config block)."""
    return bool(loader.value("shuffle").truthy())
