"""``dllint --probe TARGET [-- ARGS]``: lint the target, run it under the probe, print verdicts."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dllint.engine import Linter, lint_file
from dllint.findings import Finding
from dllint.output import RunSummary, render
from dllint.probe.errors import ProbeError


@dataclass
class ProbeOptions:
    timeout: float = 120
    batches: int | None = None
    report_path: str | None = None
    nproc_per_node: int | None = None  # run the script on N ranks (torchrun-style)


def static_source(target: str) -> str | None:
    """The file to lint for a probe target: the script, or the module of ``module:function``."""
    if ":" in target and not Path(target).exists():
        module = target.split(":", 1)[0]
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None
    return target if Path(target).is_file() else None


def run_probe_command(target: str, script_args: list[str], linter: Linter, fmt: str, options: ProbeOptions) -> int:
    from dllint.probe import run_probe

    source = static_source(target)
    findings: list[Finding] = lint_file(source, linter).findings if source else []
    try:
        report = run_probe(
            target,
            script_args,
            findings,
            timeout=options.timeout,
            batches=options.batches,
            report_path=options.report_path,
            progress=fmt == "text" and sys.stderr.isatty(),
            nproc_per_node=options.nproc_per_node,
        )
    except ProbeError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        return 2
    findings = sorted(report.findings, key=lambda f: f.sort_key)
    summary = RunSummary(findings, files_checked=1 if source else 0)
    if fmt == "text":
        click.echo(report.render_text())
        click.echo("")
    click.echo(render(fmt, summary))
    return 1 if findings else 0
