"""GitHub Actions workflow commands: annotations on the pull request's diff."""

from __future__ import annotations

from dllint.output.notebook_lines import NotebookLines
from dllint.output.summary import RunSummary
from dllint.severity import severity


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(summary: RunSummary) -> str:
    """One ``::error`` or ``::warning`` (:mod:`dllint.severity`) per finding; a notebook's at the
    line of the ``.ipynb`` text that holds the cell's line, where GitHub shows it."""
    lines = []
    notebooks = NotebookLines()
    for f in summary.findings:
        start, end = notebooks.span(f)
        place = f"file={_escape_property(f.path)},line={start[0]},col={start[1]},endLine={end[0]},endColumn={end[1]}"
        message = f"{f.code} {f.message}" if f.cell is None else f"cell {f.cell}, line {f.line}: {f.code} {f.message}"
        lines.append(f"::{severity(f.code)} {place},title={_escape_property(f.code)}::{_escape_data(message)}")
    return "\n".join(lines)
