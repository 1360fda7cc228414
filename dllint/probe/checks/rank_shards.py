"""DL305 (and DL302's rank half, DL207's total): what this rank draws, for the parent to compare.

In each rank of a distributed probe run, records the sample indices the loader's sampler yields
in one epoch (a map-style dataset), or fingerprints of the first samples of the stream (an
IterableDataset), with the rank's ``num_workers`` and usable cores, into the probe's scratch
directory. The parent compares the ranks (:func:`dllint.probe.ranks.cross_rank_events`). Without
ranks there is nothing to compare.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import dllint.probe.ranks as ranks
from dllint.probe.results import skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL305",)
ALWAYS = True
NEEDS_TWO_RANKS = "a cross-rank check needs two ranks"


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    rank, directory = ranks.current_rank(), ranks.current_rank_dir()
    if rank is None or directory is None:
        if ctx.requested(site, CODES):
            ctx.result(site, "DL305", skipped(f"{NEEDS_TWO_RANKS}: run with --nproc-per-node 2"),
                       "one process: no other rank's samples to compare")
        return
    if int(os.environ.get("WORLD_SIZE", "2")) < 2:  # --nproc-per-node 1: no other rank to compare with
        if ctx.requested(site, CODES):
            ctx.result(site, "DL305", skipped(f"{NEEDS_TWO_RANKS}: run with --nproc-per-node 2"),
                       "only one rank ran")
        return
    record = {
        "rank": rank,
        "slot": ranks.current_slot(),
        "site": ranks.site_key(site),
        "anchor": asdict(site.anchor),
        "loader": site.id,
        "num_workers": site.num_workers,
        "distributed": _in_a_job(),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1,
    }
    with ctx.measuring(site, "samples this rank draws in one epoch"):
        if site.is_iterable_dataset:
            record.update(kind="iterable", samples=_stream_fingerprints(site.dataset))
        else:
            record.update(kind="map", indices=_epoch_indices(site))
    ranks.record_draws(site, directory, rank, record)


def _in_a_job() -> bool:
    """This rank belongs to a process group (or was started as one by torchrun's environment)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size() > 1
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def _epoch_indices(site: LoaderSite) -> list[int] | None:
    """The dataset indices one epoch of this loader visits, as its (batch) sampler yields them."""
    loader = site.loader
    sampler = getattr(loader, "batch_sampler", None) or getattr(loader, "sampler", None)
    if sampler is None:
        return None
    indices: list[int] = []
    for item in sampler:
        for index in item if isinstance(item, (list, tuple)) else (item,):
            indices.append(int(index))
        if len(indices) > ranks.MOST_INDICES:
            return None
    return indices


def _stream_fingerprints(dataset: Any) -> list[str]:
    fingerprints = []
    for sample in dataset:
        try:
            data = pickle.dumps(sample)
        except Exception:
            data = repr(sample).encode()
        fingerprints.append(hashlib.sha1(data).hexdigest()[:12])
        if len(fingerprints) >= ranks.STREAM_SAMPLES:
            break
    return fingerprints
