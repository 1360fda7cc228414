"""The machine-readable outputs (issue 35): notebook findings on the ``.ipynb`` line GitHub
shows, severities by rule family everywhere, ruff's JSON ``fix.edits`` and ``url``,
``--statistics`` with a fixable column and a total (text and JSON), fix hints that agree with
``--fix``, and ``explain`` on a closed pipe. Through the CLI, on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dllint.inputs.notebook import cell_sources, notebook_from_percent
from dllint.severity import severity
from tests.test_cli import run

NOTEBOOK_CELL = (
    "from torch.utils.data import DataLoader\n\n"
    "def main():\n"
    "    loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    "    return loader\n"
)
# DL001 (safe fix), DL201 (a set-argument, safe on a local loader), DL202 (no fix)
MIXED = (
    "from torch.utils.data import DataLoader\n\n\n"
    "def train():\n"
    "    a = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    "    b = DataLoader(list(range(64)), batch_size=8, num_workers=4)\n"
    "    c = DataLoader(list(range(8)), num_workers=64)\n"
    "    for epoch in range(10):\n"
    "        for batch in b:\n"
    "            pass\n"
    "    return a, c\n"
)


UNSAFE = (
    "from torch.utils.data import DataLoader\n\n"
    "loader = DataLoader(list(range(8)), num_workers=2, persistent_workers=True, collate_fn=lambda b: b)\n"
    "for batch in loader:\n    pass\n"
)  # DL101 (unsafe fix: a main guard), DL102 (safe)


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(notebook_from_percent("import torch\n# %%\n" + NOTEBOOK_CELL))
    return path


def source_line_at(path: Path, line: int, column: int) -> tuple[str, str]:
    """The notebook's JSON text at (line, column): the source string there, decoded, and the
    text from that column on."""
    text = path.read_text().splitlines()[line - 1]
    string = text.strip().rstrip(",")
    return json.loads(string), text[column - 1 :]


def test_github_annotation_of_a_notebook_finding_points_at_its_json_line(notebook):
    result = run(str(notebook), "--format", "github", "--no-cache")
    (line,) = result.output.strip().splitlines()
    assert line.startswith("::error ")  # DL001: torch raises
    properties = dict(part.split("=", 1) for part in line.split(" ", 1)[1].split("::")[0].split(","))
    source, rest = source_line_at(notebook, int(properties["line"]), int(properties["col"]))
    cells = cell_sources(notebook.read_text())
    assert cells is not None and source == cells[1].splitlines(keepends=True)[3]  # cell 2, line 4
    assert rest.startswith("persistent_workers=True)")
    assert "cell 2, line 4: DL001 " in line


def test_sarif_region_of_a_notebook_finding_is_its_json_line(notebook):
    result = run(str(notebook), "--format", "sarif", "--no-cache")
    (found,) = json.loads(result.output)["runs"][0]["results"]
    region = found["locations"][0]["physicalLocation"]["region"]
    source, rest = source_line_at(notebook, region["startLine"], region["startColumn"])
    assert source == "    loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    assert rest.startswith("persistent_workers=True)")
    assert region["endLine"] == region["startLine"]
    assert found["properties"] == {"cell": 2, "cellLine": 4, "cellColumn": 56}
    assert found["level"] == "error"


def test_a_notebook_with_a_single_string_source_maps_every_line_to_it(tmp_path):
    document = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": NOTEBOOK_CELL}],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    path = tmp_path / "one.ipynb"
    path.write_text(json.dumps(document, indent=1))
    line = run(str(path), "--format", "github", "--no-cache").output.strip()
    row = int(line.split(",line=")[1].split(",")[0])
    assert path.read_text().splitlines()[row - 1].strip().startswith('"source": "from torch')


def test_severities_by_family_in_every_output(tmp_path):
    assert [severity(c) for c in ("DL000", "DL001", "DL101", "DL201", "DL207", "DL301")] == [
        "error", "error", "error", "warning", "warning", "error",
    ]
    (tmp_path / "m.py").write_text(MIXED)
    github = run(str(tmp_path / "m.py"), "--format", "github", "--no-cache").output.splitlines()
    assert {(line.split("title=")[1].split("::")[0], line.split(" ")[0]) for line in github} == {
        ("DL001", "::error"), ("DL201", "::warning"), ("DL202", "::warning"),
    }
    results = json.loads(run(str(tmp_path / "m.py"), "--format", "sarif", "--no-cache").output)["runs"][0]["results"]
    assert {(r["ruleId"], r["level"]) for r in results} == {("DL001", "error"), ("DL201", "warning"), ("DL202", "warning")}
    findings = json.loads(run(str(tmp_path / "m.py"), "--format", "json", "--no-cache").output)
    assert {(f["code"], f["severity"]) for f in findings} == {("DL001", "error"), ("DL201", "warning"), ("DL202", "warning")}


def test_server_severity_is_the_shared_one():
    types = pytest.importorskip("lsprotocol.types")
    from dllint.server.convert import severity as lsp_severity

    assert lsp_severity("DL301") == types.DiagnosticSeverity.Error
    assert lsp_severity("DL201") == types.DiagnosticSeverity.Warning
    assert lsp_severity("DL101") == types.DiagnosticSeverity.Error


def apply(text: str, edits: list[dict]) -> str:
    """The text with ruff-style edits applied (from the last, so positions hold)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(location: dict) -> int:
        return starts[location["row"] - 1] + location["column"] - 1

    for edit in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        text = text[: offset(edit["location"])] + edit["content"] + text[offset(edit["end_location"]) :]
    return text


def test_json_fix_edits_are_what_fix_writes_and_url_is_the_rule_page(tmp_path):
    (tmp_path / "m.py").write_text(MIXED)
    findings = {f["code"]: f for f in json.loads(run(str(tmp_path / "m.py"), "--format", "json", "--no-cache").output)}
    dl001 = findings["DL001"]
    assert dl001["url"] == "https://github.com/dllint/dllint/blob/main/docs/rules.md#dl001"
    assert dl001["fix"]["edits"] == [
        {"content": "", "location": {"row": 5, "column": 49}, "end_location": {"row": 5, "column": 74}}
    ]
    assert findings["DL202"]["fix"] is None
    edits = findings["DL201"]["fix"]["edits"]
    assert edits and all(set(e) == {"content", "location", "end_location"} for e in edits)
    # each finding's edits, applied alone, give what --fix writes for it alone
    (tmp_path / "one.py").write_text(MIXED)
    run(str(tmp_path / "one.py"), "--fix", "--select", "DL001", "--no-cache")
    assert apply(MIXED, dl001["fix"]["edits"]) == (tmp_path / "one.py").read_text()
    (tmp_path / "two.py").write_text(MIXED)
    run(str(tmp_path / "two.py"), "--fix", "--select", "DL201", "--no-cache")
    assert apply(MIXED, edits) == (tmp_path / "two.py").read_text()


def test_json_fix_edits_of_a_yaml_finding(tmp_path):
    (tmp_path / "conf.yaml").write_text("data:\n  num_workers: 0\n  persistent_workers: true\n")
    (finding,) = json.loads(run(str(tmp_path / "conf.yaml"), "--format", "json", "--no-cache").output)
    (edit,) = finding["fix"]["edits"]
    assert apply((tmp_path / "conf.yaml").read_text(), [edit]) == "data:\n  num_workers: 0\n  persistent_workers: false\n"


def test_statistics_text_has_a_fixable_column_and_a_total(tmp_path):
    (tmp_path / "m.py").write_text(MIXED + "d = DataLoader([1], num_workers=0, persistent_workers=True)\n")
    lines = run(str(tmp_path / "m.py"), "--statistics", "--no-cache").output.splitlines()
    assert lines == [
        "    2  DL001  [*] persistent-workers-without-workers",
        "    1  DL201  [*] non-persistent-workers",  # its fix is safe here (a local loader)
        "    1  DL202      oversized-num-workers",
        "Found 4 problems.",
        "[*] 3 fixable with `--fix`.",
    ]
    (tmp_path / "u.py").write_text(UNSAFE)
    unsafe = run(str(tmp_path / "u.py"), "--statistics", "--no-cache").output.splitlines()
    assert unsafe[0] == "    1  DL101      missing-main-guard"
    offered = run(str(tmp_path / "u.py"), "--statistics", "--unsafe-fixes", "--no-cache").output.splitlines()
    assert offered[0] == "    1  DL101  [*] missing-main-guard"


def test_statistics_in_json_as_ruff_and_refused_for_sarif_and_github(tmp_path):
    (tmp_path / "m.py").write_text(MIXED)
    rows = json.loads(run(str(tmp_path / "m.py"), "--statistics", "--format", "json", "--no-cache").output)
    assert rows == [
        {"code": "DL001", "name": "persistent-workers-without-workers", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "DL201", "name": "non-persistent-workers", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "DL202", "name": "oversized-num-workers", "count": 1, "fixable": False, "fixable_count": 0},
    ]
    for fmt in ("sarif", "github"):  # ruff: "Unsupported serialization format for statistics", exit 2
        result = run(str(tmp_path / "m.py"), "--statistics", "--format", fmt, "--no-cache")
        assert result.exit_code == 2 and f"not {fmt}" in result.output


def test_fixable_hint_names_the_command_that_fixes_that_many(tmp_path):
    (tmp_path / "u.py").write_text(UNSAFE)
    plain = run(str(tmp_path / "u.py"), "--no-cache").output
    assert "[*] 1 fixable with `--fix`." in plain and "[-] 1 more fixable with `--fix --unsafe-fixes`" in plain
    assert "(1 fixed, 1 remaining)" in run(str(tmp_path / "u.py"), "--fix", "--no-cache").output
    (tmp_path / "u.py").write_text(UNSAFE)
    offered = run(str(tmp_path / "u.py"), "--unsafe-fixes", "--no-cache").output
    assert "[*] 2 fixable with `--fix --unsafe-fixes`." in offered  # not "with `--fix`", which fixes 1
    assert "(2 fixed, 0 remaining)" in run(str(tmp_path / "u.py"), "--fix", "--unsafe-fixes", "--no-cache").output


def test_explain_into_a_closed_pipe_exits_quietly():
    read, write = os.pipe()
    os.close(read)  # `| head -1` that has already gone
    try:
        result = subprocess.run([sys.executable, "-m", "dllint", "explain", "DL201"], stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (0, b"")
