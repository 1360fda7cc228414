"""DL206 shapes of the tenth audit (issue 32, code no one tuned dllint to), each as a minimal
fixture: the whole finding (position, message, and the fix offered) where it fires, and the
twins that must stay silent (an unknown value, a second binding). Fix fixtures of the same
shapes are in fixtures/fix/DL206/k*_*/ (tests/test_fix_fixtures.py: before -> after, re-lint
clean, a second fix changes nothing)."""

from __future__ import annotations

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_fixtures import lint_project

PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")
PIN_IF_CUDA = ("safe", "Add `pin_memory=torch.cuda.is_available()`")  # the device is "cuda if available"
SET_PIN = ("safe", "Add `pin_memory=True`")  # the file requires CUDA

# (line, column, message, (fix applicability, fix message)) of DL206
EXPECTED = {
    # K2: args.device stored in the main block, read back in the function the namespace is handed
    # to (and one further); stored an unknown value, twice, after the call, another object: silent
    "k2_namespace_handed.py": {(25, 14, PAGEABLE, PIN_IF_CUDA), (28, 13, PAGEABLE, PIN_IF_CUDA)},
    # K3: self.device stored by the base class's __init__ from self.get_device() (an if/else on
    # torch.cuda.is_available()), read in a subclass; a device name bound outside the if, a
    # subclass overriding get_device: silent
    "k3_inherited_device.py": {(32, 18, PAGEABLE, PIN_IF_CUDA)},
    # K7: batches drawn with next(it) from it = iter(loader), renewed on StopIteration, copied to
    # "cuda"; the name bound to two loaders' iterators, only a computed tensor copied: silent
    "k7_next_iterator.py": {(10, 14, PAGEABLE, SET_PIN)},
    # K16: only tensors gathered from the batch (x[:, idx], x[[0, 1]]) copied: silent; views of
    # the batch (x[:, 0], x[1:, -1]) and a dict batch read by a key name still fire
    "k16_indexed_batch.py": {(19, 14, PAGEABLE, SET_PIN), (27, 14, PAGEABLE, SET_PIN)},
}


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL206" / name))
    found = {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == "DL206"}
    assert found == EXPECTED[name]


# Projects (fixtures/project/NAME, linted as one): (file, line, column, message, fix) of DL206
PROJECTS: dict[str, set[tuple[str, int, int, str, tuple[str, str]]]] = {
    # K3 across modules: the base's __init__ in base.py (get_device: nested if/else), read in a
    # subclass and in a subclass of a subclass in another module; a method returning input(),
    # an attribute stored twice, a subclass storing its own unknown device, one overriding
    # get_device: silent
    "k3_inherited_device": {
        ("train.py", 10, 18, PAGEABLE, PIN_IF_CUDA),
        ("train.py", 30, 18, PAGEABLE, PIN_IF_CUDA),
    },
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_whole_findings_of_projects(name):
    root = FIXTURES / "project" / name
    found = {
        (str(path.relative_to(root)), f.line, f.column, f.message, _fix(f))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code == "DL206"
    }
    assert found == PROJECTS[name]
