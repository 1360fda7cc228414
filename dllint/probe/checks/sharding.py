"""DL302: an IterableDataset that every worker replays in full.

Counts the samples one pass yields in the main process and with the loader's
workers; the ratio is the duplication factor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dllint.probe.context import out_of_time
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.results import Anchor
    from dllint.probe.site import LoaderSite

CODES = ("DL302",)
ALWAYS = True

MOST_SAMPLES = 50_000  # a longer stream is not counted: it may be endless
MOST_WORKERS = 8
DUPLICATION = 1.5  # a factor at or above this is duplication, not uneven shards


def _count(site: LoaderSite, num_workers: int) -> int | None:
    from dllint.probe.worker_side import keep_as_is

    loader = site.variant(num_workers=num_workers, batch_size=None, collate_fn=keep_as_is,
                          persistent_workers=False, prefetch_factor=None)
    count = 0
    iterator = iter(loader)
    try:
        for _ in iterator:
            count += 1
            if count > MOST_SAMPLES:
                return None
    finally:
        shutdown = getattr(iterator, "_shutdown_workers", None)
        if shutdown:
            shutdown()
    return count


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    if not site.is_iterable_dataset:
        return
    workers = min(site.num_workers, MOST_WORKERS)
    if workers < 2:
        if ctx.requested(site, CODES):
            ctx.result(site, "DL302", NOT_CONFIRMED, f"num_workers is {site.num_workers}: no second worker to repeat the stream")
        return
    try:
        with ctx.measuring(site, "samples in one pass, 0 workers"):
            alone = _count(site, 0)
        with ctx.measuring(site, f"samples in one pass, {workers} workers"):
            together = _count(site, workers)
    except Exception as error:  # the dataset failing is reported by the first batch already
        ctx.result(site, "DL302", out_of_time(error), "the stream could not be counted")
        return
    if alone is None or together is None:
        ctx.result(site, "DL302", skipped(f"the stream has more than {MOST_SAMPLES} samples"), "not counted")
        return
    factor = together / alone if alone else 0.0
    measurements = {"samples_0_workers": alone, f"samples_{workers}_workers": together,
                    "workers": workers, "duplication_factor": round(factor, 2)}
    evidence = f"one pass: {alone} samples with 0 workers, {together} with {workers} workers (factor {factor:.1f})"
    verdict = CONFIRMED if factor >= DUPLICATION else NOT_CONFIRMED
    if verdict == CONFIRMED or ctx.requested(site, CODES):
        anchors = _iter_anchor(site)
        ctx.result(site, "DL302", verdict, evidence, measurements, anchors)


def _iter_anchor(site: LoaderSite) -> list[Anchor]:
    from dllint.probe.checks.spawn import _source_anchor

    anchor = _source_anchor(type(site.dataset).__iter__)
    return [anchor] if anchor else []
