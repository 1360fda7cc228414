"""``dllint --probe TARGET [-- ARGS]``: lint the target, run it under the probe, print verdicts.

Exit status: 0 no finding, 1 findings, 2 the probe could not run the script
(bad target, or the script ended before building any DataLoader), 128 + N when
dllint was stopped by signal N (130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dllint.engine import Linter, lint_file
from dllint.findings import Finding
from dllint.output import RunSummary, render
from dllint.probe.errors import ProbeError, ProbeInterrupted

EXIT_CANNOT_RUN = 2
EXIT_SIGNAL_BASE = 128


@dataclass
class ProbeOptions:
    timeout: float = 120
    batches: int | None = None
    report_path: str | None = None
    nproc_per_node: int | None = None  # run the script on N ranks with torchrun --standalone
    launcher: str | None = None  # the user's own launch command (torchrun, accelerate launch, srun...)


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


def static_findings(source: str, linter: Linter) -> list[Finding]:
    """The target's findings, linted knowing its project (the project's root, else the
    script's folder): values read from its config files resolve, and the probe can name
    the config key to change."""
    from dllint.per_file import lint_bytes, read_file
    from dllint.project import ProjectIndex, find_project_root

    data, _ = read_file(source, linter.settings.max_file_size, False)
    if isinstance(data, Finding):
        return lint_file(source, linter).findings
    root = find_project_root([source]) or Path(source).resolve().parent
    return lint_bytes(linter, source, data, ProjectIndex(root, linter.settings).view(source)).findings


def exit_code(report, findings: list[Finding]) -> int:
    if report.signal is not None:
        return EXIT_SIGNAL_BASE + report.signal
    if report.could_not_run:
        return EXIT_CANNOT_RUN
    return 1 if findings else 0


def run_probe_command(target: str, script_args: list[str], linter: Linter, fmt: str, options: ProbeOptions) -> int:
    from dllint.probe import run_probe

    source = static_source(target)
    findings: list[Finding] = static_findings(source, linter) if source else []
    try:
        report = run_probe(
            target,
            script_args,
            findings,
            timeout=options.timeout,
            batches=options.batches,
            report_path=options.report_path,
            progress=True,  # on stderr: the output format on stdout stays clean
            nproc_per_node=options.nproc_per_node,
            launcher=options.launcher,
        )
    except ProbeError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        return EXIT_CANNOT_RUN
    except ProbeInterrupted as stop:  # before the harness started: nothing to report
        click.echo(f"dllint: probe interrupted by {stop}", err=True)
        return EXIT_SIGNAL_BASE + stop.signum
    findings = sorted(report.findings, key=lambda f: f.sort_key)
    summary = RunSummary(findings, files_checked=1 if source else 0)
    if fmt == "text":
        click.echo(report.render_text())
        click.echo("")
    code = exit_code(report, findings)
    if code == EXIT_CANNOT_RUN and not findings and fmt == "text":
        click.echo("dllint: the probe could not run the script (see above); nothing was checked at run time", err=True)
    else:
        click.echo(render(fmt, summary))
    return code
