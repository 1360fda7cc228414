"""``dllint --probe`` from the command line: verdicts in the output, errors as one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from probe_helpers import require_torch

require_torch()
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "probe"
# A test that runs the dllint command: its own process starts the harness, a new interpreter (no template:
# it serves only the process that started it). The tests that run the command in this process fork theirs.
in_a_dllint_process = pytest.mark.popen_harness


def dllint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@in_a_dllint_process
def test_probe_json_carries_verdicts(tmp_path):
    proc = dllint("--probe", str(FIXTURES / "unsharded_iterable.py"), "--format", "json", "--probe-timeout", "60", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    dl302 = [f for f in findings if f["code"] == "DL302"]
    assert dl302 and dl302[0]["probe"]["verdict"] == "confirmed"
    assert "factor 4" in dl302[0]["probe"]["evidence"]
    assert set(dl302[0]["probe"]) == {"verdict", "evidence", "measurements"}


def test_probe_text_prints_the_verdict_under_the_finding(tmp_path, monkeypatch, capsys):
    # in this process, with the least evidence: the command line is the JSON test's and the notebook's
    _, out = probe_command(tmp_path, str(FIXTURES / "unsharded_iterable.py"), "text", monkeypatch, capsys)
    lines = out.splitlines()
    index = next(i for i, line in enumerate(lines) if ": DL302 " in line)
    assert lines[index + 1].startswith("    probe: confirmed: ")


@in_a_dllint_process
def test_probe_bad_target_is_one_line(tmp_path):
    proc = dllint("--probe", "missing_script.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "missing_script.py" in proc.stderr
    assert "Traceback" not in proc.stderr


def data_module() -> str:
    """A module whose factory builds a 2-worker loader over the probe tests' ``Opens`` dataset."""
    from probe_helpers import HEADER, OPENS

    return HEADER + OPENS + """
def make_loader():
    return DataLoader(Opens(), batch_size=4, num_workers=2)
"""


TRAIN = '''\
from data import make_loader

if __name__ == "__main__":
    loader = make_loader()
    for epoch in range(3):
        for batch in loader:
            pass
'''


def probe_command(directory: Path, target: str, fmt: str, monkeypatch, capsys) -> tuple[int, str]:
    """``dllint --probe TARGET`` in this process, with the probe's small test budgets (one start method,
    the least evidence: :func:`probe_helpers.quick_settings`)."""
    from functools import partial

    import dllint.probe.runner as runner
    from dllint.config import load_settings
    from dllint.engine import Linter
    from dllint.probe.command import ProbeOptions, run_probe_command
    from probe_helpers import quick_settings

    monkeypatch.chdir(directory)
    monkeypatch.setattr(runner, "run_probe", partial(runner.run_probe, settings=quick_settings()))
    code = run_probe_command(target, [], Linter(load_settings(None, str(directory))), fmt, ProbeOptions(timeout=90))
    return code, capsys.readouterr().out


def test_a_loader_built_by_a_factory_in_another_module_is_judged(tmp_path, monkeypatch, capsys):
    (tmp_path / "data.py").write_text(data_module())
    (tmp_path / "train.py").write_text(TRAIN)
    line = 1 + data_module().splitlines().index("    return DataLoader(Opens(), batch_size=4, num_workers=2)")
    code, out = probe_command(tmp_path, "train.py", "json", monkeypatch, capsys)
    assert code == 1, out
    [dl201] = [f for f in json.loads(out) if f["code"] == "DL201"]
    assert (dl201["path"], dl201["line"]) == ("data.py", line)
    assert dl201["probe"]["verdict"] == "confirmed", dl201["probe"]
    assert dl201["probe"]["measurements"]["loader"] == f"loader 1 at data.py:{line}"


def test_a_call_site_file_linted_after_the_run_gets_its_verdicts(tmp_path, monkeypatch, capsys):
    """A module imported dynamically is not known before the run: linted after it, still judged."""
    (tmp_path / "data.py").write_text(data_module().replace("num_workers=2)", "num_workers=2, shuffle=True,\n"
                                                          "                      sampler=range(16))"))
    (tmp_path / "train.py").write_text("import importlib\n\nloader = importlib.import_module('data').make_loader()\n")
    code, out = probe_command(tmp_path, "train.py", "json", monkeypatch, capsys)
    [dl003] = [f for f in json.loads(out) if f["code"] == "DL003"]
    assert dl003["path"] == "data.py" and "source" not in dl003  # static: no runtime twin left
    assert [f["code"] for f in json.loads(out)].count("DL003") == 1
    assert dl003["probe"]["verdict"] == "confirmed" and "mutually exclusive" in dl003["probe"]["evidence"]


NOTEBOOK = '''\
import torch
from torch.utils.data import DataLoader, Dataset
# %%
%matplotlib inline
class Squares(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        return torch.tensor([float(index) ** 2])
# %%
!ls
loader = DataLoader(Squares(), batch_size=4, num_workers=2)
for batch in loader:
    pass
'''


@in_a_dllint_process
def test_a_notebook_runs_cell_by_cell_and_dl106_is_measured_under_spawn(tmp_path):
    from dllint.inputs.notebook import notebook_from_percent

    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent(NOTEBOOK))
    proc = dllint("--probe", "nb.ipynb", "--probe-timeout", "90", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "loader 1 at nb.ipynb:cell 3:2: DataLoader(Squares, num_workers=2" in out, out
    assert "nb.ipynb:cell 3:2:21: DL106 " in out
    verdict = out.splitlines()[out.splitlines().index(next(line for line in out.splitlines() if ": DL106 " in line)) + 1]
    assert verdict.startswith("    probe: confirmed: the spawn worker failed: Can't get attribute 'Squares' on <module '__main__'")
