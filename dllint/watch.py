"""``--watch``: lint again whenever a linted file or the config file changes (ruff's ``--watch``).

Polled, not notified: the files' modification times and sizes are compared every
:data:`INTERVAL` seconds, which needs no dependency and sees a file replaced by an editor's
atomic save too. Ctrl-C stops it (exit 130, as every interrupted run).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Sequence

import click

from dllint.config import Settings

INTERVAL = 0.25  # seconds between looks


def watch(paths: Sequence[str], settings: Settings, run: Callable[[], int]) -> None:
    """Run, then run again after each change; returns only through Ctrl-C."""
    click.echo(f"[{_now()}] Starting linter in watch mode...", err=True)
    run()
    seen = _state(paths, settings)
    while True:
        time.sleep(INTERVAL)
        current = _state(paths, settings)
        if current != seen:
            seen = current
            click.echo(f"[{_now()}] File change detected...", err=True)
            run()


def _state(paths: Sequence[str], settings: Settings) -> dict[str, tuple[int, int]]:
    """Each linted file's, and the config file's, (modification time, size)."""
    from dllint.discovery import discover

    files = list(discover(list(paths), settings).files)
    if settings.config_path is not None:
        files.append(settings.config_path)
    state = {}
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        state[path] = (st.st_mtime_ns, st.st_size)
    return state


def _now() -> str:
    return time.strftime("%H:%M:%S")
