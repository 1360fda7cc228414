"""The probe's overhead on a 2-rank job: the same script under plain torchrun and under
``dllint --probe --nproc-per-node 2`` (which runs that torchrun), interleaved.

The script is ``fixtures/distributed/ddp_no_sampler.py`` with ``--epochs`` epochs of a
64-sample loader (gloo on loopback, CPU). Prints the wall time of each run and the medians;
the difference is what the probe adds: its harness in every rank (the import of dllint and
the hooks), its measurements at each loader's first iteration (the cross-rank draws), and its
report.

Usage: ``python benchmarks/probe_launcher_overhead.py [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "fixtures" / "distributed" / "ddp_no_sampler.py"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[:4]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    plain, probed = [], []
    for _ in range(options.rounds):
        plain.append(timed([*TORCHRUN, str(SCRIPT)]))
        probed.append(timed([sys.executable, "-m", "dllint", "--no-cache", "--probe", str(SCRIPT), "--nproc-per-node", "2"]))
        print(f"torchrun alone {plain[-1]:6.2f} s   dllint --probe --nproc-per-node 2 {probed[-1]:6.2f} s")
    a, b = statistics.median(plain), statistics.median(probed)
    print(f"median: torchrun alone {a:.2f} s; under the probe {b:.2f} s (+{b - a:.2f} s, {b / a:.1f}x); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
