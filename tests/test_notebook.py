"""Notebooks: code cells linted as one module, findings addressed to their cell, DL106."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.inputs.notebook import notebook_from_percent, prepare
from dllint.per_file import lint as lint_bytes
from lint_helpers import lint_path, lint_text
from dllint.rules import rule_by_code
from tests.conftest import EXPECT, FIXTURES

ALL = Settings(select=("ALL",))
NOTEBOOKS = sorted([*FIXTURES.glob("notebooks/*.ipynb"), *FIXTURES.glob("DL106/*.ipynb")])


def expected_in_cells(path) -> set[tuple[int, int, int, str]]:
    """(cell, line, column, code) for each ``# expect: CODE:COL`` marker in a code cell."""
    expected = set()
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for line_number, line in enumerate(source.splitlines(), start=1):
            match = EXPECT.search(line)
            if match and cell["cell_type"] == "code":
                for item in match.group("items").split(","):
                    code, column = item.strip().split(":")
                    expected.add((number, line_number, int(column), code))
    return expected


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", "--no-cache", *args], capture_output=True, text=True, timeout=60)


BROKEN = {"invalid_json.ipynb", "no_cells.ipynb", "bad_source.ipynb"}  # see test_broken_notebooks


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in BROKEN], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_notebook(path):
    expected = expected_in_cells(path)
    result = lint_path(Linter(ALL), str(path))
    assert not result.errors
    assert {(f.cell, f.line, f.column, f.code) for f in result.findings} == expected


def test_every_notebook_fixture_is_checked():
    checked = {p.name for p in NOTEBOOKS}
    assert {"magics.ipynb", "syntax_error_cell.ipynb", "dataset_class.ipynb", "collate_and_init.ipynb"} <= checked


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("invalid_json.ipynb", "invalid notebook JSON: Expecting ',' delimiter at line 3 column 1"),
        ("no_cells.ipynb", "not a Jupyter notebook: no 'cells' list"),
        ("bad_source.ipynb", "the source of cell 2 is not a string or a list of strings"),
    ],
)
def test_broken_notebooks(name, message):
    result = lint_path(Linter(ALL), str(FIXTURES / "notebooks" / name))
    assert not result.errors
    assert [f.code for f in result.findings] == ["DL000"]
    assert message in result.findings[0].message


def test_r_notebook_is_not_python():
    assert lint_path(Linter(ALL), str(FIXTURES / "notebooks" / "r_kernel.ipynb")).findings == []


def test_text_output_names_the_cell():
    result = run_cli(str(FIXTURES / "notebooks" / "magics.ipynb"))
    assert result.returncode == 1, result.stderr
    assert f"{FIXTURES / 'notebooks' / 'magics.ipynb'}:cell 5:3:29: DL003 " in result.stdout


def test_json_output_has_cell_and_cell_relative_line():
    result = run_cli("--format", "json", str(FIXTURES / "notebooks" / "syntax_error_cell.ipynb"))
    findings = json.loads(result.stdout)
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in findings] == [("DL000", 2, 1, 12), ("DL003", 3, 1, 16)]
    assert findings[0]["message"].startswith("syntax error in cell 2:")


def test_a_cell_left_open_is_blamed_not_the_valid_cells_after_it(tmp_path):
    """A ``def`` with only comments (an exercise left blank) fails at the next token, the next
    cell's first line; the kernel compiles each cell alone, so that cell is the one at fault and
    the valid cells after it keep their findings (seventh audit, Z1)."""
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "# %%\ndef f(x):\n    # your code here\n    #\n"
        "# %%\nloader = DataLoader(TensorDataset(torch.zeros(8)), num_workers=2)\n"
        "# %%\ny = 2\n"
        "# %%\nfor epoch in range(3):\n    for b in loader:\n        pass\n"
    )
    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent(source))
    findings = lint_path(Linter(ALL), str(tmp_path / "nb.ipynb")).findings
    assert [(f.code, f.cell, f.line) for f in findings if f.code in ("DL000", "DL201")] == [("DL000", 2, 3), ("DL201", 3, 1)]
    assert findings[0].message.startswith("syntax error in cell 2: expected an indented block after function definition on line 1")


def test_a_syntax_errors_column_is_the_cells_whatever_the_notebooks_json_lines(tmp_path):
    """Thirteenth audit (DeepLearningDTU's exercise cells): Python 3.11 reads the error's line back
    from the file a parse is said to come from to count its column; the notebook's own file is
    JSON, whose second line (``"cells": [``) is shorter than the error's column 27."""
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["from torch.utils.data import DataLoader\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["x = 1\n", "some_long_variable_name = \n"]},
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    findings = lint_path(Linter(ALL), str(path)).findings
    assert [(f.code, f.cell, f.line, f.column) for f in findings] == [("DL000", 2, 2, 27)]
    assert findings[0].message == "syntax error in cell 2: invalid syntax at line 2 column 27"


def test_cells_whose_syntax_errors_share_a_line_and_column_each_get_theirs(tmp_path):
    """Thirteenth audit (dataflowr's exercise notebook: ``loader_train = #your code here``, then
    ``loader_valid = ...`` in the next cell): one DL000 per place meant one per cell, line,
    column and code; without the cell, the second cell's error was dropped as a repeat."""
    source = (
        "from torch.utils.data import DataLoader\n"
        "# %%\nloader_a = #your code here\n"
        "# %%\nloader_b = #your code here\n"
        "# %%\nloader_c = DataLoader(list(range(8)))\n"
    )
    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent(source))
    findings = lint_path(Linter(ALL), str(tmp_path / "nb.ipynb")).findings
    assert [(f.code, f.cell, f.line, f.column) for f in findings] == [("DL000", 2, 1, 12), ("DL000", 3, 1, 12)]


def test_a_cell_that_does_not_parse_alone_is_blamed_itself(tmp_path):
    """Twin: the error at a cell's first line is that cell's own (it does not parse alone)."""
    source = "from torch.utils.data import DataLoader\n# %%\ny = = 2\n# %%\nz = 3\n"
    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent(source))
    findings = lint_path(Linter(ALL), str(tmp_path / "nb.ipynb")).findings
    assert [(f.code, f.cell, f.line) for f in findings] == [("DL000", 2, 1)]


def test_directory_discovery_includes_notebooks(tmp_path):
    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent("from torch.utils.data import DataLoader\n# %%\nDataLoader(ds, shuffle=True, sampler=s)\n"))
    (tmp_path / "script.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, shuffle=True, sampler=s)\n")
    result = run_cli(str(tmp_path))
    assert "nb.ipynb:cell 2:1:16: DL003" in result.stdout
    assert "script.py:2:16: DL003" in result.stdout


def test_magics_keep_line_numbers():
    prepared = prepare("nb.ipynb", (FIXTURES / "notebooks" / "magics.ipynb").read_bytes())
    assert not prepared.errors
    for line, position in zip(prepared.text.splitlines(), prepared.line_map):
        if position is not None and "expect:" in line:
            cell = prepared.notebook.cells[[c.number for c in prepared.notebook.cells].index(position[0])]
            assert cell.source.splitlines()[position[1] - 1] == line


def test_noqa_in_a_cell():
    source = "from torch.utils.data import DataLoader\n# %%\nDataLoader(ds, shuffle=True, sampler=s)  # noqa: DL003\n"
    assert lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)).findings == []


def test_cell_magic_cell_with_non_python_body_is_skipped():
    source = "from torch.utils.data import DataLoader\n# %%\n%%bash\nDataLoader(ds, shuffle=True, sampler=s)\nif then fi\n"
    assert lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)).findings == []


def test_dl101_is_silent_in_notebooks():
    # The kernel's __main__ is not re-imported by spawn workers: no bootstrapping error there.
    source = "from torch.utils.data import DataLoader\nloader = DataLoader(range(4), num_workers=2, persistent_workers=True)\n# %%\nfor b in loader:\n    pass\n"
    assert "DL101" not in {f.code for f in lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)).findings}
    assert "DL101" in {f.code for f in lint_text(Linter(ALL), "script.py", source).findings}


@pytest.mark.parametrize("example", rule_by_code("DL106").invalid)
def test_dl106_invalid_examples_fire_in_a_notebook_only(example):
    assert "DL106" in {f.code for f in lint_bytes(Linter(ALL), "example.ipynb", notebook_from_percent(example)).findings}
    assert "DL106" not in {f.code for f in lint_text(Linter(ALL), "example.py", example).findings}


@pytest.mark.parametrize("example", rule_by_code("DL106").valid)
def test_dl106_valid_examples_stay_silent(example):
    assert "DL106" not in {f.code for f in lint_bytes(Linter(ALL), "example.ipynb", notebook_from_percent(example)).findings}


def test_dl106_leaves_functions_defined_in_functions_to_dl103():
    source = (
        "from torch.utils.data import DataLoader\n# %%\n"
        "def main():\n    def collate(b):\n        return b\n    DataLoader(ds, num_workers=2, collate_fn=collate)\n"
    )
    codes = [f.code for f in lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)).findings]
    assert "DL103" in codes and "DL106" not in codes


# -- --fix on notebooks ---------------------------------------------------------------
FIXABLE = {
    "cells": [
        {"cell_type": "markdown", "metadata": {"tags": ["intro"]}, "source": ["# Training\n"]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {"scrolled": True},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["données prêtes\n"]}],
            "source": ["%load_ext autoreload\n", "from torch.utils.data import DataLoader\n", "!nvidia-smi"],
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "metadata": {},
            "outputs": [],
            "source": "loader = DataLoader(ds, persistent_workers=True, batch_size=4)\n%time next(iter(loader))",
        },
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"}, "language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 2,
}


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_fix_rewrites_only_changed_cells(tmp_path, indent):
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(FIXABLE, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    result = run_cli("--fix", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    text = path.read_text(encoding="utf-8")
    expected = json.loads(json.dumps(FIXABLE))
    expected["cells"][2]["source"] = "loader = DataLoader(ds, batch_size=4)\n%time next(iter(loader))"
    assert json.loads(text) == expected  # outputs, metadata, nbformat and the magics kept
    assert text == json.dumps(expected, indent=indent, ensure_ascii=False) + "\n"  # layout kept
    assert run_cli("--fix", str(path)).returncode == 0 and path.read_text(encoding="utf-8") == text


def test_fix_leaves_a_broken_notebook_alone(tmp_path):
    path = tmp_path / "broken.ipynb"
    original = (FIXTURES / "notebooks" / "invalid_json.ipynb").read_bytes()
    path.write_bytes(original)
    result = run_cli("--fix", str(path))
    assert result.returncode == 1 and "DL000" in result.stdout
    assert path.read_bytes() == original


def test_fix_skips_cells_that_do_not_parse(tmp_path):
    path = tmp_path / "nb.ipynb"
    original = (FIXTURES / "notebooks" / "syntax_error_cell.ipynb").read_text(encoding="utf-8")
    path.write_text(original, encoding="utf-8")
    run_cli("--fix", str(path))
    before, after = json.loads(original)["cells"], json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert after[1] == before[1]
    assert "".join(after[2]["source"]) == "DataLoader(ds, sampler=s)  # expect: DL003:16\n"


def test_indented_cell_runs_dedented_and_a_fix_keeps_its_indentation(tmp_path):
    # IPython strips a cell's leading indentation (its leading_indent transform): no DL000,
    # findings at the original columns, and the fix writes the indentation back.
    cells = [
        "from torch.utils.data import DataLoader\n",
        " !ls -l \\\n    --color\n",
        "  loader = DataLoader(ds, shuffle=True, sampler=s)\n  for batch in loader:\n      pass\n",
    ]
    document = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c} for c in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "indented.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = lint_path(Linter(ALL), str(path))
    assert {(f.cell, f.line, f.column, f.code) for f in result.findings} == {(3, 1, 27, "DL003")}
    assert run_cli("--fix", "--select", "DL003", str(path)).returncode == 0
    after = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert after[1]["source"] == cells[1]
    assert after[2]["source"] == "  loader = DataLoader(ds, sampler=s)\n  for batch in loader:\n      pass\n"


@pytest.mark.parametrize(
    "continuation",
    [
        "    print('Epoch: %03d | Cost: %.4f'\n          %(epoch + 1, cost))\n",  # inside print(
        "    print('Epoch: %03d' \\\n%(epoch + 1))\n",  # after a backslash
    ],
)
def test_a_continuation_line_starting_with_percent_is_python_not_a_magic(continuation):
    """The fifth audit's V1: the cell parses (no DL000), and its epoch loop is seen (DL201)."""
    source = (
        "from torch.utils.data import DataLoader\n# %%\n%matplotlib inline\n"
        "loader = DataLoader(ds, num_workers=2)\ncost = 0\n"
        "for epoch in range(3):\n    for batch in loader:\n        pass\n" + continuation
    )
    findings = lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)).findings
    assert [(f.code, f.cell, f.line) for f in findings if f.code in ("DL000", "DL201")] == [("DL201", 2, 2)]
