"""A template: an interpreter that has imported torch and the harness, and forks harnesses on request.

``python -m dllint.probe.template SOCKET [VOLATILE...]`` (started by :func:`start_template`, in the environment
:func:`dllint.probe.launch.base_environment` gives: the harness's, less the per-run variables, so
the boot sitecustomize installs nothing here) imports the harness, then serves one fork request
per connection on the Unix socket ``SOCKET``: the harness's argv, environment and working
directory, with its stdin, stdout and stderr passed as descriptors (``SCM_RIGHTS``). It replies
with the harness's pid, then, once it has reaped it, its exit status (Popen's ``returncode``). A
request whose environment differs from the template's in other than the per-run variables, or
whose command is not the harness's, is declined, and the runner starts a new interpreter
(:mod:`dllint.probe.launch` says why each difference of a forked harness is harmless).

The forked child becomes what a new ``python -m dllint.probe.harness_main CONFIG`` would be: its
own session, the three descriptors, the run's environment (``os.environ`` and the C environment),
working directory, ``sys.argv``, ``sys.path[0]`` and ``__main__``; cached state a new interpreter
computes from the environment is reset (``tempfile.tempdir``; numpy's global random state, drawn
anew as at import); then the boot sitecustomize's work (:func:`dllint.probe.hooks.install_probe_hooks`)
and :func:`dllint.probe.harness_main.main`, which ends with ``os._exit``.

The template never outlives its owner: ``PR_SET_PDEATHSIG`` kills it when the owner dies, and it
leaves when its stdin (a pipe from the owner) closes, or on SIGTERM; leaving, it kills every
harness it forked (each is a process group) and reaps them. A connection closed while its harness
runs gets that harness killed. Linux only.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Any

from dllint.probe.harness import die_with_parent
from dllint.probe.launch import (
    HARNESS_MODULE,
    MESSAGE_BYTES,
    REPLY_SECONDS,
    TEMPLATE_ENV,
    base_environment,
    decode_message,
    differing_keys,
    send_message,
)

READY = b"ready\n"  # the template's one line on stdout once it serves
START_SECONDS = 120.0  # importing torch on a loaded machine


@dataclass
class Server:
    listener: socket.socket
    owner: int  # the read end of the owner's pipe (our stdin): EOF when the owner closes it or dies
    wakeup: tuple[int, int]  # SIGCHLD's self-pipe
    environment: dict[str, str]
    volatile: frozenset[str]  # variables the owner changes as it goes, which Python does not read at start-up
    children: dict[int, socket.socket] = field(default_factory=dict)  # harness pid -> its request's connection
    hung_up: set[int] = field(default_factory=set)  # harnesses killed because their owner closed the connection
    stopping: bool = False

    def descriptors(self) -> list[int]:
        """What a forked harness must not keep: the template's own descriptors."""
        return [self.listener.fileno(), *self.wakeup, *(c.fileno() for c in self.children.values() if c.fileno() >= 0)]

    def connections(self) -> list[socket.socket]:
        """The connections whose owner may still hang up on a running harness."""
        return [c for pid, c in self.children.items() if pid not in self.hung_up]


def serve(path: str, volatile: frozenset[str]) -> None:
    die_with_parent()  # the owner's pipe closing says the same, where its death came before this took effect
    environment = dict(os.environ)
    import torch  # noqa: F401 - the point of the template: every harness forked from here has it imported
    import dllint.probe.harness_main  # noqa: F401 - and the harness
    from dllint.probe.checks import all_checks

    all_checks()  # discovered once here, not in every harness
    # What is imported stays: out of the collector's sight, a harness's collections neither walk it nor copy
    # the pages its objects sit on (each write to a reference count copies a page the template shares).
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(8)
    wakeup = os.pipe()
    for fd in wakeup:
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup pipe hears of every exit
    server = Server(listener, sys.stdin.fileno(), wakeup, environment, volatile)
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "stopping", True))
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    try:
        while not server.stopping:
            _serve_once(server)
    finally:
        _stop_children(server)
        listener.close()
        os.unlink(path)


def _serve_once(server: Server) -> None:
    watched = [server.listener, server.owner, server.wakeup[0], *server.connections()]
    try:
        readable, _, _ = select.select(watched, [], [])
    except InterruptedError:
        return
    for ready in readable:
        if ready is server.listener:
            _accept(server)
        elif ready == server.owner:
            if not os.read(server.owner, 4096):
                server.stopping = True
        elif ready == server.wakeup[0]:
            while _drain(server.wakeup[0]):
                pass
        else:  # the owner closed a connection whose harness still runs: it is done with it
            assert isinstance(ready, socket.socket)
            if not ready.recv(MESSAGE_BYTES):
                _hang_up(server, next(pid for pid, c in server.children.items() if c is ready))
    _reap(server)


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except BlockingIOError:
        return False


def _hang_up(server: Server, pid: int) -> None:
    _kill_group(pid)
    server.hung_up.add(pid)


def _accept(server: Server) -> None:
    connection, _ = server.listener.accept()
    connection.settimeout(REPLY_SECONDS)  # the owner sends its request at once: a silent one must not stall the loop
    fds: list[int] = []
    try:
        if _peer(connection) != os.getppid():  # only the owner: a probed script must not start processes here
            raise ValueError("not the owner")
        data, fds, _, _ = socket.recv_fds(connection, MESSAGE_BYTES, 3)
        request = decode_message(data)
        refusal = _refusal(request, fds, server)
    except (OSError, ValueError):  # not the owner's, or cut short
        connection.close()
        _close(fds)
        return
    if refusal:
        _decline(connection, refusal, fds)
        return
    sys.stdout.flush()  # nothing buffered here may reach the harness's output
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError as error:  # no process to spare: the owner starts a new interpreter, or fails as it would
        _decline(connection, f"fork failed: {error}", fds)
        return
    if pid == 0:
        _become_harness(request, fds, server)
    _close(fds)
    server.children[pid] = connection
    try:
        send_message(connection, {"pid": pid})
    except OSError:  # the owner gave up waiting: it starts a new interpreter instead
        _hang_up(server, pid)


def _decline(connection: socket.socket, reason: str, fds: list[int]) -> None:
    try:
        send_message(connection, {"declined": reason})
    except OSError:  # the owner is gone: nothing to tell
        pass
    connection.close()
    _close(fds)


def _peer(connection: socket.socket) -> int:
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", credentials)[0])


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _refusal(request: dict[str, Any], fds: list[int], server: Server) -> str | None:
    argv, env = request.get("argv"), request.get("env")
    if len(fds) != 3 or not isinstance(argv, list) or not isinstance(env, dict) \
            or not isinstance(request.get("cwd"), str):
        return "not a fork request"
    if argv[:3] != [sys.executable, "-m", HARNESS_MODULE] or len(argv) != 4:
        return "not the harness's command"
    differing = differing_keys(server.environment, env, server.volatile)
    return f"environment differs: {', '.join(differing)}" if differing else None


def _become_harness(request: dict[str, Any], fds: list[int], server: Server) -> None:
    """In the forked child: become the harness a new interpreter would be; never return to the loop."""
    try:
        template = os.getppid()
        die_with_parent()
        if os.getppid() != template:  # the template died before that took effect
            os._exit(1)
        os.setsid()
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in {*fds, *server.descriptors()}:
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _fresh_interpreter_state(request["argv"][3], request["cwd"])
        from dllint.probe.hooks import install_probe_hooks
        import dllint.probe.harness_main as harness_main

        install_probe_hooks()
        harness_main.main(request["argv"][3])
    except BaseException:  # noqa: BLE001 - a harness that cannot start says why on its stderr, as Python would
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(1)  # main() leaves with os._exit(0): reaching here is a failure


def _fresh_interpreter_state(config_path: str, cwd: str) -> None:
    """What a new interpreter computes at start-up and this one computed for the template."""
    import dllint.probe.harness_main as harness_main

    sys.argv = [str(harness_main.__file__), config_path]
    sys.path[0] = cwd  # ``python -m`` puts the working directory first
    sys.modules["__main__"] = harness_main  # spawn's workers re-import __main__: the harness's, as with -m
    tempfile.tempdir = None  # TMPDIR is the run's now
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # a new interpreter draws its global state at import, not the template's


def _reap(server: Server) -> None:
    while server.children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = server.children.pop(pid, None)
        if connection is not None:
            try:
                send_message(connection, {"returncode": os.waitstatus_to_exitcode(status)})
            except OSError:  # the owner closed it: it did not wait for this status
                pass
            connection.close()


def _kill_group(pid: int) -> None:
    """The harness's process group, and the harness itself: a harness killed right after the
    fork may not have called ``setsid`` yet, and then has no group of its own."""
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _stop_children(server: Server) -> None:
    for pid in list(server.children):
        _kill_group(pid)
    for pid in list(server.children):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        server.children.pop(pid).close()


@dataclass
class Template:
    """The owner's side of a template process (:func:`start_template`)."""

    process: subprocess.Popen[bytes]
    socket_path: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, patience: float = 10.0) -> None:
        """Close its pipe: it kills and reaps what it forked, then leaves."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=patience)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_template(directory: str, volatile: tuple[str, ...] = ()) -> Template:
    """Start a template serving on ``directory``/template.sock and wait until it serves.

    ``volatile``: variables this process changes as it goes which Python does not read at start-up
    (pytest's ``PYTEST_CURRENT_TEST``): a run's harness gets their values of the moment, forked all the same.

    Point :data:`~dllint.probe.launch.TEMPLATE_ENV` at :attr:`Template.socket_path` for probe runs in
    this process to fork their harness from it. Raises RuntimeError if it does not start.
    """
    path = os.path.join(directory, "template.sock")
    environment = {key: value for key, value in base_environment().items() if key != TEMPLATE_ENV}
    process = subprocess.Popen([sys.executable, "-m", "dllint.probe.template", path, *volatile], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=environment)
    template = Template(process, path)
    assert process.stdout is not None
    readable, _, _ = select.select([process.stdout], [], [], START_SECONDS)
    started = bool(readable) and process.stdout.readline() == READY
    process.stdout.close()  # its one line is read
    if not started:
        template.stop(patience=1.0)
        raise RuntimeError(f"the probe's template did not start (exit status {process.returncode})")
    return template


if __name__ == "__main__":
    serve(sys.argv[1], frozenset(sys.argv[2:]))
