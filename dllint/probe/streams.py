"""A stream the probe's measurements can draw from for as long as they need (child process only).

Imports torch: imported only where a variant over an ``IterableDataset`` is built. At module
level, so that spawn workers can unpickle it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.utils.data import IterableDataset


class EndlessStream(IterableDataset[Any]):
    """The script's stream, started again each time it ends (in each worker, its own share of it)."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __iter__(self) -> Iterator[Any]:
        while True:
            produced = False
            for item in self.dataset:
                produced = True
                yield item
            if not produced:
                return
