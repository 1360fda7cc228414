"""A loader the script built, as the harness sees it (child process only).

A site is one call site in the user's code. The first loader object built
there is the one probed; later objects from the same line (a loader built in a
loop) are only counted.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dllint.probe.callsite import CallSite
from dllint.probe.measure import own_copy
from dllint.probe.results import Anchor
from dllint.probe.steps import StepClock

# Options torch accepts only with num_workers > 0: a single-process variant drops them.
WORKER_ONLY_OPTIONS = ("prefetch_factor", "persistent_workers", "multiprocessing_context", "timeout")


class Endless:
    """A sampler that repeats another one's order for as long as it is asked."""

    def __init__(self, order: Any) -> None:
        self.order = order

    def __iter__(self) -> Iterator[Any]:
        while True:
            produced = False
            for item in self.order:
                produced = True
                yield item
            if not produced:
                return


@dataclass
class FirstBatch:
    seconds: float | None = None
    error: str | None = None  # "ExceptionType: message"
    exception: BaseException | None = field(default=None, repr=False)


@dataclass
class LoaderSite:
    id: int
    call_site: CallSite
    loader_class: type
    arguments: dict[str, Any]
    loader: Any = None
    construction_error: BaseException | None = None
    constructions: int = 1
    iterations: int = 0  # of the first loader object
    epochs: int = 0  # iterations of any loader object built here: the script's epochs
    clock: StepClock = field(default_factory=StepClock)  # the data wait of the script's real step
    swept: bool = False  # the num_workers sweep ran on it
    first_batch: FirstBatch | None = None
    state: dict[str, Any] = field(default_factory=dict)  # per check module, by module name

    @classmethod
    def from_call(cls, site_id: int, call_site: CallSite, init: Callable[..., Any], loader: Any,
                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> LoaderSite:
        bound = inspect.signature(init).bind(loader, *args, **kwargs)
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(arguments)))  # self
        extra = arguments.pop("kwargs", None)  # a subclass's **kwargs
        if isinstance(extra, dict):
            arguments.update(extra)
        return cls(site_id, call_site, type(loader), arguments, loader=loader)

    @property
    def anchor(self) -> Anchor:
        return Anchor(self.call_site.path, self.call_site.line, self.call_site.end_line)

    @property
    def label(self) -> str:
        return self.call_site.label()

    def argument(self, name: str, default: Any = None) -> Any:
        if self.loader is not None and hasattr(self.loader, name):
            return getattr(self.loader, name)
        return self.arguments.get(name, default)

    @property
    def num_workers(self) -> int:
        return int(self.argument("num_workers", 0) or 0)

    @property
    def persistent(self) -> bool:
        return bool(self.argument("persistent_workers", False))

    @property
    def dataset(self) -> Any:
        return self.argument("dataset")

    @property
    def is_iterable_dataset(self) -> bool:
        from torch.utils.data import IterableDataset

        return isinstance(self.dataset, IterableDataset)

    def start_method(self) -> str:
        """The start method this loader's workers use on this machine."""
        import multiprocessing

        context = self.argument("multiprocessing_context")
        if isinstance(context, str):
            return context
        if context is not None and hasattr(context, "get_start_method"):
            return str(context.get_start_method())
        return multiprocessing.get_start_method()

    def variant(self, **overrides: Any) -> Any:
        """A plain DataLoader with this site's arguments, some replaced.

        Built from torch's own class, not the user's subclass, whose __init__
        may not accept these keywords.
        """
        from torch.utils.data import DataLoader

        arguments = {
            name: value
            for name, value in self.arguments.items()
            if name in inspect.signature(DataLoader.__init__).parameters
        }
        if "dataset" not in overrides:  # each variant its own copy: nothing it does shows up as the script's doing
            arguments["dataset"] = own_copy(arguments.get("dataset"))
        arguments.update(overrides)
        if not arguments.get("num_workers"):
            for option in WORKER_ONLY_OPTIONS:
                arguments.pop(option, None)
        if arguments.get("batch_sampler") is not None:
            # batch_sampler excludes these; the script's own values were legal.
            for option in ("batch_size", "shuffle", "sampler", "drop_last"):
                arguments.pop(option, None)
        return DataLoader(**arguments)

    def short_epoch_variant(self, batches: int, **overrides: Any) -> Any:
        """A variant whose epoch is at most ``batches`` batches of the script's own order.

        Measuring epoch starts needs epochs that end: the first indices of the
        script's sampler (or batch sampler) become a fixed, short epoch. An
        IterableDataset keeps its stream; the caller stops after ``batches``.
        """
        import itertools

        if self.is_iterable_dataset:
            return self.variant(**overrides)
        batch_sampler = self.arguments.get("batch_sampler")
        if batch_sampler is not None:
            return self.variant(batch_sampler=list(itertools.islice(iter(batch_sampler), batches)), **overrides)
        batch_size = self.arguments.get("batch_size", 1) or 1
        sampler = self.arguments.get("sampler")
        try:
            order = iter(sampler) if sampler is not None else iter(range(len(self.dataset)))
        except TypeError:  # a dataset without len(): keep the script's own epoch
            return self.variant(**overrides)
        indices = list(itertools.islice(order, batches * batch_size))
        return self.variant(sampler=indices, shuffle=False, **overrides)

    def endless_variant(self, **overrides: Any) -> Any:
        """A variant that never runs out of batches: the script's order (or stream), repeated."""
        if self.is_iterable_dataset:
            from dllint.probe.streams import EndlessStream

            return self.variant(dataset=EndlessStream(own_copy(self.dataset)), **overrides)
        batch_sampler = self.arguments.get("batch_sampler")
        if batch_sampler is not None:
            return self.variant(batch_sampler=Endless(batch_sampler), **overrides)
        sampler = self.arguments.get("sampler")
        try:
            order = sampler if sampler is not None else range(len(self.dataset))
        except TypeError:  # a dataset without len()
            return self.variant(**overrides)
        return self.variant(sampler=Endless(order), shuffle=False, **overrides)

    def summary(self) -> dict[str, Any]:
        dataset = self.dataset
        return {
            "call_site": self.label,
            "path": self.call_site.path,
            "line": self.call_site.line,
            "end_line": self.call_site.end_line,
            "loader_class": self.loader_class.__name__,
            "dataset": type(dataset).__name__ if dataset is not None else None,
            "num_workers": self.arguments.get("num_workers", 0),
            "batch_size": self.arguments.get("batch_size", 1),
            "persistent_workers": self.arguments.get("persistent_workers", False),
            "prefetch_factor": self.arguments.get("prefetch_factor"),
            "pin_memory": bool(self.arguments.get("pin_memory", False)),
            "multiprocessing_context": _context_name(self.arguments.get("multiprocessing_context")),
            "start_method": _safe(self.start_method),
        }


def _context_name(context: Any) -> str | None:
    """A multiprocessing_context argument as the start method's name (JSON has no context objects)."""
    if context is None or isinstance(context, str):
        return context
    return _safe(context.get_start_method) if hasattr(context, "get_start_method") else None


def _safe(function: Callable[[], Any]) -> Any:
    try:
        return function()
    except Exception:  # a broken context object is the config check's business
        return None
