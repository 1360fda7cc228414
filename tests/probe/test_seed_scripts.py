"""The issue's seed scripts, run for real: each must get the verdict it deserves."""

from __future__ import annotations

import pytest
from probe_helpers import FIXTURES, checks_settings, finding, quick_settings

from dllint.probe import run_probe
from dllint.probe.pairing import attach_verdicts, runtime_findings

from lint_helpers import lint_source

pytestmark = pytest.mark.probe


def verdicts(report) -> dict[str, str]:
    return {f.code: f.probe["verdict"] for f in report.findings}


@pytest.fixture(scope="module")
def spotgeo():
    """The spotgeo script probed once on the engine's own findings (the path ``dllint --probe`` takes),
    read by the two tests below."""
    script = FIXTURES / "spotgeo_style.py"
    findings = lint_source(script.read_text(), path=str(script))
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=quick_settings())
    return script, findings, report


def test_spotgeo_style_confirms_persistent_workers_and_main_guard(spotgeo, assert_no_leftovers):
    script, findings, report = spotgeo
    lines = script.read_text().splitlines()
    loader_line = next(i for i, line in enumerate(lines, 1) if line.startswith("loader = DataLoader("))
    epoch_line = next(i for i, line in enumerate(lines, 1) if line.startswith("for epoch"))
    [dl201] = [f for f in findings if f.code == "DL201" and f.line == loader_line]
    [dl101] = [f for f in findings if f.code == "DL101" and f.line == epoch_line]
    assert dl201.probe["verdict"] == "confirmed"
    assert "epoch start" in dl201.probe["evidence"] and "->" in dl201.probe["evidence"]
    fork = dl201.probe["measurements"]
    assert fork["fork_stall_s"] > fork["fork_persistent_s"]
    assert dl101.probe["verdict"] == "confirmed"
    assert "bootstrapping phase" in dl101.probe["evidence"]
    assert "persistent_workers: first-batch latency" in report.render_text()
    assert_no_leftovers(report)


def test_engine_findings_on_the_spotgeo_script_are_confirmed(spotgeo):
    """Static findings from the engine, confirmed by the probe (was tests/probe/test_end_to_end.py)."""
    _, findings, report = spotgeo
    assert {f.code for f in findings} >= {"DL201", "DL101"}
    verdicts = {f.code: f.probe["verdict"] for f in report.findings}
    assert verdicts["DL201"] == "confirmed" and verdicts["DL101"] == "confirmed"
    assert all(f.probe is not None for f in report.findings)


def test_lambda_collate_fn_is_confirmed_with_the_pickling_error(assert_no_leftovers):
    script = FIXTURES / "lambda_collate.py"
    lambda_line = 9  # reported at the lambda, not at the loader call
    findings = [finding("DL102", script, lambda_line)]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=checks_settings())
    assert findings[0].probe["verdict"] == "confirmed"
    assert "<lambda>" in findings[0].probe["evidence"] and "collate_fn" in findings[0].probe["evidence"]
    assert [f for f in report.findings if f.source == "runtime"] == []
    # Without the static finding, the same result becomes a finding of its own, marked runtime.
    results = [result for loader in report.loaders for result in loader.results]
    runtime = runtime_findings(attach_verdicts([], results, "")[0])
    assert [(f.code, f.line, f.source, f.name) for f in runtime] == [("DL102", 9, "runtime", "lambda-in-worker")]
    assert_no_leftovers(report)


def test_unsharded_iterable_dataset_is_duplicated_four_times(assert_no_leftovers):
    script = FIXTURES / "unsharded_iterable.py"
    findings = [finding("DL302", script, 6)]  # at def __iter__
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=checks_settings())
    probe = findings[0].probe
    assert probe["verdict"] == "confirmed"
    assert probe["measurements"]["duplication_factor"] == 4.0
    assert "factor 4.0" in probe["evidence"]
    assert_no_leftovers(report)


def test_stale_curriculum_state_is_confirmed(assert_no_leftovers):
    script = FIXTURES / "stale_curriculum.py"
    findings = [finding("DL303", script, 24)]  # at the mutation inside the epoch loop
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=checks_settings())
    probe = findings[0].probe
    assert probe["verdict"] == "confirmed", probe
    assert "difficulty=1" in probe["evidence"] and "difficulty=0" in probe["evidence"]
    assert_no_leftovers(report)


def test_correct_script_is_never_confirmed(assert_no_leftovers):
    script = FIXTURES / "correct.py"
    # Findings a careless rule might raise here: the probe must not back any of them.
    findings = [finding(code, script, 14) for code in ("DL201", "DL303", "DL302", "DL102", "DL304")]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=quick_settings())
    assert all(f.probe["verdict"] != "confirmed" for f in report.findings), verdicts(report)
    assert verdicts(report)["DL201"] == "not confirmed"
    assert [f for f in report.findings if f.source == "runtime"] == []
    assert report.status == "completed"
    assert_no_leftovers(report)
