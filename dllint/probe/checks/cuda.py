"""DL105, DL206: CUDA in workers, and pageable host-to-device copies.

Both need a GPU. On a machine without one the verdict is ``skipped (no
CUDA)``; the measuring code takes the torch module as a parameter so that
tests can run it with CUDA mocked out.

DL105 is confirmed by the crash itself, whoever triggers it first: the script's
own first batch (this check runs even when that batch failed, so a forked worker
that died with ``Cannot re-initialize CUDA in forked subprocess`` is the
evidence, also with no static finding: a runtime finding), or one batch the
check fetches under fork after initialising CUDA. A loader whose workers start
with spawn or forkserver cannot hit it (its workers pay a CUDA context each,
which the memory check measures): not confirmed, never forced onto fork.

DL206 is confirmed only when pinning saves time that matters: the pageable and
pinned copies of one real batch are timed, and the saving per batch, per epoch
(``len(loader)`` batches) and over the script's epochs must clear the floor of
:mod:`dllint.probe.checks.gains` (at least 50 µs per batch, 5 ms and 1% of the
epoch's loading time per epoch), else ``not confirmed (saves 10 µs per batch)``.
Measurements: ``pageable_s``, ``pinned_s``, ``batch_s`` (loading one batch in the
main process, divided among the workers) and the saving keys of
:class:`~dllint.probe.checks.gains.Saving`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dllint.probe.checks.gains import RunLength, Saving, run_length
from dllint.probe.internals import CUDA_REINIT
from dllint.probe.measure import describe_error, last_error_line, worker_stderr
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, not_confirmed, skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL105", "DL206")
# Runs on every loader, also after a failed first batch: that failure may be DL105's crash.
ALWAYS = True
SPAWNED = ("spawn", "forkserver")


def on_first_iteration(site: LoaderSite, ctx: ProbeContext, torch: Any = None) -> None:
    first_batch = getattr(site, "first_batch", None)
    first_error = first_batch.error if first_batch is not None else None
    if first_error and CUDA_REINIT in first_error:
        ctx.result(site, "DL105", CONFIRMED, f"the script's first batch failed in a forked worker: {first_error}",
                   {"error": first_error, "triggered_by": "script"})
        return
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    if first_error:
        for code in codes:
            ctx.result(site, code, skipped("the first batch failed"), first_error)
        return
    if torch is None:
        import torch
    if not torch.cuda.is_available():
        for code in codes:
            ctx.result(site, code, skipped("no CUDA"), "this machine has no CUDA device")
        return
    if "DL105" in codes:
        _fork_after_cuda_init(site, ctx, torch)
    if "DL206" in codes:
        _pinned_vs_pageable(site, ctx, torch)


def _fork_after_cuda_init(site: LoaderSite, ctx: ProbeContext, torch: Any) -> None:
    if site.num_workers == 0:
        ctx.result(site, "DL105", NOT_CONFIRMED, "num_workers is 0: the dataset runs in the main process")
        return
    method = site.start_method()
    if method not in SPAWNED and not _can_fork():
        ctx.result(site, "DL105", skipped("no fork on this platform"), "the fork start method does not exist here "
                   "(Windows): forked workers cannot re-initialise CUDA, and spawned ones are measured under memory")
        return
    if method in SPAWNED:
        ctx.result(site, "DL105", NOT_CONFIRMED, f"this loader starts its workers with {method}: each initialises "
                   "CUDA itself (a CUDA context per worker, measured under memory)", {"start_method": method})
        return
    torch.cuda.init()
    error = None
    with worker_stderr(ctx.stderr_path) as lines:
        try:
            with ctx.measuring(site, "one batch under fork after CUDA init"):
                next(iter(site.variant(multiprocessing_context="fork", persistent_workers=False)))
        except Exception as caught:
            error = caught
    text = " ".join([describe_error(error) if error else "", *lines])
    if CUDA_REINIT in text:
        ctx.result(site, "DL105", CONFIRMED, f"a forked worker failed: {last_error_line(lines, CUDA_REINIT) or CUDA_REINIT}",
                   {"error": describe_error(error) if error else None, "triggered_by": "check"})
    else:
        ctx.result(site, "DL105", NOT_CONFIRMED, "a forked worker ran after CUDA init"
                   if error is None else f"the batch failed otherwise: {describe_error(error)}")


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def tensors_in(batch: Any) -> Iterator[Any]:
    if hasattr(batch, "pin_memory") and hasattr(batch, "to"):
        yield batch
    elif isinstance(batch, dict):
        for value in batch.values():
            yield from tensors_in(value)
    elif isinstance(batch, (list, tuple)):
        for value in batch:
            yield from tensors_in(value)


def copy_seconds(tensors: list[Any], torch: Any, pinned: bool, repeats: int = 5) -> float:
    sources = [tensor.pin_memory() if pinned else tensor for tensor in tensors]
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        started = time.perf_counter()
        for tensor in sources:
            tensor.to("cuda", non_blocking=pinned)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - started)
    return best


def _pinned_vs_pageable(site: LoaderSite, ctx: ProbeContext, torch: Any) -> None:
    import time as clock

    try:
        with ctx.measuring(site, "host-to-device copy, pinned vs pageable"):
            iterator = iter(site.variant(num_workers=0))
            started = clock.perf_counter()
            tensors = list(tensors_in(next(iterator)))
            load_s = clock.perf_counter() - started
            if not tensors:
                ctx.result(site, "DL206", NOT_CONFIRMED, "the batch holds no tensors to copy")
                return
            pageable = copy_seconds(tensors, torch, pinned=False)
            pinned = copy_seconds(tensors, torch, pinned=True)
    except Exception as error:  # a failed copy is a skipped measurement, not a crash
        ctx.result(site, "DL206", skipped(describe_error(error)), "the copy could not be measured")
        return
    ctx.result(site, "DL206", *pinning_verdict(pageable, pinned, load_s / max(1, site.num_workers), run_length(site, ctx)))


def pinning_verdict(pageable: float, pinned: float, batch_s: float, run: RunLength) -> tuple[str, str, dict[str, Any]]:
    """Confirmed only when pinning saves time that matters (see the module docstring)."""
    fraction = (pageable - pinned) / pageable if pageable > 0 else 0.0
    saving = Saving.from_batch(pageable - pinned, run, batch_s)
    evidence = (f"copy of one batch: pageable {pageable * 1000:.2f} ms, pinned {pinned * 1000:.2f} ms "
                f"({-fraction * 100:+.0f}%)")
    measurements = {"pageable_s": pageable, "pinned_s": pinned, "batch_s": batch_s, **saving.measurements()}
    if pageable <= pinned:
        return NOT_CONFIRMED, evidence, measurements
    evidence += f"; {saving.describe()}"
    verdict = CONFIRMED if saving.material else not_confirmed(saving.short())
    return verdict, evidence, measurements
