"""The probe never changes the user's files: every write goes to its scratch directory or stops the script.

Installed in every Python process the probe starts (the harness, its
DataLoader workers, any Python the script launches) through the
``sitecustomize`` in ``dllint/probe/boot``, before the script's first line:

- ``open()`` (builtins and ``io``, which ``pathlib``, ``logging``, numpy and
  PIL use) in a writing mode, ``os.mkdir``/``os.makedirs`` and ``torch.save``
  to a path are **redirected** into the scratch directory; later reads of the
  same path read the redirected copy, so the script goes on as if it had
  written. The copy is deleted with the scratch directory.
- Anything else that would change a file outside the scratch directory and
  that CPython reports to audit hooks (``os.open`` for writing, ``os.remove``,
  ``os.rename``/``os.replace``, ``os.rmdir``, ``os.truncate``, ``os.chmod``,
  ``os.utime``, links, ``shutil.rmtree``, ...) **stops the script** right there,
  with the attempt reported.

Not covered: writes made by native code that CPython never sees (an HDF5 or
LMDB library writing through its own C calls, a subprocess running another
program). Every attempt is recorded as a ``write`` event for the report.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import sys
import traceback
from collections.abc import Callable
from typing import Any

SCRATCH_ENV = "DLLINT_PROBE_SCRATCH"
EVENTS_ENV = "DLLINT_PROBE_EVENTS"

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
# Audit events that change the file system, and which of their arguments are paths.
_CHANGING_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),  # os.replace too
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (1,),
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


class FileGuard:
    def __init__(self, scratch: str, report: Callable[[dict[str, Any]], None]) -> None:
        self.scratch = os.path.realpath(scratch)
        self.shadow_root = os.path.join(self.scratch, "writes")
        self.report = report
        self.phase: Callable[[], str] = lambda: ""  # the harness says "after the loops" once it emptied them
        self.busy = False  # our own file operations must not re-enter the hook
        self.original_open = io.open
        self.original_mkdir = os.mkdir
        self.redirected = False  # once a write went to the scratch directory, reads look there first

    # -- where a path may go -------------------------------------------------------
    def allowed(self, path: Any) -> bool:
        if isinstance(path, int):
            return True  # an open file descriptor: its opening was checked
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return True  # not a path at all
        return real == self.scratch or real.startswith(self.scratch + os.sep) or real.startswith(_ALWAYS_ALLOWED)

    def shadow(self, path: Any) -> str:
        real = os.path.realpath(os.fsdecode(path))
        return os.path.join(self.shadow_root, real.lstrip(os.sep))

    def _prepare(self, shadow: str) -> None:
        self.busy = True
        try:
            os.makedirs(os.path.dirname(shadow), exist_ok=True)
        finally:
            self.busy = False
        self.redirected = True

    # -- recording ------------------------------------------------------------------
    def record(self, action: str, path: str, handled: str) -> str:
        phase = self.phase()
        text = f"{action}({path})" + (f" {phase}" if phase else "")
        self.report({"event": "write", "action": action, "path": path, "handled": handled,
                     "phase": phase, "location": _user_location(), "pid": os.getpid(), "text": text})
        return text

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
        if ("a" in mode or "+" in mode) and not os.path.exists(shadow) and os.path.isfile(file):
            self.busy = True
            try:
                shutil.copyfile(file, shadow)  # appending to the user's file starts from its content
            finally:
                self.busy = False
        self.record("open", f"{_shown(file)}, {mode!r}", "redirected")
        return self.original_open(shadow, mode, *args, **kwargs)

    def mkdir(self, path: Any, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        if self.busy or self.allowed(path) or kwargs.get("dir_fd") is not None:
            return self.original_mkdir(path, mode, *args, **kwargs)
        if os.path.isdir(path) or os.path.exists(path):
            raise FileExistsError(17, "File exists", os.fsdecode(path))
        self._prepare(os.path.join(self.shadow(path), ""))
        self.record("os.mkdir", _shown(path), "redirected")
        return None

    def redirect_path(self, action: str, path: Any) -> Any:
        """For a writer that takes a path (``torch.save``): the path to write instead."""
        if not isinstance(path, (str, bytes, os.PathLike)) or self.allowed(path):
            return path
        shadow = self.shadow(path)
        self._prepare(shadow)
        self.record(action, _shown(path), "redirected")
        return shadow

    # -- the audit hook: everything the redirection does not cover ---------------------------
    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (flags or 0) & _WRITE_FLAGS or (isinstance(mode, str) and any(flag in mode for flag in "wax+"))
            if writing and path is not None and not self.allowed(path):
                self.stop("open", f"{_shown(path)}, {mode!r}" if mode else _shown(path))
            return
        positions = _CHANGING_EVENTS.get(event)
        if positions is None:
            return
        paths = [args[index] for index in positions if index < len(args)]
        if any(path is not None and not self.allowed(path) for path in paths):
            self.stop(event.replace("os.rename", "os.rename/os.replace"), ", ".join(_shown(path) for path in paths))

    def stop(self, action: str, shown: str) -> None:
        text = self.record(action, shown, "stopped")
        raise WriteStopped(text)


def _user_location() -> str | None:
    from dllint.probe.callsite import is_library_file

    for frame in reversed(traceback.extract_stack()[:-3]):
        if not is_library_file(frame.filename):
            return f"{os.path.relpath(frame.filename)}:{frame.lineno}"
    return None


_active: FileGuard | None = None


def active() -> FileGuard | None:
    return _active


def install(scratch: str, report: Callable[[dict[str, Any]], None] | None = None) -> FileGuard:
    """Install the guard in this process (once; later calls return the same guard)."""
    global _active
    if _active is not None:
        if report is not None:
            _active.report = report
        return _active
    guard = FileGuard(scratch, report or _event_file_reporter())
    builtins.open = io.open = guard.open  # type: ignore[assignment]
    os.mkdir = guard.mkdir  # type: ignore[assignment]  # os.makedirs and pathlib call os.mkdir
    sys.addaudithook(guard.audit)
    _active = guard
    return guard


def guard_torch_save(guard: FileGuard) -> None:
    """torch.save to a path writes through C++, past open() and the audit hook: redirect it."""
    import torch
    import torch.serialization

    original = torch.serialization.save
    if getattr(original, "_dllint_guarded", False):
        return

    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        return original(obj, guard.redirect_path("torch.save", f), *args, **kwargs)

    save._dllint_guarded = True  # type: ignore[attr-defined]
    torch.save = torch.serialization.save = save


def _event_file_reporter() -> Callable[[dict[str, Any]], None]:
    """A reporter for processes other than the harness: append to the events file."""
    path = os.environ.get(EVENTS_ENV)

    def report(event: dict[str, Any]) -> None:
        if not path:
            return
        guard = _active
        if guard is not None:
            guard.busy = True
        try:
            with io.open(path, "a", encoding="utf-8") as stream:  # the events file is in the scratch directory
                stream.write(json.dumps(event, default=repr) + "\n")
        except OSError:
            pass
        finally:
            if guard is not None:
                guard.busy = False

    return report


def install_from_environment() -> FileGuard | None:
    scratch = os.environ.get(SCRATCH_ENV)
    return install(scratch) if scratch else None
