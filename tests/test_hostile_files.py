"""Nothing lost, nothing escapes: what a hostile repository or file system does to dllint.

Reads: only regular files, never past ``max-file-size`` (sources, stdin, config bases, configs
followed from code, the cache), never blocking on a FIFO. Writes: the cache never through a
symlink; ``--fix`` keeps owner, group and mode, counts a failed write as failed, and leaves no
temporary file whatever signal arrives. The hostile runs go through a subprocess bounded in time
and, where memory is the risk, in address space (``RLIMIT_AS``).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import dllint.atomic as atomic
from dllint.cache import FORMAT as CACHE_FORMAT
from dllint.cli import main

LOOP = "from torch.utils.data import DataLoader\n\nfor epoch in range(3):\n    for batch in DataLoader(ds, num_workers=4):\n        pass\n"
MEMORY = 1 << 30  # a run that reads /dev/zero into memory dies here instead of taking the machine


def dllint(*args: str, cwd: Path, stdin=None, timeout: float = 30, memory: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "dllint", *args],
        cwd=cwd,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


# -- reading -------------------------------------------------------------------------------
def test_files_that_are_not_regular_are_one_dl000_each_and_never_block(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "loop.py").symlink_to("loop.py")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.py"))
    try:
        named = dllint("--no-cache", "fifo.py", "zero.py", "loop.py", "sock.py", cwd=tmp_path, memory=MEMORY)
        walked = dllint("--no-cache", ".", cwd=tmp_path, memory=MEMORY)
    finally:
        server.close()
    expected = [
        "fifo.py:1:1: DL000 cannot read file: not a regular file (a FIFO)",
        "loop.py:1:1: DL000 cannot read file: a symbolic link loop (too many levels of symbolic links)",
        "sock.py:1:1: DL000 cannot read file: not a regular file (a socket)",
        "zero.py:1:1: DL000 cannot read file: not a regular file (a character device)",
    ]
    assert named.stdout.splitlines()[:4] == expected and named.returncode == 1, named.stderr
    assert walked.stdout.splitlines()[:4] == expected, walked.stderr  # paths printed without a leading ./


def test_stdin_is_read_only_to_max_file_size(tmp_path):
    """``dllint - < /dev/zero`` stops after max-file-size + 1 bytes, with one DL000."""
    with open("/dev/zero", "rb") as zero:
        done = dllint("--no-cache", "-", cwd=tmp_path, stdin=zero, memory=MEMORY, timeout=30)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        "-:1:1: DL000 file too large (over max-file-size 4.0 MB): skipped; raise `max-file-size` to lint it"
    )


def test_stdin_at_the_limit_is_linted(tmp_path):
    source = LOOP.encode()
    done = dllint("--no-cache", "--max-file-size", str(len(source)), "-", cwd=tmp_path, stdin=None)
    assert "DL000" not in done.stdout  # empty stdin (DEVNULL): nothing to report
    fed = subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", "--max-file-size", str(len(source)), "-"],
        input=source, capture_output=True, cwd=tmp_path, timeout=30,
    )
    assert b"DL204" in fed.stdout and b"DL000" not in fed.stdout


def test_config_bases_and_configs_followed_from_code_are_bounded(tmp_path):
    """``_base_ = ['/dev/zero']``, a FIFO base, ``OmegaConf.load('/dev/zero')`` and
    ``yaml.safe_load(open(FIFO))``: each unreadable (its values unknown), none read or waited on."""
    (tmp_path / "pyproject.toml").write_text("")
    os.mkfifo(tmp_path / "base_fifo.py")
    os.mkfifo(tmp_path / "conf.yaml")
    (tmp_path / "zero_base.py").write_text('_base_ = ["/dev/zero"]\ntrain_dataloader = dict(batch_size=2, num_workers=64)\n')
    (tmp_path / "fifo_base.py").write_text('_base_ = ["./base_fifo.py"]\ntrain_dataloader = dict(batch_size=2, num_workers=64)\n')
    (tmp_path / "omega.py").write_text(textwrap.dedent("""\
        from omegaconf import OmegaConf
        from torch.utils.data import DataLoader

        cfg = OmegaConf.load("/dev/zero")
        loader = DataLoader(list(range(8)), num_workers=cfg.loader.num_workers, persistent_workers=cfg.loader.persistent_workers)
        """))
    (tmp_path / "safe_load.py").write_text(textwrap.dedent("""\
        import yaml
        from torch.utils.data import DataLoader

        config = yaml.safe_load(open("conf.yaml"))
        loader = DataLoader(list(range(8)), num_workers=config["num_workers"], persistent_workers=config["persistent"])
        """))
    done = dllint("--no-cache", "zero_base.py", "fifo_base.py", "omega.py", "safe_load.py", cwd=tmp_path, memory=MEMORY, timeout=60)
    assert done.stdout.splitlines()[:2] == [
        "fifo_base.py:2:39: DL202 num_workers=64 exceeds max-workers=16: each worker is a process with its own memory; use fewer (dllint --probe measures the best count)",
        "zero_base.py:2:39: DL202 num_workers=64 exceeds max-workers=16: each worker is a process with its own memory; use fewer (dllint --probe measures the best count)",
    ], done.stderr
    assert "Found 2 problems in 2 files." in done.stdout and done.stderr == ""


def test_a_base_over_max_file_size_is_not_read(tmp_path, monkeypatch):
    from dllint.configs.inherit import read_config_file
    from dllint.files import default_limit, set_default_limit

    big = tmp_path / "big.py"
    big.write_text("train_dataloader = dict(num_workers=2)\n" + "#" * 2000 + "\n")
    old = default_limit()
    set_default_limit(1000)
    try:
        assert read_config_file(str(big), 0) is None
    finally:
        set_default_limit(old)
    assert read_config_file(str(big), 0) is not None


# -- the cache -----------------------------------------------------------------------------
def _cache_file(cache: Path) -> Path:
    (found,) = cache.glob("*/*.json")
    return found


def test_a_planted_cache_symlink_is_replaced_never_written_through(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text(LOOP)
    cache = project / ".cache"
    first = dllint("--cache-dir", str(cache), "a.py", cwd=project)
    assert first.returncode == 1, first.stderr
    entry = _cache_file(cache)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    entry.unlink()
    entry.symlink_to(victim)
    (cache / ".gitignore").unlink()
    (cache / ".gitignore").symlink_to(tmp_path / "created-outside")
    (project / "a.py").write_text(LOOP + "\n")  # a change: the cache is written again
    second = dllint("--cache-dir", str(cache), "a.py", cwd=project)
    assert second.returncode == 1 and "DL204" in second.stdout, second.stderr
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "created-outside").exists()
    assert not entry.is_symlink() and json.loads(entry.read_text())["format"] == CACHE_FORMAT


def test_a_fifo_at_the_cache_path_never_hangs(tmp_path):
    (tmp_path / "a.py").write_text(LOOP)
    cache = tmp_path / ".cache"
    dllint("--cache-dir", str(cache), "a.py", cwd=tmp_path)
    entry = _cache_file(cache)
    entry.unlink()
    os.mkfifo(entry)
    lock = entry.with_suffix(".lock")
    lock.unlink()
    os.mkfifo(lock)
    (tmp_path / "a.py").write_text(LOOP + "\n")
    done = dllint("--cache-dir", str(cache), "a.py", cwd=tmp_path, timeout=30)
    assert done.returncode == 1 and "DL204" in done.stdout, done.stderr


def test_a_symlinked_version_directory_is_not_written_into(tmp_path):
    (tmp_path / "a.py").write_text(LOOP)
    cache = tmp_path / ".cache"
    dllint("--cache-dir", str(cache), "a.py", cwd=tmp_path)
    version = _cache_file(cache).parent
    outside = tmp_path / "outside"
    outside.mkdir()
    for child in version.iterdir():
        child.unlink()
    version.rmdir()
    version.symlink_to(outside)
    (tmp_path / "a.py").write_text(LOOP + "\n")
    done = dllint("--cache-dir", str(cache), "a.py", cwd=tmp_path)
    assert done.returncode == 1 and list(outside.iterdir()) == []


# -- --fix and the file system -------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_fix_as_root_keeps_owner_group_and_mode(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(LOOP.replace("num_workers=4)", "num_workers=4, persistent_workers=False)"))
    os.chown(path, 1234, 1234)
    os.chmod(path, 0o640)
    done = dllint("--no-cache", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert "fixed" in done.stdout and done.returncode in (0, 1), done.stderr
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 1234, 0o640)
    assert path.read_text() != LOOP


def test_a_failed_write_is_never_counted_as_fixed(tmp_path, monkeypatch):
    """A read-only file system: each file stays as it was, its fixes are reported as failed,
    its findings at their own positions, and the run exits 2."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(LOOP)

    def read_only(source, target, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(atomic.os, "replace", read_only)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--no-cache", "--fix", "--unsafe-fixes", "a.py", "b.py"])
    assert result.exit_code == 2
    assert "Found 4 problems (0 fixed, 4 remaining)." in result.output
    assert "\na.py:4:18: DL204" in result.output and "\na.py:3:1: DL101" in result.output
    assert "dllint: a.py: cannot write the fixed file: Read-only file system" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]  # no temporary file left
    assert (tmp_path / "a.py").read_text() == LOOP


SIGNALLED_WRITE = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a pytest-xdist worker starts its children with SIGINT ignored
if sys.argv[2] != "SIGINT":  # and a run under nohup with SIGHUP ignored: the test is of the usual effect
    signal.signal(getattr(signal, sys.argv[2]), signal.SIG_DFL)
import dllint.atomic as atomic
from dllint.cache import FORMAT as CACHE_FORMAT
real_fsync = os.fsync
def fsync_then_signal(fd):
    real_fsync(fd)
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))  # arrives while the temporary file exists
atomic.os.fsync = fsync_then_signal
atomic.write_atomic(sys.argv[1], b"new content\\n")
print("survived")
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_a_write_leaves_no_temporary_file(tmp_path, name):
    """The signal is held until the new file is in place: then it has its usual effect."""
    target = tmp_path / "a.py"
    target.write_text("old content\n")
    done = subprocess.run([sys.executable, "-c", SIGNALLED_WRITE, str(target), name], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "survived" not in done.stdout  # the signal still ended it
    if name != "SIGINT":
        assert done.returncode == -getattr(signal, name)
    assert target.read_text() == "new content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signals_during_fix_leave_every_file_whole(tmp_path, name):
    """A real ``--fix`` over many files, signalled part-way: no temporary file, every file either
    as it was or fully fixed."""
    fixable = LOOP.replace("num_workers=4)", "num_workers=4, persistent_workers=False)")
    for i in range(120):
        (tmp_path / f"m{i}.py").write_text(fixable)
    fixed_text = None
    for delay in (0.4, 0.9):
        process = subprocess.Popen(
            [sys.executable, "-m", "dllint", "--no-cache", "--jobs", "1", "--fix", "--unsafe-fixes", "."],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            process.send_signal(getattr(signal, name))
        process.wait(timeout=30)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert not [n for n in names if n.endswith(".dllint-tmp")], names
        texts = {p.read_text() for p in tmp_path.glob("*.py")}
        changed = texts - {fixable}
        assert len(changed) <= 1, "a file was left half-written"
        fixed_text = fixed_text or next(iter(changed), None)
        assert changed <= {fixed_text}


def test_a_path_with_a_nul_byte_is_unreadable_not_a_crash(tmp_path):
    from dllint.files import Unreadable, read_bytes

    with pytest.raises(Unreadable, match="NUL byte"):
        read_bytes(str(tmp_path / "a\0b.py"))
    (tmp_path / "nul.py").write_text('_base_ = ["./a\\x00b.py"]\ntrain_dataloader = dict(batch_size=2, num_workers=64)\n')
    done = dllint("--no-cache", "nul.py", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr == "" and "nul.py:2:39: DL202" in done.stdout
