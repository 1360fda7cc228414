"""Benchmark: a num_workers sweep on a CPU-bound dataset, each count measured on its own.

A reference for the probe's sweep (dllint/probe/checks/sweep.py), which measures the same
counts interleaved, round by round, and decides with :func:`~dllint.probe.checks.sweep.decide`;
here each count runs its 3 windows one after another and the chart marks what the plain
"smallest count within 5% of the best" rule would pick. ``benchmarks/probe_stability.py``
measures the probe's own sweep, three times on the same script.

Run: python benchmarks/probe_sweep.py [--batches N] [--max-workers N]
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, Dataset

from dllint.probe.checks.sweep import (
    recommend,
    render_chart,
    usable_cores,
    worker_counts,
)
from dllint.probe.measure import Steady, steady_throughput


class Augmented(Dataset):
    """Each sample costs a few milliseconds of CPU, like decoding plus augmentation."""

    def __len__(self):
        return 100_000

    def __getitem__(self, index):
        image = torch.rand(3, 64, 64)
        for _ in range(4):
            image = torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)
        return image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--max-workers", type=int, default=8)
    options = parser.parse_args()
    torch.set_num_threads(1)  # one thread per process, as in workers: the sweep compares processes
    cores = usable_cores()
    print(f"torch {torch.__version__}, {cores} usable cores, batch 16, steady state: "
          f"3 windows of at least {options.batches} batches and 0.25 s per count")
    rows = {}
    for count in worker_counts(options.max_workers, cores):
        loader = DataLoader(Augmented(), batch_size=16, num_workers=count)
        rows[count] = steady_throughput(loader, Steady(2 * count * 2, options.batches, 0.25, 3))
    recommended = recommend({count: row["samples_per_s"] for count, row in rows.items()}, cores,
                            {count: row["spread"] for count, row in rows.items()})
    print("\n".join(render_chart(rows, recommended)))
    print(f"recommended num_workers: {recommended}")


if __name__ == "__main__":
    main()
