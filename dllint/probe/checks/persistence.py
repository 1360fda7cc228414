"""DL201, DL204, DL205: the stall of restarting workers at every epoch.

Measures the first-batch latency of a few epochs of the same loader with
``persistent_workers`` off and on, under the start method the script uses on
this machine and under ``spawn`` (the default elsewhere). Each measured epoch
is short and runs to its end, so the next epoch starts from idle workers, as
in training; epochs after the first are the ones persistence saves.

The measurement is taken at the first iteration, but it is only evidence
once the script shows the restart happens: DL201 and DL205 are decided when
the script iterates the same loader a second time, DL204 when it builds a
loader at the same call site a second time. Otherwise the verdict is "not
reached (the loader was iterated once)".

Restarting more workers than the machine has cores costs at least as much as
restarting as many as it has, so the measurement uses at most as many workers
as the usable cores (and says so): proof at a fraction of the cost.

Under the script's own start method the two loaders run interleaved (off,
on, off, on, ...), so that a machine whose load changes over the run weighs on
both alike, and epochs are added (up to :data:`MOST_EPOCHS`, within the
measurement's time) until the saving is larger than the spread of the paired
epochs (:mod:`dllint.probe.checks.gains`), else the verdict is
``inconclusive (spread 35% > gain 11%)``. Spawn starts cost seconds: there only
the persistent loader runs (its first epoch is the restart a non-persistent
loader pays every epoch); after each epoch the next one's time limit grows
with the start-up just measured, and an epoch that still runs out of time is
reported as a lower bound (``> 12.0 s``), not as a failure.

The verdict gives the saving in seconds per epoch and over the script's
epochs (every epoch after the first restarts workers), and is ``not
confirmed (saves 3 ms per epoch)`` below the floor of
:mod:`~dllint.probe.checks.gains`. Measurements (besides ``start_methods``,
``num_workers``, ``<method>_stall_s``, ``<method>_stall_is_lower_bound``,
``<method>_persistent_s``): ``saving_per_epoch_s``, ``saving_over_run_s``,
``saving_per_batch_s`` (None), ``batches_per_epoch``, ``epochs``, ``epoch_s``
(the data time of one epoch at the measured pace, the floor's reference),
``saving_material``, ``<method>_saving_per_epoch_s``, ``comparison`` (``gain``:
persistent/restarting epoch start - 1, ``spread``, ``rounds``),
``load_average`` (1, 5, 15 minutes, before and after measuring) and ``memory``
(:mod:`~dllint.probe.checks.memory`, None when not measured).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from dllint.probe.checks.gains import Comparison, Saving, compare, load_average, run_length
from dllint.probe.checks.memory import memory_of
from dllint.probe.internals import current_iterator
from dllint.probe.limits import MeasurementTimeout
from dllint.probe.measure import close_iterator, default_start_method, describe_error, epoch_timing
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, NOT_REACHED, Table, inconclusive, not_confirmed, skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

# What the first iteration measured, kept on the site until the script shows the restart happens.
Pending = dict[str, Any]

CODES = ("DL201", "DL204", "DL205")
ALWAYS = False

# Epochs of each interleaved loader, at most, while the saving is not yet clear of the noise.
MOST_EPOCHS = 6
# The next epoch's time limit, in multiples of the start-up just measured.
STARTUP_MULTIPLE = 3
# An epoch cut short before this is no bound worth reporting.
SHORTEST_BOUND_SECONDS = 0.05
ITERATED_ONCE = "the loader was iterated once"


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    if site.num_workers == 0:
        for code in codes:
            ctx.result(site, code, NOT_CONFIRMED, "num_workers is 0: there are no workers to restart")
        return
    if "DL201" in codes and site.persistent:
        ctx.result(site, "DL201", NOT_CONFIRMED, "this loader already keeps its workers (persistent_workers=True)")
        codes.remove("DL201")
        if not codes:
            return
    own = site.start_method()
    by_method = {}
    load = [load_average()]
    for method in _start_methods(site, ctx):
        if method == own:
            restarting, persistent = _measure_interleaved(site, ctx, method)
        else:
            # Under another start method only the persistent run is measured: its first epoch starts fresh
            # workers exactly as every epoch of a non-persistent loader does (spawn starts cost seconds each).
            persistent = _measure_run(site, ctx, method, True)
            restarting = _fresh_start(persistent)
        by_method[method] = {"off": restarting, "on": persistent}
    load.append(load_average())
    workers = measured_workers(site, ctx)
    with_workers = f"{workers} workers" if workers == site.num_workers else f"{workers} of the {site.num_workers} workers"
    epochs = max([ctx.settings.epochs, *(len(run["latencies"]) for runs in by_method.values() for run in runs.values())])
    interleaved = ", off and on interleaved" if own in by_method else ""
    ctx.table(site, Table(f"persistent_workers: first-batch latency per epoch (s), {with_workers}, each epoch run to its end"
                          f"{interleaved}",
                          ["start method", "persistent", *[f"epoch {n + 1}" for n in range(epochs)], "later epochs"],
                          [_row(method, key, run, epochs)
                           for method, runs in by_method.items() for key, run in runs.items()]))
    site.state[__name__] = {"codes": codes, "by_method": by_method, "workers": with_workers, "own": own,
                            "run": run_length(site, ctx), "load_average": load}


def on_later_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    """The script's second epoch on this loader: DL201 and DL205 are now backed by what the script does."""
    pending = site.state.get(__name__)
    if pending is None:
        return
    for code in [code for code in pending["codes"] if code in ("DL201", "DL205")]:
        pending["codes"].remove(code)
        _verdict(site, ctx, code, pending, "the script iterated this loader again")
    if not pending["codes"]:
        site.state.pop(__name__)


def on_script_end(site: LoaderSite, ctx: ProbeContext) -> None:
    pending = site.state.pop(__name__, None)
    if pending is None:
        return
    for code in pending["codes"]:
        if code == "DL204" and site.constructions > 1:
            _verdict(site, ctx, code, pending, f"the script built this loader {site.constructions} times")
        elif ctx.mode == "factory":
            ctx.result(site, code, skipped("a factory target has no epoch loop to watch"), _evidence(pending))
        else:
            once = "the loader was built once" if code == "DL204" else ITERATED_ONCE
            ctx.result(site, code, NOT_REACHED, f"{once}; measured: {_evidence(pending)}",
                       _measurements(site, pending))


def _start_methods(site: LoaderSite, ctx: ProbeContext) -> list[str]:
    methods = []
    for method in ctx.settings.start_methods:
        method = site.start_method() if method == "script" else method
        if method not in methods:
            methods.append(method)
    return methods


def measured_workers(site: LoaderSite, ctx: ProbeContext) -> int:
    from dllint.probe.checks.sweep import usable_cores

    return max(1, min(site.num_workers, ctx.settings.cores or usable_cores()))


def _timed_epoch(site: LoaderSite, ctx: ProbeContext, loader: Any, run: dict[str, Any], step: str, epoch_batches: int) -> bool:
    """One epoch into ``run``; False when it ran out of time (a lower bound is kept) or failed."""
    started = time.perf_counter()
    try:
        with ctx.measuring(site, step, at_most=run.setdefault("limit", ctx.settings.measurement_seconds)):
            latency, per_batch = epoch_timing(loader, epoch_batches)
    except MeasurementTimeout:
        waited = time.perf_counter() - started
        if waited >= SHORTEST_BOUND_SECONDS:
            run["at_least"] = round(waited, 3)
        else:
            run["error"] = "no time left in the probe's budget"
        return False
    run["latencies"].append(latency)
    if per_batch is not None:
        run.setdefault("batch_s", []).append(per_batch)
    run["limit"] = max(ctx.settings.measurement_seconds, STARTUP_MULTIPLE * latency)
    return True


def _measure_run(site: LoaderSite, ctx: ProbeContext, method: str, persistent: bool) -> dict[str, Any]:
    """Epoch-start latencies of one loader; ``at_least`` for an epoch that ran out of time."""
    run: dict[str, Any] = {"latencies": []}
    workers = measured_workers(site, ctx)
    epoch_batches = max(2, workers)
    loader = None
    try:
        with default_start_method(method):
            loader = site.short_epoch_variant(epoch_batches, num_workers=workers, persistent_workers=persistent,
                                              multiprocessing_context=method)
            for epoch in range(ctx.settings.epochs):
                if not _timed_epoch(site, ctx, loader, run, f"persistent_workers={persistent} under {method}, "
                                    f"epoch {epoch + 1}", epoch_batches):
                    break
    except Exception as error:  # a start method the script cannot use is a result too
        run["error"] = describe_error(error)
    finally:
        run.pop("limit", None)
        if loader is not None:
            close_iterator(current_iterator(loader))
    return run


def _measure_interleaved(site: LoaderSite, ctx: ProbeContext, method: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Restarting and persistent loaders, one epoch each in turn, until the saving is clear of the noise."""
    runs: dict[bool, dict[str, Any]] = {False: {"latencies": []}, True: {"latencies": []}}
    workers = measured_workers(site, ctx)
    epoch_batches = max(2, workers)
    loaders: dict[bool, Any] = {}
    failed = None
    try:
        with default_start_method(method):
            for persistent in (False, True):
                loaders[persistent] = site.short_epoch_variant(
                    epoch_batches, num_workers=workers, persistent_workers=persistent, multiprocessing_context=method)
            for epoch in range(MOST_EPOCHS):
                if epoch >= ctx.settings.epochs and _settled(runs[False], runs[True]):
                    break
                if not all(_timed_epoch(site, ctx, loaders[persistent], runs[persistent],
                                        f"persistent_workers={persistent} under {method}, epoch {epoch + 1}",
                                        epoch_batches) for persistent in (False, True)):
                    break
    except Exception as error:  # a start method the script cannot use is a result too
        failed = describe_error(error)
    finally:
        for loader in loaders.values():
            close_iterator(current_iterator(loader))
    for run in runs.values():
        run.pop("limit", None)
        if failed:
            run["error"] = failed
    comparison = compare(runs[False]["latencies"][1:], runs[True]["latencies"][1:])
    if comparison is not None:
        runs[True]["comparison"] = {"gain": comparison.gain, "spread": comparison.spread, "rounds": comparison.rounds}
    return runs[False], runs[True]


def _settled(off: dict[str, Any], on: dict[str, Any]) -> bool:
    """Enough epochs: the persistent loader's saving (or its absence) is clear of the spread of the pairs."""
    comparison = compare(off["latencies"][1:], on["latencies"][1:])
    return comparison is not None and comparison.rounds >= 2 and comparison.decided


def _fresh_start(persistent: dict[str, Any]) -> dict[str, Any]:
    """The restart a non-persistent loader pays every epoch, read from the persistent run's first epoch."""
    if persistent["latencies"]:
        return {"latencies": [], "fresh_start": persistent["latencies"][0]}
    return {key: value for key, value in persistent.items() if key in ("at_least", "error")} | {"latencies": []}


def _later(run: dict[str, Any]) -> tuple[float, bool] | None:
    """The later epochs' start latency, and whether it is only a lower bound. The least of
    them: scheduling noise only ever adds time, and one hiccup in a persistent epoch must
    neither hide the saving nor, in a restarting one, inflate it."""
    if "fresh_start" in run:
        return run["fresh_start"], False
    latencies = run["latencies"]
    if len(latencies) > 1:
        return min(latencies[1:]), False
    if "at_least" in run:
        return run["at_least"], True
    return None


def _shown(value: tuple[float, bool]) -> str:
    seconds, bound = value
    return f"> {seconds:.1f} s" if bound else f"{seconds:.2f} s"


def _row(method: str, key: str, run: dict[str, Any], epochs: int) -> list[str]:
    if "fresh_start" in run:
        return [method, key, *["-"] * epochs, f"{run['fresh_start']:.2f} s (a fresh start: epoch 1 of 'on')"]
    cells = [f"{seconds:.3f}" for seconds in run["latencies"]]
    if "at_least" in run:
        cells.append(f"> {run['at_least']:.1f}")
    cells += ["-"] * (epochs - len(cells))
    later = _later(run)
    last = run["error"] if "error" in run and later is None else (_shown(later) if later else "-")
    return [method, key, *cells[:epochs], last]


def _saving(pending: Pending, method: str) -> Saving | None:
    """What persistence saves under ``method``: the restart, once per epoch after the first."""
    runs = pending["by_method"][method]
    off, on = _later(runs["off"]), _later(runs["on"])
    if off is None or on is None or on[1]:
        return None
    run = pending.get("run")
    if run is None:
        return None
    paces = runs["on"].get("batch_s", []) + runs["off"].get("batch_s", [])
    epoch_s = min(paces) * run.batches_per_epoch if paces and run.batches_per_epoch else None
    return Saving(off[0] - on[0], run, epoch_s=epoch_s, paid_epochs_skip_first=True)


def _evidence(pending: Pending) -> str:
    parts = []
    for method, runs in pending["by_method"].items():
        off, on = _later(runs["off"]), _later(runs["on"])
        if off is None or on is None:
            parts.append(f"{method}: {runs['off'].get('error') or runs['on'].get('error') or 'not measured'}")
            continue
        percent = f" ({(on[0] - off[0]) / off[0] * 100:+.0f}%)" if off[0] > 0 and not off[1] and not on[1] else ""
        saving = _saving(pending, method)
        saves = f", {saving.describe()}" if saving is not None and _per_epoch(saving) > 0 else ""
        parts.append(f"{method}: epoch start {_shown(off)} -> {_shown(on)}{percent}{saves}")
    return "; ".join(parts) + f" ({pending['workers']})"


def _measurements(site: LoaderSite, pending: Pending) -> dict[str, Any]:
    by_method = pending["by_method"]
    measurements: dict[str, Any] = {"start_methods": by_method, "num_workers": site.num_workers}
    for method, runs in by_method.items():
        off, on = _later(runs["off"]), _later(runs["on"])
        if off is not None:
            measurements[f"{method}_stall_s"] = off[0]
            measurements[f"{method}_stall_is_lower_bound"] = off[1]
        if on is not None:
            measurements[f"{method}_persistent_s"] = on[0]
        saving = _saving(pending, method)
        if saving is not None:
            measurements[f"{method}_saving_per_epoch_s"] = saving.per_epoch_s
    headline = _headline(pending)
    headline_saving = _saving(pending, headline) if headline is not None else None
    if headline_saving is not None:  # (it is, for the headline's method)
        measurements.update(headline_saving.measurements())
    comparison = by_method.get(pending.get("own"), {}).get("on", {}).get("comparison")
    if comparison is not None:
        measurements["comparison"] = comparison
    measurements["load_average"] = pending.get("load_average")
    measurements["memory"] = memory_of(site)
    return measurements


def _per_epoch(saving: Saving) -> float:
    """A restart's saving per epoch: always known (``_saving`` takes it from two epoch starts)."""
    assert saving.per_epoch_s is not None
    return saving.per_epoch_s


def _headline(pending: Pending) -> str | None:
    """The start method whose saving the verdict quotes: the script's own, else the first measured."""
    methods = [pending.get("own"), *pending["by_method"]]
    return next((method for method in methods if method in pending["by_method"] and _saving(pending, method)), None)


def _verdict(site: LoaderSite, ctx: ProbeContext, code: str, pending: Pending, seen: str) -> None:
    measurements = _measurements(site, pending)
    evidence = f"{seen}; {_evidence(pending)}"
    savings = {method: saving for method in pending["by_method"] if (saving := _saving(pending, method)) is not None}
    if not savings:
        ctx.result(site, code, skipped("no start method could be measured"), evidence, measurements)
        return
    comparison = pending["by_method"].get(pending.get("own"), {}).get("on", {}).get("comparison")
    noisy = comparison is not None and not _decided(comparison)
    # with the restart a lower bound, the real saving is at least the one measured
    confirmed = [method for method, saving in savings.items() if _per_epoch(saving) > 0 and saving.material
                 and not (noisy and method == pending.get("own"))]
    if confirmed:
        verdict = CONFIRMED
    elif noisy:
        verdict = inconclusive(comparison["spread"], comparison["gain"])
    else:
        best = max(savings.values(), key=_per_epoch)
        verdict = not_confirmed(best.short()) if _per_epoch(best) > 0 else NOT_CONFIRMED
    ctx.result(site, code, verdict, evidence, measurements)


def _decided(comparison: dict[str, Any]) -> bool:
    return Comparison(comparison["gain"], comparison["spread"], comparison["rounds"]).decided
