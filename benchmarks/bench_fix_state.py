"""What one fix pass pays for LibCST before any fix runs: parse + metadata, per file.

Compares resolving positions and parents through LibCST's providers (what every pass did)
with what ``dllint.fixes.FileState`` does now (positions with the parse, parents by a plain
walk when a fix first asks). CPU time, best of 7.

    python benchmarks/bench_fix_state.py FILE.py [FILE.py ...]
"""

from __future__ import annotations

import sys
import time

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from dllint.fixes import FileState


def best_ms(func, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best * 1000


def main(paths: list[str]) -> None:
    totals = [0.0, 0.0, 0.0]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()

        def providers() -> None:
            MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).resolve_many((PositionProvider, ParentNodeProvider))

        times = [best_ms(providers), best_ms(lambda: FileState.parse(text)), best_ms(lambda: FileState.parse(text).parents)]
        totals = [a + b for a, b in zip(totals, times)]
        print(f"{path}: providers {times[0]:.0f} ms, positions only {times[1]:.0f} ms, with parents {times[2]:.0f} ms")
    print(f"total: providers {totals[0]:.0f} ms, positions only {totals[1]:.0f} ms, with parents {totals[2]:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
