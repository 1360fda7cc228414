"""``dllint --probe TARGET [-- ARGS]``: lint the target, run it under the probe, print verdicts.

Exit status: 0 no finding, 1 findings, 2 the probe could not run the script
(bad target, or the script ended before building any DataLoader) or did not
finish (it timed out, or its own process died): then no "All checks passed!",
whatever it found; 128 + N when dllint was stopped by signal N (130 for Ctrl-C,
143 for SIGTERM).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dllint.engine import Linter
from dllint.findings import Finding
from dllint.output import RunSummary, render
from dllint.probe.errors import ProbeError, ProbeInterrupted
from dllint.probe.notebook_target import NotebookPositions, is_notebook

if TYPE_CHECKING:
    from dllint.project import ProjectIndex
    from dllint.probe.report import ProbeReport
    from dllint.probe.trace import ProbeTrace

EXIT_CANNOT_RUN = 2
EXIT_SIGNAL_BASE = 128
UNFINISHED = ("timeout", "crashed")  # probe statuses whose run-time checks are incomplete


@dataclass
class ProbeOptions:
    timeout: float = 120
    batches: int | None = None
    report_path: str | None = None
    nproc_per_node: int | None = None  # run the script on N ranks with torchrun --standalone
    launcher: str | None = None  # the user's own launch command (torchrun, accelerate launch, srun...)
    trace_path: str | None = None  # --probe-trace: the run as a Chrome trace (dllint.probe.trace)


def module_file(module: str, search_path: list[str]) -> str | None:
    """The source file of a dotted module name, found as the harness will import it, without importing it.

    The harness puts the working directory first on ``sys.path``; the parent
    looks there too, so ``--probe pkg.data:make_loader`` lints ``pkg/data.py``.
    """
    parts = module.split(".")
    for entry in search_path:
        base = Path(entry or os.getcwd()).joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return str(candidate)
    return None


def static_source(target: str) -> str | None:
    """The file to lint for a probe target: the script, or the module of ``module:function``."""
    if ":" in target and not Path(target).exists():
        return module_file(target.split(":", 1)[0], [os.getcwd(), *sys.path])
    return target if Path(target).is_file() else None


def _project_index(source: str, linter: Linter) -> ProjectIndex:
    from dllint.project import ProjectIndex, find_project_root

    root = find_project_root([source])
    assert root is not None  # None only for no path: else the path's directory at least
    return ProjectIndex(root, linter.settings)


def static_findings(source: str, linter: Linter, index: ProjectIndex | None = None) -> list[Finding]:
    """The target's findings, linted knowing its project (the project's root, else the
    script's folder): values read from its config files resolve, and the probe can name
    the config key to change."""
    from dllint.per_file import lint, read_file

    data, _ = read_file(source, linter.settings.max_file_size, False)
    if isinstance(data, Finding):
        return [data]
    index = index or _project_index(source, linter)
    return lint(linter, source, data, index.view(source)).findings


# Project modules the target imports that are linted with it (breadth first): where its loaders
# may be built (a factory in data.py), so that the probe measures what their findings are about.
MOST_IMPORTED_MODULES = 30


def imported_project_files(source: str, index: ProjectIndex) -> list[str]:
    """The project's own modules ``source`` imports, directly or through each other."""
    seen, queue = {os.path.realpath(source)}, [source]
    found: list[str] = []
    while queue and len(found) < MOST_IMPORTED_MODULES:
        path = queue.pop(0)
        try:
            summary = index.summaries.summary(path)
        except (OSError, ValueError, SyntaxError):
            summary = None
        for target in (summary[0].imports.values() if summary else ()):
            # "._" names something inside the module: resolve() then stops at the module's file
            resolved = index.definitions.resolve(path, target + "._")
            module = os.path.realpath(resolved[0]) if resolved else None
            if module and module not in seen and module.endswith(".py"):
                seen.add(module)
                found.append(module)
                queue.append(module)
    return found[:MOST_IMPORTED_MODULES]


def target_findings(source: str, linter: Linter) -> tuple[list[Finding], set[str]]:
    """The target's findings and those of the project modules it imports; the files linted."""
    index = _project_index(source, linter)
    findings = static_findings(source, linter, index)
    linted = {os.path.realpath(source)}
    for module in imported_project_files(source, index):
        linted.add(module)
        findings.extend(static_findings(os.path.relpath(module), linter, index))
    return findings, linted


def judge_call_site_files(report: ProbeReport, linted: set[str], linter: Linter) -> None:
    """Lint the files where the probed loaders were built that were not linted before the run (a
    module imported dynamically), and give their findings the verdicts measured there."""
    from dllint.probe.pairing import attach_verdicts
    from dllint.probe.results import Anchor

    paths = {os.path.realpath(loader.summary["path"]) for loader in report.loaders if loader.summary.get("path")}
    new: list[Finding] = []
    for path in sorted(paths - linted):
        if path.endswith(".py") and os.path.isfile(path):
            new.extend(static_findings(os.path.relpath(path), linter))
    if not new:
        return
    results = [result for loader in report.loaders for result in loader.results]
    spans = {loader.id: Anchor(loader.summary["path"], loader.summary["line"], loader.summary["end_line"])
             for loader in report.loaders if "path" in loader.summary}
    labels = {loader.id: f"loader {loader.id} at {loader.call_site}" for loader in report.loaders}
    _, used = attach_verdicts(new, results, "the probe measured nothing this finding is about (its file was "
                              "linted after the run)", spans, labels)
    claimed: set[tuple[str, str, int]] = set()  # (code, path, line)
    for result in results:
        if id(result) in used:
            result.shown = True
            claimed.update((result.code, anchor.path, anchor.first_line) for anchor in result.anchors[:1])
    kept = [finding for finding in report.findings if finding.source != "runtime"
            or (finding.code, os.path.realpath(finding.path), finding.line) not in claimed]
    report.findings = kept + new


def exit_code(report: ProbeReport, findings: list[Finding]) -> int:
    if report.signal is not None:
        return EXIT_SIGNAL_BASE + report.signal
    # A probe that crashed or ran out of time measured less than it says: never a clean exit.
    if report.could_not_run or report.status in UNFINISHED:
        return EXIT_CANNOT_RUN
    return 1 if findings else 0


def write_trace(trace: ProbeTrace | None, path: str | None) -> bool:
    """Write ``--probe-trace``'s file; False (after a one-line error) where it cannot be written."""
    if trace is None or path is None or not trace.runs:
        return True
    try:
        trace.write(path)
    except OSError as error:
        click.echo(f"dllint: error: cannot write the probe trace {path}: {error.strerror or error}", err=True)
        return False
    return True


def run_probe_command(target: str, script_args: list[str], linter: Linter, fmt: str, options: ProbeOptions) -> int:
    from dllint.probe import run_probe
    from dllint.probe.trace import ProbeTrace

    source = static_source(target)
    findings, linted = target_findings(source, linter) if source else ([], set())
    notebook = NotebookPositions.of(source) if source and is_notebook(source) else None
    probed = notebook.for_probe(findings) if notebook else findings
    trace = ProbeTrace() if options.trace_path else None
    try:
        report = run_probe(
            target,
            script_args,
            probed,
            timeout=options.timeout,
            batches=options.batches,
            report_path=options.report_path,
            progress=True,  # on stderr: the output format on stdout stays clean
            nproc_per_node=options.nproc_per_node,
            launcher=options.launcher,
            trace=trace,
        )
    except ProbeError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        write_trace(trace, options.trace_path)  # what ran is still pictured
        return EXIT_CANNOT_RUN
    except ProbeInterrupted as stop:  # before the harness started: nothing to report
        click.echo(f"dllint: probe interrupted by {stop}", err=True)
        return EXIT_SIGNAL_BASE + stop.signum
    if notebook is not None:
        notebook.restore(report, findings, probed)
    judge_call_site_files(report, linted, linter)
    findings = sorted(report.findings, key=lambda f: f.sort_key)
    summary = RunSummary(findings, files_checked=len(linted))
    if fmt == "text":
        click.echo(report.render_text())
        click.echo("")
    code = exit_code(report, findings)
    if code == EXIT_CANNOT_RUN and report.status in UNFINISHED and fmt == "text":
        if findings:
            click.echo(render(fmt, summary))
        click.echo(f"dllint: the probe did not finish ({report.script_outcome}); its run-time checks are incomplete",
                   err=True)
    elif code == EXIT_CANNOT_RUN and not findings and fmt == "text":
        click.echo("dllint: the probe could not run the script (see above); nothing was checked at run time", err=True)
    else:
        click.echo(render(fmt, summary))
    if not write_trace(trace, options.trace_path) and code < EXIT_CANNOT_RUN:
        return EXIT_CANNOT_RUN  # the report is out; the file asked for is not
    return code
