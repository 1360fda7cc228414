"""DL304: a dataset's own random generator, copied identically into every worker.

Draws one value from each of the dataset's generators in two workers (with the
script's worker_init_fn, which may reseed them); equal draws are the bug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dllint.probe.context import out_of_time
from dllint.probe.internals import generator_classes
from dllint.probe.measure import close_iterator
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL304",)
ALWAYS = True


def generator_attributes(dataset: Any) -> list[str]:
    classes = generator_classes()
    return [name for name, value in getattr(dataset, "__dict__", {}).items() if isinstance(value, classes)]


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    from dllint.probe.worker_side import Requests, WorkerView, keep_as_is

    names = generator_attributes(site.dataset)
    if not names or site.num_workers == 0:
        if ctx.requested(site, CODES):
            reason = "num_workers is 0" if names else "the dataset holds no random generator of its own"
            ctx.result(site, "DL304", NOT_CONFIRMED, reason)
        return
    requests = Requests()
    requests.items = [("draw", names), ("draw", names)]  # round-robin: one request per worker
    try:
        with ctx.measuring(site, "drawing from the dataset's generator in two workers"):
            from torch.utils.data import DataLoader

            # WorkerView is a map-style dataset by its methods: worker_side imports no torch

            loader: DataLoader[Any] = DataLoader(WorkerView(site.dataset), batch_size=None, sampler=requests, num_workers=2,  # type: ignore[arg-type]
                                collate_fn=keep_as_is, worker_init_fn=site.arguments.get("worker_init_fn"),
                                multiprocessing_context=site.start_method())
            iterator = iter(loader)
            draws = dict(iterator)
            close_iterator(iterator)
    except Exception as error:  # pickling and first-batch problems are reported by their own checks
        ctx.result(site, "DL304", out_of_time(error), "could not draw in two workers")
        return
    values = list(draws.values())
    same = len(values) == 2 and values[0] == values[1]
    measurements = {"draws": {f"worker {worker}": value for worker, value in draws.items()}}
    shown = ", ".join(f"worker {worker}: {value}" for worker, value in draws.items())
    if same or ctx.requested(site, CODES):
        from dllint.probe.checks.spawn import _source_anchor

        init = _source_anchor(type(site.dataset).__init__)
        ctx.result(site, "DL304", CONFIRMED if same else NOT_CONFIRMED,
                   f"{'identical' if same else 'different'} draws: {shown}", measurements, [init] if init else [])
