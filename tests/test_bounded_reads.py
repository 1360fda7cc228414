"""Hostile files and settings, through the real command line, each run bounded in time (a
timeout) and memory (an address-space limit): what dllint reads it reads through one bounded
reader (``.git``, config files), what it cannot use is one clear line, never a traceback or a
hang, and nothing it passes over goes unsaid."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import main

SAFE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0, persistent_workers=True)\n"
MEMORY = 2 << 30  # bytes of address space: /dev/zero read whole would pass it at once


def _bounded() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def dllint(*args: str, cwd: Path, stdout=subprocess.PIPE, closed_stdout: bool = False) -> subprocess.CompletedProcess[str]:
    def start() -> None:
        _bounded()
        if closed_stdout:
            os.close(1)

    return subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", *args] if args[:1] not in (("--help",), ("--version",)) else [sys.executable, "-m", "dllint", *args],
        cwd=cwd, stdout=None if closed_stdout else stdout, stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=start,
    )


@pytest.fixture
def root(tmp_path):
    (tmp_path / "train.py").write_text(SAFE)
    return tmp_path


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.splitlines()
    return line


@pytest.mark.parametrize("git", ["fifo", "/dev/zero"])
def test_a_dot_git_that_is_no_file_is_not_read(root, git):
    if git == "fifo":
        os.mkfifo(root / ".git")  # open() would wait for a writer for ever
    else:
        (root / ".git").symlink_to(git)  # read() would never end
    result = dllint(".", cwd=root)
    assert result.returncode == 1 and "train.py:3:40: DL001" in result.stdout, result.stderr


def test_a_huge_sparse_pyproject_is_not_read(root):
    with open(root / "pyproject.toml", "wb") as handle:
        handle.truncate(3 << 30)  # 3 GB of holes: no disk used
    assert one_error(dllint(".", cwd=root)) == f"dllint: error: {root / 'pyproject.toml'}: cannot read: file too large"


@pytest.mark.parametrize(
    "setting, message",
    [
        ('max-file-size = "' + "9" * 400 + 'MB"', r"'max-file-size' must be a size in bytes or like \"8MB\", up to 1TB, got '9{70,}\.\.\."),
        ("max-workers = " + "9" * 5000, r"invalid TOML: 'Exceeds the limit \(4300 digits\)"),
        ("max-workers = -" + "9" * 4000, r"'max-workers' must be a positive integer, got -9{70,}\.\.\."),
    ],
)
def test_huge_settings_are_one_clear_error(root, setting, message):
    (root / "pyproject.toml").write_text(f"[tool.dllint]\n{setting}\n")
    line = one_error(dllint(".", cwd=root))
    assert re.search(message, line) and len(line) < 300, line


def test_a_huge_size_on_the_command_line(root):
    result = dllint("--max-file-size", "9" * 5000, ".", cwd=root)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "is not a size (bytes, or like 8MB, up to 1TB)" in result.stderr and len(result.stderr) < 1000


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_and_version_to_a_full_device(root, option):
    with open("/dev/full", "w") as full:
        result = dllint(option, cwd=root, stdout=full)
    assert one_error(result) == "dllint: error: cannot write the output: no space left on device"


def test_stdout_closed_is_an_error(root):
    result = dllint(".", cwd=root, closed_stdout=True)
    assert one_error(result) == "dllint: error: cannot write the report: standard output is closed"


def test_a_backtracking_gitignore_pattern_is_left_out_with_a_warning(root):
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("*a" * 19 + "*c\n*.log\n")  # 20 stars: its regex backtracks for hours
    (root / ("a" * 200 + ".py")).write_text(SAFE)
    (root / "skipped.log").write_text("")
    result = dllint(".", cwd=root)
    assert result.returncode == 1 and result.stdout.count("DL001") == 2
    assert result.stderr.splitlines() == [f"dllint: warning: {root / '.gitignore'}:1: pattern left out: more than 6 `*` wildcards"]


def test_an_unlistable_directory_is_named(root, monkeypatch):
    """(In-process: run as root, a mode-000 directory is still listed.)"""
    import dllint.discovery as discovery

    (root / "sub").mkdir()
    (root / "sub" / "more.py").write_text(SAFE)
    scandir = os.scandir

    def refuse(path):
        if os.path.basename(os.fspath(path)) == "sub":
            raise PermissionError(13, "Permission denied")
        return scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", refuse)
    result = CliRunner().invoke(main, ["--no-cache", str(root)])
    assert f"dllint: warning: cannot list {root / 'sub'}: Permission denied: its files are not checked" in result.output
    assert "train.py:3:40: DL001" in result.output


def test_oversized_worker_counts_of_any_length(root):
    """DL202: a 4,000-digit value shown by its exact length; a YAML value past Python's 4,300-digit
    conversion limit still read."""
    (root / "train.py").write_text("from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=" + "9" * 4000 + ")\n")
    (root / "conf.yaml").write_text("train:\n  batch_size: 8\n  num_workers: " + "9" * 4301 + "\n")
    result = dllint("--select", "DL202", ".", cwd=root)
    assert re.search(r"^train\.py:3:\d+: DL202 num_workers=<a 4000-digit number> exceeds", result.stdout, re.M), result.stdout
    assert re.search(r"^conf\.yaml:3:3: DL202 num_workers=<a 4301-digit number> exceeds", result.stdout, re.M), result.stdout
