"""DL301: a DistributedSampler that repeats its order every epoch.

Records the sampler's index order when the script first iterates the loader
and again when it iterates it the next time (the script's next epoch, with
whatever ``set_epoch`` call the script makes in between). Identical orders are
the bug.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from dllint.probe.results import CONFIRMED, NOT_CONFIRMED

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL301",)
ALWAYS = True

_SHOWN = 8


def epoch_sampler(site: LoaderSite) -> Any:
    sampler = site.argument("batch_sampler")
    sampler = getattr(sampler, "sampler", None) or site.argument("sampler")
    return sampler if hasattr(sampler, "set_epoch") else None


def _order(sampler: Any) -> dict[str, Any]:
    indices = [int(index) for index in iter(sampler)]
    digest = hashlib.sha1(repr(indices).encode()).hexdigest()[:12]
    return {"first": indices[:_SHOWN], "digest": digest, "epoch": getattr(sampler, "epoch", None)}


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    sampler = epoch_sampler(site)
    if sampler is None:
        if ctx.requested(site, CODES):
            ctx.result(site, "DL301", NOT_CONFIRMED, "this loader's sampler has no set_epoch")
        return
    if getattr(sampler, "shuffle", True) is False:
        return
    with ctx.measuring(site, "sampler order, epoch 1"):
        site.state[__name__] = _order(sampler)


def on_later_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    first = site.state.pop(__name__, None)
    if first is None:
        return
    with ctx.measuring(site, "sampler order, epoch 2"):
        second = _order(epoch_sampler(site))
    measurements = {"epoch_1": first, "epoch_2": second}
    if first["digest"] == second["digest"]:
        ctx.result(site, "DL301", CONFIRMED, f"epochs 1 and 2 visit the same order {first['first']}... "
                   f"(sampler epoch stayed {second['epoch']})", measurements)
    else:
        ctx.result(site, "DL301", NOT_CONFIRMED, f"the order changed between epochs "
                   f"({first['first'][:3]}... -> {second['first'][:3]}...)", measurements)


def on_script_end(site: LoaderSite, ctx: ProbeContext) -> None:
    if site.state.pop(__name__, None) is not None:
        ctx.no_second_epoch(site, "DL301", "the order of a second epoch was not seen")
