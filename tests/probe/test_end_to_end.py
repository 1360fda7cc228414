"""Static findings from the engine, confirmed by the probe: the path `dllint --probe` takes."""

from __future__ import annotations

import pytest
from probe_helpers import FIXTURES, quick_settings

from dllint.probe import run_probe

from lint_helpers import lint_source
pytestmark = pytest.mark.probe


def test_engine_findings_on_the_spotgeo_script_are_confirmed(assert_no_leftovers):
    script = FIXTURES / "spotgeo_style.py"
    findings = lint_source(script.read_text(), path=str(script))
    assert {f.code for f in findings} >= {"DL201", "DL101"}
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=quick_settings())
    verdicts = {f.code: f.probe["verdict"] for f in report.findings}
    assert verdicts["DL201"] == "confirmed" and verdicts["DL101"] == "confirmed"
    assert all(f.probe is not None for f in report.findings)
    assert_no_leftovers(report)
