"""Time and peak memory of dllint on generated inputs of growing size (issue 12, item 6).

```
python benchmarks/huge_inputs.py                    # every shape at 0.25, 0.5, 1, 2 MB
python benchmarks/huge_inputs.py --sizes 1 4 16 --shapes one_line_list
python benchmarks/huge_inputs.py --markdown         # rows for benchmarks/README.md
```

Each (shape, size) runs ``python -m dllint FILE --no-cache`` as a fresh process
(the real command a user runs, with the run's startup included) and records
wall time, CPU time (steadier than wall time on a shared machine) and the
peak RSS of that process (``ru_maxrss``: what the kernel
saw, not a sampling guess). A shape is a generator of source text
that reaches a DataLoader trigger, so the prefilter lets it through and every
layer (parse, facts, rules, noqa, positions) runs.

What grows linearly shows a constant time/MB and RSS/MB across sizes; a
super-linear cost shows as time/MB rising with size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
HEADER = "from torch.utils.data import DataLoader, Dataset\n"


def repeated(size: int, part: Callable[[int], str]) -> tuple[str, int]:
    """``part(0) + part(1) + ...`` until at least ``size`` characters, and how many parts that took."""
    parts, total, i = [], 0, 0
    while total < size:
        parts.append(part(i))
        total += len(parts[-1])
        i += 1
    return "".join(parts), i


def one_line_list(size: int) -> str:
    """A data literal on one line: ``x = [0, 1, 2, ...]`` (the 1 MB case of the issue)."""
    items, _ = repeated(size, lambda i: f"{i}, ")
    return HEADER + "x = [" + items + "]\nloader = DataLoader(x, num_workers=2)\n"


def many_functions(size: int) -> str:
    """Many small functions, each with a local and a call."""
    return HEADER + repeated(size, lambda i: f"def f{i}(a, b=1):\n    c = a + b\n    return g(c, {i})\n\n")[0]


def many_loaders(size: int) -> str:
    """Many loader calls with resolved arguments, iterated in loops: the facts rules read most."""
    return HEADER + "ds = list(range(10))\n" + repeated(size, lambda i: (
        f"loader{i} = DataLoader(ds, batch_size={i % 64 + 1}, num_workers={i % 4}, shuffle=True)\n"
        f"for batch in loader{i}:\n    step(batch)\n"
    ))[0]


def deep_nesting(size: int) -> str:
    """Blocks nested as deep as the parser allows (90 levels), repeated until the size is reached."""
    depth = 90
    block = "".join("    " * d + f"if x{d}:\n" for d in range(depth)) + "    " * depth + "loader = DataLoader(ds)\n"
    return HEADER + repeated(size, lambda i: block)[0]


def long_lines(size: int) -> str:
    """Lines of 100 kB: calls with thousands of arguments, each line its own statement."""
    arguments = ", ".join(f"v{j}" for j in range(100_000 // 7))
    return HEADER + repeated(size, lambda i: f"s{i} = combine({arguments})\nDataLoader(s{i}, num_workers={i % 3})\n")[0]


def many_resolved_loaders(size: int) -> str:
    """Loaders whose ``num_workers`` comes from an argparse default: every DL201 fix quotes it."""
    head = (
        HEADER
        + "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--workers', type=int, default=4)\n"
        + "args = parser.parse_args()\n"
    )
    return head + repeated(size, lambda i: (
        f"loader{i} = DataLoader(ds, num_workers=args.workers)\n"
        f"for epoch in range(3):\n    for b in loader{i}:\n        pass\n"
    ))[0]


def many_datasets(size: int) -> str:
    """Dataset classes with ``__getitem__`` bodies: the worker-side code facts."""
    return HEADER + "import random\n" + repeated(size, lambda i: (
        f"class D{i}(Dataset):\n    def __init__(self):\n        self.items = list(range({i}))\n"
        f"    def __getitem__(self, k):\n        return self.items[k] + random.random()\n"
        f"    def __len__(self):\n        return len(self.items)\n\n"
        f"DataLoader(D{i}(), num_workers=2)\n"
    ))[0]


def one_line_findings(size: int) -> str:
    """Thousands of statements on one non-ASCII line, each a finding: positions and noqa per finding."""
    statements, _ = repeated(size, lambda i: f"l{i} = DataLoader(données, num_workers=0, persistent_workers=True); ")
    return HEADER + statements + "pass  # noqa: DL204\n"


def big_class(size: int) -> str:
    """One class of many methods that call each other through ``self`` and store loaders on
    ``self``, like a framework's ``Trainer``: the flow asks, per stored loader, which loops run
    the methods that read it (quadratic when the class is walked per question)."""
    methods, count = repeated(size, lambda i: (
        f"    def step{i}(self):\n        self.loader{i} = DataLoader(ds, num_workers=2)\n"
        f"        for b in self.loader{i}:\n            self.step{i + 1}()\n"
        f"        self.helper{i % 7}()\n"
        f"    def helper{i}(self):\n        return self.loader{max(i - 1, 0)}\n"
    ))
    head = HEADER + "class Trainer:\n    def fit(self):\n        for epoch in range(3):\n            self.step0()\n"
    return head + methods + f"    def step{count}(self):\n        pass\n"


SHAPES: dict[str, Callable[[int], str]] = {
    f.__name__: f for f in (
        one_line_list,
        one_line_findings,
        many_functions,
        many_loaders,
        many_resolved_loaders,
        many_datasets,
        big_class,
        deep_nesting,
        long_lines,
    )
}


# A fresh wrapper per measurement: ru_maxrss of RUSAGE_CHILDREN is the largest child a process ever
# waited for, so only a wrapper with exactly one child reports that child's own peak.
WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
)


# The floor no ast-based linter goes below: reading and parsing the file, nothing else.
PARSE_ONLY = "import ast, sys\nast.parse(open(sys.argv[1], 'rb').read())\n"


def measure(path: Path, root: Path, timeout: float, parse_only: bool = False) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code; -1 timed out) of ``python -m dllint path --no-cache``
    (``parse_only``: of ``ast.parse`` on the file)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = ["-c", PARSE_ONLY, str(path)] if parse_only else ["-m", "dllint", str(path), "--no-cache", "--format", "json"]
    command = [sys.executable, "-c", WRAPPER, sys.executable, *run]
    start = time.perf_counter()
    try:
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout).stdout.split()
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, float("nan"), float("nan"), -1
    wall = time.perf_counter() - start
    return wall, float(out[2]), int(out[1]) / 1024, int(out[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.25, 0.5, 1, 2], help="file sizes in MB")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--root", type=Path, default=ROOT, help="the dllint checkout to measure (default: this one)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            for size_mb in sorted(args.sizes):
                text = SHAPES[shape](int(size_mb * 1_000_000))
                path = Path(tmp) / f"{shape}.py"
                path.write_text(text)
                megabytes = len(text.encode()) / 1e6
                wall, cpu, peak, code = measure(path, args.root, args.timeout)
                _, parse_cpu, parse_peak, _ = measure(path, args.root, args.timeout, parse_only=True)
                row = (shape, megabytes, wall, cpu, peak, code, parse_cpu, parse_peak)
                rows.append(row)
                if not args.markdown:
                    print(
                        f"{shape:17} {megabytes:5.2f} MB  wall {wall:6.1f} s  "
                        f"CPU {cpu:6.1f} s ({cpu / megabytes:5.2f}/MB)  "
                        f"peak {peak:5.0f} MB ({peak / megabytes:3.0f}x)  | parse alone: CPU {parse_cpu:5.1f} s, "
                        f"peak {parse_peak:5.0f} MB  exit {code}",
                        flush=True,
                    )
    if args.markdown:
        print("| shape | size | wall | CPU | CPU s/MB | peak RSS | RSS / size | `ast.parse` alone: CPU, peak RSS |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for shape, megabytes, wall, cpu, peak, code, parse_cpu, parse_peak in rows:
            timed_out = " (timed out)" if code == -1 else ""
            print(
                f"| {shape} | {megabytes:.2f} MB | {wall:.1f} s{timed_out} | {cpu:.1f} s | {cpu / megabytes:.2f} "
                f"| {peak:.0f} MB | {peak / megabytes:.0f}x | {parse_cpu:.1f} s, {parse_peak:.0f} MB |"
            )


if __name__ == "__main__":
    main()
