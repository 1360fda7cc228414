"""The pre-commit hooks, end to end through the real ``pre-commit``: the README's snippet copied
into a fresh repository (its URL replaced by this checkout, its ``rev:`` by the commit under
test), then ``pre-commit run``. It installs this checkout into its own environment (a package
index is needed for the build backend and dependencies; deselect offline with ``-m 'not
precommit'``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.precommit

BAD_SCRIPT = """\
from torch.utils.data import DataLoader, RandomSampler

sampler = RandomSampler(range(10))
loader = DataLoader(range(10), shuffle=True, sampler=sampler)
"""
FIXED_SCRIPT = BAD_SCRIPT.replace("shuffle=True, ", "")
BAD_CONFIG = "train_ds:\n  batch_size: 8\n  num_workers: 0\n  persistent_workers: true  # needs workers\n"
FIXED_CONFIG = BAD_CONFIG.replace("persistent_workers: true", "persistent_workers: false")  # set, never deleted
SNIPPET = re.compile(r"\*\*pre-commit\.\*\* In `\.pre-commit-config\.yaml`:\n\n```yaml\n(?P<yaml>.*?)```", re.S)


def readme_snippet(head: str) -> str:
    """The .pre-commit-config.yaml of docs/integrations.md (moved from the README), with only its URL and ``rev:`` replaced."""
    snippet = SNIPPET.search((ROOT / "docs/integrations.md").read_text(encoding="utf-8")).group("yaml")
    replaced = snippet.replace("https://github.com/dllint/dllint", str(ROOT), 1)
    replaced = re.sub(r"^(\s*rev: )\S+", lambda m: m.group(1) + head, replaced, count=1, flags=re.M)
    assert replaced.count("\n") == snippet.count("\n") and replaced != snippet
    return replaced


UNFIXABLE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(range(10), num_workers=-1)\n"  # DL005: no fix
MUTABLE_REV = "appears to be a mutable reference"


def git(*args: str, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """One pre-commit home for the module: the hook's environment is built once."""
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }


@pytest.fixture(scope="module")
def head():
    """The committed HEAD, as users get it (uncommitted work of the checkout is not what ships)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    work = tmp_path / "project"
    work.mkdir()
    git("init", "-q", cwd=work)
    (work / "train.py").write_text(BAD_SCRIPT)
    (work / "conf").mkdir()
    (work / "conf" / "train.yaml").write_text(BAD_CONFIG)  # YAML configs go through the hooks too
    (work / "notes.txt").write_text("DataLoader(ds, shuffle=True, sampler=s)\n")  # not Python: never checked
    git("add", ".", cwd=work)
    return work


def pre_commit(repo, env, *args: str) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files", *args]
    return subprocess.run(run, cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_documented_rev_is_not_a_branch():
    """pre-commit's own test for a mutable reference (clientlib): a dot (a tag) or hex digits (a SHA)."""
    rev = re.search(r"^\s*rev: (\S+)", SNIPPET.search((ROOT / "docs/integrations.md").read_text(encoding="utf-8")).group("yaml"), re.M).group(1)
    assert "." in rev or re.fullmatch(r"[a-fA-F0-9]+", rev), rev


def test_readme_snippet_fixes_and_reports_once(repo, env, head):
    (repo / "loader.py").write_text(UNFIXABLE)
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet(head))
    git("add", ".", cwd=repo)
    result = pre_commit(repo, env, "--verbose")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    fix_status = next(line for line in output.splitlines() if line.startswith("dllint (fix)"))
    assert fix_status.endswith("Failed"), output
    assert "files were modified by this hook" in output
    # What remains is reported once: one hook, one process (require_serial), one summary.
    assert len(re.findall(r"^loader\.py:3:\d+: DL005 ", output, re.M)) == 1, output
    assert re.findall(r"^Found \d+ problems? \(.*\)\.$", output, re.M) == ["Found 3 problems (2 fixed, 1 remaining)."], output
    assert MUTABLE_REV not in output
    assert (repo / "train.py").read_text() == FIXED_SCRIPT
    assert (repo / "conf" / "train.yaml").read_text() == FIXED_CONFIG

    # Fixed but for the unfixable finding: the hook still fails, and changes nothing.
    git("add", ".", cwd=repo)
    again = pre_commit(repo, env)
    assert again.returncode == 1 and "files were modified" not in again.stdout + again.stderr
    (repo / "loader.py").unlink()
    git("add", "-A", cwd=repo)
    assert pre_commit(repo, env).returncode == 0


def test_report_hook(repo, env, head):
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet(head).replace("id: dllint-fix", "id: dllint"))
    git("add", ".pre-commit-config.yaml", cwd=repo)
    checked = pre_commit(repo, env, "--verbose")
    output = checked.stdout + checked.stderr
    assert checked.returncode == 1, output
    assert re.search(r"^train\.py:4:32: DL003 .*shuffle=True with a sampler", output, re.M), output
    assert re.search(r"^conf/train\.yaml:4:3: DL001 ", output, re.M), output
    assert "notes.txt" not in output
    # require_serial: the hook runs once over all the files, one summary (not one per batch)
    assert re.findall(r"^Found \d+ problems? in \d+ files?\.$", output, re.M) == ["Found 2 problems in 2 files."], output
    assert (repo / "train.py").read_text() == BAD_SCRIPT  # report only


@pytest.mark.parametrize("hook", ["dllint", "dllint-fix"])
def test_file_names_are_never_options(repo, env, head, hook):
    """pre-commit appends file names to the entry: a committed ``--output-file=setup.py``, or
    ``outside.yaml`` in a directory named ``--output-file=..``, is a path to lint (the entry ends
    its options with ``--``), never an option that overwrites setup.py or a file outside the repository."""
    (repo / "setup.py").write_text("# the project's own setup.py\n")
    (repo / "--output-file=setup.py").write_text(BAD_SCRIPT)
    (repo / "--output-file=..").mkdir()
    (repo / "--output-file=.." / "outside.yaml").write_text(BAD_CONFIG)
    outside = repo.parent / "outside.yaml"
    outside.write_text("not dllint's\n")
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet(head).replace("id: dllint-fix", f"id: {hook}"))
    git("add", ".", cwd=repo)
    result = pre_commit(repo, env, "--verbose")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (repo / "setup.py").read_text() == "# the project's own setup.py\n"
    assert outside.read_text() == "not dllint's\n"
    fixed = hook == "dllint-fix"
    if fixed:  # the two oddly named files, fixed as the others
        assert "Found 4 problems (4 fixed, 0 remaining)." in output
    else:
        assert re.search(r"^--output-file=setup\.py:4:32: DL003 ", output, re.M), output
        assert re.search(r"^--output-file=\.\./outside\.yaml:4:3: DL001 ", output, re.M), output
    assert ((repo / "--output-file=setup.py").read_text() == FIXED_SCRIPT) is fixed
    assert ((repo / "--output-file=.." / "outside.yaml").read_text() == FIXED_CONFIG) is fixed
