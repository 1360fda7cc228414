"""Objects the probe sends into worker processes to ask what a worker sees.

They live in their own importable module so that spawn workers can unpickle
them. Plain classes: a map-style DataLoader needs only ``__getitem__`` and
``__len__``, and with ``batch_size=None`` each sampler item is one request.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

ATTRIBUTE_REPR_LIMIT = 200


def keep_as_is(item: Any) -> Any:
    """collate_fn that returns a worker's answer unconverted."""
    return item


def attribute_view(dataset: Any) -> dict[str, str]:
    """The dataset's own attributes as short reprs, comparable across processes."""
    view = {}
    for name, value in vars(dataset).items():
        try:
            view[name] = repr(value)[:ATTRIBUTE_REPR_LIMIT]
        except Exception:  # an attribute whose repr fails tells us nothing
            continue
    return view


def draw(generator: Any) -> float:
    """One value from any of the generator kinds DL304 knows."""
    if hasattr(generator, "random_sample"):  # numpy RandomState
        return float(generator.random_sample())
    if hasattr(generator, "manual_seed"):  # torch.Generator
        import torch

        return float(torch.rand(1, generator=generator).item())
    return float(generator.random())  # numpy Generator, random.Random


class Requests:
    """A sampler whose items the probe sets before each epoch."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.items))

    def __len__(self) -> int:
        return len(self.items)


class WorkerView:
    """Wraps the user's dataset; answers questions from inside a worker."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __getattr__(self, name: str) -> Any:
        # The script's worker_init_fn reaches the dataset through get_worker_info().dataset.
        if name == "dataset":  # not set yet while unpickling
            raise AttributeError(name)
        return getattr(self.dataset, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # A worker_init_fn that reseeds (info.dataset.rng = ...) must reach the real dataset.
        if name == "dataset":
            object.__setattr__(self, name, value)
        else:
            setattr(self.dataset, name, value)

    def __len__(self) -> int:
        return 1

    def __getitem__(self, request: tuple[str, Any]) -> Any:
        from torch.utils.data import get_worker_info

        info = get_worker_info()
        worker = info.id if info is not None else None
        kind, argument = request
        if kind == "attributes":
            return worker, attribute_view(self.dataset)
        if kind == "draw":
            return worker, {name: draw(getattr(self.dataset, name)) for name in argument}
        raise ValueError(f"unknown request {kind!r}")
