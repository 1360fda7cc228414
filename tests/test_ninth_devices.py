"""DL206 shapes of issue 32's ninth audit (benchmarks/FALSE_POSITIVE_SHAPES.md, "Ninth audit"), each
as a minimal fixture: the whole finding (cell, position, message, and the fix offered) where it
fires, and the twins that must stay silent. Fix fixtures of the same shapes are
fixtures/fix/DL206/j2_*/ and j7_*/ (tests/test_fix_fixtures.py: before -> after, re-lint clean).

J2: a loop target rebound to tensors stacked from the batch, then copied: the copies read new
memory, which pinning does not reach. J7: a later notebook cell rebinds ``device`` after the cell
that trains: when that cell runs, ``device`` is cell 1's CUDA device."""

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

PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")
SET_PIN = ("safe", "Add `pin_memory=True`")  # the file requires CUDA (torch.device("cuda"))
PIN_IF_CUDA = ("safe", "Add `pin_memory=torch.cuda.is_available()`")  # the device is "cuda if available"

# (cell, line, column, code, message, (fix applicability, fix message)) of DL206
EXPECTED = {
    # J2: the targets rebound to tensors stacked (torch.stack, torch.cat; torch.as_tensor of a
    # list) from the batch, then copied, also after a loop that collects the pieces: silent
    # (lines 71, 72, 76); rebound to the batch's own tensors (73), also through torch.as_tensor
    # (77), copied before they are rebound (74), stacked on one path only (75): DL206
    "DL206/j2_stacked_targets.py": {
        (None, 73, 18, "DL206", PAGEABLE, SET_PIN),
        (None, 74, 20, "DL206", PAGEABLE, SET_PIN),
        (None, 75, 19, "DL206", PAGEABLE, SET_PIN),
        (None, 77, 24, "DL206", PAGEABLE, SET_PIN),
    },
    # J7: `device` rebound by cell 5, after the training of cell 4: DL206; `gpu` read by a function
    # that cell 6 calls (through another) before cell 7 rebinds it: DL206; a name rebound to an
    # unknown device before the copies (cell 3), after them in the loop that repeats them (cell 4),
    # or before a later call of the function that copies (`late`, cell 7): silent
    "DL206/j7_device_rebound_later.ipynb": {
        (4, 1, 10, "DL206", PAGEABLE, PIN_IF_CUDA),
        (6, 21, 17, "DL206", PAGEABLE, PIN_IF_CUDA),
    },
}


def _findings(path) -> set[tuple]:
    result = lint_path(Linter(Settings(select=("ALL",))), str(path))
    return {(f.cell, f.line, f.column, f.code, f.message, None if f.fix is None else (f.fix.applicability, f.fix.message))
            for f in result.findings if f.code == "DL206"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    assert _findings(FIXTURES / name) == EXPECTED[name]


def test_stacked_in_another_file():
    """J2 as the audit saw it: the loop that stacks the images and targets before copying them
    is another module's function the loader is handed to (its summary names the device
    parameter): silent; a function that copies an image of the batch itself first: DL206."""
    root = FIXTURES / "project" / "j2_stacked_elsewhere"
    found = {(str(path.relative_to(root)), f.line, f.column, f.code, f.message, None if f.fix is None else (f.fix.applicability, f.fix.message))
             for path, result in lint_project(root).items() for f in result.findings if f.code == "DL206"}
    assert found == {("train.py", 22, 15, "DL206", PAGEABLE, PIN_IF_CUDA)}


def _cells(name: str) -> list[str]:
    notebook = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def test_a_script_with_the_cells_in_order_reads_as_the_notebook(tmp_path):
    """J7's cells written one after the other in a .py file: Python runs them in that order, so
    the same copies fire, at the loaders of the training cells (lines 9 and 47 of the script)."""
    path = tmp_path / "t.py"
    path.write_text("\n".join(_cells("DL206/j7_device_rebound_later.ipynb")), encoding="utf-8")
    assert _findings(path) == {(None, 9, 10, "DL206", PAGEABLE, PIN_IF_CUDA), (None, 47, 17, "DL206", PAGEABLE, PIN_IF_CUDA)}


def test_a_rebinding_before_the_training_keeps_it_silent(tmp_path):
    """The cell that rebinds ``device`` from a model's parameters (unknown) run before the one
    that trains: the copies read the unknown device, and unknown is silent."""
    setup, rebinding, loaders, later = _cells("DL206/j7_device_rebound_later.ipynb")[:4]
    path = tmp_path / "t.py"
    path.write_text("\n".join([setup, rebinding, later, loaders]), encoding="utf-8")
    assert _findings(path) == set()


def test_fixing_the_notebook(tmp_path):
    """J7's fix: the training cell's loader pins when CUDA is there; the notebook re-lints clean
    for DL206, and a second fix changes nothing."""
    path = tmp_path / "t.ipynb"
    path.write_text((FIXTURES / "DL206" / "j7_device_rebound_later.ipynb").read_text(encoding="utf-8"), encoding="utf-8")

    def fix() -> str:
        run = subprocess.run([sys.executable, "-m", "dllint", "--no-cache", "--fix", "--select", "DL206", str(path)],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        return path.read_text(encoding="utf-8")

    fixed = fix()
    loaders = "".join(json.loads(fixed)["cells"][3]["source"])
    assert loaders.startswith("loader = DataLoader(\n")
    assert "    persistent_workers=True,\n    pin_memory=torch.cuda.is_available(),\n)\n" in loaders
    assert loaders.count("pin_memory") == 1
    assert _findings(path) == set()
    assert fix() == fixed
