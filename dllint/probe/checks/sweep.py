"""DL202, DL203, DL207: how many workers this loader really needs here.

Sweeps ``num_workers`` over 0, 1, 2, 4, ... up to the larger of the requested
count and the usable cores; a loader that waits on I/O rather than the CPU (its batches
drawn in the main process use under half a core: :func:`loading_cpu_share`) also up to
:data:`IO_CORES_FACTOR` times the cores, where sleeping workers still overlap. Every count's loader is started once and kept
running; then the counts take turns (interleaved rounds: each count times one
window of at least ``--probe-batches`` batches and 0.25 s, past the batches its
workers prefetched while it waited, then leaves its workers time to finish the
batches they were asked to prefetch), so that a machine whose load changes over
the run weighs on every count alike. Rounds are repeated (3 at least, at most 8, within
20 s: :class:`~dllint.probe.context.Settings`' ``sweep_*``) until the comparisons the
verdicts rest on are clear of the noise: each is the ratio of two counts' medians,
its spread the range of their round-by-round ratios relative to their median
(:mod:`dllint.probe.checks.gains`). Memory is the peak PSS of main plus that count's workers (copy-on-write pages shared by forked
workers counted once; USS where the system has no PSS).

The recommendation starts from the script's own count, capped at the usable
cores, and moves only to a count that beats it beyond the noise of their
comparison (a count above the cores is eligible only when it beats the best count
within the cores so), then to a smaller count within 5% of that one, measured that
precisely: on a noisy machine the answer stays where the evidence cannot move it,
run after run (:func:`decide`). Verdicts:

- DL202, DL207: confirmed when fewer workers than requested reach the best (the
  evidence says why: faster, within 5% of the best, or more workers than cores
  that are better only within the noise) with the processes and memory it saves
  and the time per epoch it saves or costs; ``inconclusive (spread 35% > gain 11%)``
  when the requested count is ahead by more than 5% but within the noise.
- DL203: confirmed when workers beat ``num_workers=0`` beyond the noise and the data
  time saved per epoch clears the floor of :mod:`~dllint.probe.checks.gains`.

Measurements (besides ``usable_cores``, ``requested``, ``recommended``, ``sweep``: per count
``startup_s``, ``samples_per_s``, ``spread``, ``windows``, ``peak_mb``, and now
``per_worker_mb`` and ``rounds``): ``rounds``, ``load_average`` (1, 5, 15 minutes, before
and after), ``comparison`` (``gain``, ``spread``, ``rounds`` of the comparison the verdict
rests on), ``memory`` (:mod:`~dllint.probe.checks.memory`), and the saving keys of
:class:`~dllint.probe.checks.gains.Saving` (``saving_per_epoch_s`` ...; per epoch of data
time, negative when fewer workers cost time).
"""

from __future__ import annotations

import os

import statistics
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dllint.probe.checks.gains import (
    MIN_BATCH_SAVING_S,
    NOISE_FLOOR,
    Comparison,
    RunLength,
    Saving,
    compare,
    load_average,
    run_length,
    seconds,
)
from dllint.probe.checks.memory import memory_of, tree_memory
from dllint.probe.context import out_of_time
from dllint.probe.internals import worker_pids
from dllint.probe.limits import MeasurementTimeout
from dllint.probe.measure import close_iterator, count_samples, describe_error
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, Table, inconclusive, not_confirmed
from dllint.probe.steps import data_wait_text, waits_on_data

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL202", "DL203", "DL207")
ALWAYS = False
SWEEPS_WORKERS = True  # capability: the harness runs it once per loader, also on one the real step waits on
JUDGES_DATA_WAIT = True  # capability: a 0-worker loader the real step waits on is a runtime DL203

WITHIN_BEST = 0.95
CHART_WIDTH = 30
WINDOW_SECONDS = 0.25
IO_BOUND_CPU_SHARE = 0.5  # a loader using less of a core than this waits on I/O...
IO_CORES_FACTOR = 4  # ...and is swept up to this many workers per core
MOST_SETTLE_SECONDS = 1.0  # after a window, for the workers' prefetched batches to finish
DEFAULT_PREFETCH = 2  # torch's prefetch_factor default


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_counts(requested: int, cores: int, limit: int | None = None, io_bound: bool = False) -> list[int]:
    """0, powers of two up to the cores, the cores, twice the cores, and the requested count.

    Past twice the cores only the requested count is worth its start-up time:
    it is the one the finding is about. A loader waiting on I/O: powers of two up to
    ``IO_CORES_FACTOR`` times the cores as well.
    """
    reach = IO_CORES_FACTOR * cores if io_bound else 2 * cores
    top = max(requested, reach if io_bound else cores)
    if limit is not None:
        top = min(top, limit)
    counts, count = {0}, 1
    while count <= min(top, reach):
        counts.add(count)
        count *= 2
    counts.update(extra for extra in (requested, cores, 2 * cores) if extra <= top)
    return sorted(counts)


def loading_cpu_share(site: LoaderSite, ctx: ProbeContext) -> float | None:
    """The share of a core that drawing batches in the main process keeps busy (None where it could not
    be measured): under :data:`IO_BOUND_CPU_SHARE` the loader waits on I/O (sleeps, reads, network), and
    more workers than cores still overlap their waits. Measured on a 0-worker copy, a few batches."""
    try:
        with ctx.measuring(site, "sweep: CPU share of loading (I/O or CPU bound)"):
            iterator = iter(site.endless_variant(num_workers=0))
            try:
                next(iterator)
                wall, cpu, queued, batches = time.perf_counter(), time.process_time(), _queued_seconds(), 0
                while batches < ctx.settings.batches or time.perf_counter() - wall < WINDOW_SECONDS / 2:
                    next(iterator)
                    batches += 1
                wall, cpu, queued = time.perf_counter() - wall, time.process_time() - cpu, _queued_seconds() - queued
            finally:
                close_iterator(iterator)
    except MeasurementTimeout:
        raise
    except Exception:  # the sweep itself reports a loader that cannot run
        return None
    # Time spent ready to run while other processes had the cores is neither loading nor waiting on I/O:
    # on a loaded machine it would read a CPU-bound loader as one that waits.
    awake = wall - max(0.0, queued)
    return min(1.0, cpu / awake) if awake > 0 else None


def _queued_seconds() -> float:
    """Seconds this thread has waited on a run queue (ready, not running): Linux's schedstat; 0 elsewhere."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stream:
            return int(stream.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


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
        best_within = max(within, key=within.__getitem__)
        noise = dict(spread or {})
        eligible = dict(within)
        for count, rate in samples_per_s.items():
            margin = max(1 - WITHIN_BEST, noise.get(count, 0.0), noise.get(best_within, 0.0))
            if count > cores and rate > within[best_within] * (1 + margin):
                eligible[count] = rate
    best = max(eligible.values())
    return min(count for count, rate in eligible.items() if rate >= WITHIN_BEST * best)


def render_chart(rows: dict[int, dict[str, Any]], recommended: int | None) -> list[str]:
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
        relative = f"{rate / best * 100:>4.0f}% of the best" if best else ""
        lines.append(f"{count:>3} workers | {bar:<{CHART_WIDTH}} {rate:>9.1f} samples/s{noise:<5} {relative} "
                     f"{row['peak_mb']:>7.0f} MB{mark}")
    return lines


@dataclass
class Stream:
    """One worker count's loader, started once and kept running while the counts take turns."""

    count: int
    iterator: Any = None
    startup_s: float | None = None
    rates: list[float] = field(default_factory=list)
    peak_mb: float = 0.0
    per_worker_mb: float | None = None
    error: str | None = None
    verdict: str | None = None  # a skipped verdict when the count could not run at all

    def row(self) -> dict[str, Any]:
        if not self.rates:
            return {"error": self.error or "no window measured", "verdict": self.verdict}
        median = statistics.median(self.rates)
        return {"startup_s": self.startup_s, "samples_per_s": median,
                "spread": (max(self.rates) - min(self.rates)) / median if median else 0.0,
                "windows": [round(rate, 1) for rate in self.rates], "peak_mb": self.peak_mb,
                "per_worker_mb": self.per_worker_mb, "rounds": len(self.rates)}


def _start(site: LoaderSite, ctx: ProbeContext, count: int) -> Stream:
    stream = Stream(count)
    try:
        with ctx.measuring(site, f"sweep: starting num_workers={count}"):
            loader = site.endless_variant(num_workers=count, persistent_workers=False)
            started = time.perf_counter()
            stream.iterator = iter(loader)
            next(stream.iterator)
            stream.startup_s = time.perf_counter() - started
            for _ in range(count * _prefetch(site)):  # the queue filled during start-up
                next(stream.iterator)
    except Exception as error:  # a count that cannot run (or runs out of time) is a row, not a crash
        stream.error, stream.verdict = describe_error(error), out_of_time(error)
        _stop(stream)
    return stream


def _prefetch(site: LoaderSite) -> int:
    return site.arguments.get("prefetch_factor") or DEFAULT_PREFETCH


def _window(site: LoaderSite, ctx: ProbeContext, stream: Stream) -> None:
    """One timed window of this count, after the batches its workers prefetched while it waited."""
    iterator = stream.iterator
    for _ in range(stream.count * _prefetch(site)):
        next(iterator)
    started, samples, batches = time.perf_counter(), 0, 0
    while batches < ctx.settings.batches or time.perf_counter() - started < WINDOW_SECONDS:
        samples += count_samples(next(iterator))
        batches += 1
    elapsed = time.perf_counter() - started
    stream.rates.append(samples / elapsed)
    memory = tree_memory(worker_pids(iterator))
    if memory["total_mb"] >= stream.peak_mb:
        stream.peak_mb, stream.per_worker_mb = memory["total_mb"], memory["per_worker_mb"]
    # Its workers still finish the batches they were asked to prefetch: let them, so that the
    # next count's window does not share the cores with them.
    time.sleep(min(MOST_SETTLE_SECONDS, stream.count * _prefetch(site) * elapsed / batches))


def _stop(stream: Stream) -> None:
    if stream.iterator is not None:
        close_iterator(stream.iterator)
        stream.iterator = None


def measure_interleaved(site: LoaderSite, ctx: ProbeContext, counts: list[int],
                        settled: Callable[[dict[int, Stream]], bool]) -> dict[int, Stream]:
    """Start every count, then time one window of each in turn, round after round, until
    ``settled``; the order rotates from round to round."""
    streams = {count: _start(site, ctx, count) for count in counts}
    started = time.perf_counter()
    try:
        for round_number in range(1, ctx.settings.sweep_most_rounds + 1):
            live = [stream for stream in streams.values() if stream.iterator is not None]
            if not live:
                break
            turn = round_number % len(live)  # each count goes first in turn: none always follows the largest's teardown
            live = live[turn:] + live[:turn]
            with ctx.measuring(site, f"sweep: round {round_number}, num_workers "
                               f"{', '.join(str(stream.count) for stream in live)}"):
                for stream in live:
                    _round_window(site, ctx, stream)
            if round_number >= ctx.settings.sweep_rounds and (
                    settled(streams) or time.perf_counter() - started > ctx.settings.sweep_seconds):
                break
    except MeasurementTimeout:  # out of time: decide on the rounds measured
        pass
    finally:
        for stream in streams.values():
            _stop(stream)
    return streams


def _round_window(site: LoaderSite, ctx: ProbeContext, stream: Stream) -> None:
    try:
        _window(site, ctx, stream)
    except MeasurementTimeout:
        raise
    except StopIteration:
        stream.error = "the loader ran out of batches"
        _stop(stream)
    except Exception as error:  # a count that fails mid-way keeps the windows it measured
        stream.error = describe_error(error)
        _stop(stream)


@dataclass(frozen=True)
class SweepDecision:
    """What the rounds say: medians, the recommended count, and why."""

    rounds: dict[int, list[float]]
    cores: int
    recommended: int | None
    best_within: int | None
    # the count the rounds could not clearly tell from the recommended one (a rerun may choose either)
    rival: int | None = None

    @property
    def rates(self) -> dict[int, float]:
        return {count: statistics.median(rates) for count, rates in self.rounds.items() if rates}

    def comparison(self, first: int, second: int) -> Comparison | None:
        """``second`` against ``first``, round by round."""
        if first not in self.rounds or second not in self.rounds:
            return None
        return compare(self.rounds[first], self.rounds[second])


def decide(rounds: dict[int, list[float]], cores: int, requested: int | None = None,
           beyond_cores: bool = True) -> SweepDecision:
    """The recommendation from interleaved rounds.

    The starting point is the script's own count, capped at the usable cores; another count
    replaces it only when it beats it beyond the noise of their comparison (a count above the
    cores also only when it beats the best count within them so). A smaller count then takes
    over when it is within 5% of it, measured that precisely (spread within 5%). On a noisy
    machine the answer thus stays where the evidence cannot move it, run after run. Without
    ``beyond_cores`` (a rank, whose CPU-bound workers share the node's cores with the other ranks')
    no count above ``cores`` is eligible.
    """
    rounds = {count: rates for count, rates in rounds.items() if rates}
    if not rounds:
        return SweepDecision(rounds, cores, None, None)
    rates = {count: statistics.median(values) for count, values in rounds.items()}
    within = {count: rate for count, rate in rates.items() if count <= cores}
    if not within:
        return SweepDecision(rounds, cores, recommend(rates), None)
    best_within = max(within, key=within.__getitem__)
    eligible = dict(within)
    for count, rate in rates.items():
        comparison = compare(rounds[best_within], rounds[count])
        if beyond_cores and count > cores and comparison is not None and comparison.beyond_noise:
            eligible[count] = rate
    start = min(requested if requested is not None else best_within, cores)
    start = start if start in eligible else best_within
    best = max(eligible, key=eligible.__getitem__)
    moved = compare(rounds[start], rounds[best])
    chosen = best if moved is not None and moved.beyond_noise else start
    rival = None if moved is None or best == start or clear(moved) else (start if chosen == best else best)
    for count in sorted(eligible):
        comparison = compare(rounds[chosen], rounds[count])
        if count < chosen and comparison is not None and comparison.gain >= WITHIN_BEST - 1 \
                and comparison.spread <= NOISE_FLOOR:
            chosen = count
            break
    return SweepDecision(rounds, cores, chosen, best_within, rival if rival != chosen else None)


def clear(comparison: Comparison) -> bool:
    """Whether a move to another count is clear of the noise either way, so that another run decides
    the same: a gain over twice the bar (the noise, at least 5%), or under half of it. Between the two,
    run to run the same loader got 2, 0 and 2 workers."""
    bar = max(NOISE_FLOOR, comparison.spread)
    return comparison.gain > 2 * bar or comparison.gain <= bar / 2


def _settled(codes: list[str], requested: int, cores: int, beyond_cores: bool) -> Callable[[dict[int, Stream]], bool]:
    def settled(streams: dict[int, Stream]) -> bool:
        decision = decide({count: stream.rates for count, stream in streams.items()}, cores, requested, beyond_cores)
        pairs = _deciding_pairs(decision, codes, requested)
        return all(comparison is None or comparison.decided for comparison in pairs)

    return settled


def _deciding_pairs(decision: SweepDecision, codes: list[str], requested: int) -> list[Comparison | None]:
    """The comparisons the verdicts rest on."""
    recommended = decision.recommended
    if recommended is None:
        return []
    pairs = []
    best = max(decision.rates, key=decision.rates.__getitem__)
    if "DL203" in codes:
        pairs.append(decision.comparison(0, recommended if recommended != 0 else best))
    if {"DL202", "DL207"} & set(codes) and recommended != requested:
        pairs.append(decision.comparison(recommended, requested))
    if best != recommended:  # the best measured stays a candidate until the rounds decide it
        pairs.append(decision.comparison(recommended, best))
    return pairs


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    node_cores = ctx.settings.cores or usable_cores()
    # A rank sweeps within its share of the node's cores: every rank's workers run there (DL207).
    ranks_here = ctx.ranks_on_node()
    requested, cores = site.num_workers, max(1, node_cores // ranks_here)
    load = [load_average()]
    cpu_share = loading_cpu_share(site, ctx)
    io_bound = cpu_share is not None and cpu_share < IO_BOUND_CPU_SHARE
    site.clock.loading_cpu_share = cpu_share  # the real epochs' bound: do the workers fill the cores?
    beyond_cores = io_bound or ranks_here == 1
    streams = measure_interleaved(site, ctx, worker_counts(requested, cores, ctx.settings.sweep_limit, io_bound),
                                  _settled(codes, requested, cores, beyond_cores))
    load.append(load_average())
    rows = {count: stream.row() for count, stream in streams.items()}
    decision = decide({count: stream.rates for count, stream in streams.items()}, cores, requested, beyond_cores)
    rounds = max((len(stream.rates) for stream in streams.values()), default=0)
    share = f"{cores} usable cores" if ranks_here == 1 else f"{cores} of the node's {node_cores} usable cores, {ranks_here} ranks"
    ctx.table(site, Table(
        f"num_workers sweep (steady state, {rounds} interleaved rounds; {share}; "
        f"load average {_load_text(load)})",
        ["num_workers", "samples/s", "spread", "startup s", "peak PSS MB", "per worker MB"],
        [[count, f"{row['samples_per_s']:.1f}", f"{row['spread'] * 100:.0f}%", f"{row['startup_s']:.3f}",
          f"{row['peak_mb']:.0f}", f"{row['per_worker_mb']:.0f}" if row.get("per_worker_mb") else "-"]
         if "samples_per_s" in row else [count, "failed", "", row["error"], "", ""] for count, row in sorted(rows.items())],
        chart=render_chart(rows, decision.recommended),
    ))
    measurements = {"usable_cores": cores, "requested": requested, "recommended": decision.recommended, "io_bound": io_bound,
                    "loading_cpu_share": cpu_share, "sweep": {str(count): row for count, row in rows.items()}, "rounds": rounds,
                    "load_average": load, "memory": memory_of(site), "accelerator": accelerator_present()}
    if ranks_here > 1:
        measurements.update(node_cores=node_cores, ranks_on_node=ranks_here)
    rival = decision.comparison(decision.recommended, decision.rival) \
        if decision.rival is not None and decision.recommended is not None else None
    if rival is not None:
        measurements["unsettled"] = {"count": decision.rival, "gain": rival.gain, "spread": rival.spread}
    run = run_length(site, ctx)
    for code in codes:
        _verdict(site, ctx, code, decision, requested, rows, run, dict(measurements))


def sweep_codes(site: LoaderSite, step: dict[str, Any]) -> tuple[str, ...]:
    """A loader no finding asked to sweep earns a sweep (so that its block's num_workers is measured) where
    its workers compete with the step for the cores (DL202's question) or the step waits on it (DL203's)."""
    if site.num_workers > 0:
        return ("DL202",)
    return ("DL203",) if waits_on_data(step) else ()


def judge_data_wait(site: LoaderSite, ctx: ProbeContext, step: dict[str, Any]) -> None:
    """DL203 at run time: the real step waits on a single-process loader more than half the time."""
    if ctx.mode == "factory" or site.num_workers != 0 or not waits_on_data(step):
        return
    ctx.result(site, "DL203", CONFIRMED, f"{data_wait_text(step)} with num_workers=0: "
               "the step waits for batches loaded in the main process", {"step": step})


def accelerator_present() -> bool:
    """Whether this machine has a device a pinned host-to-device copy could speed up (CUDA, ROCm, MPS)."""
    try:
        import torch

        mps = getattr(getattr(torch, "backends", None), "mps", None)
        return bool(torch.cuda.is_available() or (mps is not None and mps.is_available()))
    except Exception:  # a broken install: no device to copy to
        return False


def _load_text(load: list[list[float] | None]) -> str:
    values = [entry[0] for entry in load if entry]
    return " -> ".join(f"{value:.1f}" for value in values) if values else "unknown"


def _samples_per_epoch(site: LoaderSite, run: RunLength) -> int | None:
    if run.batches_per_epoch is None:
        return None
    return run.batches_per_epoch * (site.arguments.get("batch_size", 1) or 1)


def data_saving(site: LoaderSite, run: RunLength, slower: float, faster: float) -> Saving | None:
    """Data time saved per epoch going from ``slower`` to ``faster`` samples/s."""
    samples = _samples_per_epoch(site, run)
    if samples is None or slower <= 0 or faster <= 0:
        return None
    batch = site.arguments.get("batch_size", 1) or 1
    return Saving.from_batch(batch / slower - batch / faster, run, batch / faster)


# A judge's answer: verdict, evidence, the comparison it rests on, the time it saves.
Judged = tuple[str, str, Comparison | None, Saving | None]


def _verdict(site: LoaderSite, ctx: ProbeContext, code: str, decision: SweepDecision, requested: int,
             rows: dict[int, dict[str, Any]], run: RunLength, measurements: dict[str, Any]) -> None:
    recommended = decision.recommended
    if recommended is None:
        failed = next((row["verdict"] for row in rows.values() if row.get("verdict")), None)
        ctx.result(site, code, failed or out_of_time(RuntimeError("no worker count delivered batches")),
                   "the sweep measured nothing", measurements)
        return
    judge = _judge_no_workers if code == "DL203" else _judge_too_many
    verdict, evidence, comparison, saving = judge(site, decision, requested, rows, run)
    if comparison is not None:
        measurements["comparison"] = {"gain": comparison.gain, "spread": comparison.spread, "rounds": comparison.rounds}
    if saving is not None:
        measurements.update(saving.measurements())
    ctx.result(site, code, verdict, evidence, measurements)


def _judge_no_workers(site: LoaderSite, decision: SweepDecision, requested: int, rows: dict[int, dict[str, Any]],
                      run: RunLength) -> Judged:
    """DL203: do workers beat loading in the main process, beyond the noise and the floor?"""
    rates, recommended = decision.rates, decision.recommended
    assert recommended is not None  # _verdict judges only a sweep that recommends a count
    at_zero = rates.get(0)
    if at_zero is None:
        return NOT_CONFIRMED, "0 workers: not measured", None, None
    evidence = f"0 workers: {at_zero:.1f} samples/s; {recommended} workers: {rates[recommended]:.1f} samples/s"
    if recommended == 0:
        best = max(rates, key=rates.__getitem__)
        comparison = decision.comparison(0, best) if best != 0 else None
        if comparison is not None and not comparison.decided:
            return (inconclusive(comparison.spread, comparison.gain),
                    f"0 workers: {at_zero:.1f} samples/s; {best} workers: {rates[best]:.1f} samples/s "
                    f"({comparison.gain * 100:+.0f}%, spread {comparison.spread * 100:.0f}%)", comparison, None)
        return NOT_CONFIRMED, evidence + ": loading in the main process is as fast", comparison, None
    comparison = decision.comparison(0, recommended)
    saving = data_saving(site, run, at_zero, rates[recommended])
    evidence += f" ({comparison.gain * 100:+.0f}%, spread {comparison.spread * 100:.0f}%)" if comparison else ""
    if comparison is not None and not comparison.decided:
        return inconclusive(comparison.spread, comparison.gain), evidence, comparison, saving
    if comparison is not None and not comparison.beyond_noise:
        return NOT_CONFIRMED, evidence, comparison, saving
    if saving is not None:
        evidence += f"; {saving.describe()} of data loading"
        if not saving.material:
            return not_confirmed(saving.short()), evidence, comparison, saving
    return CONFIRMED, evidence + f": use {recommended}", comparison, saving


def _judge_too_many(site: LoaderSite, decision: SweepDecision, requested: int, rows: dict[int, dict[str, Any]],
                    run: RunLength) -> Judged:
    """DL202, DL207: do fewer workers than requested do as well?"""
    rates, recommended, cores = decision.rates, decision.recommended, decision.cores
    assert recommended is not None  # _verdict judges only a sweep that recommends a count
    at_requested = rates.get(requested)
    if at_requested is None:
        why = rows.get(requested, {}).get("error", "not measured")
        return (CONFIRMED if recommended < requested else NOT_CONFIRMED,
                f"{requested} workers: {why}; {recommended} workers reach {rates[recommended]:.1f} samples/s: "
                f"use {recommended}", None, None)
    head = f"{requested} workers: {at_requested:.1f} samples/s"
    if recommended > requested:
        return NOT_CONFIRMED, (f"{head}; more workers do better: {recommended} reach {rates[recommended]:.1f} "
                               f"({_others(decision, requested)})"), None, None
    if recommended == requested:
        best = max(rates, key=rates.__getitem__)
        standing = "the best measured" if best == requested else (
            f"not beaten beyond the noise ({best} workers: {rates[best]:.1f})")
        against = decision.comparison(requested, best) if best != requested else None
        if against is not None and not against.decided:  # the rounds ran out before they could tell
            return (inconclusive(against.spread, against.gain),
                    f"{head}, {standing}, spread {against.spread * 100:.0f}% ({_others(decision, requested)})",
                    against, None)
        return NOT_CONFIRMED, f"{head}, {standing} ({_others(decision, requested)})", against, None
    comparison = decision.comparison(recommended, requested)  # what the extra workers gain
    saving = data_saving(site, run, at_requested, rates[recommended])
    gain = comparison.gain if comparison else at_requested / rates[recommended] - 1
    spread = comparison.spread if comparison else 0.0
    freed = _freed(rows, requested, recommended)
    batch = site.arguments.get("batch_size", 1) or 1
    if batch / at_requested < MIN_BATCH_SAVING_S:  # the floors apply here too: no count can save a material time
        return (not_confirmed(f"a batch loads in {seconds(batch / at_requested)}"),
                f"{head}: a batch loads in {seconds(batch / at_requested)} with {requested} workers, below the "
                f"{seconds(MIN_BATCH_SAVING_S)} floor; {recommended} workers: {rates[recommended]:.1f}",
                comparison, saving)
    if gain > 1 - WITHIN_BEST and requested > cores:
        why = (f"{gain * 100:+.0f}% over {recommended} workers' {rates[recommended]:.1f}, within the noise "
               f"(spread {spread * 100:.0f}%), and more workers than the {cores} usable cores pay only beyond it")
    elif gain > 1 - WITHIN_BEST:
        evidence = (f"{head}, {gain * 100:+.0f}% over {recommended} workers' {rates[recommended]:.1f} "
                    f"(spread {spread * 100:.0f}%)")
        return inconclusive(spread, gain), evidence, comparison, saving
    elif gain < WITHIN_BEST - 1:
        why = f"{recommended} workers reach {rates[recommended]:.1f} samples/s ({-gain / (1 + gain) * 100:.0f}% more)"
    else:
        why = f"{recommended} workers reach {rates[recommended]:.1f} samples/s, within 5% of it"
    if saving is not None:
        freed.append(saving.describe() if saving.per_epoch_s is None or saving.per_epoch_s >= 0
                     else f"costs {seconds(-saving.per_epoch_s)} of data loading per epoch")
    extra = f" ({'; '.join(freed)})" if freed else ""
    return CONFIRMED, f"{head}; {why}: use {recommended}{extra}", comparison, saving


def _freed(rows: dict[int, dict[str, Any]], requested: int, recommended: int) -> list[str]:
    freed = [f"{requested - recommended} fewer processes"]
    before, after = rows.get(requested, {}).get("peak_mb"), rows.get(recommended, {}).get("peak_mb")
    if before and after and before > after:
        freed.append(f"{before - after:.0f} MB less")
    return freed


def _others(decision: SweepDecision, requested: int) -> str:
    return ", ".join(f"{count}: {rate:.1f}" for count, rate in sorted(decision.rates.items()) if count != requested)
