"""Probe checks, one module per rule family, discovered (never listed by hand).

A check module declares:

- ``CODES``: the rule codes it confirms, e.g. ``("DL302",)``.
- ``ALWAYS``: True for cheap checks that run on every loader the script
  reaches, so that a problem no static rule saw becomes a runtime finding;
  False for costly ones (sweeps, spawn starts) that run only where a static
  finding asks.
- ``on_first_iteration(site, ctx)``: measure, when the script first iterates
  the loader; report with ``ctx.result(...)``.

and optionally ``SWEEPS_WORKERS = True`` (a capability: the num_workers sweep, which the harness
runs once per loader, and on a loader the real step waits on though no finding asked),
``on_construction_error(site, ctx, error)`` (torch rejected the arguments),
``on_later_iteration(site, ctx)`` (the script iterated the same loader again: a new epoch) and
``on_script_end(site, ctx)``.

Check modules import torch inside their functions only: the runner imports
them in the parent to learn which codes have a check.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType


@cache
def all_checks() -> tuple[ModuleType, ...]:
    modules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "CODES") and hasattr(module, "on_first_iteration"):
            modules.append(module)
    # Cheap checks first: a costly sweep must not eat the budget a pickling check needs.
    return tuple(sorted(modules, key=lambda module: not module.ALWAYS))


def codes_with_checks() -> set[str]:
    return {code for module in all_checks() for code in module.CODES}


def check_for(code: str) -> ModuleType | None:
    for module in all_checks():
        if code in module.CODES:
            return module
    return None
