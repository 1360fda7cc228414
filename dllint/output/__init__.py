"""Renderers: each turns a run's findings into one output format."""

from __future__ import annotations

from dataclasses import dataclass, field

from dllint.findings import Finding


@dataclass
class RunSummary:
    findings: list[Finding]
    files_checked: int = 0
    fixed: int = 0  # set by --fix
    introduced: int = 0  # set by --fix: of ``findings``, how many the fixes brought in
    statistics: bool = False
    extra: dict = field(default_factory=dict)


FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, summary: RunSummary) -> str:
    if fmt == "json":
        from dllint.output.json_format import render_json

        return render_json(summary)
    if fmt == "sarif":
        from dllint.output.sarif import render_sarif

        return render_sarif(summary)
    if fmt == "github":
        from dllint.output.github import render_github

        return render_github(summary)
    from dllint.output.text import render_text

    return render_text(summary)


def location(finding: Finding) -> str:
    """``path:line:col`` or, in a notebook, ``path:cell N:line:col``."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"
