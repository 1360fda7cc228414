"""SARIF 2.1.0, the format GitHub code scanning uploads."""

from __future__ import annotations

import json
from pathlib import Path

from dllint import __version__
from dllint.docs import HOME, help_uri
from dllint.findings import Finding
from dllint.output.notebook_lines import NotebookLines
from dllint.output.summary import RunSummary
from dllint.severity import severity
from dllint.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_descriptor(rule) -> dict:
    sections = rule.doc_sections()
    help_text = rule.docs()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": sections.get("What it does", rule.summary)},
        "help": {"text": help_text, "markdown": help_text},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": severity(rule.code) if rule.default_enabled else "note"},
        "properties": {"tags": ["pytorch", "dataloader"], "fix_safety": rule.fix_safety},
    }


def _uri(path: str) -> str:
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return candidate.as_uri()
    return candidate.as_posix()


def _region(f: Finding, notebooks: NotebookLines) -> dict[str, int]:
    """The finding's region in the file; a notebook finding's in the ``.ipynb`` text (the cell's
    own line and column are in the result's properties)."""
    start, end = notebooks.span(f)
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


def render_sarif(summary: RunSummary) -> str:
    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = []
    notebooks = NotebookLines()
    for f in summary.findings:
        region = _region(f, notebooks)
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": severity(f.code),
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.path)}, "region": region}}],
        }
        if f.cell is not None:
            result["properties"] = {"cell": f.cell, "cellLine": f.line, "cellColumn": f.column}
        results.append(result)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dllint",
                        "version": __version__,
                        "informationUri": HOME,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(document, indent=2)
