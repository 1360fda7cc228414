"""Probe checks, one module per rule family, discovered (never listed by hand).

A check module is a :class:`Check`: it declares

- ``CODES``: the rule codes it confirms, e.g. ``("DL302",)``.
- ``ALWAYS``: True for cheap checks that run on every loader the script
  reaches, so that a problem no static rule saw becomes a runtime finding;
  False for costly ones (sweeps, spawn starts) that run only where a static
  finding asks.
- ``on_first_iteration(site, ctx)``: measure, when the script first iterates
  the loader; report with ``ctx.result(...)``.

and optionally the later hooks (:data:`HOOKS`: ``on_construction_error(site, ctx, error)``, torch
rejected the arguments; ``on_later_iteration(site, ctx)``, the script iterated the same loader again,
a new epoch; ``on_script_end(site, ctx)``) and capabilities (:class:`Capability`, a module constant
set to True: ``SWEEPS_WORKERS = True``, with the functions the capability names). The harness asks a
check for a hook (:func:`hook`) or a capability (:func:`capable`, :func:`sweep_codes`,
:func:`judge_data_wait`), never for a rule code.

Check modules import torch inside their functions only: the runner imports
them in the parent to learn which codes have a check.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite


class Check(Protocol):
    """What every check module has (its optional hooks and capabilities are read through
    :func:`hook` and :func:`capable`)."""

    __name__: str
    CODES: tuple[str, ...]
    ALWAYS: bool

    def on_first_iteration(self, site: LoaderSite, ctx: ProbeContext) -> None: ...


class Capability(Enum):
    """What a check can do for the harness beyond its codes (the module constant of the same name)."""

    # the num_workers sweep: run once per loader, and on a loader no finding asked about where the check's
    # ``sweep_codes(site, step)`` names the codes it would answer there (its results then only inform the block)
    SWEEPS_WORKERS = "SWEEPS_WORKERS"
    # ``judge_data_wait(site, ctx, step)``: a runtime finding from the real step's data wait, at the script's end
    JUDGES_DATA_WAIT = "JUDGES_DATA_WAIT"


HOOKS = ("on_first_iteration", "on_construction_error", "on_later_iteration", "on_script_end")


def capable(check: Check, capability: Capability) -> bool:
    return getattr(check, capability.value, False) is True


def hook(check: Check, name: str) -> Callable[..., None] | None:
    """The check's hook ``name`` (one of :data:`HOOKS`), or None where it has none."""
    if name not in HOOKS:
        raise ValueError(f"no probe hook {name!r}")
    found = getattr(check, name, None)
    return cast("Callable[..., None]", found) if callable(found) else None


@cache
def all_checks() -> tuple[Check, ...]:
    modules: list[Any] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "CODES") and hasattr(module, "on_first_iteration"):
            modules.append(module)
    # Cheap checks first: a costly sweep must not eat the budget a pickling check needs.
    return tuple(sorted(modules, key=lambda module: not module.ALWAYS))


def with_capability(capability: Capability) -> Check | None:
    """The check that declares ``capability``, if any."""
    return next((check for check in all_checks() if capable(check, capability)), None)


def sweep_codes(check: Check, site: LoaderSite, step: dict[str, Any]) -> tuple[str, ...]:
    """The codes a :attr:`Capability.SWEEPS_WORKERS` check's sweep answers on ``site`` when no finding
    asked for it, given the real step's summary ``step`` (none: the loader is not worth a sweep)."""
    function = cast("Callable[[LoaderSite, dict[str, Any]], tuple[str, ...]]", getattr(check, "sweep_codes"))
    return function(site, step)


def judge_data_wait(check: Check, site: LoaderSite, ctx: ProbeContext, step: dict[str, Any]) -> None:
    """A :attr:`Capability.JUDGES_DATA_WAIT` check's runtime verdict on the real step's data wait."""
    function = cast("Callable[[LoaderSite, ProbeContext, dict[str, Any]], None]", getattr(check, "judge_data_wait"))
    function(site, ctx, step)


def codes_with_checks() -> set[str]:
    return {code for check in all_checks() for code in check.CODES}


def check_for(code: str) -> Check | None:
    for check in all_checks():
        if code in check.CODES:
            return check
    return None
