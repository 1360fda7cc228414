"""Benchmark: the epoch-start stall with persistent_workers off vs on, per start method.

Reproduces what the DL201 probe measures: first-batch latency of each epoch of
the same loader, persistent_workers off and on, under fork, forkserver and
spawn; each epoch is short and runs to its end before the next one starts. Run: python benchmarks/probe_persistent_workers.py [--workers N] [--epochs N]
"""

from __future__ import annotations

import argparse
import multiprocessing
from statistics import mean

import torch
from torch.utils.data import DataLoader, Dataset

from dllint.probe.measure import default_start_method, epoch_start_latencies


class Images(Dataset):
    """Small CPU-made images: the stall measured is worker start-up, not I/O."""

    def __len__(self):
        return 512

    def __getitem__(self, index):
        return torch.full((3, 32, 32), float(index))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    options = parser.parse_args()
    print(f"torch {torch.__version__}, {options.workers} workers, {options.epochs} epochs, batch 32")
    print(f"{'start method':<12} {'persistent':<10} " + " ".join(f"{'epoch ' + str(n + 1):>8}" for n in range(options.epochs))
          + f" {'later epochs':>13}")
    for method in ("fork", "forkserver", "spawn"):
        later = {}
        for persistent in (False, True):
            with default_start_method(method):
                epoch_batches = max(2, options.workers)
                loader = DataLoader(Images(), batch_size=32, sampler=range(32 * epoch_batches), num_workers=options.workers,
                                    persistent_workers=persistent, multiprocessing_context=method)
                latencies = epoch_start_latencies(loader, options.epochs, epoch_batches)
            later[persistent] = mean(latencies[1:])
            print(f"{method:<12} {'on' if persistent else 'off':<10} "
                  + " ".join(f"{seconds:>8.3f}" for seconds in latencies) + f" {later[persistent]:>12.3f}s")
        saving = (later[True] - later[False]) / later[False] * 100
        print(f"{'':<12} epoch start {later[False]:.2f} s -> {later[True]:.2f} s ({saving:+.0f}%)")


if __name__ == "__main__":
    multiprocessing.freeze_support()
    main()
