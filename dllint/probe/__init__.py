"""The runtime probe: run the user's loader for real and confirm each finding with a measurement.

Importing this package never imports torch: the harness imports it in a child
process, and the parent only checks that it is installed.

Public API: ``run_probe``, ``ProbeReport``, ``ProbeError``, ``ProbeUnavailable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dllint.probe.errors import ProbeError, ProbeUnavailable

if TYPE_CHECKING:
    from dllint.probe.report import ProbeReport
    from dllint.probe.runner import run_probe

__all__ = ["ProbeError", "ProbeReport", "ProbeUnavailable", "run_probe"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the linter imports dllint.probe only to name these.
    if name == "run_probe":
        from dllint.probe.runner import run_probe

        return run_probe
    if name == "ProbeReport":
        from dllint.probe.report import ProbeReport

        return ProbeReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
