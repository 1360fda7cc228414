"""How the runner starts the harness: a new interpreter (``subprocess.Popen``), or a fork of a template.

By default :func:`start_harness` is exactly a ``subprocess.Popen`` of the harness in a session of
its own. Where :data:`TEMPLATE_ENV` names the Unix socket of a live template
(:mod:`dllint.probe.template`: an interpreter that has imported torch and the harness, started by
this process), the template forks the harness instead, and the run skips the second or so of CPU a
new interpreter spends importing torch. The test suite runs most of its hundreds of probe runs
this way; users do not set the variable.

What the forked harness gets is what a new interpreter would get: its own session (``os.setsid``),
the same three descriptors, the same environment, working directory and ``sys.argv``; the
template's own environment must equal the run's in every variable but the per-run ones
(:func:`per_run_keys`), so what Python fixes at start-up from the environment (``sys.flags``,
``sys.path``, the standard streams' encoding) is what the harness would have had. What differs,
and why each is harmless:

- Its parent is the template, not dllint. The template serves only the process that started it
  (checked with ``SO_PEERCRED``), so the harness is still a descendant of dllint:
  :class:`~dllint.probe.processes.ProcessTree` finds it and its descendants among dllint's
  descendants (the template itself was there before the run, so it is never killed), dllint stays
  the child subreaper that adopts the script's orphans (the template is not one), and the
  watchdog's record of dllint's descendants holds it. ``die_with_parent`` ties the harness to
  the template, which is tied to dllint (``PR_SET_PDEATHSIG``, and it leaves when dllint closes
  its pipe): the chain ends the harness when dllint dies.
- The template reaps the harness and sends its exit status over the request's connection:
  :class:`ForkedHarness` is the Popen-like handle that reads it. If dllint closes the connection
  while the harness runs, the template kills the harness's process group.
- ``report.startup_s`` (importing torch) is a few milliseconds instead of a second.
- Hash randomization: the harness keeps the template's ``PYTHONHASHSEED`` draw.
- What the template imported is frozen (``gc.freeze``): the harness's collections skip it, as they
  would skip nothing in a new interpreter; none of it is garbage, and walking it would copy the pages
  it shares with the template.
- The environment's own sitecustomize ran in the template, before the probe's hooks
  (:func:`dllint.probe.hooks.install_probe_hooks`) instead of after them; ``ps`` shows the template's
  command line.

Anything that keeps the template from forking (no template, a dead one, another's, an
environment that differs, a platform without ``fork`` and ``SCM_RIGHTS``) falls back to
``Popen``: the template can make a run cheaper, never make it fail. Launcher runs (``--launcher``)
always use ``Popen``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import IO, Union

import dllint.probe.descendants as descendants
import dllint.probe.guard as guard
from dllint.probe.interpreters import BOOT_DIR, PACKAGE_ROOT
from dllint.probe.launched import LAUNCH_ENV

TEMPLATE_ENV = "DLLINT_PROBE_TEMPLATE"  # the Unix socket of a template this process started
HARNESS_MODULE = "dllint.probe.harness_main"
REPLY_SECONDS = 10.0  # a live template forks in milliseconds; past this it is stuck, and Popen runs the harness
MESSAGE_BYTES = 1 << 20  # the largest request (an environment, an argument list) or reply


def base_environment() -> dict[str, str]:
    """The harness's environment before the run's own variables: the template runs in this one."""
    environment = dict(os.environ)
    environment["PYTHONDONTWRITEBYTECODE"] = "1"  # never leave __pycache__ in the user's tree
    # boot/ first: its sitecustomize installs the file guard in every Python process started under the probe.
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [BOOT_DIR, PACKAGE_ROOT, environment.get("PYTHONPATH")]))
    environment["PYTHONUNBUFFERED"] = "1"
    return environment


def per_run_keys() -> frozenset[str]:
    """The variables a run sets for its harness alone; the template's environment may differ in these only."""
    return frozenset({guard.SCRATCH_ENV, guard.EVENTS_ENV, guard.PROTECTED_ENV, descendants.ROLE_ENV, "TMPDIR",
                      LAUNCH_ENV, TEMPLATE_ENV, *guard.tracker_environment("scratch")})


def differing_keys(template: dict[str, str], run: dict[str, str], volatile: frozenset[str] = frozenset()) -> list[str]:
    """The variables other than the per-run ones (and ``volatile``: variables Python does not read at start-up
    that the template's owner changes as it goes) whose values differ between two environments."""
    ignored = per_run_keys() | volatile
    return sorted(key for key in template.keys() | run.keys()
                  if key not in ignored and template.get(key) != run.get(key))


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


def send_message(connection: socket.socket, message: object, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode("utf-8")
    if fds:
        socket.send_fds(connection, [data], fds)
    else:
        connection.sendall(data)


def decode_message(data: bytes) -> dict[str, object]:
    """One packet's JSON object; anything else is a protocol error (ValueError)."""
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError(f"not a message: {data[:80]!r}")
    return message


class ForkedHarness:
    """The Popen-like handle of a harness the template forked: its exit status comes over the connection.

    Unlike a Popen, closing it (or dropping it) ends the harness: the template kills what nobody waits for.
    """

    def __init__(self, connection: socket.socket, pid: int, args: list[str]) -> None:
        self.connection = connection
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._read(0.0)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            returncode = self._read(left)
            if returncode is not None:
                return returncode
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)

    def _read(self, timeout: float | None) -> int | None:
        if self.returncode is not None or self.connection.fileno() < 0:
            return self.returncode
        readable, _, _ = select.select([self.connection], [], [], timeout)
        if not readable:
            return None
        try:
            self.returncode = int(str(decode_message(self.connection.recv(MESSAGE_BYTES))["returncode"]))
        except (OSError, ValueError, KeyError):
            # The template died without a word: PR_SET_PDEATHSIG killed the harness with it.
            self.returncode = -signal.SIGKILL
        self.close()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:  # not reaped yet, so the pid is still the harness's
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self) -> None:
        """Done with it: a harness still running when the connection closes is killed by the template."""
        self.connection.close()


Harness = Union["subprocess.Popen[bytes]", ForkedHarness]


def start_harness(command: list[str], stdout: IO[bytes], stderr: IO[bytes], environment: dict[str, str],
                  forkable: bool = True) -> Harness:
    """Start the harness ``command`` in a session of its own: forked by the template where one serves
    this process (module docstring), else a new interpreter."""
    if forkable and can_fork() and environment.get(TEMPLATE_ENV):
        forked = _fork_from_template(environment[TEMPLATE_ENV], command, stdout, stderr, environment)
        if forked is not None:
            return forked
    return subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=environment,
        start_new_session=True,  # its own process group, killed as one
    )


def release(process: Harness) -> None:
    """After the run's cleanup: a forked harness's connection is closed (a Popen keeps today's behaviour)."""
    if isinstance(process, ForkedHarness):
        process.close()


def _fork_from_template(path: str, command: list[str], stdout: IO[bytes], stderr: IO[bytes],
                        environment: dict[str, str]) -> ForkedHarness | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.settimeout(REPLY_SECONDS)
        connection.connect(path)
        if not _started_by_me(connection):
            connection.close()
            return None
        with open(os.devnull, "rb") as stdin:
            request = {"argv": command, "env": environment, "cwd": os.getcwd()}
            send_message(connection, request, [stdin.fileno(), stdout.fileno(), stderr.fileno()])
        reply = decode_message(connection.recv(MESSAGE_BYTES))
        pid = reply.get("pid")
        if not isinstance(pid, int):  # the template declined (an environment that differs): nothing was forked
            connection.close()
            return None
        connection.setblocking(True)
        return ForkedHarness(connection, pid, command)
    except (OSError, ValueError):  # no template, a dead one, a broken reply: closing kills anything it forked
        connection.close()
        return None


def _started_by_me(connection: socket.socket) -> bool:
    """The template at the other end is this process's child, so what it forks is this process's descendant."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, _, _ = struct.unpack("3i", credentials)
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            parent = int(stream.read().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return parent == os.getpid()
