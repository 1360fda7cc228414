"""What the cache trusts and what ``--fix`` checks before it writes (docs/security.md, "Files,
cache and fixes"), through the command line: a cache that is not the user's own is not used; a
fix is computed from the text written, never from the cache; a file changed since it was read
(an edit, another ``dllint --fix``) is left as it is; links, attributes, owner and mode stay."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import main
from tests.test_project import FACTORY, TRAIN

SAFE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0, persistent_workers=True)\n"
SAFE_FIXED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0)\n"
BOTH = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, shuffle=True, sampler=s, persistent_workers=True)\n"
posix_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to hand a file to another user")


def dllint(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


# -- the cache ------------------------------------------------------------------------------
def test_fix_never_applies_what_the_cache_says(tmp_path):
    """A cache entry rewritten behind dllint's back (by whoever could write it) moves the finding
    and gives its fix another message: ``--fix`` lints the file again and fixes what it reads."""
    root = project(tmp_path, {"train.py": SAFE})
    assert dllint(".", cwd=root).returncode == 1
    (cache_file,) = (root / ".dllint_cache").glob("*/*.json")
    data = json.loads(cache_file.read_text())
    (row,) = next(iter(data["files"].values()))[5]
    assert row[7] == ["safe", "Remove `persistent_workers`"]  # applicability and message: no edit
    row[0:4] = [1, 1, 1, 5]  # the finding moved onto the import line
    row[7] = ["safe", "forged"]
    cache_file.write_text(json.dumps(data))
    fixed = dllint("--fix", ".", cwd=root)
    assert (root / "train.py").read_text() == SAFE_FIXED, fixed.stdout + fixed.stderr
    assert "Found 1 problem (1 fixed, 0 remaining)." in fixed.stdout


@pytest.mark.parametrize("how", ["symlink", "group-writable", "version-symlink"])
def test_a_cache_that_is_not_the_users_own_is_not_used(tmp_path, how):
    root = project(tmp_path, {"train.py": SAFE})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = root / ".dllint_cache"
    if how == "symlink":  # shipped by the repository, pointing at a directory someone else controls
        cache.symlink_to(elsewhere)
    elif how == "group-writable":
        cache.mkdir()
        os.chmod(cache, 0o775)
    else:
        cache.mkdir(mode=0o755)
        from dllint import __version__

        (cache / __version__).symlink_to(elsewhere)
    for _ in range(2):
        result = dllint(".", cwd=root)
        assert result.returncode == 1 and "DL001" in result.stdout
        warnings = [line for line in result.stderr.splitlines() if "the cache is not used" in line]
        assert len(warnings) == 1, result.stderr
        assert re.search(r"symbolic link|writable by others", warnings[0])
    assert list(elsewhere.iterdir()) == []


@posix_root
def test_a_cache_owned_by_another_user_is_not_used(tmp_path):
    root = project(tmp_path, {"train.py": SAFE})
    assert dllint(".", cwd=root).returncode == 1
    cache = root / ".dllint_cache"
    os.chown(cache, 65534, 65534)  # nobody
    result = dllint(".", cwd=root)
    assert "owned by user 65534" in result.stderr and "the cache is not used" in result.stderr
    assert "DL001" in result.stdout


def test_the_users_own_cache_is_used_quietly(tmp_path):
    root = project(tmp_path, {"train.py": SAFE})
    for _ in range(2):
        result = dllint(".", cwd=root)
        assert result.returncode == 1 and result.stderr == "", result.stderr
    for directory in (root / ".dllint_cache", *(root / ".dllint_cache").iterdir()):
        if directory.is_dir():
            assert stat.S_IMODE(directory.stat().st_mode) & 0o022 == 0


# -- the write ------------------------------------------------------------------------------
def test_an_edit_saved_while_fixing_is_kept(tmp_path, monkeypatch):
    """The file is compared with what was read right before it is replaced."""
    import dllint.atomic as atomic

    path = tmp_path / "train.py"
    path.write_text(SAFE)
    edited = SAFE + "# saved by the editor meanwhile\n"
    lock = atomic._lock

    def edit_then_lock(fd: int) -> None:
        path.write_text(edited)  # in place, as many editors save
        lock(fd)

    monkeypatch.setattr(atomic, "_lock", edit_then_lock)
    result = CliRunner().invoke(main, ["--no-cache", "--fix", str(path)])
    assert path.read_text() == edited
    assert f"{path}: cannot write the fixed file: it changed since dllint read it" in result.output
    assert "0 fixed" in result.output and result.exit_code != 0


def test_concurrent_fix_runs_never_lose_a_fix(tmp_path):
    """Two real ``dllint --fix`` runs over the same files with different rules: every fix either
    is on disk or was reported as not written; nothing reported fixed is lost."""
    root = project(tmp_path, {f"m{i}.py": BOTH for i in range(120)})
    runs = [
        subprocess.Popen([sys.executable, "-m", "dllint", "--no-cache", "--jobs", "1", "--select", code, "--fix", "."],
                         cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for code in ("DL001", "DL003")
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    refused = [len(set(re.findall(r"\b(m\d+\.py)\b.*: it changed since dllint read it", err))) for out, err in outputs]
    fixed = [int(re.search(r"\((\d+) fixed", out).group(1)) for out, _ in outputs]
    assert [f + r for f, r in zip(fixed, refused)] == [120, 120], outputs
    left = dllint("--no-cache", "--select", "DL001,DL003", "--output-format", "json", ".", cwd=root)
    codes = [f["code"] for f in json.loads(left.stdout)]
    assert [codes.count("DL001"), codes.count("DL003")] == refused


def test_hard_links_owner_mode_and_attributes_are_kept(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SAFE)
    os.chmod(path, 0o640)
    link = tmp_path / "same.py"
    os.link(path, link)
    inode = path.stat().st_ino
    result = CliRunner().invoke(main, ["--no-cache", "--fix", str(path)])
    assert result.exit_code == 0, result.output
    assert path.stat().st_ino == inode and link.read_text() == SAFE_FIXED  # one file, both names
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_extended_attributes_are_kept(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SAFE)
    try:
        os.setxattr(path, "user.origin", b"kept")
    except (OSError, AttributeError):
        pytest.skip("no user extended attributes here")
    result = CliRunner().invoke(main, ["--no-cache", "--fix", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_text() == SAFE_FIXED and os.getxattr(path, "user.origin") == b"kept"


def test_a_read_only_file_is_not_rewritten(tmp_path):
    """Mode 0444 says "leave me alone", to root too (ruff 0.17 rewrites it when run as root)."""
    path = tmp_path / "train.py"
    path.write_text(SAFE)
    os.chmod(path, 0o444)
    result = CliRunner().invoke(main, ["--no-cache", "--fix", str(path)])
    assert path.read_text() == SAFE and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert f"{path}: cannot write the fixed file: read-only (mode 444): left as it is" in result.output
    assert result.exit_code != 0


# -- stale findings ---------------------------------------------------------------------------
def test_a_caller_saved_during_a_run_is_seen_by_the_next(tmp_path, monkeypatch):
    """The project's stat table is taken before its files are read: a file saved after it was
    read (here: a new caller of the factory) differs from the table on the next run."""
    from dllint.project.search import TextIndex

    root = project(tmp_path, {"data.py": FACTORY, "train.py": "x = 1\n"})
    span = TextIndex.span
    saved: list[str] = []

    def read_then_save(self, path):
        found = span(self, path)  # (the joined text, or the file alone where records are kept)
        if path.endswith("train.py") and not saved:
            saved.append(path)
            (root / "train.py").write_text(TRAIN)  # read as "x = 1": not among the files data.py's lint read
        return found

    monkeypatch.setattr(TextIndex, "span", read_then_save)
    first = CliRunner().invoke(main, ["--jobs", "1", str(root)])
    assert saved and "data.py:5" not in first.output  # the caller came after the read
    monkeypatch.undo()
    for _ in range(2):  # cached runs
        again = CliRunner().invoke(main, ["--jobs", "1", str(root)])
        assert re.search(r"data\.py:5:\d+: DL201 .*re-iterated by", again.output), again.output
