from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import maybe_none
from dllint.findings import Finding, Fix, RemoveArguments
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class BatchSamplerConflict(Rule):
    """
    ## What it does
    Checks for a `batch_sampler` combined with `batch_size` other than 1, a truthy `shuffle`,
    a `sampler` or a truthy `drop_last`; and for `batch_size=None` with a truthy `drop_last`.

    ## Why is this bad?
    A batch sampler decides the batches itself. torch raises `ValueError: batch_sampler option
    is mutually exclusive with batch_size, shuffle, sampler, and drop_last`, and with
    `batch_size=None` (no batching) `drop_last` is rejected the same way.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=32, batch_sampler=BucketSampler(dataset))
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_sampler=BucketSampler(dataset, batch_size=32))
    ```

    ## Fix safety
    Safe: the conflicting arguments are removed; torch could not have used them.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    """

    code = "DL004"
    name = "batch-sampler-conflict"
    summary = "conflicts with batch_sampler (torch raises ValueError): remove it"
    fix_safety = "safe"
    value_arguments = ("batch_size", "shuffle", "drop_last")
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_sampler=bs)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=1, shuffle=False, batch_sampler=bs)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=None, drop_last=False)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=32, batch_sampler=bs)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_sampler=bs, drop_last=True)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=None, drop_last=True)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            batch_sampler = loader.argument("batch_sampler")
            if batch_sampler is not None and not maybe_none(batch_sampler.value, batch_sampler.scope, facts):
                yield from self._conflicts(facts, loader)
            elif loader.value("batch_size").is_const and loader.value("batch_size").value is None:
                drop_last = loader.argument("drop_last")
                if drop_last is not None and loader.value("drop_last").truthy():
                    yield self._finding(facts, drop_last, "drop_last=True with batch_size=None (no batching): torch raises ValueError; remove it")

    def _conflicts(self, facts, loader) -> Iterator[Finding]:
        batch_size = loader.value("batch_size")
        if batch_size.is_const and batch_size.value != 1:
            yield self._finding(facts, loader.argument("batch_size"), None)
        for name in ("shuffle", "drop_last"):
            if loader.argument(name) is not None and loader.value(name).truthy():
                yield self._finding(facts, loader.argument(name), None)
        sampler = loader.argument("sampler")
        if sampler is not None and not maybe_none(sampler.value, sampler.scope, facts):
            yield self._finding(facts, sampler, None)

    def _finding(self, facts, arg, message) -> Finding:
        message = message or f"{arg.name} conflicts with batch_sampler (torch raises ValueError): remove it"
        fix = None if arg.from_splat else Fix("safe", f"Remove `{arg.name}`", RemoveArguments((arg.name,)))
        return self.report(facts, arg.node, message, fix)
