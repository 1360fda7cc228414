"""Benchmark: are the probe's input-bound share and its settings block true, on scripts of known cost?

Each script (sleep-bound, CPU-bound, step-bound, contended, in-memory; each kind in a few sizes)
trains a small model (on CUDA when available) over a dataset of exactly 16 batches, the probe's
epoch. For each script:

1. the probe, as the user runs it: ``dllint --probe script.py --format json --probe-report r.json``;
   from the report: ``loaders[0].step.input_bound_fraction`` (and ``bound``) and the recommended
   block (its settings and ``verdict``);
2. an independent measurement by this file's own code, in the script's process: rounds of the
   script's 3 epochs on a fresh loader (the first epoch, worker start and all, included) and of the
   step alone on the same batches replayed from memory (GPU synchronized), the two in alternating
   order; share = 1 - step alone / real per round, the median of the rounds;
3. the block's real gain: the whole script run with its own settings and with the block's,
   interleaved (A B A B ...), ``--pairs`` pairs; gain = median(A) / median(B) - 1.

Goal: the share within 10 points of the independent one on each script, and the gain of the same
sign as the report's verdict (``better``: faster beyond the pairs' noise; ``keep yours``: not
faster beyond it; ``inconclusive``: within the pairs' spread). The scripts use one intra-op thread:
on a loaded machine two threads that wait for each other make a step's cost anything.

Run: python benchmarks/probe_truth.py OUT_PREFIX [--quick] [--pairs 5]
writes OUT_PREFIX.md (a markdown table) and OUT_PREFIX.json. Needs torch (and dllint installed);
works on any core count; no other dependency.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BATCHES = 16  # per epoch: the probe's bound, so both sides time the same epochs
SAME = 0.05  # a before -> after within this relative change is "no change"

SCRIPT = '''\
import json
import os
import statistics
import time

import torch
from torch.utils.data import DataLoader, Dataset

KIND, COST, BATCH = {kind!r}, {cost!r}, {batch}
# One intra-op thread: on a loaded machine two threads that wait for each other at every operation made
# one step take anything from 1x to 30x its cost (the step x20 script read 0-72% input-bound round to round).
torch.set_num_threads(1)
SETTINGS = {settings!r}
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Data(Dataset):
    def __init__(self):
        self.table = torch.rand(16 * BATCH, 256)

    def __len__(self):
        return 16 * BATCH

    def __getitem__(self, index):
        if KIND == "sleep":
            time.sleep(COST / 1000)
        elif KIND in ("cpu", "contended"):
            image = torch.rand(3, 32, 32)
            for _ in range(int(COST)):
                image = torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)
        return self.table[index]


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def step(model, optimizer, batch):
    batch = batch.to(DEVICE)
    repeats = int(COST) if KIND == "step" else 1
    for _ in range(repeats):
        loss = model(batch).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def real_epochs(loader, model, optimizer, epochs, kept=None):
    """The script's loop over ``epochs`` epochs, the first included (worker start): seconds."""
    begun = time.perf_counter()
    for _ in range(epochs):
        for batch in loader:
            step(model, optimizer, batch)
            if kept is not None:
                kept.append(batch)
        sync()
    return time.perf_counter() - begun


def replay(kept, model, optimizer, epochs):
    """The step alone: ``epochs`` epochs of the same batches from memory, seconds."""
    begun = time.perf_counter()
    for _ in range(epochs):
        for batch in kept:
            step(model, optimizer, batch)
        sync()
    return time.perf_counter() - begun


def main():
    truth = json.loads(os.environ.get("DLLINT_TRUTH", "{{}}"))
    settings = dict(SETTINGS, **truth.get("settings", {{}}))
    if not settings.get("num_workers"):
        for option in ("persistent_workers", "prefetch_factor"):
            settings.pop(option, None)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    epochs = truth.get("epochs", 3)
    if truth.get("mode") == "measure":
        # Rounds, interleaved: the script's epochs on a fresh loader (its first epoch, worker start and all),
        # then the step alone on the same batches replayed from memory; a machine whose load changes weighs
        # on both alike. Share per round: 1 - replay / real; the median over the rounds.
        kept = []
        real_epochs(DataLoader(Data(), batch_size=BATCH, **settings), model, optimizer, 1, kept)  # warm-up
        shares, reals, alones = [], [], []
        for number in range(truth.get("rounds", 5)):
            alone = replay(kept, model, optimizer, epochs) if number % 2 else None  # the order alternates
            loader = DataLoader(Data(), batch_size=BATCH, **settings)
            real = real_epochs(loader, model, optimizer, epochs)
            del loader
            alone = replay(kept, model, optimizer, epochs) if alone is None else alone
            shares.append(max(0.0, 1 - alone / real))
            reals.append(real / epochs)
            alones.append(alone / epochs)
        print(json.dumps({{"share": statistics.median(shares), "shares": shares, "epoch_s": statistics.median(reals),
                          "step_alone_s": statistics.median(alones)}}))
    elif truth.get("mode") == "time":
        started = time.perf_counter()
        loader = DataLoader(Data(), batch_size=BATCH, **settings)
        real_epochs(loader, model, optimizer, epochs)
        print(json.dumps({{"total_s": time.perf_counter() - started}}))
    else:  # as a user runs it (and the probe)
        loader = DataLoader(Data(), batch_size=BATCH, **settings)
        real_epochs(loader, model, optimizer, epochs)


if __name__ == "__main__":
    main()
'''


@dataclass
class Case:
    name: str
    kind: str  # sleep, cpu, step, contended, memory
    cost: float  # ms slept per sample; pooling passes per sample; step repeats per batch
    batch: int
    settings: dict[str, Any]


def cases(cores: int) -> list[Case]:
    many = 4 * cores  # contended: far more CPU-bound workers than cores
    return [
        Case("sleep 2 ms, 0 workers", "sleep", 2, 8, {"num_workers": 0}),
        Case("sleep 2 ms, 2 workers", "sleep", 2, 8, {"num_workers": 2}),
        Case("sleep 5 ms, 2 workers", "sleep", 5, 8, {"num_workers": 2}),
        Case("cpu 2 passes, 0 workers", "cpu", 2, 16, {"num_workers": 0}),
        Case("cpu 6 passes, 0 workers", "cpu", 6, 16, {"num_workers": 0}),
        Case("cpu 6 passes, 2 workers", "cpu", 6, 16, {"num_workers": 2}),
        Case("step x20, 0 workers", "step", 20, 32, {"num_workers": 0}),
        Case("step x60, 0 workers", "step", 60, 32, {"num_workers": 0}),
        Case("step x20, 2 workers", "step", 20, 32, {"num_workers": 2}),
        Case(f"contended cpu 4 passes, {many} persistent workers", "contended", 4, 32,
             {"num_workers": many, "persistent_workers": True}),
        Case(f"contended cpu 8 passes, {many} workers", "contended", 8, 32, {"num_workers": many}),
        Case("in-memory, 2 workers", "memory", 0, 64, {"num_workers": 2}),
        Case("in-memory, 4 workers", "memory", 0, 64, {"num_workers": 4}),
    ]


@dataclass
class Row:
    name: str
    probe_share: float | None = None
    true_share: float | None = None
    true_shares: list[float] = field(default_factory=list)  # the independent side's rounds
    bound: str | None = None
    contended_by: str | None = None
    verdict: str | None = None  # the report's recommendation.verdict
    load: list[float] = field(default_factory=list)  # load average (1 minute) before and after the row
    difference: float | None = None
    block: dict[str, Any] = field(default_factory=dict)
    report_change: float | None = None  # the report's before -> after epoch time, relative (negative: faster)
    timed_gain: float | None = None  # median(script's) / median(block's) - 1 (positive: the block is faster)
    timed_spread: float | None = None
    sign_agrees: bool | None = None
    note: str = ""


def run_script(path: Path, truth: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    environment = dict(os.environ, DLLINT_TRUTH=json.dumps(truth))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=environment,
                          timeout=timeout, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def probe(path: Path, timeout: float) -> dict[str, Any]:
    report = path.with_suffix(".probe.json")
    subprocess.run([sys.executable, "-m", "dllint", "--probe", str(path), "--format", "json", "--probe-report",
                    str(report), "--probe-timeout", str(timeout)], capture_output=True, text=True, cwd=path.parent,
                   timeout=timeout * 3 + 120)
    return json.loads(report.read_text()) if report.exists() else {}


def judge(case: Case, directory: Path, pairs: int, timeout: float, rounds: int) -> Row:
    row = Row(case.name, load=[os.getloadavg()[0]])
    path = directory / f"{case.name.split(',')[0].replace(' ', '_')}_{abs(hash(case.name)) % 10000}.py"
    path.write_text(SCRIPT.format(kind=case.kind, cost=case.cost, batch=case.batch, settings=case.settings))
    report = probe(path, timeout)
    loaders = report.get("loaders") or []
    if not loaders:
        row.note = f"the probe reported no loader ({report.get('script_outcome', 'no report')})"
        return row
    step = loaders[0].get("step", {})
    row.probe_share = step.get("input_bound_fraction")
    row.bound, row.contended_by = step.get("bound"), step.get("contended_by")
    truth = run_script(path, {"mode": "measure", "epochs": 3, "rounds": rounds})
    row.true_share, row.true_shares = truth["share"], truth["shares"]
    if row.probe_share is not None:
        row.difference = row.probe_share - truth["share"]
    recommendation = loaders[0].get("recommendation") or {}
    before, after = recommendation.get("before") or {}, recommendation.get("after") or {}
    defaults = {"num_workers": 0, "persistent_workers": False, "prefetch_factor": 2, "pin_memory": False}
    own = {**defaults, **case.settings}
    row.block = {key: value for key, value in (recommendation.get("settings") or {}).items() if own.get(key) != value}
    if before.get("epoch_s") and after.get("epoch_s"):
        row.report_change = after["epoch_s"] / before["epoch_s"] - 1
    row.verdict = recommendation.get("verdict")
    if not row.block or not recommendation.get("changed"):
        row.block = {}
        row.note = "the script's own settings (nothing to re-run)" if recommendation else "no block"
        return row
    mine, theirs = [], []
    for _ in range(pairs):  # interleaved: a machine whose load changes weighs on both alike
        mine.append(run_script(path, {"mode": "time", "epochs": 3})["total_s"])
        theirs.append(run_script(path, {"mode": "time", "epochs": 3, "settings": recommendation["settings"]})["total_s"])
    ratios = [a / b for a, b in zip(mine, theirs)]
    gain = statistics.median(mine) / statistics.median(theirs) - 1
    spread = (max(ratios) - min(ratios)) / statistics.median(ratios)
    row.timed_gain, row.timed_spread, row.sign_agrees = gain, spread, agrees(row.verdict, gain, spread)
    return row


def agrees(verdict: str | None, gain: float, spread: float) -> bool | None:
    """Whether the hand-timed gain has the sign the report's verdict gives the block: ``better``, faster
    beyond the noise; ``keep yours``, not faster beyond it; ``inconclusive``, within the pairs' spread."""
    seen = 0 if abs(gain) <= max(SAME, spread / 2) else (1 if gain > 0 else -1)
    if verdict == "better":
        return seen > 0
    if verdict == "keep yours":
        return seen <= 0
    if verdict == "inconclusive":
        return seen == 0 or abs(gain) <= spread
    return None


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f}%" if value < 0 or value > 1 else f"{value * 100:.0f}%"


def table(rows: list[Row]) -> str:
    lines = ["| script | load | probe's input-bound share (bound) | independent (replay; rounds) | difference (points) | "
             "block | report's verdict (epoch change) | timed gain (pairs' spread) | same sign |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        difference = "-" if row.difference is None else f"{row.difference * 100:+.0f}"
        block = ", ".join(f"{key}={value}" for key, value in row.block.items()) or row.note or "-"
        change = "" if row.report_change is None else f" ({row.report_change * 100:+.0f}%)"
        verdict = f"{row.verdict or '-'}{change}" if row.block else "-"
        gain = "-" if row.timed_gain is None else f"{row.timed_gain * 100:+.0f}% ({(row.timed_spread or 0) * 100:.0f}%)"
        agrees = {True: "yes", False: "**no**", None: "-"}[row.sign_agrees]
        bound = f"{row.bound}{' by ' + row.contended_by if row.contended_by else ''}" if row.bound else "no bound"
        share = "-" if row.probe_share is None else f"{row.probe_share * 100:.0f}% ({bound})"
        spread = f"; {min(row.true_shares) * 100:.0f}-{max(row.true_shares) * 100:.0f}%" if row.true_shares else ""
        true = "-" if row.true_share is None else f"{row.true_share * 100:.0f}%{spread}"
        load = " -> ".join(f"{value:.1f}" for value in row.load) or "-"
        lines.append(f"| {row.name} | {load} | {share} | {true} | {difference} | {block} | {verdict} | {gain} | {agrees} |")
    within = [row for row in rows if row.difference is not None]
    close = sum(abs(row.difference) <= 0.10 for row in within if row.difference is not None)
    signed = [row for row in rows if row.sign_agrees is not None]
    lines.append("")
    lines.append(f"within 10 points: {close} of {len(within)}; same sign: "
                 f"{sum(bool(row.sign_agrees) for row in signed)} of {len(signed)} blocks timed")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="output prefix: writes OUT.md and OUT.json")
    parser.add_argument("--quick", action="store_true", help="2 pairs, a shorter probe timeout")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--only", help="run only the scripts whose name contains this")
    arguments = parser.parse_args()
    pairs = 2 if arguments.quick else arguments.pairs
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="probe-truth-") as directory:
        for case in cases(cores):
            if arguments.only and arguments.only not in case.name:
                continue
            try:
                row = judge(case, Path(directory), pairs, 60 if arguments.quick else 120, 3 if arguments.quick else 5)
            except (subprocess.SubprocessError, ValueError, KeyError) as error:
                row = Row(case.name, note=f"failed: {type(error).__name__}: {str(error)[:80]}")
            row.load.append(os.getloadavg()[0])
            rows.append(row)
            print(table([row]).splitlines()[2], flush=True)
    text = table(rows)
    device = "cuda" if _has_cuda() else "cpu"
    header = f"probe truth: {len(rows)} scripts, {cores} usable cores, model on {device}, {pairs} interleaved pairs\n\n"
    Path(arguments.out + ".md").write_text(header + text + "\n")
    Path(arguments.out + ".json").write_text(json.dumps({"cores": cores, "device": device, "pairs": pairs,
                                                         "rows": [asdict(row) for row in rows]}, indent=2))
    print(header + text)


def _has_cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


if __name__ == "__main__":
    main()
