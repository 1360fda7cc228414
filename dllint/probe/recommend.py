"""One configuration per loader, from what the checks measured, proven by re-running the real step.

For every multi-worker loader the probe measured, and every loader the real
step waited on for more than half of it, :func:`recommend` derives a settings
block torch accepts from the checks' measurements:

- ``num_workers`` from the num_workers sweep (samples/s per count);
- ``persistent_workers`` from the persistence check (epoch start off vs on),
  False when a persistent worker was seen keeping a stale dataset (DL303), and
  absent with 0 workers (torch rejects it there);
- ``prefetch_factor`` kept (torch's default 2) with workers, absent without;
- ``pin_memory`` from the pinned vs pageable copy (needs CUDA); False where the sweep found no
  accelerator on the machine;
- ``multiprocessing_context="spawn"`` where a forked worker failed on CUDA (DL105).

Each setting carries its measured effect, or why it is unchanged. The runner
then runs the script again with the block applied at the loader's call site
(:mod:`dllint.probe.harness`'s ``overrides``) and fills ``before``/``after``
from the two runs' real steps: measured, not estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from dllint.probe.checks.sweep import DEFAULT_PREFETCH
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, Result
from dllint.probe.steps import waits_on_data

# An epoch-start saving below this is not worth persistent workers' memory.
MIN_PERSISTENCE_SAVING_S = 0.02
WORKER_ONLY = ("persistent_workers", "prefetch_factor", "multiprocessing_context")
# What before/after show, in this order.
COMPARED = ("data_wait_fraction", "data_wait_s", "step_s", "epoch_s", "peak_pss_mb", "steps")
PERSISTENCE_CODES = ("DL201", "DL204", "DL205")
# Step times of two runs within this of each other are no difference on a shared machine.
SAME_STEP = 0.1


@dataclass(frozen=True)
class Recommendation:
    """The settings to use at one loader call, each with its measured effect."""

    settings: dict[str, Any]
    effects: dict[str, str]
    dropped: tuple[str, ...] = ()  # the script's arguments to remove (torch allows them only with workers)
    changed: bool = True  # differs from what the script passes
    before: dict[str, Any] = field(default_factory=dict)  # the first run's real step
    after: dict[str, Any] = field(default_factory=dict)  # the re-run's real step with the settings, or {"error": ...}

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "effects": self.effects, "dropped": list(self.dropped),
                "changed": self.changed, "before": self.before, "after": self.after}

    def measured(self, before: dict[str, Any], after: dict[str, Any]) -> Recommendation:
        unmeasured = "error" in after or "not_run" in after
        return replace(self, before=_compared(before), after=after if unmeasured else _compared(after))


def _compared(step: dict[str, Any]) -> dict[str, Any]:
    return {key: step[key] for key in COMPARED if key in step}


def _measurements(results: list[Result], *codes: str, key: str) -> dict[str, Any] | None:
    for result in results:
        if result.code in codes and key in result.measurements:
            return result.measurements
    return None


def _confirmed(results: list[Result], code: str) -> bool:
    return any(result.code == code and result.verdict == CONFIRMED for result in results)


def qualifies(summary: dict[str, Any], step: dict[str, Any]) -> bool:
    workers = summary.get("num_workers")
    many = isinstance(workers, int) and workers > 0 and bool(step.get("epochs"))
    return many or waits_on_data(step)


def recommend(summary: dict[str, Any], results: list[Result], step: dict[str, Any]) -> Recommendation | None:
    """The block for one loader (its report's summary, check results and real-step summary), or None."""
    if not qualifies(summary, step) or not isinstance(summary.get("num_workers", 0), int):
        return None
    settings: dict[str, Any] = {}
    effects: dict[str, str] = {}
    workers = _num_workers(summary, results, settings, effects)
    if workers > 0:
        _persistence(summary, results, settings, effects)
        prefetch = summary.get("prefetch_factor")
        settings["prefetch_factor"] = prefetch if isinstance(prefetch, int) and prefetch > 0 else DEFAULT_PREFETCH
        effects["prefetch_factor"] = "unchanged (not measured)" if prefetch else "torch's default (not measured)"
    _pinning(summary, results, settings, effects)
    if workers > 0:
        _start_method(summary, results, settings, effects)
    dropped = tuple(option for option in WORKER_ONLY if workers == 0 and summary.get(option) not in (None, False))
    current = {name: summary.get(name) for name in settings}
    current["prefetch_factor"] = current.get("prefetch_factor") or DEFAULT_PREFETCH
    changed = bool(dropped) or any(current.get(name) != value for name, value in settings.items())
    return Recommendation(settings, effects, dropped, changed)


def _num_workers(summary, results, settings, effects) -> int:
    requested = summary["num_workers"]
    sweep = _measurements(results, "DL202", "DL203", "DL207", key="sweep")
    best = sweep.get("recommended") if sweep else None
    if sweep is None or best is None:
        settings["num_workers"] = requested
        effects["num_workers"] = "unchanged (no num_workers sweep ran on this loader)"
        return requested
    rows = sweep["sweep"]
    rate = {int(count): row.get("samples_per_s") for count, row in rows.items()}
    settings["num_workers"] = best
    shown = f"{best} workers: {rate[best]:.1f} samples/s"
    if requested != best and rate.get(requested):
        shown += f"; {requested} workers: {rate[requested]:.1f} samples/s"
    effects["num_workers"] = f"sweep: {shown}"
    return best


def _persistence(summary, results, settings, effects) -> None:
    own = summary.get("start_method")
    current = bool(summary.get("persistent_workers"))
    if _confirmed(results, "DL303"):
        settings["persistent_workers"] = False
        effects["persistent_workers"] = "a persistent worker kept a stale copy of the dataset (DL303)"
        return
    measured = _measurements(results, *PERSISTENCE_CODES, key=f"{own}_stall_s")
    if measured is None or f"{own}_persistent_s" not in measured:
        settings["persistent_workers"] = current
        effects["persistent_workers"] = "unchanged (not measured)"
        return
    stall, kept = measured[f"{own}_stall_s"], measured[f"{own}_persistent_s"]
    saves = stall - kept >= MIN_PERSISTENCE_SAVING_S
    settings["persistent_workers"] = saves or current
    effects["persistent_workers"] = (f"epoch start {stall:.3f} s -> {kept:.3f} s under {own}"
                                     + ("" if saves else ": no measurable saving"))


def _pinning(summary, results, settings, effects) -> None:
    copy = _measurements(results, "DL206", key="pinned_s")
    current = bool(summary.get("pin_memory"))
    sweep = _measurements(results, "DL202", "DL203", "DL207", key="accelerator")
    if copy is None and sweep is not None and sweep["accelerator"] is False:
        settings["pin_memory"] = False
        effects["pin_memory"] = "no accelerator on this machine: pinned pages only cost" + (
            "" if not current else " (yours: True)")
        return
    if copy is None:
        settings["pin_memory"] = current
        effects["pin_memory"] = "unchanged (no host-to-device copy measured)"
        return
    settings["pin_memory"] = _confirmed(results, "DL206") or current
    effects["pin_memory"] = f"copy of one batch: pageable {copy['pageable_s'] * 1000:.2f} ms, pinned {copy['pinned_s'] * 1000:.2f} ms"


def _start_method(summary, results, settings, effects) -> None:
    if _confirmed(results, "DL105"):
        settings["multiprocessing_context"] = "spawn"
        effects["multiprocessing_context"] = "a forked worker failed to re-initialise CUDA (DL105)"
    elif summary.get("multiprocessing_context"):
        settings["multiprocessing_context"] = summary["multiprocessing_context"]
        effects["multiprocessing_context"] = "unchanged"


def accepted_by_torch(settings: dict[str, Any]) -> bool:
    """What torch's DataLoader.__init__ checks of these options, without building one."""
    workers = settings.get("num_workers", 0)
    if workers == 0:
        return not any(settings.get(option) not in (None, False) for option in WORKER_ONLY)
    prefetch = settings.get("prefetch_factor")
    return prefetch is None or prefetch > 0


# -- findings agree with the block ---------------------------------------------------------


def reconcile(finding_probe: dict[str, Any], code: str, recommendation: Recommendation) -> None:
    """A persistence finding confirmed beside a block without persistent workers says why (in place)."""
    if code not in PERSISTENCE_CODES or finding_probe.get("verdict") != CONFIRMED:
        return
    if recommendation.settings.get("num_workers") == 0:
        why = "the recommended settings use num_workers=0: no workers to restart"
    elif recommendation.settings.get("persistent_workers") is False:
        why = f"the recommended settings keep persistent_workers=False: {recommendation.effects['persistent_workers']}"
    else:
        return
    finding_probe["verdict"] = NOT_CONFIRMED
    finding_probe["evidence"] = f"moot: {why}; measured with workers: {finding_probe.get('evidence', '')}"


# -- text ---------------------------------------------------------------------------------


def render_recommendation(recommendation: Recommendation, call_site: str) -> list[str]:
    lines = [f"  recommended settings for the DataLoader at {call_site} (paste into the call):"]
    lines.extend(f"      {name}={value!r},  # {recommendation.effects.get(name, '')}"
                 for name, value in recommendation.settings.items())
    if recommendation.dropped:
        lines.append(f"      # remove {', '.join(recommendation.dropped)}: torch accepts them only with workers")
    if not recommendation.changed:
        lines.append("  these are the script's own settings: nothing to re-run")
        return lines
    before, after = recommendation.before, recommendation.after
    if "error" in after:
        lines.append(f"  re-run with these settings failed: {after['error']}")
        return lines
    if not after or "not_run" in after:
        lines.append("  not re-run: " + after.get("not_run", "the first run did not finish"))
        return lines
    lines.append("  before -> after (the script's real step, run again with these settings):")
    rows = [("data wait", "data_wait_fraction", lambda v: f"{v * 100:.0f}% of the step"),
            ("step", "step_s", lambda v: f"{v * 1000:.1f} ms"),
            ("epoch", "epoch_s", lambda v: f"{v:.2f} s"),
            ("peak memory", "peak_pss_mb", lambda v: f"{v:.0f} MB")]
    for label, key, shown in rows:
        if key in before or key in after:
            first = shown(before[key]) if key in before else "-"
            second = shown(after[key]) if key in after else "-"
            lines.append(f"      {label:<12} {first} -> {second}")
    verdict = _verdict(before, after)
    return lines + ([f"  {verdict}"] if verdict else [])


def _verdict(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What the two runs say together: faster, no different, or slower for a reason the loader does not explain."""
    if not all(key in side for key in ("step_s", "data_wait_s", "data_wait_fraction") for side in (before, after)):
        return ""
    change = (after["step_s"] - before["step_s"]) / before["step_s"] if before["step_s"] else 0.0
    body_change = (after["step_s"] - after["data_wait_s"]) - (before["step_s"] - before["data_wait_s"])
    waits = f"the data wait went from {before['data_wait_fraction'] * 100:.0f}% to {after['data_wait_fraction'] * 100:.0f}% of the step"
    if change <= -SAME_STEP:
        return f"each step is {-change * 100:.0f}% faster with these settings; {waits}"
    if change < SAME_STEP:
        return f"step time within {SAME_STEP * 100:.0f}% ({change * 100:+.0f}%); {waits}"
    if after["data_wait_s"] <= before["data_wait_s"]:  # the loader did its part: the body is what slowed
        return (f"{waits}, but the loop body ran {body_change * 1000:.1f} ms slower in the re-run: probably the "
                "machine's load, not the loader")
    return f"each step is {change * 100:.0f}% slower with these settings: keep yours"
