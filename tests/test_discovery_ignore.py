"""Discovery honours the project's ignore files and skips hidden directories (issue 24, point 2),
through the CLI on a real git repository holding Hydra run records, Lightning logs and W&B copies."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.discovery import discover
from tests.project_helpers import write_tree
from tests.test_cli import run

LOADER_YAML = "train:\n  num_workers: 0  # debugging\n  persistent_workers: true\n"
SCRIPT = "from torch.utils.data import DataLoader\n\nloader = DataLoader([1], num_workers=0, persistent_workers=True)\n"
RECORDS = {
    "conf/train.yaml": LOADER_YAML,
    "train.py": SCRIPT,
    "outputs/2024-05-01/12-00-00/.hydra/config.yaml": LOADER_YAML,
    "outputs/2024-05-01/12-00-00/train.py": SCRIPT,
    "multirun/2024-05-01/12-00-00/0/.hydra/config.yaml": LOADER_YAML,
    "lightning_logs/version_0/hparams.yaml": LOADER_YAML,
    "wandb/run-20240501_120000-abc/files/code/train.py": SCRIPT,
    ".hydra/config.yaml": LOADER_YAML,  # hidden: skipped unless named
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository (real `git init`) with a .gitignore as Hydra/Lightning/W&B projects write it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # git's global excludes file: the test's own
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_tree(root, {".gitignore": "outputs/\nmultirun/\nlightning_logs/\nwandb/\n", **RECORDS})
    return root


def files(root: Path, *paths: str, **settings) -> list[str]:
    old = os.getcwd()
    os.chdir(root)
    try:
        return discover(list(paths) or ["."], Settings(project_root=str(root), **settings)).files
    finally:
        os.chdir(old)


def test_fix_leaves_ignored_run_records_alone(repo):
    before = {name: (repo / name).read_bytes() for name in RECORDS}
    result = run("--fix", "--no-cache", ".", cwd=repo)
    assert result.output.splitlines()[-1] == "Found 2 problems (2 fixed, 0 remaining)."
    changed = sorted(name for name in RECORDS if (repo / name).read_bytes() != before[name])
    assert changed == ["conf/train.yaml", "train.py"]


def test_check_reports_without_leading_dot_slash(repo):
    result = run("--no-cache", ".", cwd=repo)
    lines = [line.split(":")[0] for line in result.output.splitlines() if ": DL" in line]
    assert lines == ["conf/train.yaml", "train.py"]


def test_no_respect_gitignore_option_and_setting(repo):
    everything = [
        "train.py", "conf/train.yaml", "lightning_logs/version_0/hparams.yaml",
        "outputs/2024-05-01/12-00-00/train.py", "wandb/run-20240501_120000-abc/files/code/train.py",
    ]  # .hydra/ and multirun/'s records sit in hidden directories: still skipped
    assert files(repo, respect_gitignore=False) == everything
    result = run("--no-cache", "--no-respect-gitignore", "--statistics", ".", cwd=repo)
    assert result.output.splitlines()[0].strip() == "5  DL001  [*] persistent-workers-without-workers"
    (repo / "pyproject.toml").write_text("[tool.dllint]\nrespect-gitignore = false\n")
    assert "5  DL001" in run("--no-cache", "--statistics", ".", cwd=repo).output
    assert "2  DL001" in run("--no-cache", "--statistics", "--respect-gitignore", ".", cwd=repo).output
    (repo / "pyproject.toml").write_text("[tool.dllint]\nrespect-gitignore = 'no'\n")
    bad = run("--no-cache", ".", cwd=repo)
    assert bad.exit_code == 2 and "'respect-gitignore' must be true or false" in bad.output


def test_named_paths_are_checked_anyway(repo):
    assert files(repo, "lightning_logs/version_0/hparams.yaml") == ["lightning_logs/version_0/hparams.yaml"]
    assert files(repo, "lightning_logs") == ["lightning_logs/version_0/hparams.yaml"]  # an ignored directory, named
    assert files(repo, "outputs/2024-05-01/12-00-00/.hydra") == ["outputs/2024-05-01/12-00-00/.hydra/config.yaml"]
    assert files(repo, ".hydra") == [".hydra/config.yaml"]  # a hidden directory, named
    assert files(repo, "outputs") == ["outputs/2024-05-01/12-00-00/train.py"]  # .hydra below it: hidden


def test_nested_gitignore_negation_and_other_ignore_files(repo):
    write_tree(repo, {
        "src/.gitignore": "*_gen.py\n!keep_gen.py\n",
        "src/a_gen.py": SCRIPT, "src/keep_gen.py": SCRIPT, "src/sub/b_gen.py": SCRIPT,
        "a_gen.py": SCRIPT,  # above src/: its .gitignore does not apply
        "scratch/.ignore": "*.py\n",
        "scratch/x.py": SCRIPT,
        "local/y.py": SCRIPT,
        "notes/z.py": SCRIPT,
    })
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text("local/\n")
    (Path(os.environ["XDG_CONFIG_HOME"]) / "git").mkdir(parents=True)
    (Path(os.environ["XDG_CONFIG_HOME"]) / "git/ignore").write_text("notes/\n")
    assert files(repo) == ["a_gen.py", "train.py", "conf/train.yaml", "src/keep_gen.py"]
    # core.excludesFile in ~/.gitconfig names another global file
    (Path(os.environ["HOME"]) / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignore\n")
    (Path(os.environ["HOME"]) / "my-ignore").write_text("conf/\n")
    assert "conf/train.yaml" not in files(repo) and "notes/z.py" in files(repo)


def test_gitignore_outside_a_git_repository_is_not_read(tmp_path):
    """As git (and ruff's walker) read them: .gitignore only inside a working tree, .ignore anywhere."""
    write_tree(tmp_path / "plain", {".gitignore": "a.py\n", ".ignore": "b.py\n", "a.py": SCRIPT, "b.py": SCRIPT})
    assert files(tmp_path / "plain") == ["a.py"]


def test_an_ignore_file_that_is_a_fifo_is_not_read(repo):
    """A FIFO named .gitignore (or a git config) would block a plain open(): it is unreadable, so
    it ignores nothing."""
    (repo / "sub").mkdir()
    os.mkfifo(repo / "sub/.gitignore")
    (repo / "sub/x.py").write_text(SCRIPT)
    os.mkfifo(Path(os.environ["HOME"]) / ".gitconfig")
    assert "sub/x.py" in files(repo)


def test_everything_ignored_says_why(repo):
    # a directory named below an ignored one (wandb/): named on purpose, so it is checked
    result = run("--no-cache", "wandb/run-20240501_120000-abc/files", cwd=repo)
    assert "wandb/run-20240501_120000-abc/files/code/train.py:3:" in result.output
    (repo / "gen").mkdir()
    (repo / "gen/.gitignore").write_text("*\n")
    (repo / "gen/x.py").write_text(SCRIPT)
    result = run("--no-cache", "gen", cwd=repo)
    assert "no files checked in gen: 1 path in it is ignored by .gitignore/.ignore" in result.output


def test_symlink_loop_is_named(tmp_path):
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    result = run("--no-cache", "loop.py", cwd=tmp_path)
    assert "loop.py:1:1: DL000 cannot read file: a symbolic link loop" in result.output
