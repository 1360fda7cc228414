"""The code-quality numbers of issue 34, reproducible with common tools (``pip install radon mypy``).

    python benchmarks/quality.py            # radon mean CC, MI per package, mypy --strict per package, layers

Maintainability index per package is the mean of its modules' radon MI (each module counts once);
``mypy --strict`` errors are counted by the package of the file they are reported in.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent


def package_of(path: str) -> str:
    parts = Path(path).parts
    return parts[1] if len(parts) > 2 else "(top level)"


def radon(kind: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "radon", kind, "-j", "dllint"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def mean_cc() -> tuple[float, int]:
    blocks = [block["complexity"] for entries in radon("cc").values() for block in entries]
    return mean(blocks), len(blocks)


def mi_per_package() -> dict[str, float]:
    by_package: dict[str, list[float]] = defaultdict(list)
    for path, result in radon("mi").items():
        by_package[package_of(path)].append(result["mi"])
    return {package: round(mean(values), 1) for package, values in sorted(by_package.items())}


def strict_errors() -> Counter[str]:
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "dllint"], cwd=ROOT, capture_output=True, text=True)
    counts: Counter[str] = Counter()
    for line in out.stdout.splitlines():
        match = re.match(r"(dllint/[^:]+):\d+: error:", line)
        if match:
            counts[package_of(match.group(1))] += 1
    return counts


def main() -> None:
    cc, blocks = mean_cc()
    print(f"radon mean cyclomatic complexity: {cc:.2f} over {blocks} blocks")
    print("radon maintainability index, mean per package:")
    for package, value in mi_per_package().items():
        print(f"  {package}: {value}")
    counts = strict_errors()
    print(f"mypy --strict: {sum(counts.values())} errors")
    for package, count in counts.most_common():
        print(f"  {package}: {count}")
    layers = subprocess.run([sys.executable, "benchmarks/layers.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    print(layers.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
