"""One changed file of a 5,000-file project, warm: how long does dllint take?

Generates a project in a temporary directory (100 packages of 50 modules; one module in
ten builds loaders, half of those are factories whose callers live in other packages),
then times, each as a fresh ``python -m dllint check`` process with a cache directory:

1. cold: the whole project, empty cache;
2. warm: the whole project again, nothing changed;
3. one changed file, whole project: a training script edited (its loop body), then the
   whole project checked (the cache serves the other 4,999 files);
4. one changed file alone: ``dllint check that_file.py`` (what pre-commit runs), warm;
5. a changed factory: a module whose summary changes, so the files that read it re-lint.

Usage: ``python benchmarks/bench_project.py [--files 5000] [--jobs N] [--keep DIR]``.
The target is step 3 and 4 at or below 1 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAIN = '''\
"""Module {n}: helpers with no loader in sight."""
import math
import os


class Helper{n}:
    def __init__(self, scale=1.0):
        self.scale = scale
        self.values = []

    def add(self, value):
        self.values.append(value * self.scale)
        return self

    def mean(self):
        return sum(self.values) / max(1, len(self.values))


def transform_{n}(items, factor=2):
    out = []
    for item in items:
        if item % 3 == 0:
            out.append(math.sqrt(abs(item)) * factor)
        else:
            out.append(item + factor)
    return out


def path_for_{n}(root, name):
    return os.path.join(root, f"{{name}}_{n}.bin")
'''

FACTORY = '''\
"""Loaders for package {p}."""
from torch.utils.data import DataLoader, DistributedSampler


def build_train_loader_{p}(dataset, batch_size=32):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4)


def build_eval_loader_{p}(dataset):
    return DataLoader(dataset, batch_size=64, num_workers=4)
'''

TRAIN = '''\
"""Training script for package {p}."""
from pkg{q}.loaders import build_eval_loader_{q}, build_train_loader_{q}


def train(model, dataset, epochs):
    loader = build_train_loader_{q}(dataset)
    for epoch in range(epochs):
        for batch in loader:
            model(batch)
    for batch in build_eval_loader_{q}(dataset):
        model(batch)
'''


def generate(root: Path, files: int) -> tuple[Path, Path]:
    """The project; returns (a training script, a factory module)."""
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    per_package = 50
    packages = max(1, files // per_package)
    for p in range(packages):
        package = root / f"pkg{p}"
        package.mkdir()
        (package / "__init__.py").write_text("")
        for m in range(per_package - 1):
            n = p * per_package + m
            if m == 0:
                text = FACTORY.format(p=p)
                name = "loaders.py"
            elif m == 1:
                text = TRAIN.format(p=p, q=(p + 1) % packages)
                name = "train.py"
            else:
                text = PLAIN.format(n=n)
                name = f"mod{m}.py"
            (package / name).write_text(text)
    return root / "pkg0" / "train.py", root / "pkg1" / "loaders.py"


class Timing(tuple):
    """(wall seconds, CPU seconds of the dllint process and its workers)."""

    def __str__(self) -> str:
        return f"{self[0]:6.2f} s wall, {self[1]:5.2f} s CPU"


# As installed: modules compiled once (PYTHONDONTWRITEBYTECODE would recompile dllint on every run),
# their bytecode kept out of the checkout.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(args: list[str], cwd: Path, command: str = "check") -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dllint", *([command] if command else []), *args], cwd=cwd, capture_output=True, text=True, env=ENV
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"dllint failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing((elapsed, cpu))


def median(timings: list[Timing]) -> Timing:
    return Timing((statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate here and keep it")
    options = parser.parse_args()
    root = options.keep or Path(tempfile.mkdtemp(prefix="dllint-project-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        script, factory = generate(root, options.files)
        count = sum(1 for _ in root.rglob("*.py"))
        cache = root / ".bench_cache"
        ENV["PYTHONPYCACHEPREFIX"] = str(root / ".pycache")
        common = ["--cache-dir", str(cache), "--exit-zero"] + (["--jobs", str(options.jobs)] if options.jobs else [])
        print(f"project: {count} files in {root}")
        print(f"cold, whole project:          {run(['.', *common], root)}")
        print(f"warm, whole project:          {run(['.', *common], root)}")
        changed, alone, factory_times = [], [], []
        for i in range(options.repeat):
            with script.open("a") as handle:
                handle.write(f"\n\ndef added_{i}(x):\n    return x + {i}\n")
            changed.append(run([".", *common], root))
            with script.open("a") as handle:
                handle.write(f"\n\ndef again_{i}(x):\n    return x * {i}\n")
            alone.append(run([str(script), *common], root))
            text = factory.read_text()
            factory.write_text(text.replace("num_workers=4)", f"num_workers={4 + i + 1})", 1))
            factory_times.append(run([".", *common], root))
        print(f"one changed file, project:    {median(changed)} (median of {options.repeat})")
        print(f"one changed file alone:       {median(alone)} (median of {options.repeat})")
        print(f"changed factory, project:     {median(factory_times)} (median of {options.repeat})")
        print(f"(a bare `python -m dllint --version`: {run(['--version'], root, command='')})")
    finally:
        if options.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
