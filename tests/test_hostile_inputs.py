"""Inputs built to crash or stall dllint: each gets findings or one clear error, in bounded time.

YAML aliases that expand exponentially, cycles, integers past ``int``'s string limit, a loop of
a thousand loaders, code that parses but does not compile, a broken environment (stdin closed,
stdout on a full device, the current directory deleted), and flake8's view of an internal error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_source
from dllint.per_file import lint as lint_bytes

OVERSIZED = "exceeds max-workers=16: each worker is a process with its own memory; use fewer (dllint --probe measures the best count)"


def lint_file(path: Path, settings: Settings | None = None):
    return lint_bytes(Linter(settings or Settings()), str(path), path.read_bytes())


def shown(findings) -> list[str]:
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in findings]


def run(*args: str, cwd: Path, timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, **kwargs)


# -- YAML ----------------------------------------------------------------------------------
def billion_laughs(levels: int) -> str:
    lines = ["a0: &a0 {num_workers: 64, batch_size: 1}"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nloader: {{dataset: *a{levels - 1}, num_workers: 4}}\n"


def test_billion_laughs_costs_its_size_not_its_expansion(tmp_path):
    """30 levels of aliases (2**29 leaves once expanded), under 800 bytes: every walker visits
    each node once. Run in a subprocess: a regression would take hours."""
    path = tmp_path / "laughs.yaml"
    path.write_text(billion_laughs(30))
    start = time.monotonic()
    done = run("--no-cache", "laughs.yaml", cwd=tmp_path, timeout=60)
    assert time.monotonic() - start < 30
    assert done.stdout.splitlines() == [f"laughs.yaml:1:10: DL202 num_workers=64 {OVERSIZED}", "Found 1 problem in 1 file."]
    assert done.stderr == ""


def test_a_self_referencing_anchor_is_linted_once(tmp_path):
    path = tmp_path / "selfref.yaml"
    path.write_text("a: &x\n  b: *x\n  num_workers: 64\n  batch_size: 2\nloader: *x\n")
    result = lint_file(path)
    assert shown(result.findings) == [f"3:3 DL202 num_workers=64 {OVERSIZED}"] and result.errors == []


def test_a_hydra_defaults_list_that_includes_itself_ends(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("defaults:\n  - config\n  - _self_\ntrain_loader:\n  batch_size: 2\n  num_workers: 64\n")
    result = lint_file(path)
    assert shown(result.findings) == [f"6:3 DL202 num_workers=64 {OVERSIZED}"] and result.errors == []


def test_mmengine_bases_in_a_cycle_end(tmp_path):
    (tmp_path / "a.py").write_text('_base_ = ["./b.py"]\ntrain_dataloader = dict(batch_size=2, num_workers=64)\n')
    (tmp_path / "b.py").write_text('_base_ = ["./a.py"]\nval_dataloader = dict(batch_size=2, num_workers=2)\n')
    result = lint_file(tmp_path / "a.py")
    assert shown(result.findings) == [f"2:39 DL202 num_workers=64 {OVERSIZED}"] and result.errors == []


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_deep_nesting_is_cut_not_a_recursion_error(tmp_path, shape):
    depth = 5000
    if shape == "flow":
        text = "loader: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + f"{'  ' * depth}num_workers: 64\n"
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    result = lint_file(path)
    assert result.errors == []
    assert all(f.code == "DL000" for f in result.findings)  # PyYAML's own limit, or nothing


def test_aliases_shared_across_merge_keys_stay_linear(tmp_path):
    """``<<: *base`` chains over aliases, then merged with mmengine-style inheritance."""
    lines = ["b0: &b0 {num_workers: 64, batch_size: 1}"]
    lines += [f"b{i}: &b{i} {{<<: *b{i - 1}, x{i}: *b{i - 1}, y{i}: *b{i - 1}}}" for i in range(1, 25)]
    path = tmp_path / "merge.yaml"
    path.write_text("\n".join(lines) + "\n")
    start = time.process_time()
    result = lint_file(path)
    assert time.process_time() - start < 10
    assert result.errors == [] and [f.code for f in result.findings] == ["DL202"]


# -- integers past int's string limit ------------------------------------------------------
def test_a_huge_hex_num_workers_is_shown_by_its_digit_count():
    source = f"from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0x1{'0' * 4000})\n"
    (finding,) = lint_source(source)
    assert finding.code == "DL202"
    assert finding.message == f"num_workers=<a 4817-digit number> {OVERSIZED}"


@pytest.mark.parametrize("value", ["0x1" + "0" * 5000, "1" + "0" * 5000])
def test_a_huge_integer_in_yaml_never_crashes(tmp_path, value):
    path = tmp_path / "big.yaml"
    path.write_text(f"eval_loader:\n  batch_size: 32\n  num_workers: {value}\n")
    result = lint_file(path)
    assert result.errors == []
    if value.startswith("0x"):
        assert [f.message for f in result.findings] == [f"num_workers=<a 6021-digit number> {OVERSIZED}"]
    else:  # past Python's 4,300-digit conversion limit: read by its length (dllint.configs.yaml_reader)
        assert [f.message for f in result.findings] == [f"num_workers=<a 5001-digit number> {OVERSIZED}"]


# -- flake8 --------------------------------------------------------------------------------
FLAKE8_WITH_A_BUG = """
import sys
from dllint.rules import dl202_oversized_num_workers as module
def boom(self, facts):
    raise ValueError("boom")
    yield
module.OversizedNumWorkers.check = boom
from flake8.main.cli import main
sys.argv = ["flake8", "--select", "DL", "a.py"]
main()
"""


def test_an_internal_error_under_flake8_fails_the_run(tmp_path):
    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=64)\n")
    done = subprocess.run([sys.executable, "-c", FLAKE8_WITH_A_BUG], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "a.py: internal error in DL202: ValueError: boom" in done.stderr


@pytest.mark.parametrize("value", ["-3", "0", "many"])
def test_flake8_rejects_a_max_workers_below_one(tmp_path, value):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "setup.cfg").write_text(f"[flake8]\ndllint-max-workers = {value}\n")
    done = subprocess.run([sys.executable, "-m", "flake8", "a.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"dllint-max-workers must be a positive integer, got '{value}'" in done.stderr


# -- quadratic paths -----------------------------------------------------------------------
def test_a_thousand_loaders_in_one_loop_is_linear():
    """DL204 recomputed the loop's rebound names per loader: 1,000 loaders took 17-20 s."""
    body = "".join(f"    l{i} = DataLoader(ds, num_workers=2)\n    for b in l{i}:\n        pass\n" for i in range(1000))
    source = "from torch.utils.data import DataLoader\nfor epoch in range(3):\n" + body
    start = time.process_time()
    findings = lint_source(source, Settings(select=("DL204",)))
    assert time.process_time() - start < 5
    assert len(findings) == 1000


# -- code Python refuses, warnings Python gives ---------------------------------------------
def test_code_that_does_not_compile_is_one_dl000_under_fix(tmp_path):
    source = "from torch.utils.data import DataLoader\nx = 1\nglobal x\nfor e in range(3):\n    for b in DataLoader(ds, num_workers=4):\n        pass\n"
    (tmp_path / "g.py").write_text(source)
    done = run("--no-cache", "--fix", "--unsafe-fixes", "g.py", cwd=tmp_path)
    assert done.stdout.splitlines()[0] == "g.py:3:1: DL000 syntax error: name 'x' is assigned to before global declaration at line 3 column 1"
    assert "Traceback" not in done.stderr and (tmp_path / "g.py").read_text() == source


def test_pythons_own_warnings_about_the_code_are_not_printed(tmp_path):
    (tmp_path / "w.py").write_text(
        'from torch.utils.data import DataLoader\nx = "\\d"\nif x is "a":\n    pass\nfor e in range(3):\n    for b in DataLoader(ds, num_workers=4):\n        pass\n'
    )
    done = run("--no-cache", "w.py", cwd=tmp_path, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert "DL204" in done.stdout and done.stderr == ""


# -- a broken environment: one line, exit 2 ------------------------------------------------
def test_stdin_closed(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(0); sys.stdin = None; from dllint.cli import main; sys.argv = ['dllint', '--no-cache', '-']; main()"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30,
    )
    assert (done.returncode, done.stderr) == (2, "dllint: error: cannot read standard input: it is closed\n")


def test_stdout_on_a_full_device(tmp_path):
    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=64)\n")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "dllint", "--no-cache", "a.py"], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (2, "dllint: error: cannot write the output: no space left on device\n")


def test_the_current_directory_deleted(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); from dllint.cli import main; sys.argv = ['dllint', '--no-cache', 'a.py']; main()"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (2, "dllint: error: the current directory no longer exists\n")


# -- smaller ones --------------------------------------------------------------------------
@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_fix_keeps_the_files_line_ending(tmp_path, ending):
    lines = ["from torch.utils.data import DataLoader", "loader = DataLoader(ds, num_workers=2, collate_fn=lambda b: b)", "for e in range(3):", "    for b in loader:", "        pass", ""]
    path = tmp_path / "a.py"
    path.write_bytes(ending.join(lines).encode())
    done = run("--no-cache", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert "fixed" in done.stdout, done.stderr
    data = path.read_bytes()
    lone = data.replace(b"\r\n", b"")
    assert data.endswith(ending.encode()) and b"\n" not in (lone if ending == "\r\n" else data)
    if ending == "\r":
        assert data.count(b"\r") == len(data.decode().splitlines())


@pytest.mark.parametrize(("version", "shown_as"), [(None, "missing"), ("4", '"4"'), ("null", "null"), (3, "3")])
def test_a_notebook_without_nbformat_4_is_one_dl000(tmp_path, version, shown_as):
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": "from torch.utils.data import DataLoader\n", "outputs": []}], "metadata": {}}
    if version is not None:
        notebook["nbformat"] = None if version == "null" else version
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    result = lint_file(path)
    assert shown(result.findings) == [f"1:1 DL000 not a Jupyter notebook dllint can read: nbformat is {shown_as} (nbformat 4 expected)"]


LOOP = "from torch.utils.data import DataLoader\nfor e in range(3):\n    for b in DataLoader(ds, num_workers=4):\n        pass\n"


@pytest.mark.parametrize(
    ("table", "codes"),
    [
        ("select = []", []),
        ('ignore = ["ALL"]', []),
        ('ignore = ["ALL"]\nextend-select = ["DL204"]', ["DL204"]),
        ('select = ["ALL"]\nignore = ["ALL"]', []),
        ('ignore = ["DL1"]', ["DL204"]),
    ],
)
def test_select_and_ignore_read_as_ruff_reads_them(tmp_path, table, codes):
    from dllint.config import load_settings

    (tmp_path / "pyproject.toml").write_text(f"[tool.dllint]\n{table}\n")
    settings = load_settings(str(tmp_path / "pyproject.toml"))
    assert [f.code for f in lint_source(LOOP, settings)] == codes


def test_dl101_offers_no_fix_that_would_bury_a_definition_under_the_guard():
    source = textwrap.dedent(
        """\
        from torch.utils.data import DataLoader, Dataset
        if True:
            class Ds(Dataset):
                def __getitem__(self, i):
                    return i
            for e in range(3):
                for b in DataLoader(Ds(), num_workers=4):
                    pass
        """
    )
    (dl101,) = [f for f in lint_source(source) if f.code == "DL101"]
    assert dl101.fix is None
    plain = source.replace("if True:\n    class Ds(Dataset):\n        def __getitem__(self, i):\n            return i\n", "if True:\n")
    (wrapped,) = [f for f in lint_source(plain) if f.code == "DL101"]
    assert wrapped.fix is not None


def test_dl107_offers_its_fix_only_for_a_definition_directly_in_the_guard():
    nested = 'from torch.utils.data import DataLoader, Dataset\nif __name__ == "__main__":\n    if True:\n        class Ds(Dataset):\n            pass\n    for b in DataLoader(Ds(), num_workers=4):\n        pass\n'
    direct = 'from torch.utils.data import DataLoader, Dataset\nif __name__ == "__main__":\n    class Ds(Dataset):\n        pass\n    for b in DataLoader(Ds(), num_workers=4):\n        pass\n'
    (nested_finding,) = [f for f in lint_source(nested) if f.code == "DL107"]
    (direct_finding,) = [f for f in lint_source(direct) if f.code == "DL107"]
    assert nested_finding.fix is None and direct_finding.fix is not None


def test_a_notebook_cell_keeps_its_line_ending(tmp_path):
    lines = ["from torch.utils.data import DataLoader", "loader = DataLoader(ds, num_workers=2)", "for e in range(3):", "    for b in loader:", "        pass"]
    cell = {"cell_type": "code", "metadata": {}, "source": [line + "\r\n" for line in lines], "outputs": [], "execution_count": None}
    notebook = {"cells": [cell], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1))
    done = run("--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert "1 fixed" in done.stdout, done.stderr
    source = json.loads((tmp_path / "nb.ipynb").read_text())["cells"][0]["source"]
    assert source[1] == "loader = DataLoader(ds, num_workers=2, persistent_workers=True)\r\n"
    assert all(line.endswith("\r\n") for line in source)
