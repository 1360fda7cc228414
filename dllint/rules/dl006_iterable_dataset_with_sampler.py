from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import maybe_none
from dllint.findings import Finding, Fix, RemoveArguments
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class IterableDatasetWithSampler(Rule):
    """
    ## What it does
    Checks for a loader over an `IterableDataset` that is given a truthy `shuffle`, a
    `sampler` or a `batch_sampler`.

    ## Why is this bad?
    An iterable dataset has no indices to sample or shuffle; it decides its own order.
    torch raises `ValueError: DataLoader with IterableDataset: expected unspecified shuffle
    option, but got shuffle=True` (and likewise for `sampler` and `batch_sampler`).

    ## Example
    ```python
    class Stream(IterableDataset):
        def __iter__(self):
            yield from read_records()

    loader = DataLoader(Stream(), shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(Stream())  # shuffle inside __iter__, e.g. with a shuffle buffer
    ```

    ## Fix safety
    Safe: removing the argument is what torch requires; shuffling must move into the dataset.

    ## References
    - [Iterable-style datasets](https://pytorch.org/docs/stable/data.html#iterable-style-datasets)
    """

    code = "DL006"
    name = "iterable-dataset-with-sampler"
    summary = "IterableDataset with shuffle/sampler"
    fix_safety = "safe"
    triggers = (b"IterableDataset",)
    needs_one_of = (b"DataLoader",)  # the finding is on a loader call given an iterable dataset
    valid = (
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield 1\n"
        "DataLoader(S(), batch_size=4)\n",
        "from torch.utils.data import DataLoader, Dataset\n"
        "class M(Dataset):\n    pass\n"
        "DataLoader(M(), shuffle=True)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __iter__(self):\n        yield 1\n"
        "DataLoader(S(), shuffle=True)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            dataset = loader.argument("dataset")
            if dataset is None:
                continue
            cls = facts.class_of_instance(dataset.value, dataset.scope)
            if cls is None or not cls.is_iterable_dataset:
                continue
            for name in ("shuffle", "sampler", "batch_sampler"):
                arg = loader.argument(name)
                if arg is None:
                    continue
                if name == "shuffle":
                    if not loader.value(name).truthy():
                        continue
                elif maybe_none(arg.value, arg.scope, facts):
                    continue
                fix = None if arg.from_splat else Fix("safe", f"Remove `{name}`", RemoveArguments((name,)))
                yield self.report(
                    facts,
                    arg.node,
                    f"{name} with IterableDataset '{cls.name}': torch raises ValueError; order the stream inside the dataset",
                    fix,
                )
