"""What the probe hands back: findings with verdicts, per-loader tables, the run's story."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

from dllint.findings import Finding
from dllint.probe.blocks import Terms, render_settings
from dllint.probe.recommend import Recommendation, render_recommendation
from dllint.probe.results import Result, Table
from dllint.probe.steps import data_wait_text, short_waits, three_measurements_text


@dataclass
class LoaderReport:
    """One loader call site the script reached."""

    id: int
    call_site: str
    summary: dict[str, Any]
    first_batch_s: float | None = None
    first_batch_error: str | None = None
    construction_error: str | None = None
    results: list[Result] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    last_step: str | None = None  # the last measurement started on this loader
    iterated_again: bool = False  # the script iterated this loader a second time (a second epoch)
    step: dict[str, Any] = field(default_factory=dict)  # the data wait of the script's real step (steps.StepClock.summary)
    failures: list[dict[str, Any]] = field(default_factory=list)  # epochs that raised (a worker died, the dataset raised)
    recommendation: Recommendation | None = None
    terms: Terms | None = None  # where each recommended setting is written (blocks.place_settings)
    rank_steps: dict[int, dict[str, Any]] = field(default_factory=dict)  # under a launcher: each rank's real step
    rank_recommendations: dict[int, Recommendation] = field(default_factory=dict)  # each rank's own block

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "call_site": self.call_site,
            "summary": self.summary,
            "first_batch_s": self.first_batch_s,
            "first_batch_error": self.first_batch_error,
            "construction_error": self.construction_error,
            "results": [result.to_dict() for result in self.results],
            "tables": [table.to_dict() for table in self.tables],
            "notes": self.notes,
            "last_step": self.last_step,
            "iterated_again": self.iterated_again,
            "step": self.step,
            "failures": self.failures,
            "recommendation": self.recommendation.to_dict() if self.recommendation else None,
            "block": self.terms.to_dict() if self.terms else None,
            **({"ranks": {str(rank): {"step": step, "recommendation": self.rank_recommendations[rank].to_dict()
                                      if rank in self.rank_recommendations else None}
                          for rank, step in self.rank_steps.items()}} if self.rank_steps else {}),
        }


@dataclass
class ProbeReport:
    target: str
    status: str  # "completed", "timeout", "interrupted", "crashed"
    script_outcome: str  # one line: how the script ended
    findings: list[Finding]
    loaders: list[LoaderReport]
    duration_s: float
    last_step: str | None = None  # what was running when a timeout or Ctrl-C hit
    process_group: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)  # file changes the guard redirected or stopped
    notes: list[str] = field(default_factory=list)  # about the run, not one loader
    could_not_run: bool = False  # the script never built a DataLoader: nothing was probed
    hint: str | None = None
    signal: int | None = None  # the signal that interrupted dllint
    leftover_processes: list[int] = field(default_factory=list)  # should stay empty: killed yet still alive
    startup_s: float | None = None  # starting the harness (importing torch): not counted in the timeout
    timeline: list[tuple[float, str]] = field(default_factory=list)  # (seconds after ready, measurement started)
    launcher: str | None = None  # the launch command run (--launcher, --nproc-per-node)
    ranks: list[dict[str, Any]] = field(default_factory=list)  # each rank seen: rank, local_rank, node, host
    rerun: dict[str, Any] | None = None  # the second run, with the recommended settings applied

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "status": self.status,
            "script_outcome": self.script_outcome,
            "duration_s": round(self.duration_s, 3),
            "startup_s": round(self.startup_s, 3) if self.startup_s is not None else None,
            "timeline": [list(entry) for entry in self.timeline],
            "last_step": self.last_step,
            "findings": [finding.to_dict() for finding in self.findings],
            "loaders": [loader.to_dict() for loader in self.loaders],
            "stderr_tail": self.stderr_tail,
            "writes": [{key: write.get(key) for key in ("action", "path", "handled", "phase", "location")}
                       for write in self.writes],
            "notes": self.notes,
            "could_not_run": self.could_not_run,
            **({"launcher": self.launcher, "ranks": [_rank_entry(rank) for rank in self.ranks]} if self.launcher else {}),
            "rerun": self.rerun,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=repr)

    def render_text(self) -> str:
        lines = [f"probe: {self.target}: {self.script_outcome} ({self.duration_s:.1f} s)"]
        if self.launcher:
            lines.append(f"  launched with: {self.launcher}")
        if self.rerun:
            lines.append(f"  re-run with the recommended settings: {self.rerun['script_outcome']} ({self.rerun['duration_s']:.1f} s)")
        if self.status != "completed" and self.last_step:
            lines.append(f"  while running: {self.last_step}")
        if not self.loaders:
            in_children = any("in a child process" in note for note in self.notes)
            lines.append("  no DataLoader was built in the script's own process" if in_children else "  no DataLoader was built")
        lines.extend(f"  note: {note}" for note in self.notes)
        lines.extend(_render_writes(self.writes))
        for loader in self.loaders:
            lines.extend(_render_loader(loader))
        if self.stderr_tail and (self.status == "crashed" or self.could_not_run):
            lines.append("  last lines the script wrote to stderr:")
            lines.extend(f"    {line}" for line in self.stderr_tail)
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        if self.leftover_processes:
            lines.append(f"  warning: could not kill processes {', '.join(map(str, self.leftover_processes))}")
        return "\n".join(lines)


def _rank_entry(event: dict[str, Any]) -> dict[str, Any]:
    return {key: event.get(key) for key in ("rank", "local_rank", "node", "host", "world")}


def _render_writes(writes: list[dict[str, Any]]) -> list[str]:
    if not writes:
        return []
    redirected = [write["text"] for write in writes if write["handled"] == "redirected"]
    stopped = [write["text"] for write in writes if write["handled"] == "stopped"]
    lines = []
    if redirected:
        shown = ", ".join(dict.fromkeys(redirected))
        lines.append(f"  writes redirected to the probe's scratch directory (deleted; your files are untouched): {shown}")
    if stopped:
        lines.append(f"  stopped the script at {stopped[0]}; nothing written")
    return lines


def _render_loader(loader: LoaderReport) -> list[str]:
    summary = loader.summary
    lines = [
        "",
        f"loader {loader.id} at {loader.call_site}: {summary.get('loader_class')}({summary.get('dataset')}, "
        f"num_workers={summary.get('num_workers')}, batch_size={summary.get('batch_size')}, "
        f"persistent_workers={summary.get('persistent_workers')}), start method {summary.get('start_method')}",
    ]
    if loader.construction_error:
        lines.append(f"  construction failed: {loader.construction_error}")
    elif loader.first_batch_error:
        lines.append(f"  first batch failed: {loader.first_batch_error}")
    elif loader.first_batch_s is not None:
        lines.append(f"  first batch: {loader.first_batch_s:.3f} s")
    elif loader.last_step:
        lines.append(f"  stopped during: {loader.last_step}")
    else:
        lines.append("  never iterated")
    lines.extend(_render_step(loader))
    shown = [result for result in loader.results if result.shown]
    if shown:
        rows = [row for result in shown for row in _result_rows(result)]
        lines.extend(_render_table(["code", "verdict", "evidence"], rows))
    for table in loader.tables:
        lines.append(f"  {table.title}")
        lines.extend(_render_table(table.columns, table.rows))
        lines.extend(f"  {chart_line}" for chart_line in table.chart)
    lines.extend(f"  note: {note}" for note in loader.notes)
    lines.extend(_render_ranks(loader))
    if loader.recommendation is not None:
        lines.extend(_render_block(loader, loader.recommendation))
    elif not loader.summary.get("num_workers") and (why := short_waits(loader.step)):
        lines.append(f"  no settings block: the step waits on its data, but {why}")
    return lines


def _render_block(loader: LoaderReport, recommendation: Recommendation) -> list[str]:
    """The settings in the user's terms (blocks), then the before/after of the re-run (recommend)."""
    settings = render_settings(recommendation.settings, recommendation.effects, recommendation.dropped,
                               loader.terms, loader.call_site)
    outcome = render_recommendation(replace(recommendation, settings={}, dropped=()), loader.call_site)
    return settings + outcome[1:]  # its first line is the header, said above in the user's terms


def _render_ranks(loader: LoaderReport) -> list[str]:
    """Under a launcher: each rank's data wait, and each rank's block where the ranks' differ."""
    lines = []
    for rank, step in sorted(loader.rank_steps.items()):
        lines.append(f"  rank {rank}: {data_wait_text(step)}" if step.get("steps") else
                     f"  rank {rank}: data wait not measured ({step.get('epochs', 0)} epochs of this loader)")
    blocks = {rank: recommendation.settings for rank, recommendation in sorted(loader.rank_recommendations.items())}
    if len({repr(settings) for settings in blocks.values()}) > 1:
        lines.extend(f"  rank {rank}'s own measurements give: {', '.join(f'{name}={value!r}' for name, value in settings.items())}"
                     for rank, settings in blocks.items())
    elif len(blocks) > 1:
        lines.append(f"  each rank's own measurements give the block below (ranks {', '.join(map(str, blocks))})")
    return lines


def _render_step(loader: LoaderReport) -> list[str]:
    step = loader.step
    lines = []
    if step.get("steps") and step.get("no_step"):
        lines.append(f"  {step['epochs']} epochs iterated without a training step (a factory target): no data wait to measure")
    elif step.get("steps"):
        epochs = step.get("batches", [])
        extra = [f"{len(epochs)} epochs of at most {max(epochs)} batches" if epochs else ""]
        if "first_wait_s" in step:
            extra.append(f"first batch of an epoch {step['first_wait_s']:.3f} s")
        if "epoch_s" in step:
            extra.append(f"epoch {step['epoch_s']:.2f} s")
        if "peak_pss_mb" in step:
            extra.append(f"peak memory {step['peak_pss_mb']:.0f} MB")
        waits_most = [rank for rank, own in loader.rank_steps.items() if own is step]
        if len(loader.rank_steps) > 1 and waits_most:
            extra.append(f"rank {waits_most[0]}, the rank that waits most")
        lines.append(f"  {data_wait_text(step)} ({'; '.join(part for part in extra if part)})")
        three = three_measurements_text(step)
        lines.append(f"  {three}" if three else f"  step alone: not measured (the script ran {step['epochs']} epoch(s) "
                     "of this loader: the probe replays epoch 1's batches in its last, epoch 3)")
    elif step.get("epochs"):
        lines.append(f"  data wait: not measured ({step['epochs']} epochs, too few batches)")
    for failure in loader.failures:
        who = "a worker died" if failure.get("worker_died") else ("a worker raised" if failure.get("in_worker") else "raised")
        lines.append(f"  epoch {failure['epoch']} failed at batch {failure['batch']} ({who}): {failure['error']}")
    return lines


# The verdict column stays short: a longer verdict's reason moves into the evidence, and the
# evidence wraps at this width (the JSON report keeps both whole).
VERDICT_WIDTH = 40
EVIDENCE_WIDTH = 100


def _result_rows(result: Result) -> list[list[str]]:
    verdict, evidence = result.verdict, result.evidence
    if len(verdict) > VERDICT_WIDTH and " (" in verdict and verdict.endswith(")"):
        verdict, reason = verdict[:-1].split(" (", 1)
        evidence = f"{reason}: {evidence}" if evidence else reason
    wrapped = textwrap.wrap(evidence, EVIDENCE_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]
    return [[result.code, verdict, wrapped[0]], *[["", "", line] for line in wrapped[1:]]]


def _render_table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max([len(column)] + [len(row[index]) for row in cells if index < len(row)]) for index, column in enumerate(columns)]
    widths[-1] = 0  # the last column runs free: evidence can be long

    def line(values: list[str]) -> str:
        return "  " + "  ".join(value.ljust(width) for value, width in zip(values, widths)).rstrip()

    return [line(columns), line(["-" * max(width, len(column)) for width, column in zip(widths, columns)])] + [
        line(row) for row in cells
    ]
