"""Helpers for the probe tests: hand-made findings, small budgets, leftover-process checks.

Imported by name (``from probe_helpers import ...``): pytest puts this
directory on sys.path, as tests/ has no __init__.py.
"""

from __future__ import annotations

import os
import pathlib

import psutil

from dllint.findings import Finding
from dllint.probe.context import Settings

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "probe"


def finding(code: str, path, line: int) -> Finding:
    """A static finding as the engine would report it; only code, path and line matter to the probe."""
    return Finding(str(path), line, 1, line, 1, code, "", f"{code} (hand-made for the test)")


def fast_settings(**overrides) -> Settings:
    """Small budgets: the persistence experiment under the script's own start method only."""
    settings = Settings(batches=4, epochs=3, start_methods=("script",), sweep_limit=4, measurement_seconds=20)
    for name, value in overrides.items():
        setattr(settings, name, value)
    return settings


def live_processes_in_group(pgid: int) -> list[psutil.Process]:
    alive = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return alive


def live_children() -> list[psutil.Process]:
    return [child for child in psutil.Process().children(recursive=True) if child.status() != psutil.STATUS_ZOMBIE]
