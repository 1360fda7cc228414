"""Writing a file in one step (fixed sources, the cache)."""

from __future__ import annotations

import os
import stat

import pytest

from dllint import atomic
from dllint.atomic import write_atomic


def test_new_content_keeps_the_mode_and_writes_through_a_symlink(tmp_path):
    target = tmp_path / "train.py"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o751)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(str(link), b"new\n")
    assert target.read_bytes() == b"new\n" and link.is_symlink()
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "train.py"]


def test_a_new_file_is_private_and_a_taken_temporary_name_is_skipped(tmp_path):
    target = tmp_path / "cache.json"
    taken = tmp_path / f".cache.json.{os.getpid()}-0.dllint-tmp"
    outside = tmp_path / "outside"
    taken.symlink_to(outside)  # never followed: O_EXCL refuses an existing name, a symlink included
    write_atomic(target, b"{}", durable=False)
    assert target.read_bytes() == b"{}" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not outside.exists() and taken.is_symlink()


def test_a_failed_replace_leaves_the_old_content_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "train.py"
    target.write_bytes(b"old\n")

    def refuse(source, destination):
        raise PermissionError("read-only directory")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n" and [p.name for p in tmp_path.iterdir()] == ["train.py"]
