"""Errors the probe raises to its caller: one line each, never a traceback."""

from __future__ import annotations


class ProbeError(Exception):
    """The probe cannot run as asked (bad target, bad option). The message is one line."""


class ProbeUnavailable(ProbeError):
    """torch or psutil is missing: the probe is an optional extra."""


class ProbeInterrupted(Exception):
    """dllint received SIGTERM (or SIGINT) while the probe ran."""

    def __init__(self, signum: int) -> None:
        import signal

        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def require_probe_dependencies() -> None:
    """Fail early, with the install hint, when the probe's extra is not installed.

    Only checks that the modules can be found: importing torch costs seconds and
    the real import happens in the child process anyway.
    """
    import importlib.util

    missing = [name for name in ("torch", "psutil") if importlib.util.find_spec(name) is None]
    if missing:
        raise ProbeUnavailable(
            f"the runtime probe needs {' and '.join(missing)}: pip install 'dllint[probe]'"
        )
