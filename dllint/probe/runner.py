"""The parent side: start the harness in its own process group, watch it, build the report."""

from __future__ import annotations

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
from typing import Any

from dllint.findings import Finding
from dllint.probe import ranks
from dllint.probe.context import Settings
from dllint.probe.errors import ProbeError, require_probe_dependencies
from dllint.probe.names import RULE_NAMES
from dllint.probe.pairing import attach_verdicts, runtime_findings
from dllint.probe.report import LoaderReport, ProbeReport
from dllint.probe.results import Result, Table

_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STDERR_TAIL_LINES = 12


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

    def poll(self) -> None:
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8") as stream:
            stream.seek(self.offset)
            chunk = stream.read()
        complete = chunk[: chunk.rfind("\n") + 1]  # a line still being written waits for the next poll
        self.offset += len(complete.encode("utf-8"))
        for line in complete.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            self.events.append(event)
            self._display(event)

    def _display(self, event: dict[str, Any]) -> None:
        if event["event"] == "loader":
            self.loader_labels[event["id"]] = event["call_site"]
        elif event["event"] == "progress":
            where = self.loader_labels.get(event.get("loader"), "script")
            self.last_step = f"loader at {where}: {event['step']}"
            self.display.show(f"probe: {self.last_step}")


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment["PYTHONDONTWRITEBYTECODE"] = "1"  # never leave __pycache__ in the user's tree
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, environment.get("PYTHONPATH")]))
    environment["PYTHONUNBUFFERED"] = "1"
    return environment


def _live_group_members(pgid: int) -> list[int]:
    import psutil

    members = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(process.pid)
        except (OSError, psutil.Error):  # gone while we looked
            continue
    return members


def _kill_group(process: subprocess.Popen, patience: float = 5.0) -> None:
    """Kill the harness and everything it started (workers, forkservers, the user's children).

    SIGKILL is delivered asynchronously, so wait until no live member of the
    group is left; orphaned workers are no longer our children to wait for.
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass
        if not _live_group_members(process.pid) or time.monotonic() > deadline:
            return
        time.sleep(0.05)


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
) -> ProbeReport:
    """Run ``target`` under the probe harness and attach a verdict to every finding.

    ``target`` is a script path or ``module:function`` (a zero-argument factory
    returning a DataLoader). Raises ProbeUnavailable without torch/psutil and
    ProbeError for a target or option that cannot work.
    """
    require_probe_dependencies()
    if timeout <= 0:
        raise ProbeError(f"--probe-timeout must be positive, got {timeout}")
    if batches is not None and batches < 1:
        raise ProbeError(f"--probe-batches must be at least 1, got {batches}")
    spec = parse_target(target)
    if nproc_per_node is not None:
        spec.update(ranks.launch_spec(spec, nproc_per_node))
    settings = settings or Settings()
    if batches is not None:
        settings.batches = batches
    workdir = tempfile.mkdtemp(prefix="dllint-probe-")
    try:
        return _run(target, spec, script_args, findings, timeout, settings, workdir, report_path, progress)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(target, spec, script_args, findings, timeout, settings, workdir, report_path, progress) -> ProbeReport:
    paths = {name: os.path.join(workdir, name) for name in ("config.json", "events.jsonl", "stdout", "stderr")}
    started = time.monotonic()
    config = {
        **spec,
        "args": list(script_args),
        "deadline": time.time() + timeout,
        "settings": asdict(settings),
        "findings": [{"code": f.code, "path": os.path.realpath(f.path), "line": f.line} for f in findings],
        "events": paths["events.jsonl"],
        "stderr": paths["stderr"],
        "rank_dir": os.path.join(workdir, ranks.RANK_DIR),
    }
    with open(paths["config.json"], "w", encoding="utf-8") as stream:
        json.dump(config, stream)
    display = ProgressDisplay(progress)
    log = EventLog(paths["events.jsonl"], display)
    status = "completed"
    with open(paths["stdout"], "wb") as stdout, open(paths["stderr"], "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", ranks.entry_module(config), paths["config.json"]],
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
            env=_child_environment(), start_new_session=True,  # its own process group, killed as one
        )
        try:
            while process.poll() is None:
                log.poll()
                if time.monotonic() - started > timeout:
                    status = "timeout"
                    break
                time.sleep(0.05)
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            _kill_group(process)
            display.close()
    log.poll()
    log.events.extend(ranks.cross_rank_events(config["rank_dir"]))
    with open(paths["stderr"], encoding="utf-8", errors="replace") as stream:
        stderr_tail = stream.read().splitlines()[-STDERR_TAIL_LINES:]
    report = build_report(target, log, findings, status, time.monotonic() - started, timeout, stderr_tail)
    report.process_group = process.pid
    report.loaders = ranks.merge_rank_loaders(report.loaders)
    if report_path:
        try:
            with open(report_path, "w", encoding="utf-8") as stream:
                stream.write(report.to_json())
        except OSError as error:
            raise ProbeError(f"cannot write the probe report {report_path}: {error.strerror}") from None
    return report


def build_report(target, log: EventLog, findings, status, duration, timeout, stderr_tail) -> ProbeReport:
    loaders: dict[int, LoaderReport] = {}
    results: list[Result] = []
    outcome: dict[str, Any] | None = None
    finished = False
    for event in log.events:
        kind, loader_id = event["event"], event.get("loader")
        if kind == "loader":
            summary = {key: value for key, value in event.items() if key not in ("event", "id")}
            loaders[event["id"]] = LoaderReport(event["id"], event["call_site"], summary)
        elif kind == "loader_error" and loader_id in loaders:
            loaders[loader_id].construction_error = event["error"]
        elif kind == "first_batch" and loader_id in loaders:
            loaders[loader_id].first_batch_s = event["seconds"]
            loaders[loader_id].first_batch_error = event["error"]
        elif kind == "result":
            result = Result.from_dict(event)
            results.append(result)
            if loader_id in loaders:
                loaders[loader_id].results.append(result)
        elif kind == "table" and loader_id in loaders:
            loaders[loader_id].tables.append(Table(event["title"], event["columns"], event["rows"], event.get("chart", [])))
        elif kind == "progress" and loader_id in loaders:
            loaders[loader_id].last_step = event["step"]
        elif kind == "note" and loader_id in loaders:
            loaders[loader_id].notes.append(event["text"])
        elif kind == "script_end":
            outcome = event
        elif kind == "done":
            finished = True
    if status == "completed" and not finished:
        status = "crashed"
    story = _script_outcome(status, outcome, timeout, log, stderr_tail)
    if not loaders:
        reason = f"the script built no DataLoader ({story})"
    else:
        reason = "the script never built or iterated the loader this finding is about"
    unclaimed = attach_verdicts(findings, results, reason)
    all_findings = list(findings) + runtime_findings(unclaimed, RULE_NAMES)
    return ProbeReport(target, status, story, all_findings, list(loaders.values()), duration,
                       log.last_step, stderr_tail=stderr_tail)


def _script_outcome(status, outcome, timeout, log: EventLog, stderr_tail) -> str:
    if status == "timeout":
        where = f" while running {log.last_step}" if log.last_step else ""
        return f"timed out after {timeout:g} s{where}; all its processes were killed"
    if status == "interrupted":
        return "interrupted (Ctrl-C); all its processes were killed"
    if status == "crashed":
        last = next((line for line in reversed(stderr_tail) if line.strip()), "no output")
        return f"the probe's process died before reporting: {last.strip()}"
    assert outcome is not None
    detail = outcome["detail"]
    if outcome.get("location"):
        detail += f" at {outcome['location']}"
    if outcome["how"] == "error":
        prefix = "the script raised " if not any(e["event"] == "loader" for e in log.events) else "the script ended with "
        return prefix + detail + (" before building a DataLoader" if prefix.startswith("the script raised") else "")
    if outcome["how"] == "exit" and not any(e["event"] == "loader" for e in log.events):
        return detail + " before building a DataLoader"
    return detail
