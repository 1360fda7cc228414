"""How dllint's cost grows with a project, beside ruff's, on two generated shapes (issue 32, 36):

- ``factories``: N factory modules (``pkg/factory_i.py``, each with its own ``build_i``), each
  called from a script of its own (``scripts/train_i.py``): N distinct cross-file names;
- ``copies``: N copies of one course chapter (``chapter_i/helper.py`` defining ``make``,
  ``chapter_i/train.py`` importing it): one name defined and called N times, each copy its own.

Each size is checked cold (``--no-cache``) as a fresh process; the figure is CPU time (user +
system of the process and its children), the median of ``--repeat`` runs, with ruff's
``check --no-cache --isolated`` on the same tree in the same rounds (interleaved).

Usage: ``python benchmarks/bench_growth.py [--shape factories|copies|both] [--sizes 100,1000,3000]
[--repeat 3] [--dllint "python -m dllint"]``. The issue's targets: factories at most 3.2x from
1,000 to 3,000 and at most 6 s at 3,000; copies growing linearly.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FACTORY = '''\
from torch.utils.data import DataLoader


def build_{i}(dataset, workers=4, persistent=False):
    return DataLoader(dataset, batch_size=8, num_workers=workers, persistent_workers=persistent)
'''

SCRIPT = '''\
from pkg.factory_{i} import build_{i}


def main(dataset):
    loader = build_{i}(dataset, workers={workers})
    for epoch in range(10):
        for batch in loader:
            pass
'''

HELPER = '''\
from torch.utils.data import DataLoader


def make(dataset, batch_size=4, num_workers=0):
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers)
'''

CHAPTER = '''\
from helper import make


def main(dataset):
    loader = make(dataset, batch_size=2, num_workers=0)
    for epoch in range(3):
        for batch in loader:
            pass


if __name__ == "__main__":
    main(list(range(10)))
'''


def generate(shape: str, size: int, root: Path) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    if shape == "factories":
        (root / "pkg").mkdir()
        (root / "pkg" / "__init__.py").write_text("")
        (root / "scripts").mkdir()
        for i in range(size):
            (root / "pkg" / f"factory_{i}.py").write_text(FACTORY.format(i=i))
            (root / "scripts" / f"train_{i}.py").write_text(SCRIPT.format(i=i, workers=i % 3))
    else:
        for i in range(size):
            chapter = root / f"chapter_{i}"
            chapter.mkdir()
            (chapter / "helper.py").write_text(HELPER)
            (chapter / "train.py").write_text(CHAPTER)


def cpu_of(command: list[str], cwd: Path) -> tuple[float, int]:
    """CPU seconds of ``command`` and its children, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shape", choices=("factories", "copies", "both"), default="both")
    parser.add_argument("--sizes", default="", help="comma-separated sizes (default: 100,1000,3000 / 200,400,800)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dllint", default=f"{sys.executable} -m dllint", help="the command that runs dllint")
    args = parser.parse_args()
    dllint = shlex.split(args.dllint)
    ruff = shutil.which("ruff")
    shapes = ("factories", "copies") if args.shape == "both" else (args.shape,)
    print(f"| shape | N | dllint CPU (s) | ruff CPU (s) | dllint / ruff | dllint growth |")
    print("|---|---:|---:|---:|---:|---:|")
    for shape in shapes:
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([100, 1000, 3000] if shape == "factories" else [200, 400, 800])
        previous: tuple[int, float] | None = None
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                generate(shape, size, root)
                ours, theirs = [], []
                for _ in range(args.repeat):
                    ours.append(cpu_of([*dllint, "--no-cache", "--quiet", "."], root)[0])
                    if ruff:
                        theirs.append(cpu_of([ruff, "check", "--no-cache", "--isolated", "--quiet", "."], root)[0])
                mine = statistics.median(ours)
                other = statistics.median(theirs) if theirs else float("nan")
                growth = f"{mine / previous[1]:.2f}x for {size / previous[0]:.1f}x files" if previous else ""
                print(f"| {shape} | {size} | {mine:.2f} | {other:.2f} | {mine / other:.1f}x | {growth} |", flush=True)
                previous = (size, mine)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
