"""Renderers: each turns a run's findings into one output format."""

from __future__ import annotations

from dllint.output.summary import RunSummary, location

__all__ = ["FORMATS", "RunSummary", "location", "render"]


FORMATS = ("text", "full", "concise", "json", "sarif", "github")  # concise: ruff's name for text


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

    return render_text(summary, source_lines=fmt == "full")
