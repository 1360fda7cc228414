"""The file guard resolves every path the way the kernel will, covers the writers that bypass open(),
reaches Python children whatever their flags, and keeps the probe's own files out of the script's reach.

Most tests run the guard in-process (no torch) or in a small guarded Python process started with the
environment the runner gives the harness; one uses torch's writers.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap

import pytest

from dllint.probe import guard as guard_module
from dllint.probe import interpreters, processes
from dllint.probe.guard import FileGuard, WriteStopped
from dllint.probe.runner import EventLog, ProgressDisplay, _child_environment


@pytest.fixture
def layout():
    """A user's project with a file in it, and the probe's own directory with its scratch directory
    (under a short path, as the runner's: a Unix socket's path is at most 107 bytes)."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="dlg-"))
    yield from _layout(tmp_path)
    shutil.rmtree(tmp_path, ignore_errors=True)


def _layout(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "victim.txt").write_text("keep me")
    own = tmp_path / "probe"
    scratch = own / guard_module.SCRATCH_NAME
    (scratch / "tmp").mkdir(parents=True)
    (own / "events.jsonl").write_text("")
    yield project, own, scratch


@pytest.fixture
def file_guard(layout):
    _, _, scratch = layout
    events: list[dict] = []
    guard = FileGuard(str(scratch), events.append)
    guard.events = events
    return guard


def directory_fd(path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


# -- dir_fd names a directory: relative paths resolve against it, not the current directory ----------


ESCAPES = {
    "os.remove": lambda guard, fd: guard.audit("os.remove", ("victim.txt", fd)),
    "os.rmdir": lambda guard, fd: guard.audit("os.rmdir", ("victim.txt", fd)),
    "os.rename": lambda guard, fd: guard.audit("os.rename", ("victim.txt", "other.txt", fd, fd)),
    "os.mkdir": lambda guard, fd: guard.mkdir("new", dir_fd=fd),
    "os.symlink": lambda guard, fd: guard.audit("os.symlink", ("/etc/passwd", "link", fd)),
    "os.link": lambda guard, fd: guard.audit("os.link", ("victim.txt", "hard", fd, fd)),
    "os.chmod": lambda guard, fd: guard.audit("os.chmod", ("victim.txt", 0o777, fd)),
    "os.chown": lambda guard, fd: guard.audit("os.chown", ("victim.txt", -1, -1, fd)),
    "os.utime": lambda guard, fd: guard.audit("os.utime", ("victim.txt", None, None, fd)),
    "os.open": lambda guard, fd: guard.os_open("victim.txt", os.O_WRONLY | os.O_TRUNC, dir_fd=fd),
    "os.mkfifo": lambda guard, fd: guard.make_node("os.mkfifo", os.mkfifo)("fifo", dir_fd=fd),
    "os.mknod": lambda guard, fd: guard.make_node("os.mknod", os.mknod)("node", dir_fd=fd),
    "shutil.rmtree": lambda guard, fd: guard.audit("shutil.rmtree", ("victim.txt", fd)),
}


@pytest.mark.parametrize("event", ["os.setxattr", "os.removexattr", "os.chflags", "os.truncate", "shutil.copyfile"])
def test_other_changes_to_a_users_file_are_stopped(event, layout, file_guard):
    project, _, scratch = layout
    victim = str(project / "victim.txt")
    arguments = {"shutil.copyfile": (str(scratch / "x"), victim)}.get(event, (victim, "user.x", b"1", 0))
    with pytest.raises(WriteStopped, match=event.split(".")[-1]):
        file_guard.audit(event, arguments)


@pytest.mark.parametrize("action", sorted(ESCAPES))
def test_a_change_relative_to_a_users_directory_descriptor_is_stopped_wherever_the_cwd_is(
        action, layout, file_guard, monkeypatch):
    project, _, scratch = layout
    monkeypatch.chdir(scratch)  # the cwd is the scratch directory: judging against it would allow the change
    fd = directory_fd(project)
    try:
        with pytest.raises(WriteStopped, match=action.split(".")[-1]):
            ESCAPES[action](file_guard, fd)
    finally:
        os.close(fd)
    assert (project / "victim.txt").read_text() == "keep me"
    assert sorted(path.name for path in project.iterdir()) == ["victim.txt"]
    (event,) = file_guard.events
    assert event["handled"] == "stopped" and event["action"] in (action, "os.rename/os.replace")


@pytest.mark.parametrize("action", sorted(ESCAPES))
def test_the_same_change_relative_to_a_scratch_descriptor_is_free_from_a_users_cwd(
        action, layout, file_guard, monkeypatch):
    project, _, scratch = layout
    (scratch / "victim.txt").write_text("the script's own")
    monkeypatch.chdir(project)  # the cwd is the user's: judging against it would stop the script
    fd = directory_fd(scratch)
    try:
        if action == "os.open":
            os.close(ESCAPES[action](file_guard, fd))
        elif action in ("os.mkdir", "os.mkfifo", "os.mknod"):
            ESCAPES[action](file_guard, fd)  # really made, in the scratch directory
        else:
            ESCAPES[action](file_guard, fd)  # the audit hook lets it through
    finally:
        os.close(fd)
    assert file_guard.events == []
    assert (project / "victim.txt").read_text() == "keep me"


def test_proc_self_fd_paths_and_descriptors_are_the_files_they_name(layout, file_guard):
    project, _, scratch = layout
    fd = os.open(project / "victim.txt", os.O_RDONLY)
    try:
        with pytest.raises(WriteStopped):
            file_guard.os_open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_TRUNC)
        with pytest.raises(WriteStopped, match="os.truncate"):
            file_guard.audit("os.truncate", (fd, 0))  # ftruncate of a descriptor opened for reading
        with pytest.raises(WriteStopped, match="os.chmod"):
            file_guard.audit("os.chmod", (fd, 0o777, -1))
    finally:
        os.close(fd)
    read, write = os.pipe()
    try:
        file_guard.audit("open", (write, "w", os.O_WRONLY))  # io.open(fd, "w") on a pipe: nothing changes
        file_guard.audit("os.chmod", (read, 0o600, -1))  # not a file
    finally:
        os.close(read)
        os.close(write)
    mine = os.open(scratch / "mine.txt", os.O_CREAT | os.O_WRONLY)
    try:
        file_guard.audit("os.truncate", (mine, 0))
        os.close(file_guard.os_open(f"/proc/self/fd/{mine}", os.O_WRONLY))
    finally:
        os.close(mine)
    assert (project / "victim.txt").read_text() == "keep me"


def test_symlinks_in_parents_are_followed_and_a_removed_link_is_the_link(layout, file_guard):
    project, _, scratch = layout
    (scratch / "to_project").symlink_to(project)
    with pytest.raises(WriteStopped):
        file_guard.audit("os.remove", (str(scratch / "to_project" / "victim.txt"), -1))
    (scratch / "to_victim").symlink_to(project / "victim.txt")
    file_guard.audit("os.remove", (str(scratch / "to_victim"), -1))  # removes the link, in scratch
    with pytest.raises(WriteStopped):
        file_guard.audit("os.chmod", (str(scratch / "to_victim"), 0o777, -1))  # follows it to the user's file
    with pytest.raises(WriteStopped):
        file_guard.audit("os.link", (str(project / "victim.txt"), str(scratch / "hard"), -1, -1))


def test_sqlite_databases_go_to_scratch_or_open_read_only(layout, file_guard, monkeypatch):
    project, _, scratch = layout
    monkeypatch.chdir(project)
    assert file_guard.sqlite_target(":memory:", False) == (":memory:", False)
    assert file_guard.sqlite_target("file:x?mode=ro", True) == ("file:x?mode=ro", True)
    target, uri = file_guard.sqlite_target("new.db", False)
    assert not uri and target.startswith(str(scratch))
    (project / "data.db").write_bytes(b"")
    target, uri = file_guard.sqlite_target("data.db", False)
    assert uri and target.endswith("data.db?mode=ro")
    with pytest.raises(WriteStopped, match="sqlite3.connect"):
        file_guard.audit("sqlite3.connect", ("elsewhere.db",))  # a connect that bypassed the wrapper


def test_binding_a_unix_socket_outside_scratch_is_stopped(layout, file_guard, monkeypatch):
    project, _, scratch = layout
    monkeypatch.chdir(project)
    with socket.socket(socket.AF_UNIX) as sock:
        with pytest.raises(WriteStopped, match="socket.bind"):
            file_guard.audit("socket.bind", (sock, "server.sock"))
        file_guard.audit("socket.bind", (sock, "\0abstract"))  # no file
        file_guard.audit("socket.bind", (sock, str(scratch / "tmp" / "s.sock")))


def test_signals_to_dllint_are_stopped(layout, monkeypatch):
    _, _, scratch = layout
    monkeypatch.setenv(guard_module.PROTECTED_ENV, str(os.getppid()))
    guard = FileGuard(str(scratch), [].append)
    with pytest.raises(WriteStopped, match="SIGSTOP"):
        guard.audit("os.kill", (os.getppid(), 19))
    guard.audit("os.kill", (os.getpid(), 0))  # anyone else: the script's business


def test_the_probes_own_files_are_out_of_the_scripts_reach(layout, file_guard):
    _, own, _ = layout
    events = own / "events.jsonl"
    with pytest.raises(WriteStopped):
        file_guard.audit("os.remove", (str(events), -1))
    with pytest.raises(WriteStopped):
        file_guard.audit("os.rename", (str(own / "scratch" / "x"), str(events), -1, -1))
    with pytest.raises(WriteStopped):
        file_guard.audit("os.symlink", ("/etc/passwd", str(events), -1))
    # test code is not the probe's: an open for writing is redirected into scratch, not appended
    with file_guard.open(str(events), "a") as stream:
        stream.write("forged\n")
    assert events.read_text() == ""


def test_a_symlink_planted_among_the_redirected_copies_does_not_lead_back_to_the_users_file(layout, file_guard):
    project, _, scratch = layout
    victim = project / "victim.txt"
    planted = scratch / "writes" / str(victim.resolve()).lstrip(os.sep)
    planted.parent.mkdir(parents=True)
    planted.symlink_to(victim)
    for redirect in (lambda: file_guard.redirect_path("torch.save", str(victim)),
                     lambda: file_guard.open(str(victim), "w")):
        with pytest.raises(WriteStopped, match="redirect"):
            redirect()
    assert victim.read_text() == "keep me"


def test_events_are_never_appended_through_a_symlink(layout, tmp_path, monkeypatch):
    _, own, _ = layout
    target = tmp_path / "user.txt"
    target.write_text("mine\n")
    events = own / "events.jsonl"
    events.unlink()
    events.symlink_to(target)  # as a program outside the guard could
    monkeypatch.setenv(guard_module.EVENTS_ENV, str(events))
    guard_module._event_file_reporter()({"event": "note", "text": "x"})
    log = EventLog(str(events), ProgressDisplay(False))
    log.poll()
    assert target.read_text() == "mine\n" and log.events == []


# -- in a guarded Python process, as the harness and the script's children run ----------------------


def run_guarded(code: str, layout, *, timeout: float = 60) -> tuple[subprocess.CompletedProcess, list[dict]]:
    project, own, scratch = layout
    environment = _child_environment(str(scratch), str(own / "events.jsonl"))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=project, env=environment,
                          capture_output=True, text=True, timeout=timeout)
    lines = (own / "events.jsonl").read_text().splitlines()
    return proc, [json.loads(line) for line in lines]


def test_temporary_directories_and_multiprocessing_sockets_clean_up_without_a_stop(layout):
    proc, events = run_guarded("""
        import os, shutil, tempfile
        from multiprocessing.connection import Listener, Client
        with tempfile.TemporaryDirectory() as directory:
            os.makedirs(os.path.join(directory, "a", "b"))
            for name in ("a/x.txt", "a/b/y.txt", "z.txt"):
                open(os.path.join(directory, name), "w").write("x")
        handle, path = tempfile.mkstemp()
        os.close(handle)
        os.remove(path)
        fd = os.open(tempfile.gettempdir(), os.O_RDONLY)
        os.chdir("/")
        os.close(os.open("rel.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        os.remove("rel.txt", dir_fd=fd)
        listener = Listener(family="AF_UNIX")  # multiprocessing's own socket, in TMPDIR
        with Client(listener.address) as client, listener.accept() as server:
            client.send("ping")
            assert server.recv() == "ping"
        listener.close()
        print("done")
    """, layout)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n" and events == []


def test_writers_without_an_audit_event_of_their_own_are_covered(layout):
    project, _, _ = layout
    (project / "data.db").unlink(missing_ok=True)
    import sqlite3

    with sqlite3.connect(project / "data.db") as connection:
        connection.execute("create table t (x)")
        connection.execute("insert into t values (1)")
    connection.close()
    before = {path.name: path.read_bytes() for path in project.iterdir()}
    proc, events = run_guarded("""
        import os, socket, sqlite3
        from dllint.probe.guard import WriteStopped
        new = sqlite3.connect("new.db")
        new.execute("create table t (x)")
        new.commit()
        old = sqlite3.connect("data.db")
        assert old.execute("select x from t").fetchall() == [(1,)]
        try:
            old.execute("insert into t values (2)")
            old.commit()
        except sqlite3.OperationalError as error:
            print("read-only:", error)
        for attempt in (lambda: os.mkfifo("fifo"), lambda: os.mknod("node"),
                        lambda: socket.socket(socket.AF_UNIX).bind("server.sock")):
            try:
                attempt()
            except WriteStopped as stop:
                print("stopped:", stop.attempt)
    """, layout)
    assert proc.returncode == 0, proc.stderr
    assert "read-only: attempt to write a readonly database" in proc.stdout
    assert [line.split("(")[0] for line in proc.stdout.splitlines() if line.startswith("stopped")] == [
        "stopped: os.mkfifo", "stopped: os.mknod", "stopped: socket.bind"]
    assert {path.name: path.read_bytes() for path in project.iterdir()} == before
    handled = [(event["action"], event["handled"]) for event in events]
    assert handled[:2] == [("sqlite3.connect", "redirected"), ("sqlite3.connect", "redirected")]
    assert "read-only" in events[1]["text"]


CHILD = "import os; open('child.txt', 'w').write('x'); os.remove('victim.txt')"


@pytest.mark.parametrize("how", ["-I", "-E", "-S", "-Esc", "env={}", "-m", "script"])
def test_python_children_are_guarded_whatever_their_flags_and_environment(how, layout):
    project, _, _ = layout
    (project / "child_module.py").write_text(CHILD)
    command = {
        "-I": f"[sys.executable, '-I', '-c', {CHILD!r}]",
        "-E": f"[sys.executable, '-E', '-c', {CHILD!r}]",
        "-S": f"[sys.executable, '-S', '-c', {CHILD!r}]",
        "-Esc": f"[sys.executable, '-Esc', {CHILD!r}]",
        "env={}": f"[sys.executable, '-c', {CHILD!r}]",
        "-m": "[sys.executable, '-E', '-m', 'child_module']",  # -I would not find it (no cwd on sys.path)
        "script": "[sys.executable, '-E', 'child_module.py']",
    }[how]
    environment = "{}" if how == "env={}" else "None"
    proc, events = run_guarded(f"""
        import subprocess, sys
        child = subprocess.run({command}, env={environment}, capture_output=True, text=True, cwd=".")
        print(child.returncode, child.stderr.strip().splitlines()[-1:])
    """, layout)
    assert proc.returncode == 0, proc.stderr
    assert "WriteStopped: os.remove('victim.txt')" in proc.stdout
    assert (project / "victim.txt").read_text() == "keep me"
    assert not (project / "child.txt").exists()
    assert [(event["action"], event["handled"]) for event in events] == [("open", "redirected"),
                                                                         ("os.remove", "stopped")]


def test_a_rewritten_command_line_keeps_flags_and_program():
    line = interpreters.split_command_line(["python3", "-u", "-X", "dev", "-Ic", "print(1)", "a", "b"])
    assert line == interpreters.CommandLine(["-u", "-X", "dev", "-I"], "-c", "print(1)", ["a", "b"])
    assert interpreters.split_command_line(["python", "-W", "ignore", "t.py", "-c"]).target == "t.py"
    assert interpreters.split_command_line(["python", "--version"]).mode is None


def test_torch_shared_maps_and_saves_leave_the_users_files_unchanged(layout):
    pytest.importorskip("torch")
    project, _, _ = layout
    (project / "data.bin").write_bytes(bytes(8))
    before = {path.name: path.read_bytes() for path in project.iterdir()}
    proc, events = run_guarded("""
        import torch
        from dllint.probe.guard import active, guard_torch_save
        guard_torch_save(active())
        storage = torch.UntypedStorage.from_file("data.bin", shared=True, nbytes=8)
        storage[0] = 7
        tensor = torch.from_file("data.bin", shared=True, size=8, dtype=torch.uint8)
        tensor[1] = 9
        torch.save({}, "state.pt")
        assert torch.load("state.pt") == {}  # read back from the redirected copy
    """, layout, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert {path.name: path.read_bytes() for path in project.iterdir()} == before
    assert [event["action"] for event in events] == [  # torch.jit.save: tests/probe/test_internals.py
        "torch.UntypedStorage.from_file", "torch.from_file", "torch.save"]


# -- platforms: the degraded paths, simulated on Linux -----------------------------------------------


def test_without_a_subreaper_the_prctl_is_not_called(monkeypatch):
    monkeypatch.setattr(processes, "PLATFORM", processes.Platform(False, False, True, True, True))
    assert processes.set_child_subreaper(True) is None


def test_without_proc_a_descriptor_is_unknown_and_its_changes_are_stopped(layout, file_guard, monkeypatch):
    project, _, scratch = layout
    monkeypatch.setattr(processes, "PLATFORM", processes.Platform(True, True, False, True, True))
    monkeypatch.setattr(sys, "platform", "linux")
    fd = directory_fd(scratch)
    try:
        assert guard_module.descriptor_path(fd) is None
        with pytest.raises(WriteStopped):  # unknown: judged as outside, never as free
            file_guard.audit("os.remove", ("x", fd))
    finally:
        os.close(fd)


def test_only_the_probes_own_code_writes_the_probes_own_files(layout, file_guard):
    _, own, _ = layout
    from dllint.probe import ranks

    record = str(own / "ranks" / "rank0.alive")
    assert file_guard.allowed(record) is False  # asked by this test: the script's side
    namespace: dict = {}
    # A caller in one of the probe's modules, reaching the guard through the standard library as
    # ranks' os.makedirs does (os is a frozen module).
    exec(compile("import os\ndef ask(guard, path):\n    return guard.allowed(path)\n", ranks.__file__, "exec"), namespace)
    assert namespace["ask"](file_guard, record) is True
    assert namespace["ask"](file_guard, str(layout[0] / "victim.txt")) is False  # never the user's files


def test_the_reported_escape_from_dev_is_stopped(layout, monkeypatch):
    project, _, scratch = layout
    proc, events = run_guarded("""
        import os
        from dllint.probe.guard import WriteStopped
        fd = os.open(".", os.O_RDONLY)
        os.chdir("/dev")  # /dev is always writable: judged against the cwd, both calls passed
        for attempt in (lambda: os.remove("victim.txt", dir_fd=fd),
                        lambda: os.open("victim.txt", os.O_WRONLY | os.O_TRUNC, dir_fd=fd)):
            try:
                attempt()
            except WriteStopped as stop:
                print(stop.attempt)
    """, layout)
    assert proc.stdout.splitlines() == ["os.remove('victim.txt')", "os.open('victim.txt')"], proc.stderr
    assert (project / "victim.txt").read_text() == "keep me"
    assert [event["handled"] for event in events] == ["stopped", "stopped"]


def test_filelock_works_in_the_scratch_directory(layout):
    pytest.importorskip("filelock")
    proc, events = run_guarded("""
        import os, tempfile, filelock
        path = os.path.join(tempfile.gettempdir(), "x.lock")
        for lock in (filelock.FileLock(path), filelock.SoftFileLock(path + "2")):
            with lock:
                pass
        print("locked")
        assert os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd  # libraries still use dir_fd
        assert os.execve in os.supports_fd
    """, layout)
    assert proc.stdout == "locked\n" and events == [], proc.stderr


def test_the_spawned_workers_of_a_rewritten_child_are_guarded_too(layout):
    project, _, _ = layout
    (project / "pool.py").write_text(textwrap.dedent("""
        import multiprocessing, os

        def work(x):
            open("pool.txt", "w").write("x")
            return x * 2

        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                print(pool.map(work, [1, 2]))
    """))
    proc, events = run_guarded("""
        import subprocess, sys
        child = subprocess.run([sys.executable, "-E", "pool.py"], capture_output=True, text=True, timeout=60)
        print(child.stdout.strip(), child.stderr[-300:])
    """, layout)
    assert proc.stdout.strip() == "[2, 4]", proc.stdout + proc.stderr
    assert not (project / "pool.txt").exists()
    assert {event["action"] for event in events} == {"open"} and len({event["pid"] for event in events}) >= 1
