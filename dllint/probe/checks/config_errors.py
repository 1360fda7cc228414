"""DL001-DL006: the error torch raises for the script's own loader arguments.

Most are ValueErrors from ``DataLoader.__init__``; a ``timeout`` or a zero
``prefetch_factor`` only fails with an AssertionError at the first batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dllint.probe.internals import construction_code
from dllint.probe.measure import describe_error
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL001", "DL002", "DL003", "DL004", "DL005", "DL006")
ALWAYS = True


def classify_first_batch_error(site: LoaderSite, error: BaseException) -> str | None:
    """Assertions torch makes when the first iterator is created."""
    if not isinstance(error, AssertionError):
        return None
    if site.num_workers == 0 and (site.arguments.get("timeout") or 0) > 0:
        return "DL002"
    if site.num_workers > 0 and site.arguments.get("prefetch_factor") == 0:
        return "DL005"
    return None


def on_construction_error(site: LoaderSite, ctx: ProbeContext, error: BaseException) -> None:
    code = construction_code(error)
    if code is not None:
        ctx.result(site, code, CONFIRMED, f"DataLoader() raised {describe_error(error)}",
                   {"error": describe_error(error), "when": "construction"})


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    first = site.first_batch
    if first is not None and first.exception is not None:
        code = classify_first_batch_error(site, first.exception)
        if code is not None:
            ctx.result(site, code, CONFIRMED, f"the first batch raised {first.error or 'AssertionError'}",
                       {"error": first.error, "when": "first batch"})
            return
    for code in CODES:
        if ctx.requested(site, (code,)):
            ctx.result(site, code, NOT_CONFIRMED, "torch accepted these arguments and produced a first batch"
                       if first is not None and first.error is None else "torch accepted these arguments")
