"""The probe's own variables, descriptors and processes out of the script's reach, and a probe
that does not finish never passing (issue 36): each through a real ``dllint --probe``."""

from __future__ import annotations

import pathlib
import random
import subprocess
import sys
import time

import psutil
import pytest
from probe_helpers import write_script

# popen_harness: what a new interpreter does (escape, trust, robustness, cleanup, startup) is the subject here
pytestmark = [pytest.mark.probe, pytest.mark.popen_harness]


def dllint(cwd: pathlib.Path, *args: str, timeout: float = 120, prelude: str = "") -> subprocess.CompletedProcess:
    """``dllint ARGS`` in a real process (``prelude`` runs first: a constant the test shortens)."""
    command = [sys.executable, "-m", "dllint", *args] if not prelude else [
        sys.executable, "-c", f"{prelude}; from dllint.cli import main; main()", *args]
    return subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def processes_with(argv: list[str]) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if process.info["cmdline"] == argv:
                found.append(process)
        except psutil.Error:
            continue
    return found


ATTACKS = """
    import posix, subprocess, tempfile
    user = os.path.abspath("userdir")
    # The probe's variables pointed at the user's files, then a Python child started with them.
    os.environ["DLLINT_PROBE_EVENTS"] = os.path.abspath("stolen.jsonl")
    os.environ["DLLINT_PROBE_SCRATCH"] = user
    child = f"open({os.path.join(user, 'child.txt')!r}, 'w').write('written')"
    subprocess.run([sys.executable, "-c", child], env=dict(os.environ), check=False)
    subprocess.run(["sh", "-c", f"{sys.executable} -c \\"{child}\\""], check=False)  # through a shell, os.environ's
    # A file created relative to a directory of the user's, from a working directory in scratch.
    directory = os.open(user, os.O_RDONLY)
    os.chdir(tempfile.gettempdir())
    try:
        posix.open("made.txt", os.O_CREAT | os.O_WRONLY, dir_fd=directory)
    except BaseException:  # the guard's stop
        pass
    # Report lines forged through any descriptor of the events file, then every descriptor closed.
    for fd in range(3, 1024):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("events.jsonl"):
                os.write(fd, b'[1, 2]\\n"text"\\n{"event": "note", "loader": null, "text": "FORGED"}\\n')
        except OSError:
            pass
    os.closerange(3, 65536)
    for batch in DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4):
        pass
    raise RuntimeError("\\x1b]0;TITLE\\x07\\x1b[2Jboom")
"""


def test_the_script_cannot_redirect_a_childs_guard_forge_events_or_break_the_probe(tmp_path):
    (tmp_path / "userdir").mkdir()
    (tmp_path / "stolen.jsonl").write_text("")
    script = write_script(tmp_path, ATTACKS)
    result = dllint(tmp_path, "--probe", str(script), "--probe-timeout", "60")
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1), output
    assert (tmp_path / "stolen.jsonl").read_text() == ""  # the child's events went to the probe
    assert sorted(path.name for path in (tmp_path / "userdir").iterdir()) == []  # child.txt redirected, made.txt stopped
    assert "os.open('made.txt')" in output  # the dir_fd write, reported as stopped
    assert output.count(f"{tmp_path / 'userdir' / 'child.txt'}") >= 2  # both children's writes, redirected, reported
    assert "FORGED" not in output
    assert "loader 1 at " in result.stdout and "first batch:" in result.stdout  # measured after closerange
    assert "boom" in result.stdout and "\x1b" not in output and "\x07" not in output
    assert "\\x1b]0;TITLE\\x07\\x1b[2Jboom" in result.stdout  # shown, not obeyed


HANGS_IN_A_WORKER = """
    class Hangs(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            time.sleep(600)
            return index

    if __name__ == "__main__":
        for batch in DataLoader(Hangs(), num_workers=1):
            pass
"""


@pytest.mark.parametrize(("body", "timeout"), [
    ("for batch in DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4):\n    pass\n", "1e-300"),
    (HANGS_IN_A_WORKER, "3"),
])
def test_a_probe_that_times_out_exits_2_and_never_says_all_checks_passed(tmp_path, body, timeout):
    script = write_script(tmp_path, body)
    result = dllint(tmp_path, "--probe", str(script), "--probe-timeout", timeout)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "All checks passed" not in result.stdout
    assert "the probe did not finish (timed out after" in result.stderr


def test_a_launcher_that_never_starts_python_is_reported_as_such_in_time(tmp_path):
    script = write_script(tmp_path, "print('never run')\n")
    started = time.monotonic()
    result = dllint(tmp_path, "--probe", str(script), "--launcher", "sh -c 'sleep 600'", "--probe-timeout", "1",
                    prelude="import dllint.probe.runner as runner; runner.STARTUP_SECONDS = 2")
    output = result.stdout + result.stderr
    assert time.monotonic() - started < 60
    assert result.returncode == 2, output
    assert "the launcher started no probed rank within 3 s (--probe-timeout 1 s + 2 s to start)" in output
    assert "timed out after 1 s" not in output and "exited with status" not in output
    assert "All checks passed" not in output


def test_sigkill_leaves_no_process_the_script_started_a_moment_before(tmp_path):
    """Processes started every 20 ms with an emptied environment (no probe marker): those started
    after the watchdog's last look die with the harness's process group."""
    argv = ["sleep", f"600.{random.randrange(10**8, 10**9)}"]
    script = write_script(tmp_path, f"""
        import subprocess
        while True:
            subprocess.Popen(["sh", "-c", "exec env -i {' '.join(argv)}"])
            time.sleep(0.02)
    """)
    probe = subprocess.Popen([sys.executable, "-m", "dllint", "--probe", str(script), "--probe-timeout", "120"],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(processes_with(argv)) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(argv), "the script should be starting its processes"
    finally:
        probe.kill()  # SIGKILL: no handler runs; the watchdog cleans up
        probe.wait(timeout=10)
    deadline = time.monotonic() + 15
    while processes_with(argv) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = processes_with(argv)
    for process in left:
        process.kill()
    assert left == []
