"""Stopping and cleaning up the probe's processes: the signals that stop a run, and the tree of
every process the harness started (found however it detached itself) killed at the end."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from dllint.probe.errors import ProbeInterrupted

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


class StopSignals:
    """SIGINT and SIGTERM stop the probe (raise ProbeInterrupted) until cleanup starts, then wait.

    Only in the main thread, where Python delivers signals; elsewhere the
    caller's own handling stays.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

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
    """

    def __init__(self) -> None:
        import psutil

        self.me = psutil.Process()
        self.before = {child.pid for child in self.me.children(recursive=True)}
        self.seen: dict[int, Any] = {}

    def watch(self, root_pid: int) -> None:
        import psutil

        try:
            root = psutil.Process(root_pid)
            for process in [root, *root.children(recursive=True)]:
                self.seen.setdefault(process.pid, process)
        except psutil.Error:
            pass
        self._adopt_orphans()

    def _adopt_orphans(self) -> None:
        import psutil

        try:
            for process in self.me.children(recursive=True):
                if process.pid not in self.before:
                    self.seen.setdefault(process.pid, process)
        except psutil.Error:
            pass

    def alive(self) -> list[Any]:
        import psutil

        living = []
        for process in self.seen.values():
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    living.append(process)
            except psutil.Error:
                continue
        return living

    def kill_all(self, pgid: int, patience: float = 5.0) -> None:
        import psutil

        deadline = time.monotonic() + patience
        while True:
            self._adopt_orphans()
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for process in self.alive():
                try:
                    process.kill()  # psutil checks the pid was not reused
                except psutil.Error:
                    pass
            self._reap()
            if not self.alive() and not _live_group_members(pgid) or time.monotonic() > deadline:
                self._reap()
                return
            time.sleep(0.02)

    def _reap(self) -> None:
        """Collect the exit status of adopted orphans, so that none stays a zombie."""
        for pid in list(self.seen):
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not our child, or already collected
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
