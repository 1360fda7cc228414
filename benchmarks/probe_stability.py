"""Benchmark: is the probe's recommendation the same when the same script is probed 3 times?

The script trains on a CPU-bound dataset (each sample costs about a millisecond of pooling)
with ``num_workers=32`` over 3 epochs, so DL201 (workers restart every epoch) and DL202 (32 workers)
are both measured. Each run prints the recommended ``num_workers`` of the interleaved sweep,
the verdicts of DL201 and DL202 with their savings, the rounds the sweep needed, and the
machine's load average before and after the sweep (1-minute). The probe runs with its default
settings except persistence under the script's own start method only (a spawn start costs
seconds that say nothing about stability).

Run: python benchmarks/probe_stability.py [--runs 3] [--workers 32]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from dllint.config import Settings as LintSettings
from dllint.engine import Linter
from dllint.inputs import Input
from dllint.probe import run_probe
from dllint.probe.checks.sweep import usable_cores
from dllint.probe.context import Settings

SCRIPT = '''\
import torch
from torch.utils.data import DataLoader, Dataset


class Pooled(Dataset):
    def __len__(self):
        return 2048

    def __getitem__(self, index):
        image = torch.rand(3, 32, 32)
        for _ in range(3):
            image = torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)
        return image, index % 10


def main():
    torch.set_num_threads(1)
    loader = DataLoader(Pooled(), batch_size=16, shuffle=True, num_workers={workers})
    model = torch.nn.Linear(3 * 32 * 32, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images.flatten(1)), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''


def one_run(script: Path, number: int) -> tuple:
    findings = [f for f in Linter(LintSettings()).lint(Input(str(script), "python", script.read_text())).findings if f.code in ("DL201", "DL202")]
    started = time.monotonic()
    run_probe(str(script), [], findings, timeout=300, progress=False, settings=Settings(start_methods=("script",)))
    seconds = time.monotonic() - started
    by_code = {finding.code: finding.probe or {} for finding in findings}
    sweep = by_code.get("DL202", {}).get("measurements", {})
    load = [entry[0] for entry in sweep.get("load_average") or [] if entry]
    persistence = by_code.get("DL201", {}).get("measurements", {})
    print(f"run {number}: num_workers={sweep.get('recommended')}  rounds={sweep.get('rounds')}  "
          f"load {' -> '.join(f'{value:.1f}' for value in load) or '?'}  ({seconds:.1f} s)")
    for code, probe in sorted(by_code.items()):
        print(f"    {code} {probe.get('verdict')}: {probe.get('evidence')}")
    return (sweep.get("recommended"), by_code.get("DL202", {}).get("verdict"), by_code.get("DL201", {}).get("verdict"),
            persistence.get("saving_per_epoch_s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=32)
    options = parser.parse_args()
    print(f"{usable_cores()} usable cores, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "train.py"
        script.write_text(SCRIPT.format(workers=options.workers))
        outcomes = [one_run(script, number) for number in range(1, options.runs + 1)]
    recommendations = [outcome[:3] for outcome in outcomes]
    same = max(recommendations.count(outcome) for outcome in recommendations)
    print(f"same recommendation and verdicts (num_workers, DL202, DL201) in {same} of {len(outcomes)} runs")


if __name__ == "__main__":
    main()
