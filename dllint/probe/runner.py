"""The parent side: start the harness in its own process group, watch it, build the report."""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from collections.abc import Callable
from typing import Any

from dllint.findings import Finding
import dllint.probe.descendants as descendants
import dllint.probe.guard as guard
import dllint.probe.jobs as jobs
import dllint.probe.launch as launch
from dllint.probe.processes import ProcessTree, StopSignals, Watchdog, set_child_subreaper
import dllint.probe.ranks as ranks
from dllint.probe.launched import LAUNCH_ENV
from dllint.probe.context import Settings
from dllint.probe.crashes import crash_results
from dllint.probe.endings import describe_outcome
import dllint.probe.events as events
from dllint.probe.events import parse_event, printable
from dllint.probe.errors import ProbeError, ProbeInterrupted, require_probe_dependencies
from dllint.probe.callsite import site_key
from dllint.probe.pairing import attach_verdicts, runtime_findings
from dllint.probe.blocks import Terms, comparable, for_a_rebuilt_loader, in_loop_saving, name_place, place_settings, rank_recommendations
from dllint.probe.recommend import (
    Decision,
    Recommendation,
    agree,
    decide,
    failed,
    median_step,
    reconcile,
    recommend,
    settled,
)
from dllint.probe.report import LoaderReport, ProbeReport
from dllint.probe.trace import ProbeTrace
from dllint.probe.results import CONFIRMED, Anchor, Result, Table

_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
STDERR_TAIL_LINES = 12
# Seconds allowed for starting the harness (importing torch) before the probe's own timeout starts.
STARTUP_SECONDS = 60
# How often the runner records the harness's descendants.
WATCH_SECONDS = 0.2


def parse_target(target: str) -> dict[str, Any]:
    if os.path.isfile(target):
        return {"mode": "script", "script": os.path.realpath(target)}
    if _FACTORY.match(target):
        module, function = target.split(":")
        return {"mode": "factory", "module": module, "function": function}
    if os.path.exists(target):
        raise ProbeError(f"{target} is not a file: --probe takes one script or MODULE:FUNCTION")
    raise ProbeError(f"{target}: no such script, and not MODULE:FUNCTION")


class ProgressDisplay:
    """One line per step on stderr (rewritten in place on a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.in_place = enabled and sys.stderr.isatty()

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        if self.in_place:
            sys.stderr.write("\r\033[K" + text[:120])
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.in_place:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


class EventLog:
    """Reads the harness's JSON-lines events as they arrive."""

    def __init__(self, path: str, display: ProgressDisplay) -> None:
        self.path = path
        self.display = display
        self.offset = 0
        self.events: list[dict[str, Any]] = []
        self.loader_labels: dict[int, str] = {}
        self.last_step: str | None = None
        self.ready_at: float | None = None  # when the harness had torch imported: the timeout starts here

    def poll(self) -> None:
        try:  # never through a symlink: the file is the probe's, out of the script's reach
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return
        with open(fd, encoding="utf-8") as stream:
            stream.seek(self.offset)
            chunk = stream.read()
        complete = chunk[: chunk.rfind("\n") + 1]  # a line still being written waits for the next poll
        self.offset += len(complete.encode("utf-8"))
        for line in complete.splitlines():
            event = parse_event(line)
            if event is not None:
                self.events.append(event)
                self._display(event)

    def _display(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "ready":
            self.ready_at = time.monotonic()
            self.display.show("probe: torch imported; running the script")
        elif kind == "loader":
            self.loader_labels[event["id"]] = f"loader {event['id']} at {event['call_site']}"
            self.display.show(f"probe: {self.loader_labels[event['id']]}: built")
        elif kind == "progress":
            where = self.loader_labels.get(event["loader"], "script") if "loader" in event else "script"
            self.last_step = f"{where}: {event['step']}"
            self.display.show(f"probe: {self.last_step}...")
        elif kind == "write":
            self.display.show(f"probe: {event['handled']} {event['text']}")


def _child_environment(scratch: str, events: str) -> dict[str, str]:
    environment = launch.base_environment()  # the variables per_run_keys() names are set here
    environment[guard.SCRATCH_ENV] = scratch
    environment[guard.EVENTS_ENV] = events
    environment[guard.PROTECTED_ENV] = str(os.getpid())  # the script may not stop or kill dllint
    environment[descendants.ROLE_ENV] = descendants.HARNESS
    environment["TMPDIR"] = os.path.join(scratch, "tmp")  # tempfile, multiprocessing's sockets, caches
    environment.update(guard.tracker_environment(scratch))
    return environment


def run_probe(
    target: str,
    script_args: list[str],
    findings: list[Finding],
    *,
    timeout: float = 120,
    batches: int | None = None,
    report_path: str | None = None,
    progress: bool = True,
    settings: Settings | None = None,
    nproc_per_node: int | None = None,
    launcher: str | None = None,
    trace: ProbeTrace | None = None,
) -> ProbeReport:
    """Run ``target`` under the probe harness and attach a verdict to every finding.

    ``target`` is a script path or ``module:function`` (a zero-argument factory
    returning a DataLoader). ``timeout`` counts from the moment the harness is
    ready (torch imported). Raises ProbeUnavailable without torch/psutil and
    ProbeError for a target or option that cannot work. SIGINT/SIGTERM/SIGHUP
    stop the run: everything it started is killed, its temporary directory
    removed, and the report comes back with status "interrupted" and
    ``signal`` set. A watchdog process does the same if this process is
    killed outright (:class:`~dllint.probe.processes.Watchdog`). ``trace`` (``--probe-trace``)
    gets each run's events, with the epochs' marks and the workers' batches; the caller writes it.
    """
    require_probe_dependencies()
    if not 0 < timeout < float("inf"):  # nan and inf too
        raise ProbeError(f"--probe-timeout must be positive, got {timeout}")
    if batches is not None and batches < 1:
        raise ProbeError(f"--probe-batches must be at least 1, got {batches}")
    spec = parse_target(target)
    spec.update(jobs.launch_spec(spec, launcher, nproc_per_node))
    settings = settings or Settings()
    if batches is not None:
        settings.epoch_batches = batches
    settings.trace = trace is not None
    workdir = tempfile.mkdtemp(prefix="dllint-probe-")
    watchdog = Watchdog(workdir, (guard.SCRATCH_ENV, os.path.join(workdir, guard.SCRATCH_NAME)))
    try:
        with StopSignals() as signals:
            report = _run(target, spec, script_args, findings, timeout, settings, workdir, progress, signals,
                          watchdog=watchdog, on_events=trace.add_run if trace else None)
            if report.status == "completed":
                runs = itertools.count(1)

                def rerun(extra: dict[str, Any]) -> ProbeReport:
                    number = next(runs)
                    side = "the recommended settings" if extra.get("overrides") else "the script's settings"
                    traced = functools.partial(trace.add_run, label=f"decision run {number}: {side}") if trace else None
                    return _run(target, spec, script_args, [], timeout, settings, os.path.join(workdir, f"rerun{number}"),
                                progress, signals, extra, watchdog=watchdog, on_events=traced)

                prove_recommendations(report, rerun, distributed=bool(spec.get("launcher")), budget_s=timeout,
                                      settings=settings)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        watchdog.release()
    if report_path:
        try:
            with open(report_path, "w", encoding="utf-8") as stream:
                stream.write(report.to_json())
        except OSError as error:
            raise ProbeError(f"cannot write the probe report {report_path}: {error.strerror}") from None
    return report


def prove_recommendations(report: ProbeReport, rerun: Callable[[dict[str, Any]], ProbeReport],
                          distributed: bool = False, budget_s: float = float("inf"),
                          settings: Settings | None = None) -> None:
    """One settings block per loader that earns one; then one decision per loader from whole epochs.

    ``rerun(extra)`` (never for a distributed job, nor where ``settings.most_pairs`` is 0) runs the script in measure-only mode (with each block applied at its call
    site where ``extra["overrides"]`` says so): the script's settings and the blocks' in turn,
    A B A B ..., ``settings.min_pairs`` pairs, and more (up to ``settings.most_pairs``, while
    ``budget_s`` lasts) while the noise hides a difference. Each loader's before/after and verdict come from those runs
    (:func:`~dllint.probe.recommend.decide`), and its findings agree with the verdict; a confirmed
    finding then says where its setting is written (a config key, TrainingArguments, a DataModule).
    """
    _decide_blocks(report, rerun, distributed, budget_s, settings or Settings())
    for loader in report.loaders:
        if loader.terms is not None:
            _apply(report, loader, functools.partial(_placed, terms=loader.terms))


def _placed(probe: dict[str, Any], code: str, terms: Terms) -> bool:
    name_place(probe, code, terms)
    return False


def _decide_blocks(report: ProbeReport, rerun: Callable[[dict[str, Any]], ProbeReport], distributed: bool,
                   budget_s: float, settings: Settings) -> None:
    """:func:`prove_recommendations`' blocks and their decisions."""
    changed: dict[str, tuple[LoaderReport, Recommendation]] = {}  # by site: the loader and its recommendation
    for loader in report.loaders:
        recommendation = recommend(loader.summary, loader.results, loader.step)
        if recommendation is None:
            continue
        loader.terms = place_settings(loader.summary, recommendation.settings, report.target, in_loop_saving(loader.results))
        if loader.terms.build_once is not None:  # DL204: the move, not persistent workers on the rebuilt loader
            recommendation = for_a_rebuilt_loader(recommendation, loader.summary)
        loader.recommendation = recommendation
        loader.rank_recommendations = rank_recommendations(loader.summary, loader.results, loader.rank_steps)
        _apply(report, loader, functools.partial(_reconciled, recommendation=recommendation))
        if recommendation.changed and "path" in loader.summary:
            changed[site_key(loader.summary["path"], loader.summary["line"])] = (loader, recommendation)
    if not changed:
        return
    if distributed or settings.most_pairs == 0:
        not_run = "the probe does not re-run a distributed job; apply the settings and probe again" if distributed \
            else "no decision runs (most_pairs is 0)"
        for loader, recommendation in changed.values():
            loader.recommendation = recommendation.measured(comparable(loader.step), {"not_run": not_run})
        return
    overrides = {key: recommendation.settings for key, (_, recommendation) in changed.items()}
    sides: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {key: ([], []) for key in changed}
    started, runs = time.monotonic(), 0
    decisions: dict[str, Decision] = {}
    alternatives: tuple[dict[str, Any], ...] = ({"measure_only": True}, {"overrides": overrides, "measure_only": True})
    while True:
        for side, extra in enumerate(alternatives):  # A (the script's settings), then B (the blocks)
            second = rerun(extra)
            runs += 1
            steps = _steps_by_site(second)
            missing: dict[str, Any] = {"not_run": f"the run did not reach this loader: {second.script_outcome}"}
            for key in sides:
                sides[key][side].append(steps.get(key, missing))
        decisions = {key: _decision(before, after, changed[key][0]) for key, (before, after) in sides.items()}
        pairs = runs // 2
        pair_s = (time.monotonic() - started) / pairs
        if pairs >= settings.most_pairs or all(settled(decision, pairs, settings.min_pairs) for decision in decisions.values()) \
                or time.monotonic() - started + pair_s > budget_s and pairs >= settings.min_pairs:
            break
    report.rerun = {"status": second.status, "script_outcome": second.script_outcome,
                    "duration_s": round(second.duration_s, 3), "startup_s": second.startup_s, "runs": runs}
    for key, (loader, recommendation) in changed.items():
        before, after = sides[key]
        decision = decisions[key]
        timed = [step for step in after if "steps" in step]
        shown = median_step(timed) if timed and decision.gain is not None else (
            after[-1] if after and "error" in after[-1] else {"not_run": decision.reason})
        no_step = {"no_step": True} if loader.step.get("no_step") else {}  # a factory target: no data wait, no step
        loader.recommendation = recommendation.measured(comparable({**(median_step(before) or loader.step), **no_step}),
                                                        comparable({**shown, **no_step}), decision)
        decided = loader.recommendation.decision or decision  # as the block says it (an unsettled count: inconclusive)
        taken_back = _apply(report, loader, functools.partial(agree, decision=decided))
        report.findings = [finding for finding in report.findings
                           if not (finding.source == "runtime" and id(finding) in taken_back)]


def _reconciled(probe: dict[str, Any], code: str, recommendation: Recommendation) -> bool:
    reconcile(probe, code, recommendation)
    return False  # a moot verdict stays a finding: the block only has no use for it


def _steps_by_site(run: ProbeReport) -> dict[str, dict[str, Any]]:
    """Each loader's real step in one measure-only run, by call site; ``{"error": ...}`` where an epoch
    failed, ``{"not_run": ...}`` where it took no step (the script left it after a batch)."""
    steps: dict[str, dict[str, Any]] = {}
    for loader in run.loaders:
        if "path" not in loader.summary:
            continue
        if loader.step.get("steps"):
            step = loader.step
        elif loader.failures or loader.construction_error:
            step = {"error": loader.failures[0]["error"] if loader.failures else loader.construction_error}
        else:
            step = {"not_run": f"the run took no step of this loader: {run.script_outcome}"}
        steps[site_key(loader.summary["path"], loader.summary["line"])] = step
    return steps


def _decision(before: list[dict[str, Any]], after: list[dict[str, Any]], loader: LoaderReport) -> Decision:
    """The block's verdict so far; a run with the block that failed, or that did not reach the loader
    where the run before it did, is a failed block."""
    if "error" in after[-1]:
        return failed(after[-1]["error"])
    if "not_run" in after[-1] and "steps" in before[-1]:
        return failed(after[-1]["not_run"])
    pairs = [(a["epoch_s"], b["epoch_s"]) for a, b in zip(before, after) if "epoch_s" in a and "epoch_s" in b]
    batches = max(loader.step.get("batches") or [0]) or None
    return decide([a for a, _ in pairs], [b for _, b in pairs], batches)


def _apply(report: ProbeReport, loader: LoaderReport, change: Callable[[dict[str, Any], str], bool]) -> set[int]:
    """``change(probe, code)`` on every verdict of this loader (its findings', its table's); the ids of
    the findings whose verdict it took back."""
    label = f"loader {loader.id} at {loader.call_site}"
    span = Anchor(loader.summary["path"], loader.summary["line"], loader.summary["end_line"]) \
        if "path" in loader.summary else None
    taken_back: set[int] = set()
    for finding in report.findings:
        if finding.probe is None:
            continue
        ours = finding.probe.get("measurements", {}).get("loader") == label or (
            finding.source == "runtime" and span is not None and span.path == os.path.realpath(finding.path)
            and span.covers(finding.line))
        if ours and change(finding.probe, finding.code):
            taken_back.add(id(finding))
    for result in loader.results:  # the loader's table says the same
        verdict: dict[str, Any] = {"verdict": result.verdict, "evidence": result.evidence,
                                   "measurements": result.measurements}
        change(verdict, result.code)
        result.verdict, result.evidence, result.measurements = verdict["verdict"], verdict["evidence"], verdict["measurements"]
    return taken_back


def _run(target: str, spec: dict[str, Any], script_args: list[str], findings: list[Finding], timeout: float,
         settings: Settings, workdir: str, progress: bool, signals: StopSignals,
         extra: dict[str, Any] | None = None, *, watchdog: Watchdog | None = None,
         on_events: Callable[[list[dict[str, Any]]], None] | None = None) -> ProbeReport:
    spec = {**spec, **(extra or {})}
    # The script writes in scratch/ only (temporary files, redirected writes); workdir's own files are the probe's.
    scratch = os.path.join(workdir, guard.SCRATCH_NAME)
    os.makedirs(os.path.join(scratch, "tmp"))
    paths = {name: os.path.join(workdir, name) for name in ("config.json", "events.jsonl", "stdout", "stderr")}
    started = time.monotonic()
    config = {
        **spec,
        "args": list(script_args),
        "timeout": timeout,
        "scratch": scratch,
        "settings": asdict(settings),
        "findings": [{"code": f.code, "path": os.path.realpath(f.path), "line": f.line} for f in findings],
        "events": paths["events.jsonl"],
        "stderr": paths["stderr"],
        "rank_dir": os.path.join(workdir, ranks.RANK_DIR),
    }
    with open(paths["config.json"], "w", encoding="utf-8") as stream:
        json.dump(config, stream)
    open(paths["events.jsonl"], "x").close()  # the probe's processes append to it, and never create it
    display = ProgressDisplay(progress)
    log = EventLog(paths["events.jsonl"], display)
    status = "completed"
    tree = ProcessTree((guard.SCRATCH_ENV, scratch))
    was_subreaper = set_child_subreaper(True)
    display.show("probe: starting the script (importing torch)...")
    launcher = config.get("launcher")
    environment = _child_environment(scratch, paths["events.jsonl"])
    if launcher:
        command = [*launcher, config["script"], *script_args]
        environment[LAUNCH_ENV] = paths["config.json"]
        hangs: jobs.HangWatch | None = jobs.HangWatch(config["rank_dir"], settings.measurement_seconds)
    else:
        command = [sys.executable, "-m", "dllint.probe.harness_main", paths["config.json"]]
        hangs = None
    with open(paths["stdout"], "wb") as stdout, open(paths["stderr"], "wb") as stderr:
        # A new interpreter in its own session, or a fork of a template that has torch imported (tests).
        process = launch.start_harness(command, stdout, stderr, environment, forkable=not launcher)
        if watchdog is not None:  # its process group dies with a SIGKILLed dllint, members started a moment ago too
            watchdog.group(process.pid)
        last_watch = 0.0
        never_ready = False
        returncode: int | None = None  # the root process's own exit, before the probe killed anything
        try:
            if isinstance(process, subprocess.Popen):  # the forked harness is Linux only: no job objects
                tree.contain(process)
            while process.poll() is None:
                log.poll()
                now = time.monotonic()
                if now - last_watch > WATCH_SECONDS:
                    tree.watch(process.pid)
                    last_watch = now
                    if hangs is not None and hangs.check():
                        break
                if log.ready_at is None and now - started > timeout + STARTUP_SECONDS:
                    status, never_ready = "timeout", True
                    log.last_step = log.last_step or "importing torch"
                    break
                if log.ready_at is not None and now - log.ready_at > timeout:
                    status = "timeout"
                    break
                time.sleep(0.05)
        except (KeyboardInterrupt, ProbeInterrupted) as stop:
            status = "interrupted"
            signals.received = getattr(stop, "signum", signal.SIGINT)
        finally:
            signals.disarm()
            returncode = process.poll()
            tree.watch(process.pid)
            if launcher and isinstance(process, subprocess.Popen):
                jobs.stop_launcher(launcher, process)
            tree.kill_all(process.pid)
            launch.release(process)
            if was_subreaper is False:
                set_child_subreaper(False)
            display.close()
    log.poll()
    log.events.extend(ranks.cross_rank_events(config["rank_dir"]))
    if on_events is not None:
        on_events(log.events)
    with open(paths["stderr"], encoding="utf-8", errors="replace") as stream:
        stderr_lines = stream.read().splitlines()
    stderr_tail = printable(stderr_lines[-STDERR_TAIL_LINES:])
    if launcher:
        said = jobs.launcher_words(stderr_lines[-200:])
        ending = jobs.job_outcome(config["rank_dir"], returncode, hangs.hung if hangs else {}, said)
        log.events += [{"event": "script_end", **ending}, {"event": "done"}]
    report = build_report(target, log, findings, status, time.monotonic() - started, timeout, stderr_tail)
    if never_ready:
        report.script_outcome = _never_ready(bool(launcher), timeout)
    report.process_group = process.pid
    report.startup_s = (log.ready_at - started) if log.ready_at is not None else None
    report.timeline = _timeline(log.events)
    report.signal = signals.received if status == "interrupted" else None
    if report.signal is not None:
        report.script_outcome = f"interrupted by {signal.Signals(report.signal).name}; all its processes were killed"
    report.leftover_processes = [process.pid for process in tree.alive()]
    report.notes += tree.notes
    report.loaders = ranks.merge_rank_loaders(report.loaders)
    if launcher:
        report.launcher = jobs.shown(launcher)
        report.ranks = sorted((e for e in log.events if e.get("event") == "rank_info"), key=lambda e: e["rank"])
        report.notes += jobs.node_notes(report.ranks)
    return report


class ReportBuilder:
    """Folds the run's events into loaders, results, writes and notes: one handler per kind of event."""

    def __init__(self) -> None:
        self.loaders: dict[int, LoaderReport] = {}
        self.results: list[Result] = []
        self.outcome: dict[str, Any] | None = None
        self.writes: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.finished = False
        self.child_loaders = False
        self.handlers: dict[type[events.Event], Callable[[Any, dict[str, Any]], None]] = {
            events.Loader: self.loader, events.LoaderError: self.loader_error, events.FirstBatch: self.first_batch,
            events.IteratedAgain: self.iterated_again, events.Step: self.step, events.EpochFailed: self.epoch_failed,
            events.TableEvent: self.table, events.Progress: self.progress, events.ResultEvent: self.result,
            events.Note: self.note, events.ChildLoader: self.child_loader, events.Write: self.write,
            events.ScriptEnd: self.script_end, events.Done: self.done,
        }

    def add(self, data: dict[str, Any]) -> None:
        try:
            event = events.decode(data)
        except events.EventError:  # read already, so only an event made up in this process
            return
        handler = self.handlers.get(type(event)) if event is not None else None
        if handler is not None:
            handler(event, data)

    def _of(self, loader: int | None) -> LoaderReport | None:
        return self.loaders.get(loader) if loader is not None else None

    def loader(self, event: events.Loader, _data: dict[str, Any]) -> None:
        self.loaders[event.id] = LoaderReport(event.id, event.call_site, event.summary())

    def loader_error(self, event: events.LoaderError, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.construction_error = event.error

    def first_batch(self, event: events.FirstBatch, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.first_batch_s, loader.first_batch_error = event.seconds, event.error

    def iterated_again(self, event: events.IteratedAgain, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.iterated_again = True

    def step(self, event: events.Step, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.step = dict(event.extra)

    def epoch_failed(self, event: events.EpochFailed, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.failures.append(event.failure())

    def table(self, event: events.TableEvent, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.tables.append(Table(event.title, event.columns, event.rows, event.chart))

    def progress(self, event: events.Progress, _data: dict[str, Any]) -> None:
        if (loader := self._of(event.loader)) is not None:
            loader.last_step = event.step

    def result(self, _event: events.ResultEvent, data: dict[str, Any]) -> None:
        try:
            self.results.append(Result.from_dict(data))
        except (TypeError, ValueError):  # anchors that are not anchors
            pass

    def note(self, event: events.Note, _data: dict[str, Any]) -> None:
        loader = self._of(event.loader)
        (loader.notes if loader is not None else self.notes).append(event.text)

    def child_loader(self, event: events.ChildLoader, _data: dict[str, Any]) -> None:
        self.child_loaders = True
        where = f" at {event.call_site}" if event.call_site else ""
        note = (f"a DataLoader was built{where} in a child process (pid {event.pid}) the probe does not hook; "
                "it was not measured")
        if note not in self.notes:
            self.notes.append(note)

    def write(self, _event: events.Write, data: dict[str, Any]) -> None:
        self.writes.append(data)

    def script_end(self, _event: events.ScriptEnd, data: dict[str, Any]) -> None:
        self.outcome = data

    def done(self, _event: events.Done, _data: dict[str, Any]) -> None:
        self.finished = True


def build_report(target: str, log: EventLog, findings: list[Finding], status: str, duration: float, timeout: float,
                 stderr_tail: list[str]) -> ProbeReport:
    built = ReportBuilder()
    for event in log.events:
        built.add(event)
    loaders, results, outcome = built.loaders, built.results, built.outcome
    if status == "completed" and not built.finished:
        status = "crashed"
    if status == "completed" and outcome is not None and outcome.get("how") == "timeout":
        status = "timeout"  # the harness's own budget ran out: the run did not finish either
    story = _script_outcome(status, outcome, timeout, log, stderr_tail, bool(loaders))
    story += "".join(f"; loader {loader.id}'s epoch {failure['epoch']} failed: "
                     + ("a DataLoader worker died" if failure["worker_died"] else failure["error"])
                     for loader in loaders.values() for failure in loader.failures
                     if failure["error"] not in story)
    spans = {loader.id: Anchor(loader.summary["path"], loader.summary["line"], loader.summary["end_line"])
             for loader in loaders.values() if "path" in loader.summary}
    # A later epoch's crash that is a rule's: that rule's evidence.
    results += [result for loader in loaders.values() for result in crash_results(loader.id, loader.failures,
                                                                                    spans.get(loader.id))]
    labels = {loader.id: f"loader {loader.id} at {loader.call_site}" for loader in loaders.values()}
    reason = _not_reached_reason(status, loaders, log)
    if not loaders and built.child_loaders:
        reason = "the script built its loaders in a child process, which the probe does not measure"
    masked = {loader.id: loader.construction_error for loader in loaders.values() if loader.construction_error}
    unclaimed, used = attach_verdicts(findings, results, reason, spans, labels, masked)
    for result in results:
        if result.loader in loaders:
            # Its table shows what was reported for it or seen on it: results a finding used, and confirmations.
            result.shown = id(result) in used or (result.verdict == CONFIRMED and not result.measurements.get("advisory"))
            loaders[result.loader].results.append(result)
    all_findings = list(findings) + runtime_findings(unclaimed)
    report = ProbeReport(target, status, story, all_findings, list(loaders.values()), duration,
                         log.last_step, stderr_tail=stderr_tail, writes=built.writes, notes=built.notes)
    report.could_not_run = not loaders
    if report.could_not_run and outcome is not None and outcome.get("ranks") == 0:
        ended = "started no rank in time" if status == "timeout" else "ended before any rank ran the script"
        report.hint = f"the launcher {ended}: check the --launcher command (its stderr is above)"
    elif report.could_not_run and outcome is not None and outcome.get("how") in ("exit", "error"):
        report.hint = f"if the script needs arguments, pass the script's arguments after --: dllint --probe {target} -- ARGS"
    return report


def _timeline(events: list[dict[str, Any]]) -> list[tuple[float, str]]:
    """Seconds after the harness was ready at which each measurement started."""
    ready = next((event["t"] for event in events if event["event"] == "ready" and "t" in event), None)
    if ready is None:
        return []
    return [(round(event["t"] - ready, 2), event["step"]) for event in events
            if event["event"] == "progress" and "t" in event]


def _never_ready(launcher: bool, timeout: float) -> str:
    """The story of a run whose harness never had torch imported, so the probe's timeout never started."""
    limit = f"{timeout + STARTUP_SECONDS:g} s (--probe-timeout {timeout:g} s + {STARTUP_SECONDS} s to start)"
    if launcher:
        return f"the launcher started no probed rank within {limit}; it was killed with all its processes"
    return f"the probe's Python process did not finish starting (importing torch) within {limit}; all its processes were killed"


def _not_reached_reason(status: str, loaders: dict[int, LoaderReport], log: EventLog) -> str:
    if status == "timeout" and log.last_step:
        return f"the probe timed out while running {log.last_step}"
    if status == "interrupted":
        return "the probe was interrupted"
    if not loaders:
        return "the script built no DataLoader"
    return "the script never built or iterated the loader this finding is about"


def _script_outcome(status: str, outcome: dict[str, Any] | None, timeout: float, log: EventLog, stderr_tail: list[str],
                    built_loader: bool) -> str:
    if status == "timeout":
        where = f" while running {log.last_step}" if log.last_step else ""
        return f"timed out after {timeout:g} s{where}; all its processes were killed"
    if status == "interrupted":
        return "interrupted; all its processes were killed"
    if status == "crashed":
        last = next((line for line in reversed(stderr_tail) if line.strip()), "no output")
        return f"the probe's process died before reporting: {last.strip()}"
    assert outcome is not None
    return describe_outcome(outcome, built_loader)
