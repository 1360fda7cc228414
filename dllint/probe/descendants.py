"""Loaders built in Python processes the probe does not hook: reported, not lost.

The harness hooks DataLoader in its own process (and forked children inherit
the hooks). A Python process started fresh (``multiprocessing`` under spawn,
``torch.multiprocessing.spawn``, ``subprocess`` running Python) runs the
probe's ``sitecustomize``, which calls ``watch_loaders``: once torch's
DataLoader module is imported there, building a loader appends a
``child_loader`` event to the events file, so the report can say "a DataLoader
was built in a child process" instead of "built no DataLoader".

A spawn DataLoader worker re-importing the script (the DL101 case) is still
bootstrapping then, and is not reported.
"""

from __future__ import annotations

import functools
import os
from typing import Any

ROLE_ENV = "DLLINT_PROBE_ROLE"
HARNESS = "harness"  # the harness process itself: it hooks loaders fully
_MODULE = "torch.utils.data.dataloader"


def _bootstrapping() -> bool:
    import multiprocessing

    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def _probed_as_rank() -> bool:
    """A child the harness runs as a rank (``torch.multiprocessing.spawn``, ``Process``) is probed, not lost."""
    import dllint.probe.ranks as ranks

    return ranks.current_rank() is not None


def _report(call_site: str | None) -> None:
    from dllint.probe.guard import _event_file_reporter

    _event_file_reporter()({"event": "child_loader", "pid": os.getpid(), "call_site": call_site})


def _wrap(module: Any) -> None:
    loader_class: Any = getattr(module, "DataLoader", None)
    original = getattr(loader_class, "__init__", None)
    if original is None or getattr(original, "_dllint_watched", False):
        return

    @functools.wraps(original)
    def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
        if not _bootstrapping() and module.get_worker_info() is None and not _probed_as_rank():
            from dllint.probe.callsite import find_call_site

            site = find_call_site(loader)
            _report(site.label() if site else None)
        original(loader, *args, **kwargs)

    __init__._dllint_watched = True  # type: ignore[attr-defined]
    loader_class.__init__ = __init__


def watch_loaders() -> None:
    """In a process the harness does not run in: report every DataLoader it builds."""
    if os.environ.get(ROLE_ENV) == HARNESS:
        return
    from dllint.probe.guard import after_import

    after_import(_MODULE, _wrap)
