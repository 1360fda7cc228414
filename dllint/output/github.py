"""GitHub Actions workflow commands: annotations on the pull request's diff."""

from __future__ import annotations

from dllint.output.summary import RunSummary


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(summary: RunSummary) -> str:
    lines = []
    for f in summary.findings:
        props = f"file={_escape_property(f.path)},line={f.line},col={f.column},endLine={f.end_line},endColumn={f.end_column},title={_escape_property(f.code)}"
        message = f"{f.code} {f.message}" if f.cell is None else f"cell {f.cell}: {f.code} {f.message}"
        lines.append(f"::warning {props}::{_escape_data(message)}")
    return "\n".join(lines)
