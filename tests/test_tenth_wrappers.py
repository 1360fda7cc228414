"""Wrapper shapes of issue 32's tenth audit (code no one tuned dllint to), each as a minimal
fixture: the whole finding (position, message, the fix offered) where it fires, the twins that
must stay silent, and the fix (before -> after, re-lint clean, a second fix changes nothing).
K13: a loader stored on a wrapper object whose ``__iter__`` yields its batches unchanged;
``for (x,) in wrapper`` in an epoch loop takes the loader's batches, copied to CUDA there."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import FIXTURES

PIN = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread "
       "page-locks them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_k13_batches_yielded_by_a_wrapper_are_the_loaders(tmp_path):
    """DL201 and DL206 at the loader built in the wrapper's ``__init__``; the DL206 fix adds
    ``pin_memory=True`` there, re-lints clean, and a second fix changes nothing."""
    case = FIXTURES / "fix_project" / "k13_wrapper"
    shutil.copy(case / "before.py", tmp_path / "t.py")
    first = _dllint("t.py", "--no-cache", "--format", "concise", "-q", cwd=tmp_path)
    assert first.stdout.splitlines() == [
        "t.py:7:27: DL201 [*] workers restart every epoch: add persistent_workers=True",
        f"t.py:7:27: DL206 [*] {PIN}",
    ]
    _dllint("t.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()
    again = _dllint("t.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()


def test_k13_a_wrapper_that_changes_the_batch_or_is_bound_twice_stays_silent():
    """``__iter__`` that yields a computed value (``data[0] * 2``), and a wrapper class name
    bound twice in the module (which class is instantiated is not followed): DL206 silent
    (fixtures/project/k13_wrapper_silent)."""
    out = _dllint(".", "--no-cache", "--select", "DL206", "--format", "concise", "-q", cwd=FIXTURES / "project" / "k13_wrapper_silent")
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout
