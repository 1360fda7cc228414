"""``--format json``: one object per finding, with ruff's ``url``, ``severity`` and the fix's
``edits``; ``--statistics``: one object per rule, as ruff's."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from dllint.output.summary import RunSummary, statistics
from dllint.severity import severity


def render_json(summary: RunSummary) -> str:
    if summary.statistics:
        return json.dumps([asdict(row) for row in statistics(summary)], indent=2)
    from dllint.docs import help_uri
    from dllint.output.fix_edits import fix_edits
    from dllint.rules import rule_by_code

    sources: dict[tuple[str, int | None], str | None] = {}
    findings = []
    for finding in summary.findings:
        data: dict[str, Any] = finding.to_dict()
        rule = rule_by_code(finding.code)
        data["url"] = help_uri(rule) if rule is not None else None
        data["severity"] = severity(finding.code)
        if data["fix"] is not None:
            data["fix"]["edits"] = fix_edits(finding, sources)
        findings.append(data)
    return json.dumps(findings, indent=2)
