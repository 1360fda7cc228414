"""DL202, DL203, DL207: how many workers this loader really needs here.

Sweeps ``num_workers`` over 0, 1, 2, 4, ... up to the larger of the requested
count and the usable cores. Each count is measured in the steady state: after
start-up, past the batches the workers prefetched meanwhile, in repeated
windows of a minimum length whose spread is the noise. Memory is the peak PSS
of main plus workers (copy-on-write pages shared by forked workers counted
once). The recommendation is the smallest count within 5% of the best; a
count above the usable cores is only eligible when it beats the best count
within the cores by more than the measured noise.
"""

from __future__ import annotations

import os

from dllint.probe.context import out_of_time
from dllint.probe.measure import Steady, describe_error, steady_throughput
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, Table

CODES = ("DL202", "DL203", "DL207")
ALWAYS = False

WITHIN_BEST = 0.95
CHART_WIDTH = 30
WINDOWS = 3
WINDOW_SECONDS = 0.25
DEFAULT_PREFETCH = 2  # torch's prefetch_factor default


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_counts(requested: int, cores: int, limit: int | None = None) -> list[int]:
    """0, powers of two up to the cores, the cores, twice the cores, and the requested count.

    Past twice the cores only the requested count is worth its start-up time:
    it is the one the finding is about.
    """
    top = max(requested, cores)
    if limit is not None:
        top = min(top, limit)
    counts, count = {0}, 1
    while count <= min(top, 2 * cores):
        counts.add(count)
        count *= 2
    counts.update(extra for extra in (requested, cores, 2 * cores) if extra <= top)
    return sorted(counts)


def recommend(samples_per_s: dict[int, float], cores: int | None = None, spread: dict[int, float] | None = None) -> int | None:
    """The smallest count within 5% of the best eligible one.

    With ``cores``: counts above it are eligible only when they beat the best
    count within the cores by more than the noise (their spread, at least 5%).
    """
    if not samples_per_s:
        return None
    eligible = dict(samples_per_s)
    if cores is not None and any(count <= cores for count in samples_per_s):
        within = {count: rate for count, rate in samples_per_s.items() if count <= cores}
        best_within = max(within, key=within.get)
        noise = dict(spread or {})
        eligible = dict(within)
        for count, rate in samples_per_s.items():
            margin = max(1 - WITHIN_BEST, noise.get(count, 0.0), noise.get(best_within, 0.0))
            if count > cores and rate > within[best_within] * (1 + margin):
                eligible[count] = rate
    best = max(eligible.values())
    return min(count for count, rate in eligible.items() if rate >= WITHIN_BEST * best)


def render_chart(rows: dict[int, dict], recommended: int | None) -> list[str]:
    best = max((row["samples_per_s"] for row in rows.values() if "samples_per_s" in row), default=0.0)
    lines = []
    for count, row in sorted(rows.items()):
        if "samples_per_s" not in row:
            lines.append(f"{count:>3} workers | failed: {row['error']}")
            continue
        rate = row["samples_per_s"]
        bar = "#" * (round(CHART_WIDTH * rate / best) if best else 0)
        mark = "  <- recommended" if count == recommended else ""
        noise = f" ±{row['spread'] * 50:.0f}%" if row.get("spread") else ""
        lines.append(f"{count:>3} workers | {bar:<{CHART_WIDTH}} {rate:>9.1f} samples/s{noise:<5} {row['peak_mb']:>7.0f} MB{mark}")
    return lines


def steady_for(site, ctx, count: int) -> Steady:
    prefetch = site.arguments.get("prefetch_factor") or DEFAULT_PREFETCH
    return Steady(warmup_batches=2 * count * prefetch, window_batches=ctx.settings.batches,
                  window_seconds=WINDOW_SECONDS, windows=WINDOWS)


def on_first_iteration(site, ctx) -> None:
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    requested, cores = site.num_workers, ctx.settings.cores or usable_cores()
    rows: dict[int, dict] = {}
    for count in worker_counts(requested, cores, ctx.settings.sweep_limit):
        try:
            with ctx.measuring(site, f"sweep: num_workers={count}"):
                loader = site.endless_variant(num_workers=count, persistent_workers=False)
                rows[count] = steady_throughput(loader, steady_for(site, ctx, count))
        except Exception as error:  # a count that cannot run (or runs out of time) is a row, not a crash
            rows[count] = {"error": describe_error(error), "verdict": out_of_time(error)}
    rates = {count: row["samples_per_s"] for count, row in rows.items() if row.get("samples_per_s")}
    spread = {count: row["spread"] for count, row in rows.items() if "spread" in row}
    recommended = recommend(rates, cores, spread)
    ctx.table(site, Table(
        f"num_workers sweep (steady state, {WINDOWS} windows each; {cores} usable cores)",
        ["num_workers", "samples/s", "spread", "startup s", "peak PSS MB"],
        [[count, f"{row['samples_per_s']:.1f}", f"{row['spread'] * 100:.0f}%", f"{row['startup_s']:.3f}", f"{row['peak_mb']:.0f}"]
         if "samples_per_s" in row else [count, "failed", "", row["error"], ""] for count, row in sorted(rows.items())],
        chart=render_chart(rows, recommended),
    ))
    measurements = {"usable_cores": cores, "requested": requested, "recommended": recommended,
                    "sweep": {str(count): row for count, row in rows.items()}}
    for code in codes:
        _verdict(site, ctx, code, rates, requested, recommended, measurements)


def _verdict(site, ctx, code, rates, requested, recommended, measurements) -> None:
    if recommended is None:
        ctx.result(site, code, out_of_time(RuntimeError("no worker count delivered batches")),
                   "the sweep measured nothing", measurements)
        return
    best = max(rates.values())
    if code == "DL203":
        at_zero = rates.get(0, 0.0)
        confirmed = recommended > 0 and at_zero < WITHIN_BEST * best
        evidence = f"0 workers: {at_zero:.1f} samples/s; {recommended} workers: {rates[recommended]:.1f} samples/s"
    else:
        at_requested = rates.get(requested)
        confirmed = recommended < requested
        evidence = (f"{requested} workers: {at_requested:.1f} samples/s; " if at_requested is not None
                    else f"{requested} workers: not measured; ")
        evidence += f"{recommended} workers reach {rates[recommended]:.1f} samples/s (within 5% of the best): use {recommended}"
    ctx.result(site, code, CONFIRMED if confirmed else NOT_CONFIRMED, evidence, measurements)
