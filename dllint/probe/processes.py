"""Stopping and cleaning up the probe's processes, on every platform.

- :class:`StopSignals`: SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) stop a
  run; dllint then kills what it started, removes its directory and exits 128 + the signal
  (130, 143, 129).
- :class:`ProcessTree`: every process the harness started, found however it detached itself
  (its own session, a double fork), killed with SIGKILL at the end.
- :class:`Watchdog`: a small process in a session of its own that outlives a SIGKILLed dllint
  only as long as it takes to kill everything the probe started and remove its directory.
- :data:`PLATFORM`: which of the Linux pieces this platform has, detected once. Without a child
  subreaper (macOS, Windows) orphans are found through the watch and the probe's environment
  marker instead of by adoption; without ``PR_SET_PDEATHSIG`` the watchdog kills the harness.
  On Windows the script's process goes into a kill-on-close job object
  (:mod:`dllint.probe.winjob`), which holds everything it starts and dies with dllint; where
  the job cannot be made, cleanup goes on without it and the report says so in a note.
  Tests replace the record to run the degraded paths on Linux.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dllint.probe.errors import ProbeInterrupted

if TYPE_CHECKING:
    from dllint.probe.winjob import JobObject

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
WATCH_SECONDS = 0.5  # how often the watchdog records dllint's descendants
KILL_PATIENCE = 5.0  # seconds spent killing before giving up on a process


@dataclass(frozen=True)
class Platform:
    """The process features the probe's cleanup and guard lean on, where the platform has them."""

    subreaper: bool  # Linux prctl(PR_SET_CHILD_SUBREAPER): orphans are re-parented to dllint
    pdeathsig: bool  # Linux prctl(PR_SET_PDEATHSIG): the kernel kills the harness when dllint dies
    proc_fs: bool  # /proc/self/fd: the path a descriptor names (dir_fd), and PSS
    fork: bool  # os.fork: the fork start method
    process_groups: bool  # POSIX sessions and os.killpg
    job_object: bool = False  # Windows: a kill-on-close job object holds the script and all it starts


def detect_platform() -> Platform:
    linux = sys.platform.startswith("linux")
    return Platform(
        subreaper=linux,
        pdeathsig=linux,
        proc_fs=os.path.isdir("/proc/self/fd"),
        fork=hasattr(os, "fork"),
        process_groups=hasattr(os, "killpg"),
        job_object=sys.platform == "win32",
    )


PLATFORM = detect_platform()


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP stop the probe (raise ProbeInterrupted) until cleanup starts, then wait.

    Only in the main thread, where Python delivers signals; elsewhere the
    caller's own handling stays.
    """

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

    def __init__(self) -> None:
        self.armed = True
        self.received: int | None = None
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:  # noqa: ARG002 - signal handler signature
        self.received = self.received or signum
        if self.armed:
            self.armed = False
            raise ProbeInterrupted(signum)

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def disarm(self) -> None:
        self.armed = False

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def set_child_subreaper(on: bool) -> bool | None:
    """Linux: make this process adopt orphaned descendants (setsid'd, double-forked) so they can be found.

    Returns the previous setting, or None where it is not available.
    """
    import ctypes

    if not PLATFORM.subreaper:
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        previous = ctypes.c_int(0)
        if libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous)) != 0:
            return None
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0)
        return bool(previous.value)
    except (OSError, AttributeError):  # not Linux
        return None


class ProcessTree:
    """Every process the harness started, however it detached itself; all killed at the end.

    Descendants are collected while the run goes on (so one that leaves the
    process group is still known), and with this process as child subreaper
    any orphan among them becomes our child, where the sweep at the end finds it.
    On Windows the root process is put in a job object (:meth:`contain`) that
    kills the whole tree at the end, or when dllint dies.
    """

    def __init__(self, marker: tuple[str, str] | None = None) -> None:
        import psutil

        self.marker = marker  # without a subreaper, orphans are found by the probe's environment variable
        self.me = psutil.Process()
        self.before = {child.pid for child in self.me.children(recursive=True)}
        self.seen: dict[int, Any] = {}
        self.job: JobObject | None = None  # on Windows
        self.notes: list[str] = []  # what the cleanup had to do without, for the report

    def contain(self, process: subprocess.Popen[bytes]) -> None:
        """Right after the root process starts: where the platform has job objects, put it in one."""
        if not PLATFORM.job_object:
            return
        from dllint.probe.internals import windows_process_handle
        from dllint.probe.winjob import JobObject, JobUnavailable

        try:
            self.job = JobObject.containing(windows_process_handle(process))
        except JobUnavailable as error:
            self.notes.append(f"no job object for the script's processes ({error}): they are found and killed "
                              "one by one at the end, and a killed dllint would leave them running")

    def watch(self, root_pid: int) -> None:
        # The root is this process's child (or its template's), so one scan of the process table (psutil
        # reads every process's parent) finds the root, its descendants and the adopted orphans; a scan from
        # the root only where it is not among them.
        self._adopt_orphans()
        if root_pid in self.seen:
            return
        import psutil

        try:
            root = psutil.Process(root_pid)
            for process in [root, *root.children(recursive=True)]:
                self.seen.setdefault(process.pid, process)
        except psutil.Error:
            pass

    def _adopt_orphans(self, by_marker: bool = False) -> None:
        import psutil

        if by_marker and not PLATFORM.subreaper and self.marker is not None:
            for process in marked_processes(self.marker):
                self.seen.setdefault(process.pid, process)
        try:
            for process in self.me.children(recursive=True):
                if process.pid not in self.before:
                    self.seen.setdefault(process.pid, process)
        except psutil.Error:
            pass

    def alive(self) -> list[Any]:
        return [process for process in self.seen.values() if _running(process)]

    def kill_all(self, pgid: int, patience: float = KILL_PATIENCE) -> None:
        import psutil

        deadline = time.monotonic() + patience
        if self.job is not None:
            self.job.close()
        while True:
            self._adopt_orphans(by_marker=True)
            _kill_group(pgid)
            for process in self.alive():
                try:
                    process.kill()  # psutil checks the pid was not reused
                except psutil.Error:
                    pass
            self._reap()
            if not self.alive() and not (PLATFORM.process_groups and _live_group_members(pgid)) or time.monotonic() > deadline:
                self._reap()
                return
            time.sleep(0.02)

    def _reap(self) -> None:
        """Collect the exit status of adopted orphans, so that none stays a zombie."""
        if not PLATFORM.process_groups:  # not POSIX: no zombies (and no os.WNOHANG)
            return
        for pid in list(self.seen):
            try:
                os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):  # not our child, or already collected
                pass


def _live_group_members(pgid: int) -> list[int]:
    import psutil

    members = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(process.pid)
        except (OSError, psutil.Error):  # gone while we looked
            continue
    return members


def _running(process: Any) -> bool:
    import psutil

    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _kill_group(pgid: int) -> None:
    if PLATFORM.process_groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# -- the watchdog: cleanup that survives a SIGKILLed dllint ----------------------------------------


def _group_members(groups: set[int]) -> list[Any]:
    import psutil

    members = []
    for pid in (pid for pgid in (groups if PLATFORM.process_groups else ()) for pid in _live_group_members(pgid)):
        try:
            members.append(psutil.Process(pid))
        except psutil.Error:  # gone while we looked
            continue
    return members


def _with_descendants(processes: list[Any]) -> list[Any]:
    """``processes`` and every descendant of theirs still attached (one that left its group, say)."""
    import psutil

    found = {process.pid: process for process in processes}
    for process in processes:
        try:
            found.update((child.pid, child) for child in process.children(recursive=True))
        except psutil.Error:
            continue
    return list(found.values())


def marked_processes(marker: tuple[str, str]) -> list[Any]:
    """Live processes whose environment holds ``marker`` (name, value): every process started under
    the probe inherits the scratch directory's variable, however it detached itself."""
    import psutil

    name, value = marker
    found = []
    for process in psutil.process_iter():
        try:
            if process.pid != os.getpid() and process.environ().get(name) == value:
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


class Watchdog:
    """The parent's side of the watchdog process (see :func:`watch`)."""

    def __init__(self, workdir: str, marker: tuple[str, str]) -> None:
        read, self.pipe = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dllint.probe.processes", str(os.getpid()), workdir, *marker],
            stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,  # a closed terminal's SIGHUP or Ctrl-C does not reach it
            env={key: value for key, value in os.environ.items() if key != marker[0]},
        )
        os.close(read)

    def group(self, pgid: int) -> None:
        """A process group the probe started (the harness's, the launcher's): if dllint dies, the
        watchdog kills all of it, members started after its last look included."""
        try:
            os.write(self.pipe, b"group %d\n" % pgid)
        except OSError:
            pass

    def release(self) -> None:
        """dllint cleaned up itself: the watchdog leaves without doing anything."""
        try:
            os.write(self.pipe, b"done\n")
            os.close(self.pipe)
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def watch(parent: int, workdir: str, marker: tuple[str, str], commands: Any) -> None:
    """Until dllint (``parent``) says done or dies: record its descendants. If it died without
    saying done, kill the process groups it named, every process it started and every process
    bearing the probe's marker, with their descendants, then remove ``workdir``. ``commands`` is
    the pipe's read end: lines ``group PGID`` and ``done`` (EOF when dllint dies).

    The groups are what a poll cannot miss: a process the script started a moment before dllint
    died (after the last look at its descendants), with an emptied environment, is still in the
    harness's process group, unless it left it in that moment."""
    import shutil
    import threading

    import psutil

    said: list[bytes] = []
    groups: set[int] = set()
    ended = threading.Event()

    def listen() -> None:  # a blocking read in a thread: select() takes no pipe on Windows
        for line in commands:
            word, _, value = line.strip().partition(b" ")
            if word == b"group" and value.isdigit():
                groups.add(int(value))
            elif word == b"done":
                said.append(word)
                break
        ended.set()

    threading.Thread(target=listen, daemon=True).start()
    seen: dict[int, Any] = {}
    while not ended.wait(WATCH_SECONDS):
        try:
            for process in psutil.Process(parent).children(recursive=True):
                seen.setdefault(process.pid, process)  # psutil.Process.kill checks the pid was not reused
        except psutil.Error:
            break
    ended.wait(KILL_PATIENCE)  # dllint gone (psutil says so): its pipe's EOF follows
    if said and said[0] == b"done":
        return
    deadline = time.monotonic() + KILL_PATIENCE
    while time.monotonic() < deadline:
        for pgid in groups:
            _kill_group(pgid)
        known = [*seen.values(), *marked_processes(marker), *_group_members(groups)]
        living = [process for process in _with_descendants(known) if process.pid != os.getpid() and _running(process)]
        if not living:
            break
        for process in living:
            try:
                process.kill()
            except psutil.Error:
                pass
        time.sleep(0.05)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    for ignored in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, ignored):
            signal.signal(getattr(signal, ignored), signal.SIG_IGN)
    watch(int(sys.argv[1]), sys.argv[2], (sys.argv[3], sys.argv[4]), sys.stdin.buffer)
