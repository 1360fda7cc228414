"""The options and behaviour ruff users expect (issue 24, point 6), through the CLI on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.project_helpers import write_tree
from tests.test_cli import BAD, run

UNSAFE = (
    "from torch.utils.data import DataLoader\n\n"
    "loader = DataLoader(list(range(8)), num_workers=2, persistent_workers=True, collate_fn=lambda b: b)\n"
    "for batch in loader:\n    pass\n"
)  # DL101 (unsafe fix: a main guard), DL102 (safe)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"src/bad.py": BAD, "gen/bad.py": BAD, "gen/sub/bad.py": BAD, "vendor/bad.py": BAD})
    return tmp_path


def findings(output: str) -> list[str]:
    return sorted(line.split(":")[0] for line in output.splitlines() if ": DL" in line)


def test_exclude_and_extend_exclude_on_the_command_line(tree):
    assert findings(run("--no-cache", ".", cwd=tree).output) == ["gen/bad.py", "gen/sub/bad.py", "src/bad.py", "vendor/bad.py"]
    assert findings(run("--no-cache", "--exclude", "gen,vendor", ".", cwd=tree).output) == ["src/bad.py"]
    (tree / "pyproject.toml").write_text('[tool.dllint]\nexclude = ["vendor"]\n')
    assert findings(run("--no-cache", ".", cwd=tree).output) == ["gen/bad.py", "gen/sub/bad.py", "src/bad.py"]
    # --exclude replaces the config's exclude; --extend-exclude adds to it
    assert findings(run("--no-cache", "--exclude", "gen", ".", cwd=tree).output) == ["src/bad.py", "vendor/bad.py"]
    assert findings(run("--no-cache", "--extend-exclude", "gen/sub", ".", cwd=tree).output) == ["gen/bad.py", "src/bad.py"]
    assert findings(run("--no-cache", "--exclude", "gen", "gen/bad.py", cwd=tree).output) == ["gen/bad.py"]  # named: checked


def test_quiet_silent_and_output_file(tree):
    quiet = run("--no-cache", "-q", "src", cwd=tree)
    assert quiet.exit_code == 1 and quiet.output == "src/bad.py:3:52: DL001 [*] persistent_workers=True needs num_workers > 0 (torch raises ValueError): set it to `num_workers > 0`, or remove it\n"
    assert run("--no-cache", "--quiet", "vendor", "--exclude", "bad.py", cwd=tree).output == ""  # no warning, no summary
    silent = run("--no-cache", "-s", "src", cwd=tree)
    assert silent.exit_code == 1 and silent.output == ""
    written = run("--no-cache", "--output-file", "report.json", "--format", "json", "src", cwd=tree)
    assert written.exit_code == 1 and written.output == ""
    assert [f["code"] for f in json.loads((tree / "report.json").read_text())] == ["DL001"]
    bad = run("--no-cache", "-o", str(tree / "missing/dir/report.txt"), "src", cwd=tree)
    assert bad.exit_code == 2 and "cannot write" in bad.output


def test_full_format_shows_the_line_and_a_caret(tree):
    result = run("--no-cache", "--output-format", "full", "src", cwd=tree)
    assert result.output.splitlines()[:5] == [
        "src/bad.py:3:52: DL001 [*] persistent_workers=True needs num_workers > 0 (torch raises ValueError): set it to `num_workers > 0`, or remove it",
        "  |",
        "3 | loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)",
        "  |                                                    ^^^^^^^^^^^^^^^^^^^^^^^ DL001",
        "  |",
    ]
    assert result.output.rstrip().endswith("Found 1 problem in 1 file.")
    concise = run("--no-cache", "--format", "concise", "src", cwd=tree)
    assert concise.output == run("--no-cache", "src", cwd=tree).output


def test_statistics_prints_its_table_and_the_total(tree):
    result = run("--no-cache", "--statistics", ".", cwd=tree)
    assert result.output == (
        "    4  DL001  [*] persistent-workers-without-workers\nFound 4 problems.\n[*] 4 fixable with `--fix`.\n"
    )
    assert result.exit_code == 1


def test_dllint_toml_is_found_before_pyproject(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": '[tool.dllint]\nselect = ["DL2"]\n', "a/b.py": BAD})
    assert "DL001" not in run("--no-cache", "a/b.py", cwd=tmp_path).output  # pyproject's selection
    (tmp_path / "dllint.toml").write_text('select = ["DL0"]\n')
    assert "DL001" in run("--no-cache", "a/b.py", cwd=tmp_path).output
    (tmp_path / ".dllint.toml").write_text('ignore = ["DL001"]\n')
    assert "All checks passed!" in run("--no-cache", "a/b.py", cwd=tmp_path).output
    (tmp_path / ".dllint.toml").write_text("nonsense = 1\n")
    bad = run("--no-cache", "a/b.py", cwd=tmp_path)
    assert bad.exit_code == 2 and ".dllint.toml: unknown key 'nonsense'" in bad.output


def test_check_mode_hint_names_fix_and_unsafe_fixes(tmp_path):
    (tmp_path / "train.py").write_text(UNSAFE)
    output = run("--no-cache", "train.py", cwd=tmp_path).output
    assert "[-] 1 more fixable with `--fix --unsafe-fixes` (unsafe: check the result)." in output
    assert "with `--unsafe-fixes`" not in output


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": [
            "from torch.utils.data import DataLoader\n",
            "loader = DataLoader([1, 2], num_workers=0, persistent_workers=True)\n",
        ]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["for b in loader:\n", "    pass"]},
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def test_notebook_diff_is_per_cell_and_fix_keeps_the_bom(tmp_path):
    text = json.dumps(NOTEBOOK, indent=1) + "\n"
    (tmp_path / "nb.ipynb").write_bytes(b"\xef\xbb\xbf" + text.encode())
    diff = run("--no-cache", "--diff", "nb.ipynb", cwd=tmp_path)
    assert diff.exit_code == 1
    assert diff.output.splitlines()[:7] == [
        "--- a/nb.ipynb:cell 2",
        "+++ b/nb.ipynb:cell 2",
        "@@ -1,2 +1,2 @@",
        " from torch.utils.data import DataLoader",
        "-loader = DataLoader([1, 2], num_workers=0, persistent_workers=True)",
        "+loader = DataLoader([1, 2], num_workers=0)",
        "Would fix 1 problem.",
    ]
    run("--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    fixed = (tmp_path / "nb.ipynb").read_bytes()
    assert fixed == b"\xef\xbb\xbf" + text.replace(", persistent_workers=True", "").encode()
    assert run("--no-cache", "--diff", "nb.ipynb", cwd=tmp_path).exit_code == 0  # nothing left: round-trips


def test_python_and_yaml_with_a_bom_round_trip(tmp_path):
    (tmp_path / "a.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    (tmp_path / "a.yaml").write_bytes(b"\xef\xbb\xbftrain:\n  num_workers: 0\n  persistent_workers: true\n")
    assert "-loader = DataLoader" in run("--no-cache", "--diff", ".", cwd=tmp_path).output
    run("--no-cache", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "a.py").read_bytes() == b"\xef\xbb\xbf" + BAD.replace(", persistent_workers=True", "").encode()
    assert (tmp_path / "a.yaml").read_bytes() == b"\xef\xbb\xbftrain:\n  num_workers: 0\n  persistent_workers: false\n"
