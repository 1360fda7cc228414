"""One configuration per loader, from what the checks measured, proven by re-running the real step.

For every multi-worker loader the probe measured, and every loader the real
step waited on for more than half of it, :func:`recommend` derives a settings
block torch accepts from the checks' measurements:

- ``num_workers`` from the num_workers sweep (samples/s per count);
- ``persistent_workers`` from the persistence check (epoch start off vs on, at the script's
  count), or the sweep's start time of the block's larger count for a loader iterated every
  epoch; False when a persistent worker was seen keeping a stale dataset (DL303), and
  absent with 0 workers (torch rejects it there);
- ``prefetch_factor`` kept (torch's default 2) with workers, absent without;
- ``pin_memory`` from the pinned vs pageable copy (needs CUDA); False where the sweep found no
  accelerator on the machine;
- ``multiprocessing_context="spawn"`` where a forked worker failed on CUDA (DL105).

Each setting carries its measured effect, or why it is unchanged. The runner
then decides, once per loader, from whole epochs: it runs the script with its own
settings and with the block applied at the loader's call site
(:mod:`dllint.probe.harness`'s ``overrides``) in alternation (A B A B ...), each
run measure-only, and compares the runs' whole epochs (each epoch's first batch
included, where persistent workers save their time) round by round
(:func:`decide`): ``better`` when the block's epochs are faster beyond the
spread of the pairs and the floors of :mod:`~dllint.probe.checks.gains`,
``inconclusive`` when the spread hides the difference after the most pairs
(:attr:`~dllint.probe.context.Settings.most_pairs`), ``keep yours`` otherwise. ``before``/``after`` are the medians of those
same runs, and a block that is not better leaves no verdict on its loader
confirmed with a saving (:func:`agree`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from dllint.probe.checks.gains import NOISE_FLOOR, RunLength, Saving, compare, seconds
from dllint.probe.checks.sweep import DEFAULT_PREFETCH
from dllint.probe.results import NOT_CONFIRMED, Result, inconclusive, not_confirmed
from dllint.probe.steps import waits_on_data
from dllint.probe.verdicts import BlockVerdict, Judgment, Verdict

# An epoch-start saving below this is not worth persistent workers' memory.
MIN_PERSISTENCE_SAVING_S = 0.02
WORKER_ONLY = ("persistent_workers", "prefetch_factor", "multiprocessing_context")
# What before/after show, in this order.
COMPARED = ("data_wait_fraction", "data_wait_s", "step_s", "epoch_s", "peak_pss_mb", "steps")
PERSISTENCE_CODES = ("DL201", "DL204", "DL205")
# The codes whose confirmed verdict claims a saving the block carries: a block that is not better
# beyond the noise leaves none of them confirmed on its loader.
SWEEP_CODES = ("DL202", "DL203", "DL207")  # the codes whose results carry the num_workers sweep
SAVING_CODES = (*PERSISTENCE_CODES, "DL202", "DL203", "DL206", "DL207")
BETTER, KEEP_YOURS, INCONCLUSIVE = BlockVerdict.BETTER, BlockVerdict.KEEP_YOURS, BlockVerdict.INCONCLUSIVE


@dataclass(frozen=True)
class Decision:
    """One loader's verdict on its block, from interleaved whole-epoch timings of both settings.

    ``before_epoch_s``/``after_epoch_s``: each run's mean epoch (first batch included), in run
    order; ``gain``: the block's epoch rate over the script's - 1 (medians); ``spread``: of the
    round-by-round ratios (:func:`~dllint.probe.checks.gains.compare`).
    """

    verdict: BlockVerdict
    reason: str
    before_epoch_s: tuple[float, ...] = ()
    after_epoch_s: tuple[float, ...] = ()
    gain: float | None = None
    spread: float | None = None
    saving_per_epoch_s: float | None = None
    saving_per_batch_s: float | None = None
    unsettled: bool = False  # faster beyond the noise, inconclusive only for the sweep's unsettled count

    @property
    def rounds(self) -> int:
        return min(len(self.before_epoch_s), len(self.after_epoch_s))

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "reason": self.reason, "before_epoch_s": list(self.before_epoch_s),
                "after_epoch_s": list(self.after_epoch_s), "gain": self.gain, "spread": self.spread,
                "rounds": self.rounds, "saving_per_epoch_s": self.saving_per_epoch_s,
                "saving_per_batch_s": self.saving_per_batch_s}


@dataclass(frozen=True)
class Recommendation:
    """The settings to use at one loader call, each with its measured effect."""

    settings: dict[str, Any]
    effects: dict[str, str]
    dropped: tuple[str, ...] = ()  # the script's arguments to remove (torch allows them only with workers)
    changed: bool = True  # differs from what the script passes
    before: dict[str, Any] = field(default_factory=dict)  # the real step with the script's settings (medians of the runs)
    after: dict[str, Any] = field(default_factory=dict)  # with the block's settings, or {"error": ...}, {"not_run": ...}
    decision: Decision | None = None  # None where nothing was re-run
    # why the sweep's num_workers is not settled (another count within reach of the noise), or None
    unsettled: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "effects": self.effects, "dropped": list(self.dropped),
                "changed": self.changed, "before": self.before, "after": self.after,
                "verdict": self.decision.verdict.value if self.decision else None,
                "decision": self.decision.to_dict() if self.decision else None,
                **({"unsettled": self.unsettled} if self.unsettled else {})}

    def measured(self, before: dict[str, Any], after: dict[str, Any], decision: Decision | None = None) -> Recommendation:
        unmeasured = "error" in after or "not_run" in after
        if decision is not None and decision.verdict is BETTER and self.unsettled:
            # faster than the script's settings, but another run may give another count: not one answer
            decision = replace(decision, verdict=INCONCLUSIVE, reason=f"{decision.reason}; but {self.unsettled}",
                               unsettled=True)
        return replace(self, before=_compared(before), after=after if unmeasured else _compared(after),
                       decision=decision)


def _compared(step: dict[str, Any]) -> dict[str, Any]:
    return {key: step[key] for key in COMPARED if key in step}


def median_step(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Each compared figure's median over several runs' real steps (what before/after show)."""
    return {key: statistics.median(values) for key in COMPARED
            if (values := [step[key] for step in steps if isinstance(step.get(key), (int, float))])}


def _measurements(results: list[Result], *codes: str, key: str) -> dict[str, Any] | None:
    for result in results:
        if result.code in codes and key in result.measurements:
            return result.measurements
    return None


def _confirmed(results: list[Result], code: str) -> bool:
    return any(result.code == code and result.judgment.confirmed for result in results)


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
    sweep = _measurements(results, *SWEEP_CODES, key="unsettled")
    unsettled = _unsettled(sweep["unsettled"], workers) if sweep else None
    if unsettled:
        effects["num_workers"] += f" ({unsettled})"
    if workers > 0:
        _persistence(summary, results, settings, effects, again=(step.get("epochs") or 0) > 1)
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
    return Recommendation(settings, effects, dropped, changed, unsettled=unsettled)


def _unsettled(rival: dict[str, Any], workers: int) -> str:
    return (f"the sweep could not tell {workers} from {rival['count']} workers clearly ({rival['gain'] * 100:+.0f}%, "
            f"spread {rival['spread'] * 100:.0f}%): another run may recommend {rival['count']}")


def _num_workers(summary: dict[str, Any], results: list[Result], settings: dict[str, Any],
                 effects: dict[str, str]) -> int:
    requested: int = summary["num_workers"]
    sweep = _measurements(results, *SWEEP_CODES, key="sweep")
    best = sweep.get("recommended") if sweep else None
    if sweep is None or best is None:
        settings["num_workers"] = requested
        effects["num_workers"] = "unchanged (no num_workers sweep ran on this loader)"
        return requested
    rows = sweep["sweep"]
    rate = {int(count): row.get("samples_per_s") for count, row in rows.items()}
    chosen = int(best)
    settings["num_workers"] = chosen
    shown = f"{chosen} workers: {rate[chosen]:.1f} samples/s"
    if requested != chosen and rate.get(requested):
        shown += f"; {requested} workers: {rate[requested]:.1f} samples/s"
    effects["num_workers"] = f"sweep: {shown}"
    return chosen


def _persistence(summary: dict[str, Any], results: list[Result], settings: dict[str, Any],
                 effects: dict[str, str], again: bool) -> None:
    """``again``: the script iterates the loader more than once (an epoch loop)."""
    own = summary.get("start_method")
    current = bool(summary.get("persistent_workers"))
    if _confirmed(results, "DL303"):
        settings["persistent_workers"] = False
        effects["persistent_workers"] = "a persistent worker kept a stale copy of the dataset (DL303)"
        return
    measured = _measurements(results, *PERSISTENCE_CODES, key=f"{own}_stall_s")
    if measured is None and not summary.get("num_workers") and again:
        # the block gives workers to a loader that had none, in an epoch loop: started once, not every
        # epoch (the interleaved whole epochs decide whether the block, persistence included, is better)
        settings["persistent_workers"] = True
        effects["persistent_workers"] = "the script iterates this loader every epoch: start its new workers once"
        return
    if measured is None or f"{own}_persistent_s" not in measured:
        settings["persistent_workers"] = current
        effects["persistent_workers"] = "unchanged (not measured)"
        return
    stall, kept = measured[f"{own}_stall_s"], measured[f"{own}_persistent_s"]
    saves = stall - kept >= MIN_PERSISTENCE_SAVING_S
    effect = f"epoch start {stall:.3f} s -> {kept:.3f} s under {own}"
    chosen, requested = settings["num_workers"], summary.get("num_workers") or 0
    start = _sweep_startup(results, chosen) if again and chosen > requested else None
    if not saves and start is not None and start - kept >= MIN_PERSISTENCE_SAVING_S:
        # measured at the script's count; the block's larger count costs more to start each epoch
        saves = True
        effect += f" with {requested} workers; {chosen} workers take {start:.3f} s to start (sweep): start them once"
    settings["persistent_workers"] = saves or current
    effects["persistent_workers"] = effect + ("" if saves else ": no measurable saving")


def _sweep_startup(results: list[Result], count: int) -> float | None:
    """The sweep's time to the first batch with ``count`` workers (None where it did not run)."""
    sweep = _measurements(results, *SWEEP_CODES, key="sweep")
    row = sweep["sweep"].get(str(count), sweep["sweep"].get(count)) if sweep else None
    startup = row.get("startup_s") if isinstance(row, dict) else None
    return startup if isinstance(startup, (int, float)) else None


def _pinning(summary: dict[str, Any], results: list[Result], settings: dict[str, Any],
             effects: dict[str, str]) -> None:
    copy = _measurements(results, "DL206", key="pinned_s")
    current = bool(summary.get("pin_memory"))
    sweep = _measurements(results, *SWEEP_CODES, key="accelerator")
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


def _start_method(summary: dict[str, Any], results: list[Result], settings: dict[str, Any],
                  effects: dict[str, str]) -> None:
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


# -- one decision per loader, from whole epochs ------------------------------------------------


def decide(before_epoch_s: list[float], after_epoch_s: list[float], batches: int | None) -> Decision:
    """The block against the script's settings, from paired runs' mean epochs (run order, A then B).

    ``better`` needs the block's epochs faster beyond the pairs' spread (and the 5% noise floor)
    and a saving above the floors (ms per epoch, µs per batch with ``batches`` per epoch).
    """
    before, after = tuple(before_epoch_s), tuple(after_epoch_s)
    rounds = min(len(before), len(after))
    comparison = compare([1 / s for s in before[:rounds] if s > 0], [1 / s for s in after[:rounds] if s > 0]) \
        if rounds and all(s > 0 for s in before[:rounds] + after[:rounds]) else None
    if comparison is None:
        return Decision(INCONCLUSIVE, "no whole epoch of this loader was timed with both settings", before, after)
    saved = statistics.median(before[:rounds]) - statistics.median(after[:rounds])
    saving = Saving(saved, RunLength(batches, None), per_batch_s=saved / batches if batches else None,
                    epoch_s=statistics.median(before[:rounds]))
    measured = Decision(INCONCLUSIVE, "", before, after, comparison.gain, comparison.spread, saved, saving.per_batch_s)
    pairs = f"{rounds} interleaved pair{'s' if rounds > 1 else ''} of runs"
    epochs = f"each epoch {seconds(saving.epoch_s or 0.0)} -> {seconds(statistics.median(after[:rounds]))}"
    if comparison.beyond_noise and saving.material:
        return replace(measured, verdict=BETTER,
                       reason=f"{epochs} ({saving.describe()}; spread {comparison.spread * 100:.0f}%, {pairs})")
    if not comparison.decided:
        return replace(measured, reason=f"{epochs} (spread {comparison.spread * 100:.0f}% > gain "
                                        f"{abs(comparison.gain) * 100:.0f}%, {pairs})")
    if comparison.gain > NOISE_FLOOR:  # faster beyond the noise, but below the floors
        why = f"{saving.short()}: too little to act on"
    elif comparison.gain < -NOISE_FLOOR:  # in time, as the epochs read
        why = f"{(statistics.median(after[:rounds]) / (saving.epoch_s or 1.0) - 1) * 100:.0f}% slower with these settings"
    else:
        why = f"{comparison.gain * 100:+.0f}%, within the {NOISE_FLOOR * 100:.0f}% noise floor"
    return replace(measured, verdict=KEEP_YOURS, reason=f"{epochs} ({why}; spread {comparison.spread * 100:.0f}%, {pairs})")


def failed(error: str) -> Decision:
    """A block whose run failed is no block to paste."""
    return Decision(KEEP_YOURS, f"the run with these settings failed: {error}")


def settled(decision: Decision, pairs: int, min_pairs: int) -> bool:
    """No more pairs needed after ``pairs`` pairs of runs: a run with the block failed; or at least
    ``min_pairs`` and the noise decided, or no whole epoch to time (more runs would time none)."""
    unmeasured = decision.gain is None
    if pairs < min_pairs:
        return unmeasured and decision.verdict is KEEP_YOURS
    return unmeasured or decision.verdict is not INCONCLUSIVE


# -- findings agree with the block ---------------------------------------------------------


def reconcile(finding_probe: dict[str, Any], code: str, recommendation: Recommendation) -> bool:
    """A persistence finding confirmed beside a block without persistent workers says why (in place);
    True where the verdict was taken back."""
    if code not in PERSISTENCE_CODES or not Judgment.parse(finding_probe.get("verdict", "")).confirmed:
        return False
    if recommendation.settings.get("num_workers") == 0:
        why = "the recommended settings use num_workers=0: no workers to restart"
    elif recommendation.settings.get("persistent_workers") is False:
        why = f"the recommended settings keep persistent_workers=False: {recommendation.effects['persistent_workers']}"
    else:
        return False
    finding_probe["verdict"] = NOT_CONFIRMED
    finding_probe["evidence"] = f"moot: {why}; measured with workers: {finding_probe.get('evidence', '')}"
    return True


def agree(finding_probe: dict[str, Any], code: str, decision: Decision) -> bool:
    """A confirmed saving beside a block that is not better says why it is not (in place); a confirmed
    one beside a better block quotes the block's whole epochs. True where the verdict was taken back."""
    if code not in SAVING_CODES or not Judgment.parse(finding_probe.get("verdict", "")).confirmed:
        return False
    if decision.gain is None and decision.verdict is INCONCLUSIVE:
        return False  # no whole epoch timed (the script leaves this loader early): no evidence either way
    finding_probe["measurements"] = {**finding_probe.get("measurements", {}), "decision": decision.to_dict()}
    evidence = finding_probe.get("evidence", "")
    if decision.verdict is BETTER or decision.unsettled and code not in SWEEP_CODES:
        # faster beyond the noise (at most the count unsettled): the saving the block carries holds
        finding_probe["evidence"] = f"{evidence}; the recommended settings, whole epochs: {decision.reason}"
        return False
    if decision.unsettled:  # a num_workers claim, and the sweep could not settle the count
        finding_probe["verdict"] = str(Judgment(Verdict.INCONCLUSIVE, "the sweep's best num_workers is not settled"))
    elif decision.verdict is INCONCLUSIVE and decision.spread is not None and decision.gain is not None:
        finding_probe["verdict"] = inconclusive(decision.spread, decision.gain)
    else:
        finding_probe["verdict"] = not_confirmed(f"the recommended settings are not better: {KEEP_YOURS.value}")
    finding_probe["evidence"] = f"the recommended settings, whole epochs: {decision.reason}; measured apart: {evidence}"
    return True


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
        lines.append(f"  {KEEP_YOURS.value}: the run with these settings failed: {after['error']}")
        return lines
    if not after or "not_run" in after:
        lines.append("  no before -> after: " + after.get("not_run", "the first run did not finish"))
        return lines
    rounds = recommendation.decision.rounds if recommendation.decision else 1
    lines.append(f"  before -> after (the script's real step, with its settings and with these, {rounds} run(s) each, "
                 "interleaved; medians):")
    rows: list[tuple[str, str, Callable[[float], str]]] = [
            ("data wait", "data_wait_fraction", lambda v: f"{v * 100:.0f}% of the step"),
            ("step", "step_s", lambda v: f"{v * 1000:.1f} ms"),
            ("epoch", "epoch_s", lambda v: f"{v:.2f} s"),
            ("peak memory", "peak_pss_mb", lambda v: f"{v:.0f} MB")]
    for label, key, shown in rows:
        if key in before or key in after:
            first = shown(before[key]) if key in before else "-"
            second = shown(after[key]) if key in after else "-"
            lines.append(f"      {label:<12} {first} -> {second}")
    decision = recommendation.decision
    return lines + ([f"  {decision.verdict.value}: {decision.reason}"] if decision else [])
