"""The probe never changes the user's files: every write goes to its scratch directory or stops the script.

Installed in every Python process the probe starts (the harness, its
DataLoader workers, any Python the script launches, whatever its flags: see
:mod:`dllint.probe.interpreters`) through the ``sitecustomize`` in
``dllint/probe/boot``, before the script's first line.

**Where a path goes.** Every path argument is resolved the way the kernel will
resolve it (:meth:`FileGuard.resolve`): relative to its ``dir_fd`` when one is
given (the directory the descriptor names, read from ``/proc/self/fd``), else
to the current directory at the time of the call; symlinks in its parents
followed, the last component followed only by the operations that follow it;
``/proc/self/fd/N`` is the file it names. The scratch directory (``TMPDIR``
points inside it) is the script's: anything there may be created, changed and
removed. Outside it:

- ``open()`` (builtins and ``io``, which ``pathlib``, ``logging``, numpy and
  PIL use) in a writing mode, ``os.mkdir``/``os.makedirs``, ``torch.save``,
  ``torch.jit.save``, a shared ``torch.UntypedStorage.from_file`` and a new
  ``sqlite3`` database are **redirected** into the scratch directory; later
  reads of the same path read the redirected copy, so the script goes on as if
  it had written. An existing ``sqlite3`` database is opened read-only.
- Anything else that would change a file (``os.open`` for writing,
  ``os.remove``, ``os.rename``/``os.replace``, ``os.rmdir``, ``os.truncate``,
  ``os.chmod``, ``os.chown``, ``os.utime``, extended attributes, links, ``os.mkfifo``,
  ``os.mknod``, binding a Unix socket, ``shutil.rmtree``/``copy*``/``move``,
  ...) **stops the script** right there, with the attempt reported.

**The probe's own files** (its configuration and events, next to the scratch
directory) can be written only by the probe's own code: the script cannot
remove, replace or redirect them. Every process appends events through a
descriptor opened for each line (``O_NOFOLLOW``, never creating the file) and
closed again (:class:`EventFile`): none stays open for the script to forge lines
through. The variables that name these files and dllint's pid are taken when the
guard is installed (:func:`trusted_values`) and given to every program the
script starts as they were, whatever the script set since.

This is a guard against the accidents of ordinary training scripts, not a
sandbox against hostile code. Not covered: writes made by native code that
CPython never sees (an HDF5 or LMDB library writing through its own C calls,
``mmap`` of a file opened earlier), programs other than Python the script
starts (and the environment they give a Python they start), and code that kept a
reference to an ``os`` function from before the guard (a relative
``os.open(..., dir_fd=)`` there is judged against the current directory; ``posix.open``
is wrapped with ``os.open``). Every attempt is recorded as a ``write`` event for the report.
"""

from __future__ import annotations

import _thread
import builtins
import importlib.abc
import importlib.machinery
import io
import json
import os
import shutil
import socket
import sys
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any, NamedTuple
from urllib.parse import parse_qs, quote, unquote

SCRATCH_ENV = "DLLINT_PROBE_SCRATCH"
EVENTS_ENV = "DLLINT_PROBE_EVENTS"
PROTECTED_ENV = "DLLINT_PROBE_PROTECTED"  # dllint's pid: the script may not signal it (SIGSTOP would stop its clock)
SCRATCH_NAME = "scratch"  # the script's directory, inside the probe's own
# The variables that say where the probe's files are and whom not to signal: every child gets them as the probe set them.
OWN_VARIABLES = (SCRATCH_ENV, EVENTS_ENV, PROTECTED_ENV)

# Experiment trackers switched off through their documented environment variables.
TRACKER_ENVIRONMENT = {
    "WANDB_MODE": "disabled",  # Weights & Biases
    "NEPTUNE_MODE": "debug",  # Neptune: nothing stored, nothing sent
    "CLEARML_OFFLINE_MODE": "1",  # ClearML
    "COMET_OFFLINE_DIRECTORY": "",  # Comet's offline archive: set to the scratch directory
    "MLFLOW_TRACKING_URI": "",  # MLflow: a file store in the scratch directory
    "MPLCONFIGDIR": "",  # matplotlib's font cache
}

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ALWAYS_ALLOWED = ("/dev/", "/proc/")
_AT_FDCWD = (None, -1, -100)  # no dir_fd: CPython reports -1, Linux's AT_FDCWD is -100
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_THIS_FILE = os.path.abspath(__file__)
_STDLIB = os.path.dirname(os.__file__) + os.sep


class Change(NamedTuple):
    """An audit event that changes the file system: where its paths and their ``dir_fd`` are."""

    paths: tuple[int, ...]
    dir_fds: tuple[int | None, ...]  # the argument holding each path's dir_fd, if the event has one
    follows: tuple[bool, ...]  # whether the operation follows a symlink in the path's last component


_CHANGING_EVENTS = {
    "os.remove": Change((0,), (1,), (False,)),
    "os.rmdir": Change((0,), (1,), (False,)),
    "os.mkdir": Change((0,), (2,), (False,)),
    "os.rename": Change((0, 1), (2, 3), (False, False)),  # os.replace too
    "os.truncate": Change((0,), (None,), (True,)),
    "os.chmod": Change((0,), (2,), (True,)),
    "os.chown": Change((0,), (3,), (True,)),
    "os.utime": Change((0,), (3,), (True,)),
    # A hard link in the scratch directory to a user file would let the script write the user's file.
    "os.link": Change((0, 1), (2, 3), (True, False)),
    "os.symlink": Change((1,), (2,), (False,)),
    "os.setxattr": Change((0,), (None,), (True,)),  # follow_symlinks is not in the event: judged as followed
    "os.removexattr": Change((0,), (None,), (True,)),
    "os.chflags": Change((0,), (None,), (True,)),  # BSD, macOS
    "shutil.rmtree": Change((0,), (1,), (False,)),
    "shutil.copyfile": Change((1,), (None,), (True,)),
    "shutil.copymode": Change((1,), (None,), (True,)),
    "shutil.copystat": Change((1,), (None,), (True,)),
    "shutil.copytree": Change((1,), (None,), (True,)),
    "shutil.move": Change((1,), (None,), (True,)),
}


class WriteStopped(BaseException):
    """The script tried to change a file the probe cannot redirect; it is stopped here.

    A BaseException, so that the script's own ``except Exception`` cannot swallow it.
    """

    def __init__(self, attempt: str) -> None:
        super().__init__(attempt)
        self.attempt = attempt


def tracker_environment(scratch: str) -> dict[str, str]:
    values = dict(TRACKER_ENVIRONMENT)
    values["COMET_OFFLINE_DIRECTORY"] = os.path.join(scratch, "comet")
    values["MLFLOW_TRACKING_URI"] = "file:" + os.path.join(scratch, "mlruns")
    values["MPLCONFIGDIR"] = os.path.join(scratch, "matplotlib")
    return values


def _shown(path: Any) -> str:
    return repr(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else repr(path)


def descriptor_path(fd: int) -> str | None:
    """The path an open descriptor names (a directory for ``dir_fd``), or None where it cannot be known."""
    from dllint.probe.processes import PLATFORM

    try:
        if PLATFORM.proc_fs:
            return os.readlink(f"/proc/self/fd/{fd}")
        if sys.platform == "darwin":
            import fcntl

            return os.fsdecode(fcntl.fcntl(fd, 50, b"\0" * 1024).rstrip(b"\0"))  # F_GETPATH
    except (OSError, ValueError):
        pass
    return None


def _current_directory() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # removed under the script: nothing relative to it can be judged
        return None


def _called_by_probe() -> bool:
    """The code that asked for this file operation is the probe's own, not the script's: the first
    caller outside this module and the standard library (``os.makedirs``, ``shutil``) is in the probe."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and _passes_through(frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_PROBE_DIR)


def _passes_through(filename: str) -> bool:
    if filename == _THIS_FILE or filename.startswith("<frozen "):  # os, posixpath are frozen modules
        return True
    return filename.startswith(_STDLIB) and "-packages" not in filename


class FileGuard:
    def __init__(self, scratch: str, report: Callable[[dict[str, Any]], None]) -> None:
        self.scratch = os.path.realpath(scratch)
        # The probe's own directory (config, events, rank records): writable by the probe's code only.
        parent = os.path.dirname(self.scratch)
        self.own = parent if os.path.basename(self.scratch) == SCRATCH_NAME else None
        self.shadow_root = os.path.join(self.scratch, "writes")
        self.report = report
        self.phase: Callable[[], str] = lambda: ""  # the harness says "after the loops" once it emptied them
        self.local = _thread._local()  # per thread: `busy` while the guard does its own file operations
        self.original_open = io.open
        self.original_os_open = os.open
        self.original_mkdir = os.mkdir
        self.redirected = False  # once a write went to the scratch directory, reads look there first
        self.protected = {int(pid) for pid in os.environ.get(PROTECTED_ENV, "").split(",") if pid.isdigit()}

    @property
    def busy(self) -> bool:
        return getattr(self.local, "busy", False)

    @busy.setter
    def busy(self, value: bool) -> None:
        self.local.busy = value

    def passing(self, call: Callable[[], Any]) -> Any:
        """Run one of our own file operations (already checked) without the audit hook judging it again."""
        was, self.busy = self.busy, True
        try:
            return call()
        finally:
            self.busy = was

    # -- where a path goes -------------------------------------------------------
    def resolve(self, path: Any, dir_fd: Any = None, follow: bool = True) -> str | None:
        """The absolute path the kernel will act on for ``path``, or None where it cannot be known."""
        if isinstance(path, int):  # an open descriptor: the file it names
            named = descriptor_path(path)
            return "/proc/self/fd" if named is not None and not os.path.isabs(named) else named  # a pipe, a socket
        try:
            text = os.fsdecode(path)
        except (TypeError, ValueError):
            return None
        if not os.path.isabs(text):
            base = _current_directory() if dir_fd in _AT_FDCWD else descriptor_path(dir_fd)
            if base is None:
                return None
            text = os.path.join(base, text)
        head, tail = os.path.split(text.rstrip(os.sep) or os.sep)
        if follow or tail in ("", ".", ".."):
            return os.path.realpath(text)
        return os.path.join(os.path.realpath(head), tail)  # the link itself, not what it points to

    def inside(self, real: str | None) -> bool:
        if real is None:
            return False
        return real == self.scratch or real.startswith(self.scratch + os.sep) or real.startswith(_ALWAYS_ALLOWED)

    def allowed(self, path: Any, dir_fd: Any = None, follow: bool = True) -> bool:
        if not isinstance(path, (str, bytes, os.PathLike, int)):
            return True  # not a path at all
        real = self.resolve(path, dir_fd, follow)
        if self.inside(real):
            return True
        return bool(self.own and real and real.startswith(self.own + os.sep) and _called_by_probe())

    def shadow(self, path: Any) -> str:
        """Where the redirected copy of ``path`` lives, under ``scratch/writes``."""
        real = os.path.realpath(os.fsdecode(path))
        shadow = os.path.join(self.shadow_root, real.lstrip(os.sep))
        if os.path.realpath(shadow) != shadow:  # a symlink planted among the copies would lead back out
            self.stop("redirect", _shown(path))
        return shadow

    def _prepare(self, shadow: str) -> None:
        self.passing(lambda: os.makedirs(os.path.dirname(shadow), exist_ok=True))
        self.redirected = True

    def _copy_existing(self, path: Any, shadow: str) -> None:
        """Writing into the user's file (append, read-write, a shared map) starts from its content."""
        if not os.path.exists(shadow) and os.path.isfile(path):
            self.passing(lambda: shutil.copyfile(path, shadow))

    # -- recording ------------------------------------------------------------------
    def record(self, action: str, path: str, handled: str, note: str = "") -> str:
        phase = self.phase()
        text = f"{action}({path})" + "".join(f" {part}" for part in (note, phase) if part)
        self.report({"event": "write", "action": action, "path": path, "handled": handled,
                     "phase": phase, "location": _user_location(), "pid": os.getpid(), "text": text})
        return text

    def stop(self, action: str, shown: str) -> None:
        text = self.record(action, shown, "stopped")
        raise WriteStopped(text)

    # -- redirection ------------------------------------------------------------------
    def open(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        writing = any(flag in mode for flag in "wax+")
        # A read before any redirect costs nothing extra: datasets open many files.
        if self.busy or isinstance(file, int) or not (writing or self.redirected) or self.allowed(file):
            return self.original_open(file, mode, *args, **kwargs)
        shadow = self.shadow(file)
        if not writing:
            return self.original_open(shadow if os.path.exists(shadow) else file, mode, *args, **kwargs)
        self._prepare(shadow)
        if "a" in mode or "+" in mode:
            self._copy_existing(file, shadow)
        self.record("open", f"{_shown(file)}, {mode!r}", "redirected")
        return self.original_open(shadow, mode, *args, **kwargs)

    def os_open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        """``os.open``: its audit event does not carry ``dir_fd``, so the path is judged here."""
        if not self.busy and flags & _WRITE_FLAGS:
            if not self.allowed(path, dir_fd, follow=not flags & getattr(os, "O_NOFOLLOW", 0)):
                self.stop("os.open", _shown(path))
        fd: int = self.passing(lambda: self.original_os_open(path, flags, mode, dir_fd=dir_fd))
        return fd

    def mkdir(self, path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        if self.busy or self.allowed(path, dir_fd, follow=False):
            self.passing(lambda: self.original_mkdir(path, mode, dir_fd=dir_fd))
            return None
        if dir_fd not in _AT_FDCWD:
            self.stop("os.mkdir", _shown(path))  # relative to a directory of the user's: nowhere to redirect
        if os.path.exists(path):
            raise FileExistsError(17, "File exists", os.fsdecode(path))
        self._prepare(os.path.join(self.shadow(path), ""))
        self.record("os.mkdir", _shown(path), "redirected")
        return None

    def make_node(self, action: str, original: Callable[..., None]) -> Callable[..., None]:
        """``os.mkfifo``/``os.mknod`` (no audit event): free in the scratch directory, stopped elsewhere."""

        def make(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> None:
            if not self.busy and not self.allowed(path, dir_fd, follow=False):
                self.stop(action, _shown(path))
            return original(path, *args, dir_fd=dir_fd, **kwargs)

        return make

    def redirect_path(self, action: str, path: Any, keep_content: bool = False) -> Any:
        """For a writer that takes a path (``torch.save``): the path to write instead."""
        if not isinstance(path, (str, bytes, os.PathLike)) or self.allowed(path):
            return path
        shadow = self.shadow(path)
        self._prepare(shadow)
        if keep_content:
            self._copy_existing(path, shadow)
        self.record(action, _shown(path), "redirected")
        return shadow

    def read_path(self, path: Any) -> Any:
        """For a reader that takes a path (``torch.jit.load``): the redirected copy, if the script wrote one."""
        if not self.redirected or not isinstance(path, (str, bytes, os.PathLike)) or self.allowed(path):
            return path
        shadow = self.shadow(path)
        return shadow if os.path.exists(shadow) else path

    def sqlite_target(self, database: Any, uri: bool) -> tuple[Any, bool]:
        """Where ``sqlite3.connect(database, uri=uri)`` should go: a new database is redirected into the
        scratch directory, an existing one of the user's is opened read-only."""
        path = _sqlite_path(database, uri)
        if path is None or self.allowed(path):
            return database, uri
        if os.path.exists(path):
            self.record("sqlite3.connect", _shown(path), "redirected", note="read-only")
            return f"file:{quote(os.path.realpath(path))}?mode=ro", True
        return self.redirect_path("sqlite3.connect", path), False

    # -- the audit hook: everything the redirection does not cover ---------------------------
    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:
            return
        if event == "open":
            self._audit_open(args)
        elif event == "socket.bind":
            self._audit_bind(args)
        elif event in ("os.kill", "os.killpg") and self.protected:
            self._audit_signal(event, *args[:2])
        elif event == "sqlite3.connect":
            path = _sqlite_path(args[0], True) if args else None
            if path is not None and not self.allowed(path):
                self.stop("sqlite3.connect", _shown(path))
        else:
            change = _CHANGING_EVENTS.get(event)
            if change is not None:
                self._audit_change(event, change, args)

    def _audit_open(self, args: tuple[Any, ...]) -> None:
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if isinstance(path, int):
            return  # a file object on a descriptor already open: its opening was judged
        writing = (flags or 0) & _WRITE_FLAGS or (isinstance(mode, str) and any(flag in mode for flag in "wax+"))
        if writing and path is not None and not self.allowed(path):
            self.stop("open", f"{_shown(path)}, {mode!r}" if mode else _shown(path))

    def _audit_signal(self, event: str, target: int, signum: int) -> None:
        """No signal to dllint itself: a SIGSTOP would stop the clock that enforces --probe-timeout."""
        groups = set()
        for pid in self.protected if hasattr(os, "getpgid") else ():  # no process groups on Windows
            try:
                groups.add(os.getpgid(pid))
            except OSError:
                continue
        hit = abs(target) in groups if event == "os.killpg" or target < 0 else target in self.protected
        if hit:
            import signal

            name = signal.Signals(signum).name if signum in signal.Signals.__members__.values() else str(signum)
            self.stop(event, f"{target}, {name}")

    def _audit_bind(self, args: tuple[Any, ...]) -> None:
        sock, address = args
        if getattr(sock, "family", None) != getattr(socket, "AF_UNIX", None):
            return
        if isinstance(address, (str, bytes)) and address[:1] not in ("", "\0", b"", b"\0"):  # not abstract
            if not self.allowed(address, follow=False):
                self.stop("socket.bind", _shown(address))

    def _audit_change(self, event: str, change: Change, args: tuple[Any, ...]) -> None:
        paths = [args[index] for index in change.paths if index < len(args)]
        for index, follow, path in zip(change.dir_fds, change.follows, paths):
            dir_fd = args[index] if index is not None and index < len(args) else None
            if path is not None and not self.allowed(path, dir_fd, follow):
                self.stop(event.replace("os.rename", "os.rename/os.replace"), ", ".join(_shown(p) for p in paths))


def _sqlite_path(database: Any, uri: bool) -> str | None:
    """The file a ``sqlite3.connect`` opens for writing, or None (in memory, read-only, not a path)."""
    if not isinstance(database, (str, bytes, os.PathLike)):
        return None
    text = os.fsdecode(database)
    if text in ("", ":memory:"):
        return None
    if uri and text.startswith("file:"):
        location, _, query = text[5:].partition("?")
        if parse_qs(query).get("mode", ["rwc"])[-1] in ("ro", "memory"):
            return None
        if location.startswith("//"):
            location = "/" + location[2:].partition("/")[2]  # file://host/path
        return unquote(location)
    return text


def _user_location() -> str | None:
    from dllint.probe.callsite import is_library_file

    for frame in reversed(traceback.extract_stack()[:-3]):
        if not is_library_file(frame.filename):
            return f"{os.path.relpath(frame.filename)}:{frame.lineno}"
    return None


_active: FileGuard | None = None
_trusted: dict[str, str] = {}
_OS_OPEN = os.open  # taken before the guard wraps it: the probe's own appends are not the script's


def active() -> FileGuard | None:
    return _active


def install(scratch: str, report: Callable[[dict[str, Any]], None] | None = None) -> FileGuard:
    """Install the guard in this process (once; later calls return the same guard)."""
    global _active
    if _active is not None:
        if report is not None:
            _active.report = report
        return _active
    _trusted.update({name: os.environ[name] for name in OWN_VARIABLES if name in os.environ})
    _trusted[SCRATCH_ENV] = scratch
    guard = FileGuard(scratch, report or _event_file_reporter())
    builtins.open = io.open = guard.open
    replace_os_function("open", guard.os_open)  # tempfile, shutil.rmtree's fd walk
    replace_os_function("mkdir", guard.mkdir)  # os.makedirs and pathlib call os.mkdir
    for name in ("mkfifo", "mknod"):
        if hasattr(os, name):
            replace_os_function(name, guard.make_node(f"os.{name}", getattr(os, name)))
    sys.addaudithook(guard.audit)
    _watch_sqlite(guard)
    _active = guard
    return guard


def replace_os_function(name: str, wrapper: Callable[..., Any]) -> None:
    """``os.NAME = wrapper``, and the wrapper listed wherever the original was (``os.open in
    os.supports_dir_fd`` decides whether shutil, filelock and others pass ``dir_fd``)."""
    original = getattr(os, name)
    for supports in (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks, os.supports_effective_ids):
        if original in supports:
            supports.add(wrapper)
    setattr(os, name, wrapper)
    # posix.open is os.open under another name, and its audit event carries no dir_fd: wrapped there too.
    native = sys.modules.get(os.name)
    if native is not None and getattr(native, name, None) is original:
        setattr(native, name, wrapper)


def guard_torch_save(guard: FileGuard) -> None:
    """torch's writers to a path write through C++, past open() and the audit hook: redirect them."""
    from dllint.probe.internals import redirect_torch_writers

    redirect_torch_writers(guard.redirect_path, guard.read_path)


def _wrap_sqlite(module: Any, guard: FileGuard) -> None:
    original = getattr(module, "connect", None)
    if original is None or getattr(original, "_dllint_guarded", False):
        return

    def connect(database: Any, *args: Any, **kwargs: Any) -> Any:
        uri = kwargs.get("uri", args[6] if len(args) > 6 else False)
        target, uri = guard.sqlite_target(database, bool(uri))
        if len(args) > 6:
            args = (*args[:6], uri, *args[7:])
        else:
            kwargs["uri"] = uri
        return original(target, *args, **kwargs)

    connect._dllint_guarded = True  # type: ignore[attr-defined]
    module.connect = connect
    dbapi: Any = sys.modules.get("sqlite3.dbapi2")  # (a module: its connect is replaced)
    if dbapi is not None:
        dbapi.connect = connect


def _watch_sqlite(guard: FileGuard) -> None:
    """sqlite3 writes through its C library: its ``connect`` is wrapped once the module is imported."""
    after_import("sqlite3", lambda module: _wrap_sqlite(module, guard))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``callback(module)`` right after the module ``name`` is executed (once)."""

    def __init__(self, name: str, callback: Callable[[Any], None]) -> None:
        self.name = name
        self.callback = callback

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        original_exec, callback = spec.loader.exec_module, self.callback

        def exec_module(module: Any) -> None:
            original_exec(module)
            callback(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import(name: str, callback: Callable[[Any], None]) -> None:
    """Run ``callback`` on the module ``name`` once it is imported (now, if it already is)."""
    if name in sys.modules:
        callback(sys.modules[name])
    elif not any(isinstance(finder, _AfterImport) and finder.name == name for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, callback))


class EventFile:
    """The events file, opened for each write and closed again.

    No descriptor of it stays open while the script runs: the script cannot write
    forged lines through one, nor close it under the probe (a script that closes
    every descriptor). Opened without following a symlink and never created: the
    file is the probe's, made by the runner before the script ran.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, text: str, /) -> int:
        data = text.encode("utf-8")
        guard = _active
        try:
            guard.passing(lambda: self._append(data)) if guard is not None else self._append(data)
        except OSError:  # the file is gone (the run is over): nothing to tell
            pass
        return len(text)

    def _append(self, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = _OS_OPEN(self.path, flags)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def flush(self) -> None:
        """Every write is complete when it returns."""

    def close(self) -> None:
        """Nothing stays open."""


def _event_file_reporter() -> Callable[[dict[str, Any]], None]:
    """A reporter for processes other than the harness: append to the events file the
    probe named when this process started (:func:`trusted_values`), not one the script named since."""
    path = trusted_values().get(EVENTS_ENV) or os.environ.get(EVENTS_ENV)

    def report(event: dict[str, Any]) -> None:
        if path:
            EventFile(path).write(json.dumps(event, default=repr) + "\n")

    return report


def trusted_values() -> dict[str, str]:
    """The probe's own variables (scratch, events, dllint's pid) as they were when the guard was
    installed, before the script's first line: children get these, whatever the script did to
    ``os.environ`` or to the environment it passes (:func:`dllint.probe.interpreters.probe_environment`)."""
    return dict(_trusted)


def install_from_environment() -> FileGuard | None:
    scratch = os.environ.get(SCRATCH_ENV)
    return install(scratch) if scratch else None
