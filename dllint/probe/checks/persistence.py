"""DL201, DL204, DL205: the stall of restarting workers at every epoch.

Measures the first-batch latency of a few epochs of the same loader with
``persistent_workers`` off and on, under the start method the script uses on
this machine and under ``spawn`` (the default elsewhere). Epochs after the
first are the ones persistence saves.
"""

from __future__ import annotations

from statistics import mean

from dllint.probe.context import out_of_time
from dllint.probe.measure import (
    default_start_method,
    describe_error,
    epoch_start_latencies,
)
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, Table, skipped

CODES = ("DL201", "DL204", "DL205")
ALWAYS = False

# A saving below both of these is noise, not a finding.
MIN_SAVING_SECONDS = 0.02
MIN_SAVING_FRACTION = 0.2


def on_first_iteration(site, ctx) -> None:
    codes = [code for code in CODES if ctx.requested(site, (code,))]
    if not codes:
        return
    if site.num_workers == 0:
        for code in codes:
            ctx.result(site, code, NOT_CONFIRMED, "num_workers is 0: there are no workers to restart")
        return
    rows, by_method = [], {}
    for method in _start_methods(site, ctx):
        measured = _measure(site, ctx, method)
        by_method[method] = measured
        rows.append(_row(method, measured, ctx.settings.epochs))
    ctx.table(site, Table("persistent_workers: first-batch latency per epoch (s)",
                          ["start method", "persistent", *[f"epoch {n + 1}" for n in range(ctx.settings.epochs)], "stall per epoch"],
                          [row for pair in rows for row in pair]))
    for code in codes:
        _verdict(site, ctx, code, by_method)


def _start_methods(site, ctx) -> list[str]:
    methods = []
    for method in ctx.settings.start_methods:
        method = site.start_method() if method == "script" else method
        if method not in methods:
            methods.append(method)
    return methods


def _measure(site, ctx, method: str) -> dict:
    measured: dict = {}
    for persistent in (False, True):
        key = "on" if persistent else "off"
        try:
            with ctx.measuring(site, f"persistent_workers={persistent} under {method}"), default_start_method(method):
                loader = site.variant(persistent_workers=persistent, multiprocessing_context=method)
                measured[key] = epoch_start_latencies(loader, ctx.settings.epochs)
        except Exception as error:  # a start method the script cannot use is a result too
            measured[key] = describe_error(error)
            measured[f"{key}_verdict"] = out_of_time(error)
    return measured


def _later_epochs(latencies: list[float]) -> float:
    return mean(latencies[1:]) if len(latencies) > 1 else latencies[0]


def _row(method: str, measured: dict, epochs: int) -> list[list]:
    rows = []
    for key in ("off", "on"):
        value = measured.get(key)
        if isinstance(value, list):
            rows.append([method, key, *[f"{seconds:.3f}" for seconds in value], f"{_later_epochs(value):.3f}"])
        else:
            rows.append([method, key, *["-"] * epochs, f"failed: {value}"])
    return rows


def _saving(measured: dict) -> tuple[float, float] | None:
    off, on = measured.get("off"), measured.get("on")
    if not isinstance(off, list) or not isinstance(on, list):
        return None
    return _later_epochs(off), _later_epochs(on)


def _verdict(site, ctx, code: str, by_method: dict) -> None:
    measurements = {"start_methods": by_method, "num_workers": site.num_workers}
    if code == "DL201" and site.persistent:
        ctx.result(site, code, NOT_CONFIRMED, "this loader already keeps its workers (persistent_workers=True)", measurements)
        return
    evidence, confirmed = [], False
    for method, measured in by_method.items():
        saving = _saving(measured)
        if saving is None:
            evidence.append(f"{method}: {measured.get('off') if not isinstance(measured.get('off'), list) else measured.get('on')}")
            continue
        off, on = saving
        percent = (on - off) / off * 100 if off > 0 else 0.0
        evidence.append(f"{method}: epoch start {off:.2f} s -> {on:.2f} s ({percent:+.0f}%)")
        measurements[f"{method}_stall_s"] = off
        measurements[f"{method}_persistent_s"] = on
        if off - on >= MIN_SAVING_SECONDS and off - on >= MIN_SAVING_FRACTION * off:
            confirmed = True
    if not any(_saving(measured) for measured in by_method.values()):
        ctx.result(site, code, skipped("no start method could be measured"), "; ".join(evidence), measurements)
        return
    ctx.result(site, code, CONFIRMED if confirmed else NOT_CONFIRMED, "; ".join(evidence), measurements)


def on_script_end(site, ctx) -> None:
    # DL204's own evidence: the call site really built a new loader (and workers) repeatedly.
    if site.constructions > 1 and ctx.requested(site, ("DL204",)):
        ctx.emit({"event": "note", "loader": site.id,
                  "text": f"built {site.constructions} times while the script ran"})
