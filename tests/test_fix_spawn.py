"""Behavioural proof: the seed script fails under ``spawn`` with real DataLoader workers, and
finishes once ``dllint --fix --unsafe-fixes`` has fixed it (main guard + hoisted lambda)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import main

# Torch runs only in the scripts' own processes: whether it is installed is all this process
# needs to know (importing it here cost each collecting worker 2.5 CPU-seconds).
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch: the scripts start real DataLoader workers")

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "fix" / "spawn" / "seed_script.py"
LAUNCHER = (
    "import multiprocessing, runpy, sys\n"
    "multiprocessing.set_start_method('spawn', force=True)\n"
    "runpy.run_path(sys.argv[1], run_name='__main__')\n"
)


def _run_under_spawn(script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(script)], capture_output=True, text=True, timeout=120, cwd=script.parent
    )


def test_seed_script_fails_under_spawn_then_finishes_once_fixed(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    shutil.copy(SEED, script)
    broken = _run_under_spawn(script)
    assert broken.returncode != 0
    assert "bootstrapping phase" in broken.stderr or "pickle" in broken.stderr.lower(), broken.stderr[-2000:]

    result = CliRunner().invoke(main, ["--fix", "--unsafe-fixes", "--no-cache", str(script)])
    assert "remaining" in result.output, result.output
    fixed_source = script.read_text()
    assert 'if __name__ == "__main__":' in fixed_source and "lambda batch" not in fixed_source

    fixed = _run_under_spawn(script)
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    assert "seen 16" in fixed.stdout


def test_a_returned_local_dataset_class_that_dl103_reports_fails_under_spawn(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    shutil.copy(SEED.parent.parent.parent / "DL103" / "returned_local_class.py", script)
    result = CliRunner().invoke(main, ["--no-cache", "--select", "DL103", str(script)])
    assert "train.py:23:25: DL103 'Ds' is the local class 'Numbers' a function returns, and its instance is sent to workers (via dataset)" in result.output
    broken = _run_under_spawn(script)
    assert broken.returncode != 0
    assert "Can't pickle local object 'get_dataset.<locals>.Numbers'" in broken.stderr, broken.stderr[-2000:]
