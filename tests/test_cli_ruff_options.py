"""The ruff options a ruff user reaches for (issue 35), through the CLI on real files, each
compared with ruff's own behaviour on the same kind of input where ruff has the option."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dllint.inputs.notebook import cell_sources, notebook_from_percent
from tests.test_cli import BAD, CLEAN

RUFF = shutil.which("ruff") or (str(Path(sys.executable).parent / "ruff") if (Path(sys.executable).parent / "ruff").exists() else None)
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (pip install ruff)")
UNUSED = "import os\nimport sys  # noqa: E501\n"  # two F401 for ruff, one with a noqa of another code
YAML = "data:\n  num_workers: 0\n  persistent_workers: true\n"  # DL001 on line 3
TWO_FIXES = (
    "from torch.utils.data import DataLoader\n\n"
    "def main():\n"
    "    loader = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    "    loader2 = DataLoader(list(range(8)), num_workers=0, persistent_workers=True)\n"
    "    return loader, loader2\n"
)


def ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert RUFF is not None
    return subprocess.run([RUFF, "check", "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def dllint(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def codes(output: str) -> list[str]:
    return sorted(line.split(": ")[1].split()[0] for line in output.splitlines() if ": DL" in line)


# -- --add-noqa -------------------------------------------------------------------------
@needs_ruff
def test_add_noqa_writes_and_merges_as_ruff_does_and_is_idempotent(tmp_path):
    (tmp_path / "u.py").write_text(UNUSED)
    assert ruff("--select", "F401", "--add-noqa", "u.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "u.py").read_text() == "import os  # noqa: F401\nimport sys  # noqa: E501, F401\n"
    (tmp_path / "bad.py").write_text(BAD.replace("persistent_workers=True)", "persistent_workers=True)  # noqa: E501"))
    (tmp_path / "other.py").write_text(BAD)
    first = dllint("--add-noqa", "bad.py", "other.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stderr.strip().endswith("Added 2 noqa directives.")
    # the same shapes as ruff's: codes merged, sorted, after ", "; a new comment after two spaces
    assert (tmp_path / "bad.py").read_text().splitlines()[2].endswith("persistent_workers=True)  # noqa: DL001, E501")
    assert (tmp_path / "other.py").read_text().splitlines()[2].endswith("persistent_workers=True)  # noqa: DL001")
    before = (tmp_path / "bad.py").read_text()
    again = dllint("--add-noqa", "bad.py", "other.py", cwd=tmp_path)
    assert again.returncode == 0 and again.stderr.strip().endswith("Added 0 noqa directives.")
    assert (tmp_path / "bad.py").read_text() == before
    assert dllint("bad.py", "other.py", cwd=tmp_path).returncode == 0  # suppressed now


def test_add_noqa_in_a_notebook_cell_and_a_yaml_config(tmp_path):
    (tmp_path / "nb.ipynb").write_bytes(notebook_from_percent("import torch\n# %%\n" + BAD))
    (tmp_path / "conf.yaml").write_text(YAML)
    result = dllint("--add-noqa", ".", cwd=tmp_path)
    assert result.returncode == 0 and "Added 2 noqa directives." in result.stderr
    cells = cell_sources((tmp_path / "nb.ipynb").read_text())
    assert cells is not None and cells[0] == "import torch\n"
    assert cells[1].splitlines()[2].endswith("persistent_workers=True)  # noqa: DL001")
    assert (tmp_path / "conf.yaml").read_text() == "data:\n  num_workers: 0\n  persistent_workers: true  # noqa: DL001\n"
    assert dllint(".", cwd=tmp_path).returncode == 0


def test_add_noqa_leaves_a_line_inside_a_string_alone(tmp_path):
    source = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader([1], num_workers=0, persistent_workers=True, x='''\n"
        "''')\n"
    )
    (tmp_path / "s.py").write_text(source)
    result = dllint("--add-noqa", "s.py", cwd=tmp_path)
    assert "Added 0 noqa directives." in result.stderr
    assert (tmp_path / "s.py").read_text() == source


def test_add_noqa_refuses_fix(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    result = dllint("--add-noqa", "--fix", "bad.py", cwd=tmp_path)
    assert result.returncode == 2 and "--add-noqa cannot be combined with --fix" in result.stderr
    assert (tmp_path / "bad.py").read_text() == BAD


# -- --show-files, --show-settings ------------------------------------------------------
@needs_ruff
def test_show_files_lists_what_ruff_would_list(tmp_path):
    for name in ("a.py", "pkg/b.py", "venv/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(CLEAN)
    (tmp_path / "conf.yaml").write_text(YAML)
    ours = dllint("--show-files", ".", cwd=tmp_path)
    theirs = ruff("--show-files", ".", cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0
    python = [line for line in ours.stdout.splitlines() if line.endswith(".py")]
    assert python == theirs.stdout.splitlines() == [str(tmp_path / "a.py"), str(tmp_path / "pkg/b.py")]
    assert str(tmp_path / "conf.yaml") in ours.stdout.splitlines()


def test_show_settings_prints_the_resolved_settings(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dllint]\nmax-workers = 8\nignore = ["DL206"]\n')
    (tmp_path / "a.py").write_text(CLEAN)
    result = dllint("--show-settings", "--config", "line-length = 100", "--extend-ignore", "DL207", "a.py", cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f'Resolved settings for: "{tmp_path / "a.py"}"'
    assert lines[1] == f'Settings path: "{tmp_path / "pyproject.toml"}"'
    assert "max-workers = 8" in lines and "line-length = 100" in lines and "ignore = ['DL206', 'DL207']" in lines
    assert f"project-root = '{tmp_path}'" in lines
    enabled = next(line for line in lines if line.startswith("rules.enabled = "))
    assert "DL201" in enabled and "DL206" not in enabled and "DL207" not in enabled


# -- per-file-ignores, extend-ignore ------------------------------------------------------
def test_without_a_config_the_project_root_is_the_file_s_directory(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/bad.py").write_text(BAD)
    shown = dllint("--show-settings", "tests/bad.py", cwd=tmp_path).stdout
    assert f"project-root = '{tmp_path / 'tests'}'" in shown.splitlines()


@needs_ruff
def test_per_file_ignores_on_the_command_line_as_ruff_reads_it(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/u.py").write_text(UNUSED.replace("  # noqa: E501", ""))
    assert ruff("--select", "F401", "--per-file-ignores", "tests/*:F401", ".", cwd=tmp_path).returncode == 0
    assert ruff("--select", "F401", ".", cwd=tmp_path).returncode == 1
    (tmp_path / "tests/bad.py").write_text(BAD)
    (tmp_path / "bad.py").write_text(BAD)
    assert codes(dllint(".", cwd=tmp_path).stdout) == ["DL001", "DL001"]
    result = dllint("--per-file-ignores", "tests/*:DL0", ".", cwd=tmp_path)
    assert result.returncode == 1 and f"bad.py:3:52: DL001" in result.stdout and "tests/bad.py" not in result.stdout
    assert dllint("--per-file-ignores", "tests/*:DL0", "--per-file-ignores", "bad.py:DL001", ".", cwd=tmp_path).returncode == 0
    bad = dllint("--per-file-ignores", "tests/*", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "'tests/*' is not GLOB:CODES" in bad.stderr


def test_per_file_ignores_and_extend_per_file_ignores_in_the_config(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/bad.py").write_text(BAD)
    (tmp_path / "top.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.dllint.per-file-ignores]\n"tests/*" = ["DL001"]\n')
    assert dllint(".", cwd=tmp_path).stdout.count("DL001 ") == 1
    # --per-file-ignores replaces the config's table; --extend-per-file-ignores adds to it
    assert dllint("--per-file-ignores", "top.py:DL001", ".", cwd=tmp_path).stdout.count("tests/bad.py:3") == 1
    assert dllint("--extend-per-file-ignores", "top.py:DL001", ".", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dllint.per-file-ignores]\n"tests/*" = ["DL001"]\n[tool.dllint.extend-per-file-ignores]\n"top.py" = ["DL0"]\n'
    )
    assert dllint(".", cwd=tmp_path).returncode == 0


@needs_ruff
def test_extend_ignore_adds_to_ignore_as_in_ruff(tmp_path):
    (tmp_path / "u.py").write_text("import os\nx = 1 == None\n")  # F401, E711
    assert ruff("--select", "F401,E711", "--ignore", "F401", "--extend-ignore", "E711", "u.py", cwd=tmp_path).returncode == 0
    (tmp_path / "bad.py").write_text(BAD + "other = DataLoader([1], num_workers=64)\n")
    assert codes(dllint("bad.py", cwd=tmp_path).stdout) == ["DL001", "DL202"]
    assert codes(dllint("--ignore", "DL001", "bad.py", cwd=tmp_path).stdout) == ["DL202"]
    assert dllint("--ignore", "DL001", "--extend-ignore", "DL202", "bad.py", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.dllint]\nignore = ["DL001"]\n')
    assert codes(dllint("--extend-ignore", "DL202", "bad.py", cwd=tmp_path).stdout) == []
    assert codes(dllint("--ignore", "DL202", "bad.py", cwd=tmp_path).stdout) == ["DL001"]  # --ignore replaces


# -- --config KEY=VALUE -------------------------------------------------------------------
@needs_ruff
def test_config_takes_a_toml_setting_as_ruff_does(tmp_path):
    (tmp_path / "u.py").write_text("x = 1\n" + "y = 'a'" + " " * 100 + "\n")
    assert ruff("--select", "E501", "--config", "line-length = 200", "u.py", cwd=tmp_path).returncode == 0
    assert ruff("--select", "E501", "--config", "nope = 3", "u.py", cwd=tmp_path).returncode == 2
    (tmp_path / "w.py").write_text("from torch.utils.data import DataLoader\nDataLoader([1], num_workers=8)\n")
    assert codes(dllint("w.py", cwd=tmp_path).stdout) == []
    fired = dllint("--config", "max-workers=4", "w.py", cwd=tmp_path)
    assert fired.returncode == 1 and codes(fired.stdout) == ["DL202"]
    # the setting wins over the config file, given or found
    (tmp_path / "dllint.toml").write_text("max-workers = 2\n")
    assert dllint("--config", "dllint.toml", "--config", "max-workers = 16", "w.py", cwd=tmp_path).returncode == 0
    assert dllint("--config", "max-workers = 16", "w.py", cwd=tmp_path).returncode == 0
    assert dllint("w.py", cwd=tmp_path).returncode == 1
    unknown = dllint("--config", "nope = 3", "w.py", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown key 'nope'" in unknown.stderr
    broken = dllint("--config", "max-workers = ", "w.py", cwd=tmp_path)
    assert broken.returncode == 2 and "neither a config file nor a TOML `KEY = VALUE` pair" in broken.stderr
    missing = dllint("--config", "missing.toml", "w.py", cwd=tmp_path)
    assert missing.returncode == 2 and "missing.toml: config file not found" in missing.stderr


# -- --fix companions -----------------------------------------------------------------------
@needs_ruff
def test_exit_non_zero_on_fix_as_in_ruff(tmp_path):
    (tmp_path / "u.py").write_text("import os\n")
    assert ruff("--select", "F401", "--fix", "u.py", cwd=tmp_path).returncode == 0
    (tmp_path / "u.py").write_text("import os\n")
    assert ruff("--select", "F401", "--fix", "--exit-non-zero-on-fix", "u.py", cwd=tmp_path).returncode == 1
    (tmp_path / "bad.py").write_text(BAD)
    assert dllint("--fix", "bad.py", cwd=tmp_path).returncode == 0
    (tmp_path / "bad.py").write_text(BAD)
    fixed = dllint("--fix", "--exit-non-zero-on-fix", "bad.py", cwd=tmp_path)
    assert fixed.returncode == 1 and "(1 fixed, 0 remaining)" in fixed.stdout
    assert dllint("--fix", "--exit-non-zero-on-fix", "bad.py", cwd=tmp_path).returncode == 0  # nothing left to fix


@needs_ruff
def test_show_fixes_enumerates_the_fixes_as_ruff_does(tmp_path):
    (tmp_path / "u.py").write_text("import os\nimport sys\n")
    theirs = ruff("--select", "F401", "--fix", "--show-fixes", "u.py", cwd=tmp_path).stdout
    assert "Fixed 2 errors:\n- u.py:\n    2 × F401 (unused-import)\n" in theirs
    (tmp_path / "two.py").write_text(TWO_FIXES)
    ours = dllint("--fix", "--show-fixes", "two.py", cwd=tmp_path)
    assert "Fixed 2 problems:\n- two.py:\n    2 × DL001 (persistent-workers-without-workers)\n" in ours.stdout
    assert ours.stdout.rstrip().endswith("(2 fixed, 0 remaining).")
    assert "Fixed 2 problems" not in dllint("--fix", "two.py", cwd=tmp_path).stdout


def test_line_length_feeds_the_fixes(tmp_path):
    call = "    loader = DataLoader(list(range(64)), batch_size=8, num_workers=4)\n"
    source = "from torch.utils.data import DataLoader\n\n\ndef train():\n" + call + "    for epoch in range(10):\n        for batch in loader:\n            pass\n"
    (tmp_path / "a.py").write_text(source)
    dllint("--fix", "--unsafe-fixes", "--line-length", "60", "a.py", cwd=tmp_path)  # DL201 sets persistent_workers
    narrow = (tmp_path / "a.py").read_text()
    assert "persistent_workers=True" in narrow and max(len(line) for line in narrow.splitlines()) <= 60, narrow
    (tmp_path / "a.py").write_text(source)
    dllint("--fix", "--unsafe-fixes", "--config", "line-length = 120", "a.py", cwd=tmp_path)  # fits: one line
    assert "    loader = DataLoader(list(range(64)), batch_size=8, num_workers=4, persistent_workers=True)\n" in (tmp_path / "a.py").read_text()
    assert dllint("--line-length", "0", "a.py", cwd=tmp_path).returncode == 2


# -- --color -------------------------------------------------------------------------------
@needs_ruff
def test_color_always_never_auto(tmp_path):
    (tmp_path / "u.py").write_text("import os\n")
    assert "\x1b[" in ruff("--select", "F401", "--color", "always", "u.py", cwd=tmp_path).stdout
    assert "\x1b[" not in ruff("--select", "F401", "--color", "never", "u.py", cwd=tmp_path).stdout
    (tmp_path / "bad.py").write_text(BAD)
    always = dllint("--color", "always", "bad.py", cwd=tmp_path).stdout
    assert "\x1b[" in always and "DL001" in always
    assert "\x1b[" not in dllint("--color", "never", "bad.py", cwd=tmp_path).stdout
    assert "\x1b[" not in dllint("bad.py", cwd=tmp_path).stdout  # auto: a pipe is no terminal
    assert "\x1b[" not in dllint("--color", "always", "--format", "json", "bad.py", cwd=tmp_path).stdout


# -- --watch --------------------------------------------------------------------------------
def test_watch_lints_again_when_a_file_changes(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "dllint", "--no-cache", "--watch", "a.py"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []

        def wait_for(text: str) -> None:
            deadline = time.monotonic() + 30
            while not any(text in line for line in lines):
                assert time.monotonic() < deadline, lines
                lines.append(process.stdout.readline())  # type: ignore[union-attr]

        wait_for("All checks passed!")
        assert "Starting linter in watch mode..." in "".join(lines)
        time.sleep(0.1)
        (tmp_path / "a.py").write_text(BAD)
        wait_for("Found 1 problem in 1 file.")
        assert "File change detected..." in "".join(lines)
        assert any("a.py:3:52: DL001" in line for line in lines)
        assert process.poll() is None  # still watching
    finally:
        process.kill()
        process.wait(timeout=10)


def test_watch_refuses_standard_input_and_diff(tmp_path):
    assert dllint("--watch", "-", cwd=tmp_path).returncode == 2
    assert "--watch cannot be combined with --diff" in dllint("--watch", "--diff", ".", cwd=tmp_path).stderr
