"""``dllint --probe`` from the command line: verdicts in the output, errors as one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "probe"


def dllint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_probe_json_carries_verdicts(tmp_path):
    proc = dllint("--probe", str(FIXTURES / "unsharded_iterable.py"), "--format", "json", "--probe-timeout", "60", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    dl302 = [f for f in findings if f["code"] == "DL302"]
    assert dl302 and dl302[0]["probe"]["verdict"] == "confirmed"
    assert "factor 4" in dl302[0]["probe"]["evidence"]
    assert set(dl302[0]["probe"]) == {"verdict", "evidence", "measurements"}


def test_probe_text_prints_the_verdict_under_the_finding(tmp_path):
    proc = dllint("--probe", str(FIXTURES / "unsharded_iterable.py"), "--probe-timeout", "60", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    index = next(i for i, line in enumerate(lines) if ": DL302 " in line)
    assert lines[index + 1].startswith("    probe: confirmed: ")


def test_probe_bad_target_is_one_line(tmp_path):
    proc = dllint("--probe", "missing_script.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "missing_script.py" in proc.stderr
    assert "Traceback" not in proc.stderr
