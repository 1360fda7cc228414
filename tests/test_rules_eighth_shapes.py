"""Shapes found on code no one tuned dllint to (issue 32's eighth and ninth audits), each as a minimal
fixture: the whole finding (cell, position, message, and the fix offered) where it fires, and
the twins that must stay silent (correct code; a value left unknown). Fix fixtures of the same
shapes are in fixtures/fix/ (tests/test_fix_fixtures.py: before -> after, re-lint clean)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_fixtures import lint_project

RESTART = "workers restart every epoch: add persistent_workers=True"
REITERATED = "workers restart every epoch (re-iterated by {}): add persistent_workers=True"
PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")
LAMBDA = "lambda passed to workers (via {}) cannot be pickled under spawn: use a module-level def"
SET_PERSISTENT = ("safe", "Add `persistent_workers=True`")
PIN_IF_CUDA = ("safe", "Add `pin_memory=torch.cuda.is_available()`")  # the device is "cuda if available"
SET_PIN = ("safe", "Add `pin_memory=True`")
SET_PERSISTENT_IF_WORKERS = ("safe", "Add `persistent_workers=num_workers > 0`")  # num_workers a parameter

# (cell, line, column, code, message, (fix applicability, fix message) or None) of the codes named
EXPECTED = {
    # E3: self.num_workers stored from a parameter every caller passes as 0 (a setattr(self, k, v)
    # beside it): silent; 4 stored in __init__ fires
    "DL201/self_attribute_workers.py": {
        (None, 28, 18, "DL201", RESTART, ("safe", "Add `persistent_workers=self.workers > 0`")),
    },
    # H5: self.device stored once; stored by two methods (unknown): silent
    "DL206/self_device.py": {(None, 15, 23, "DL206", PAGEABLE, SET_PIN)},
    # H6: args.device stored after parse_args(); an option's destination takes its default ("cpu"): silent
    "DL206/namespace_device.py": {(None, 26, 14, "DL206", PAGEABLE, PIN_IF_CUDA)},
    # H3: a device bound twice to one CUDA expression; a name bound to two devices: silent
    "DL206/device_bound_twice.ipynb": {(3, 1, 10, "DL206", PAGEABLE, PIN_IF_CUDA)},
    # H1: a helper's caller that never runs, a device parameter rebound to the current CUDA device;
    # a caller passing the CPU, one handed on, a device rebound to an unknown value: silent
    "DL206/helper_two_callers.py": {(None, 55, 14, "DL206", PAGEABLE, PIN_IF_CUDA)},
    # H9: a tuple rebinding copies the unpacked fields, then converts them; converted first: silent
    "DL206/tuple_rebinding.py": {(None, 10, 14, "DL206", PAGEABLE, SET_PIN)},
    # H7: lambdas a DataLoader subclass hands to super().__init__ (or the base's __init__)
    "DL102/subclass_super_init.py": {
        (None, 14, 67, "DL102", LAMBDA.format("collate_fn"), ("safe", "Replace the lambda with `merge`")),
        (None, 19, 67, "DL102", LAMBDA.format("worker_init_fn"), ("safe", "Hoist the lambda to a module-level function")),
    },
    # J3 (ninth audit): the device bound by the two arms of an if/else statement on
    # torch.cuda.is_available(); both arms CPU, an arm unknown, a third binding: silent
    "DL206/j3_device_if_statement.py": {(None, 17, 14, "DL206", PAGEABLE, PIN_IF_CUDA)},
    # E2: `pip install x` and `cd ..` run by IPython's automagic; the same words in a def body are an error
    "DL000/automagic.ipynb": {
        (5, 2, 9, "DL000", "syntax error in cell 5: invalid syntax at line 2 column 9", None),  # `install`
        (3, 3, 10, "DL201", RESTART, SET_PERSISTENT),
    },
}


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    expected = EXPECTED[name]
    codes = {code for _, _, _, code, _, _ in expected}
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / name))
    found = {(f.cell, f.line, f.column, f.code, f.message, _fix(f)) for f in result.findings if f.code in codes}
    assert found == expected


# Projects (fixtures/project/NAME, linted as one): (file, line, column, code, message, fix) of the codes named
PROJECTS = {
    # H8: the batch unpacked in the body of another module's loop; the CPU handed there: silent
    "batch_unpacked_elsewhere": {("test.py", 15, 14, "DL206", PAGEABLE, PIN_IF_CUDA)},
    # E3 (tabnet): self.num_workers stored by fit() from its parameter left at 0, read by another
    # method that passes it to another module's factory (a setattr(self, k, v) beside it): silent;
    # a count of 4 stored in __init__, calls passing 0 and 2, a count a helper's setattr(obj, k, v) may replace: DL201
    # H7's variant (pretrain-gnns bio/dataloader.py:22): a subclass's lambda, built in another file with
    # num_workers from an option (default 0), a third file importing the class unused; one process, unknown: silent
    "subclass_lambda_elsewhere": {
        ("dataloader.py", 15, 85, "DL102", LAMBDA.format("collate_fn") + " (when --num_workers > 0)", ("safe", "Replace the lambda with `merge`")),
    },
    "self_attribute_across_files": {
        ("loaders.py", 14, 12, "DL201", REITERATED.format("model.py:31"), SET_PERSISTENT_IF_WORKERS),
        ("loaders.py", 19, 12, "DL201", REITERATED.format("model.py:38"), SET_PERSISTENT_IF_WORKERS),
        ("loaders.py", 25, 12, "DL201", REITERATED.format("configured.py:20"), SET_PERSISTENT_IF_WORKERS),
    },
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_whole_findings_of_projects(name):
    root = FIXTURES / "project" / name
    expected = PROJECTS[name]
    codes = {code for *_, code, _, _ in expected}
    found = {
        (str(path.relative_to(root)), f.line, f.column, f.code, f.message, _fix(f))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code in codes
    }
    assert found == expected


def test_fixing_an_automagic_notebook_keeps_the_magic_line(tmp_path):
    """The line IPython runs as ``%pip`` is written back as it was; the fix of the loader cell is
    applied, the result re-lints clean for it, and a second fix changes nothing."""
    path = tmp_path / "automagic.ipynb"
    notebook = json.loads((FIXTURES / "DL000" / "automagic.ipynb").read_text(encoding="utf-8"))
    notebook["cells"] = notebook["cells"][:4]  # without the cell that is a syntax error
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")

    def fix() -> str:
        run = subprocess.run([sys.executable, "-m", "dllint", "--no-cache", "--fix", "--select", "DL201", str(path)],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        return path.read_text(encoding="utf-8")

    fixed = fix()
    cells = ["".join(cell["source"]) for cell in json.loads(fixed)["cells"]]
    assert cells[1] == "pip install torchviz\ncd ..\n"
    assert "num_workers=2, persistent_workers=True\n)" in cells[2]
    assert fix() == fixed
