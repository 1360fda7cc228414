"""The tenth audit's shapes left after its first round (issue 32), each as a minimal fixture of
our own: K8 across functions (a loader bound into ``functools.partial`` whose partial is handed
to another function, stored on ``self``, or binds a function of another module) and K2 through
a class (a device handed to a constructor, read back as ``self.device``). The whole finding
(position, message, fix offered) where it fires, and the twins that stay silent. The fix of
the K8 shape: fixtures/fix/DL206/k8b_partial_across_functions/ (tests/test_fix_fixtures.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_fixtures import lint_project

PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")
RESTART = "workers restart every epoch: add persistent_workers=True"
SET_PIN = ("safe", "Add `pin_memory=True`")  # the file requires CUDA (.cuda())
PIN_IF_CUDA = ("safe", "Add `pin_memory=torch.cuda.is_available()`")  # the device is "cuda if available"
PERSIST = ("safe", "Add `persistent_workers=True`")

# (code, line, column, message, (fix applicability, fix message)) of DL201 and DL206
EXPECTED = {
    # K8: the partial handed to train(), which calls it every 10 steps; stored as self.eval_fn
    # and called by fit() every 10 steps. Handed to unknown code, called with loader= again (or a
    # ** splat), binding a function that copies to the CPU: silent
    "DL206/k8b_partial_across_functions.py": {
        ("DL201", 29, 14, RESTART, PERSIST),
        ("DL206", 29, 14, PAGEABLE, SET_PIN),
        ("DL201", 36, 18, RESTART, PERSIST),
        ("DL206", 36, 18, PAGEABLE, SET_PIN),
    },
}


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / name))
    found = {(f.code, f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code in ("DL201", "DL206")}
    assert found == EXPECTED[name]


# Projects (fixtures/project/NAME, linted as one): (file, code, line, column, message, fix)
PROJECTS: dict[str, set[tuple[str, str, int, int, str, tuple[str, str]]]] = {
    # K8 across modules: partial(advtest, loader=...) of robustness.py (which copies x.cuda()),
    # handed to train() that calls it every 10 steps, or stored on self and called by another
    # method once; the other module's function copying to the CPU, the partial handed to
    # unknown code: silent. The copies are in another file: the fix pins where CUDA is there
    "k8b_partial_elsewhere": {
        ("train.py", "DL206", 25, 18, PAGEABLE, PIN_IF_CUDA),
        ("train.py", "DL201", 35, 14, RESTART, PERSIST),
        ("train.py", "DL206", 35, 14, PAGEABLE, PIN_IF_CUDA),
    },
    # K2 through a class: the device a construction passes as a keyword of **kwargs (or a named
    # parameter), kept as self.X by __init__ of a class subclassing an outside library's class,
    # args.device stored in the main block beside it; a construction in another module passing
    # "cuda:0". __init__ changing the dict or storing before the library base's __init__, a
    # construction passing the CPU (here or in another module), one hiding its keywords in a
    # splat: silent. (A project is needed: with other
    # files out of view, what their constructions pass is unknown.)
    "k2b_constructor_device": {
        ("train.py", "DL206", 90, 18, PAGEABLE, PIN_IF_CUDA),  # (the file names is_available)
        ("train.py", "DL206", 110, 14, PAGEABLE, PIN_IF_CUDA),
        ("train.py", "DL206", 113, 13, PAGEABLE, PIN_IF_CUDA),
    },
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_whole_findings_of_projects(name):
    root = FIXTURES / "project" / name
    found = {
        (str(path.relative_to(root)), f.code, f.line, f.column, f.message, _fix(f))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code in ("DL201", "DL206")
    }
    assert found == PROJECTS[name]


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_k2b_fix_pins_where_cuda_is_available(tmp_path):
    """The K2-through-a-class fix (fixtures/fix_project/k2b_constructor_device, linted as a
    project: the constructions decide): ``pin_memory=torch.cuda.is_available()``; the result
    re-lints clean and a second fix changes nothing."""
    case = FIXTURES / "fix_project" / "k2b_constructor_device"
    shutil.copy(case / "before.py", tmp_path / "t.py")
    first = _dllint("t.py", "--no-cache", "--select", "DL206", "--format", "concise", cwd=tmp_path)
    assert first.stdout.splitlines()[0] == f"t.py:25:14: DL206 [*] {PAGEABLE}"
    _dllint("t.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()
    again = _dllint("t.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()
