from __future__ import annotations

import json

from dllint.output.summary import RunSummary


def render_json(summary: RunSummary) -> str:
    return json.dumps([f.to_dict() for f in summary.findings], indent=2)
