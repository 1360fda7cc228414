"""DL105, DL206: CUDA in workers, and pageable host-to-device copies.

Both need a GPU. On a machine without one the verdict is ``skipped (no
CUDA)``; the measuring code takes the torch module as a parameter so that
tests can run it with CUDA mocked out.
"""

from __future__ import annotations

import time

from dllint.probe.internals import CUDA_REINIT
from dllint.probe.measure import describe_error, last_error_line, worker_stderr
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, skipped

CODES = ("DL105", "DL206")
ALWAYS = False


def on_first_iteration(site, ctx, torch=None) -> None:
    if torch is None:
        import torch
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    if not torch.cuda.is_available():
        for code in codes:
            ctx.result(site, code, skipped("no CUDA"), "this machine has no CUDA device")
        return
    if "DL105" in codes:
        _fork_after_cuda_init(site, ctx, torch)
    if "DL206" in codes:
        _pinned_vs_pageable(site, ctx, torch)


def _fork_after_cuda_init(site, ctx, torch) -> None:
    if site.num_workers == 0:
        ctx.result(site, "DL105", NOT_CONFIRMED, "num_workers is 0: the dataset runs in the main process")
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
                   {"error": describe_error(error) if error else None})
    else:
        ctx.result(site, "DL105", NOT_CONFIRMED, "a forked worker ran after CUDA init"
                   if error is None else f"the batch failed otherwise: {describe_error(error)}")


def tensors_in(batch):
    if hasattr(batch, "pin_memory") and hasattr(batch, "to"):
        yield batch
    elif isinstance(batch, dict):
        for value in batch.values():
            yield from tensors_in(value)
    elif isinstance(batch, (list, tuple)):
        for value in batch:
            yield from tensors_in(value)


def copy_seconds(tensors, torch, pinned: bool, repeats: int = 5) -> float:
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


def _pinned_vs_pageable(site, ctx, torch) -> None:
    try:
        with ctx.measuring(site, "host-to-device copy, pinned vs pageable"):
            tensors = list(tensors_in(next(iter(site.variant(num_workers=0)))))
            if not tensors:
                ctx.result(site, "DL206", NOT_CONFIRMED, "the batch holds no tensors to copy")
                return
            pageable = copy_seconds(tensors, torch, pinned=False)
            pinned = copy_seconds(tensors, torch, pinned=True)
    except Exception as error:  # a failed copy is a skipped measurement, not a crash
        ctx.result(site, "DL206", skipped(describe_error(error)), "the copy could not be measured")
        return
    saving = (pageable - pinned) / pageable if pageable > 0 else 0.0
    ctx.result(site, "DL206", CONFIRMED if saving >= 0.1 else NOT_CONFIRMED,
               f"copy of one batch: pageable {pageable * 1000:.2f} ms, pinned {pinned * 1000:.2f} ms ({-saving * 100:+.0f}%)",
               {"pageable_s": pageable, "pinned_s": pinned})
