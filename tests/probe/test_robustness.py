"""Scripts that hang, exit, crash or break in their dataset: a clear report, nothing left running."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from probe_helpers import FIXTURES, checks_settings, finding, quick_settings

from dllint.probe import ProbeError, run_probe

# popen_harness: what a new interpreter does (escape, trust, robustness, cleanup, startup) is the subject here
pytestmark = [pytest.mark.probe, pytest.mark.popen_harness]


def test_a_hanging_script_ends_at_the_timeout_and_leaves_nothing_running(assert_no_leftovers):
    script = FIXTURES / "hangs.py"
    findings = [finding("DL201", script, 18)]
    started = time.monotonic()
    report = run_probe(str(script), [], findings, timeout=8, progress=False, settings=quick_settings())
    assert report.startup_s is not None  # the timeout counts from here: importing torch is not the probe's time
    assert time.monotonic() - started - report.startup_s < 14
    # Either the parent killed it at the deadline, or the harness's own time slice
    # gave up on the first batch first; both must name what was running.
    assert report.status in ("timeout", "completed")
    assert "first batch" in (report.last_step or "") or "first batch failed" in report.render_text()
    assert findings[0].probe["verdict"] != "confirmed"
    if report.status == "timeout":  # the finding says which measurement the time ran out in
        assert "timed out while running" in findings[0].probe["evidence"] and "first batch" in findings[0].probe["evidence"]
    assert_no_leftovers(report)


def test_sys_exit_before_any_loader_is_reported(assert_no_leftovers):
    script = FIXTURES / "exits_early.py"
    findings = [finding("DL201", script, 5)]
    report = run_probe(str(script), [], findings, timeout=30, progress=False)
    assert "sys.exit(3)" in report.script_outcome and "before building a DataLoader" in report.script_outcome
    assert findings[0].probe["verdict"] == "not reached"
    assert "no DataLoader was built" in report.render_text()
    assert_no_leftovers(report)


def test_an_error_before_any_loader_is_reported_with_its_own_message(assert_no_leftovers):
    script = FIXTURES / "raises_early.py"
    report = run_probe(str(script), [], [], timeout=30, progress=False)
    assert report.script_outcome.startswith("the script raised FileNotFoundError: data/train.csv not found")
    assert "raises_early.py:4" in report.script_outcome
    assert_no_leftovers(report)


def test_a_dataset_that_raises_in_getitem_is_reported_at_the_first_batch(assert_no_leftovers):
    script = FIXTURES / "getitem_raises.py"
    findings = [finding("DL201", script, 13)]
    report = run_probe(str(script), [], findings, timeout=30, progress=False, settings=quick_settings())
    (loader,) = report.loaders
    assert "KeyError" in loader.first_batch_error and "sample 0 missing" in loader.first_batch_error
    assert "first batch failed: " in report.render_text()
    assert findings[0].probe["verdict"] != "confirmed"
    assert_no_leftovers(report)


def test_the_probe_never_writes_to_the_users_files(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)  # bytecode kept elsewhere would hide a written __pycache__
    project = tmp_path / "project"
    shutil.copytree(FIXTURES, project)
    (project / "helpers.py").write_text("VALUE = 1\n")
    (project / "spotgeo_style.py").write_text(
        "import helpers\n" + (FIXTURES / "spotgeo_style.py").read_text()
    )

    def snapshot():
        return {path: os.stat(path).st_mtime_ns for path in project.rglob("*")}

    before = snapshot()
    run_probe(str(project / "spotgeo_style.py"), [], [], timeout=30, progress=False, settings=quick_settings())
    assert snapshot() == before  # no new files (no __pycache__), nothing touched


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no/such/script.py", "no such script, and not MODULE:FUNCTION"),
        (str(FIXTURES), "is not a file"),
    ],
)
def test_a_bad_target_is_one_clear_line(target, message):
    with pytest.raises(ProbeError, match=message) as caught:
        run_probe(target, [], [], progress=False)
    assert "\n" not in str(caught.value)


def test_bad_options_are_one_clear_line():
    with pytest.raises(ProbeError, match="--probe-timeout must be positive"):
        run_probe(str(FIXTURES / "correct.py"), [], [], timeout=0)
    with pytest.raises(ProbeError, match="--probe-batches must be at least 1"):
        run_probe(str(FIXTURES / "correct.py"), [], [], batches=0)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_timeout_that_is_not_a_positive_finite_number_is_one_clear_line(value):
    proc = subprocess.run([sys.executable, "-m", "dllint", "--probe", str(FIXTURES / "correct.py"),
                           f"--probe-timeout={value}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"dllint: error: --probe-timeout must be a positive, finite number of seconds, got {float(value)}\n"
    with pytest.raises(ProbeError, match="--probe-timeout must be positive"):
        run_probe(str(FIXTURES / "correct.py"), [], [], timeout=float(value))


def test_a_many_worker_loader_runs_again_and_again_without_a_stop(tmp_path):
    # Each worker passes its batches through multiprocessing's fd sharing: a listener socket in TMPDIR
    # (inside the scratch directory), unlinked and its directory removed with dir_fd when the worker exits.
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(torch.arange(48.0)), batch_size=2, num_workers=24)\n"
        "for epoch in range(2):\n"  # workers exit and restart once: enough for the sockets they leave
        "    for batch in loader:\n"
        "        pass\n"
    )
    for _ in range(2):
        report = run_probe(str(script), [], [], timeout=60, progress=False,
                           settings=checks_settings(sweep_limit=0, start_methods=("script",)))
        assert [write for write in report.writes if write["handled"] == "stopped"] == [], report.render_text()
        assert report.loaders and report.loaders[0].first_batch_s is not None, report.render_text()
