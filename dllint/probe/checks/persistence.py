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

Spawn starts cost seconds: after each epoch the next one's time limit grows
with the start-up just measured, and an epoch that still runs out of time is
reported as a lower bound (``> 12.0 s``), not as a failure.
"""

from __future__ import annotations

import time
from typing import Any

from dllint.probe.internals import current_iterator
from dllint.probe.limits import MeasurementTimeout
from dllint.probe.measure import close_iterator, default_start_method, describe_error, epoch_start_seconds
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, NOT_REACHED, Table, skipped

CODES = ("DL201", "DL204", "DL205")
ALWAYS = False

# A saving below both of these is noise, not a finding.
MIN_SAVING_SECONDS = 0.02
MIN_SAVING_FRACTION = 0.2
# The next epoch's time limit, in multiples of the start-up just measured.
STARTUP_MULTIPLE = 3
# An epoch cut short before this is no bound worth reporting.
SHORTEST_BOUND_SECONDS = 0.05
ITERATED_ONCE = "the loader was iterated once"


def on_first_iteration(site, ctx) -> None:
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
    for method in _start_methods(site, ctx):
        persistent = _measure_run(site, ctx, method, True)
        # Under another start method only the persistent run is measured: its first epoch starts fresh
        # workers exactly as every epoch of a non-persistent loader does (spawn starts cost seconds each).
        restarting = _measure_run(site, ctx, method, False) if method == own else _fresh_start(persistent)
        by_method[method] = {"off": restarting, "on": persistent}
    workers = measured_workers(site, ctx)
    with_workers = f"{workers} workers" if workers == site.num_workers else f"{workers} of the {site.num_workers} workers"
    ctx.table(site, Table(f"persistent_workers: first-batch latency per epoch (s), {with_workers}, each epoch run to its end",
                          ["start method", "persistent", *[f"epoch {n + 1}" for n in range(ctx.settings.epochs)],
                           "later epochs"],
                          [_row(method, key, run, ctx.settings.epochs)
                           for method, runs in by_method.items() for key, run in runs.items()]))
    site.state[__name__] = {"codes": codes, "by_method": by_method, "workers": with_workers}


def on_later_iteration(site, ctx) -> None:
    """The script's second epoch on this loader: DL201 and DL205 are now backed by what the script does."""
    pending = site.state.get(__name__)
    if pending is None:
        return
    for code in [code for code in pending["codes"] if code in ("DL201", "DL205")]:
        pending["codes"].remove(code)
        _verdict(site, ctx, code, pending, "the script iterated this loader again")
    if not pending["codes"]:
        site.state.pop(__name__)


def on_script_end(site, ctx) -> None:
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
                       _measurements(site, pending["by_method"]))


def _start_methods(site, ctx) -> list[str]:
    methods = []
    for method in ctx.settings.start_methods:
        method = site.start_method() if method == "script" else method
        if method not in methods:
            methods.append(method)
    return methods


def measured_workers(site, ctx) -> int:
    from dllint.probe.checks.sweep import usable_cores

    return max(1, min(site.num_workers, ctx.settings.cores or usable_cores()))


def _measure_run(site, ctx, method: str, persistent: bool) -> dict[str, Any]:
    """Epoch-start latencies of one loader; ``at_least`` for an epoch that ran out of time."""
    run: dict[str, Any] = {"latencies": []}
    workers = measured_workers(site, ctx)
    epoch_batches = max(2, workers)
    limit = ctx.settings.measurement_seconds
    loader = None
    try:
        with default_start_method(method):
            loader = site.short_epoch_variant(epoch_batches, num_workers=workers, persistent_workers=persistent,
                                              multiprocessing_context=method)
            for epoch in range(ctx.settings.epochs):
                started = time.perf_counter()
                try:
                    with ctx.measuring(site, f"persistent_workers={persistent} under {method}, epoch {epoch + 1}",
                                       at_most=limit):
                        run["latencies"].append(epoch_start_seconds(loader, epoch_batches))
                except MeasurementTimeout:
                    waited = time.perf_counter() - started
                    if waited >= SHORTEST_BOUND_SECONDS:
                        run["at_least"] = round(waited, 3)
                    else:
                        run["error"] = "no time left in the probe's budget"
                    break
                limit = max(ctx.settings.measurement_seconds, STARTUP_MULTIPLE * run["latencies"][-1])
    except Exception as error:  # a start method the script cannot use is a result too
        run["error"] = describe_error(error)
    finally:
        if loader is not None:
            close_iterator(current_iterator(loader))
    return run


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


def _row(method: str, key: str, run: dict[str, Any], epochs: int) -> list:
    if "fresh_start" in run:
        return [method, key, *["-"] * epochs, f"{run['fresh_start']:.2f} s (a fresh start: epoch 1 of 'on')"]
    cells = [f"{seconds:.3f}" for seconds in run["latencies"]]
    if "at_least" in run:
        cells.append(f"> {run['at_least']:.1f}")
    cells += ["-"] * (epochs - len(cells))
    later = _later(run)
    last = run["error"] if "error" in run and later is None else (_shown(later) if later else "-")
    return [method, key, *cells[:epochs], last]


def _evidence(pending: dict) -> str:
    parts = []
    for method, runs in pending["by_method"].items():
        off, on = _later(runs["off"]), _later(runs["on"])
        if off is None or on is None:
            parts.append(f"{method}: {runs['off'].get('error') or runs['on'].get('error') or 'not measured'}")
            continue
        percent = f" ({(on[0] - off[0]) / off[0] * 100:+.0f}%)" if off[0] > 0 and not off[1] and not on[1] else ""
        parts.append(f"{method}: epoch start {_shown(off)} -> {_shown(on)}{percent}")
    return "; ".join(parts) + f" ({pending['workers']})"


def _measurements(site, by_method: dict) -> dict[str, Any]:
    measurements: dict[str, Any] = {"start_methods": by_method, "num_workers": site.num_workers}
    for method, runs in by_method.items():
        off, on = _later(runs["off"]), _later(runs["on"])
        if off is not None:
            measurements[f"{method}_stall_s"] = off[0]
            measurements[f"{method}_stall_is_lower_bound"] = off[1]
        if on is not None:
            measurements[f"{method}_persistent_s"] = on[0]
    return measurements


def _verdict(site, ctx, code: str, pending: dict, seen: str) -> None:
    by_method = pending["by_method"]
    measurements = _measurements(site, by_method)
    confirmed, measured = False, False
    for runs in by_method.values():
        off, on = _later(runs["off"]), _later(runs["on"])
        if off is None or on is None or on[1]:
            continue
        measured = True
        saving = off[0] - on[0]  # with off a lower bound, the real saving is at least this
        if saving >= MIN_SAVING_SECONDS and saving >= MIN_SAVING_FRACTION * off[0]:
            confirmed = True
    evidence = f"{seen}; {_evidence(pending)}"
    if not measured:
        ctx.result(site, code, skipped("no start method could be measured"), evidence, measurements)
        return
    ctx.result(site, code, CONFIRMED if confirmed else NOT_CONFIRMED, evidence, measurements)
