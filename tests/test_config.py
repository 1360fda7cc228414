"""A broken config file is one line naming the file and the key, exit 2: never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import main
from dllint.config import load_settings
from tests.conftest import ROOT

BAD = (
    "from torch.utils.data import DataLoader\n"
    "loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    "for batch in loader:\n    pass\n"
)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dllint", *args, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def assert_one_line_error(result, path: Path, fragment: str) -> None:
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 2, output
    assert "Traceback" not in output
    assert len(output.splitlines()) == 1, output
    assert output.startswith(f"dllint: error: {path}:"), output
    assert fragment in output, output


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"tool = 3\n", "[tool] must be a table, got 3"),
        (b'tool = "dllint"\n', "[tool] must be a table, got 'dllint'"),
        (b'tool = ["dllint"]\n', "[tool] must be a table, got ['dllint']"),
        (b"[tool]\ndllint = 3\n", "[tool.dllint] must be a table, got 3"),
        (b"[[tool.dllint]]\nselect = ['DL1']\n", "[tool.dllint] must be a table"),
        (b"\xff\xfe[tool.dllint]\n", "invalid TOML: not UTF-8 (byte 0xff at line 1)"),
        (b"[tool.dllint]\nselect = ['DL1']\n# caf\xe9\n", "invalid TOML: not UTF-8 (byte 0xe9 at line 3)"),
        (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "invalid TOML: nested too deeply"),
    ],
)
def test_malformed_pyproject_above_the_working_directory(tmp_path, content, fragment):
    (tmp_path / "pyproject.toml").write_bytes(content)
    work = tmp_path / "src" / "pkg"
    work.mkdir(parents=True)
    (work / "a.py").write_text(BAD)
    assert_one_line_error(run_cli("a.py", cwd=work), tmp_path / "pyproject.toml", fragment)


def test_malformed_config_given_with_dash_dash_config(tmp_path):
    config = tmp_path / "dllint.toml"
    config.write_text('tool = "dllint"\n')
    (tmp_path / "a.py").write_text(BAD)
    assert_one_line_error(run_cli("--config", str(config), "a.py", cwd=tmp_path), config, "[tool] must be a table")


def lint_with(tmp_path: Path, table: str):
    (tmp_path / "pyproject.toml").write_text("[tool.dllint]\n" + table)
    (tmp_path / "a.py").write_text(BAD)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(main, ["a.py", "--no-cache"], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize(
    "table, fragment",
    [
        ("select = 3\n", "'select' must be a list of rule codes, got 3"),
        ("select = [3]\n", "'select' must be a list of rule codes, got [3]"),
        ("select = { DL1 = true }\n", "'select' must be a list of rule codes, got {'DL1': True}"),
        ("ignore = [['DL1']]\n", "'ignore' must be a list of rule codes"),
        ("extend-select = 1.5\n", "'extend-select' must be a list of rule codes, got 1.5"),
        ('select = ["DL\\n1"]\n', "'select': 'DL\\n1' is not a rule code or prefix"),
        ("select = ['\u200bDL1']\n", "is not a rule code or prefix"),
        ("per-file-ignores = 3\n", "'per-file-ignores' must be a table of glob = [codes], got 3"),
        ("per-file-ignores = ['tests/*']\n", "'per-file-ignores' must be a table of glob = [codes]"),
        ("per-file-ignores = { 'tests/*' = 3 }\n", "'per-file-ignores.tests/*' must be a list of rule codes, got 3"),
        ("per-file-ignores = { 'tests/*' = { a = 1 } }\n", "'per-file-ignores.tests/*' must be a list of rule codes"),
        ("per-file-ignores = { 'tests/*' = ['DL9'] }\n", "'per-file-ignores.tests/*': 'DL9' matches no rule"),
        ("per-file-ignores = { '' = ['DL1'] }\n", "'per-file-ignores' has an empty glob"),
        ("exclude = 'build'\n", "'exclude' must be a list of strings, got 'build'"),
        ("exclude = [1]\n", "'exclude' must be a list of strings, got [1]"),
        ("exclude = ['']\n", "'exclude' has an empty pattern"),
        ("extend-exclude = { a = 1 }\n", "'extend-exclude' must be a list of strings"),
        ("extend-exclude = [' ']\n", "'extend-exclude' has an empty pattern"),
        ("max-workers = 0\n", "'max-workers' must be a positive integer, got 0"),
        ("max-workers = true\n", "'max-workers' must be a positive integer, got True"),
        ("max-workers = 4.0\n", "'max-workers' must be a positive integer, got 4.0"),
        ("max-workers = '4'\n", "'max-workers' must be a positive integer, got '4'"),
        ("extend-loader-classes = 'FastLoader'\n", "'extend-loader-classes' must be a list of class names"),
        ("extend-loader-classes = ['']\n", "'extend-loader-classes': '' is not a class name"),
        ("extend-loader-classes = ['fast.']\n", "'extend-loader-classes': 'fast.' is not a class name"),
        ("extend-loader-classes = ['Fast Loader']\n", "'extend-loader-classes': 'Fast Loader' is not a class name"),
        ('"sel\\nect" = []\n', "unknown key 'sel\\nect' in [tool.dllint]"),
        ("select = ['" + "DL1', '" * 200 + "DL2']\n" "select2 = 1\n", "unknown key 'select2'"),
        ("exclude = ['" + "x" * 300 + "', 3]\n", "'exclude' must be a list of strings, got ['xxxx"),
    ],
)
def test_every_bad_key_is_one_short_line_naming_key_and_file(tmp_path, table, fragment):
    result = lint_with(tmp_path, table)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 300 + len(str(tmp_path)), lines
    assert lines[0].startswith(f"dllint: error: {tmp_path / 'pyproject.toml'}: ")
    assert fragment in lines[0]


@pytest.mark.parametrize(
    "table",
    [
        "per-file-ignores = { 'tests/*' = 'DL001' }\n",  # one code as a string, like select = 'DL1'
        "exclude = ['[', 'gen/**']\n",  # odd globs match nothing; they are not errors
        "extend-loader-classes = ['fast.FastLoader', 'Ünïcode']\n",
        "max-workers = 9223372036854775807\n",
    ],
)
def test_unusual_but_valid_settings_still_lint(tmp_path, table):
    result = lint_with(tmp_path, table)
    assert result.exit_code == 1, result.output
    assert "DL001" in result.output


def test_a_directory_that_cannot_be_searched_is_passed_over(tmp_path, monkeypatch):
    """Root reads everything, so the EACCES that stat raises there is simulated."""
    (tmp_path / "pyproject.toml").write_text("[tool.dllint]\nignore = ['DL001']\n")
    work = tmp_path / "locked" / "pkg"
    work.mkdir(parents=True)
    real_is_file = Path.is_file

    def is_file(path: Path) -> bool:
        if path.parent.name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_is_file(path)

    monkeypatch.setattr(Path, "is_file", is_file)
    settings = load_settings(start=work)
    assert settings.config_path == str(tmp_path / "pyproject.toml")
    assert settings.ignore == ("DL001",)
