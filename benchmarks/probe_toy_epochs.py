"""Benchmark: how long the probe takes to give every verdict and the data wait on a 3-epoch toy training script.

The script has two static findings (DL201: workers restart every epoch;
DL202: ``num_workers=os.cpu_count()``, the whole machine). The probe runs with its default settings (the script's own
start method and spawn for persistence, the full num_workers sweep, 3 real
epochs of at most 16 batches). "verdicts" is the first run, after the harness
imported torch (the probe's timeout does not count the import either): every
verdict and the data wait are in by its end. "re-run" is the second run that
proves the recommended settings (its own torch import included). The load
average of the machine is printed with each run: it is shared.

Run: python benchmarks/probe_toy_epochs.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from dllint.config import Settings
from dllint.engine import Linter
from dllint.inputs import Input
from dllint.probe import run_probe
from dllint.probe.checks.sweep import usable_cores

TOY = '''\
import os

import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        return torch.rand(3, 32, 32), index % 10


def main():
    loader = DataLoader(Images(), batch_size=32, shuffle=True, num_workers=os.cpu_count())
    model = torch.nn.Linear(3 * 32 * 32, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images.flatten(1)), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "toy_train.py"
        script.write_text(TOY)
        probe_seconds, startup_seconds, rerun_seconds = [], [], []
        for run in range(options.runs):
            findings = Linter(Settings()).lint(Input(str(script), "python", TOY)).findings
            load = os.getloadavg()[0]
            report = run_probe(str(script), [], findings, timeout=120, progress=False)
            verdicts = ", ".join(f"{finding.code} {finding.probe['verdict']}" for finding in report.findings)
            probe_seconds.append(report.duration_s - (report.startup_s or 0.0))
            startup_seconds.append(report.startup_s or 0.0)
            rerun_seconds.append(report.rerun["duration_s"] if report.rerun else 0.0)
            step = report.loaders[0].step if report.loaders else {}
            wait = f"data wait {step['data_wait_fraction'] * 100:.0f}%" if "data_wait_fraction" in step else "no data wait"
            print(f"run {run + 1} (load average {load:.1f}): verdicts and data wait {probe_seconds[-1]:.1f} s after "
                  f"torch was imported (start-up {startup_seconds[-1]:.1f} s); re-run {rerun_seconds[-1]:.1f} s; "
                  f"{wait}; {verdicts}")
            if run == 0:
                print(report.render_text())
                print("timeline (s after torch was imported):")
                print("\n".join(f"  {seconds:6.2f}  {step}" for seconds, step in report.timeline))
    print(f"{usable_cores()} usable cores: all verdicts and the data wait in median {statistics.median(probe_seconds):.1f} s "
          f"(max {max(probe_seconds):.1f} s), torch import excluded (median start-up {statistics.median(startup_seconds):.1f} s); "
          f"the re-run with the recommended settings median {statistics.median(rerun_seconds):.1f} s more")


if __name__ == "__main__":
    main()
