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


def git(*args: str, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


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


def test_readme_snippet_reports_then_fixes(repo, tmp_path):
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    # The committed HEAD, as users get it (uncommitted work of the checkout is not what ships).
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet(head))
    git("add", ".pre-commit-config.yaml", cwd=repo)
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    # The report hook alone first: what it finds.
    checked = subprocess.run([*run, "dllint", "--verbose"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    output = checked.stdout + checked.stderr
    assert checked.returncode == 1, output
    assert re.search(r"^train\.py:4:32: DL003 .*shuffle=True with a sampler", output, re.M), output
    assert re.search(r"^conf/train\.yaml:4:3: DL001 ", output, re.M), output
    assert "notes.txt" not in output
    # require_serial: the hook runs once over all the files, one summary (not one per batch)
    assert re.findall(r"^Found \d+ problems? in \d+ files?\.$", output, re.M) == ["Found 2 problems in 2 files."], output

    # Both hooks, in the snippet's order: dllint-fix fixes and stops the commit, dllint then passes.
    result = subprocess.run([*run, "--verbose"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    lines = output.splitlines()
    fix_status = next(line for line in lines if line.startswith("dllint (fix)"))
    check_status = next(line for line in lines if line.startswith("dllint."))
    assert fix_status.endswith("Failed") and check_status.endswith("Passed"), output
    assert "files were modified by this hook" in output
    assert re.findall(r"^Found \d+ problems? \(.*\)\.$", output, re.M) == ["Found 2 problems (2 fixed, 0 remaining)."], output
    assert (repo / "train.py").read_text() == FIXED_SCRIPT
    assert (repo / "conf" / "train.yaml").read_text() == FIXED_CONFIG

    # Fixed: both hooks pass.
    again = subprocess.run(run, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
