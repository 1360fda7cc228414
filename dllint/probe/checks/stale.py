"""DL303: persistent workers that keep a stale copy of the dataset.

When the script first iterates a persistent loader, the probe starts its own
persistent worker on the same dataset (a copy taken at the same moment as the
script's workers would take theirs) and snapshots the dataset's attributes.
When the script iterates the loader again, the attributes the main process
changed in between are read back from that worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dllint.probe.internals import current_iterator
from dllint.probe.measure import close_iterator, describe_error
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL303",)
ALWAYS = True


def _ask_worker(probe: dict[str, Any], request: Any) -> dict[str, str]:
    probe["requests"].items = [request]
    iterator = iter(probe["loader"])
    answer: dict[str, str]
    _, answer = next(iterator)
    return answer


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    from dllint.probe.worker_side import (
        Requests,
        WorkerView,
        attribute_view,
        keep_as_is,
    )

    if not (site.persistent and site.num_workers > 0) or not hasattr(site.dataset, "__dict__"):
        if ctx.requested(site, CODES):
            ctx.result(site, "DL303", NOT_CONFIRMED, "workers are not persistent: each epoch copies the dataset afresh")
        return
    requests = Requests()
    try:
        with ctx.measuring(site, "starting a persistent worker on the dataset"):
            from torch.utils.data import DataLoader

            # WorkerView is a map-style dataset by its methods: worker_side imports no torch

            loader: DataLoader[Any] = DataLoader(WorkerView(site.dataset), batch_size=None, sampler=requests, num_workers=1,  # type: ignore[arg-type]
                                persistent_workers=True, collate_fn=keep_as_is,
                                multiprocessing_context=site.start_method())
            probe = {"loader": loader, "requests": requests, "main": attribute_view(site.dataset)}
            _ask_worker(probe, ("attributes", None))
    except Exception as error:  # the first batch already reports a dataset that cannot reach workers
        ctx.result(site, "DL303", skipped(describe_error(error)), "no persistent worker could be started")
        return
    site.state[__name__] = probe


def on_later_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    from dllint.probe.worker_side import attribute_view

    probe = site.state.pop(__name__, None)
    if probe is None:
        return
    try:
        now = attribute_view(site.dataset)
        changed = {name: value for name, value in now.items() if probe["main"].get(name) != value}
        if not changed:
            if ctx.requested(site, CODES):
                ctx.result(site, "DL303", NOT_CONFIRMED, "the main process changed no dataset attribute between epochs")
            return
        with ctx.measuring(site, "reading the changed attributes in the persistent worker"):
            worker = _ask_worker(probe, ("attributes", None))
    finally:
        close_iterator(current_iterator(probe["loader"]))
    stale = {name: (value, worker.get(name)) for name, value in changed.items() if worker.get(name) != value}
    measurements = {"main": {name: main for name, (main, _) in stale.items()},
                    "worker": {name: seen for name, (_, seen) in stale.items()}, "changed": sorted(changed)}
    if stale:
        name, (main, seen) = next(iter(stale.items()))
        ctx.result(site, "DL303", CONFIRMED, f"main process set {name}={main}, a persistent worker still reads {name}={seen}",
                   measurements)
    else:
        ctx.result(site, "DL303", NOT_CONFIRMED, "the persistent worker sees the main process's changes", measurements)


def on_script_end(site: LoaderSite, ctx: ProbeContext) -> None:
    probe = site.state.pop(__name__, None)
    if probe is None:
        return
    close_iterator(current_iterator(probe["loader"]))
    if ctx.requested(site, CODES):
        ctx.no_second_epoch(site, "DL303", "no change by the main process could be watched")
