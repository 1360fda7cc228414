"""How the script's run ended, in one line, and who caused it.

The script's own exception, in any epoch, is the script's, with its line. The
probe is blamed only where its bounds really caused the ending:

- the script asked a loader for more batches with ``next()`` than the probe's
  bound of K per epoch (the StopIteration it got is the probe's
  :class:`~dllint.probe.steps.EpochBound`);
- past the cap of real epochs, the probe hands out empty epochs: an error
  raised after the first of those (``loss`` never assigned, a mean over zero
  batches) comes from the emptied loop. Every loader had run its epochs by
  then, so the run is reported as stopped, with the error.

Errors that bounded epochs may cause but the probe cannot tell from the
script's own (an ``IndexError`` into a list of batches, an assertion on the
number of batches) are the script's, with a note saying how many batches the
probe ran of how many.
"""

from __future__ import annotations

from typing import Any

# Errors that a script counting on all of an epoch's batches raises when it gets fewer.
COUNTING_ERRORS = ("IndexError", "AssertionError", "KeyError")


def _where(outcome: dict[str, Any]) -> str:
    where = outcome.get("where")
    if not where:
        return ""
    if where["in_epoch"]:
        return f", in loader {where['loader']}'s epoch {where['epoch']} (batch {where['batch']})"
    return f", after loader {where['loader']}'s epoch {where['epoch']}"


def _cut_note(outcome: dict[str, Any]) -> str:
    cut = outcome.get("cut") or {}
    if outcome.get("type") not in COUNTING_ERRORS or not cut:
        return ""
    loader, (bound, full) = next(iter(cut.items()))
    of = f" of its {full}" if full else ""
    return (f" (the probe ran {bound}{of} batches per epoch of loader {loader}: if the script counts on all of "
            "them, that is why)")


def describe_error(outcome: dict[str, Any], built_loader: bool) -> str:
    detail = outcome["detail"] + (f" at {outcome['location']}" if outcome.get("location") else "")
    bound = outcome.get("bound")
    if bound:
        full = f" of its {bound['full']}" if bound.get("full") else ""
        return (f"the script raised {detail}: caused by the probe, which ends each epoch of loader {bound['loader']} "
                f"after {bound['bound']}{full} batches; the script asked for more with next()")
    emptied = outcome.get("emptied")
    if emptied:
        return (f"stopped once every loader had run {emptied['cap']} epochs: the probe then emptied loader "
                f"{emptied['loader']}'s epoch {emptied['epoch']}, and the script raised {detail} (caused by the "
                "emptied epoch, not a bug in the script)")
    if not built_loader:
        return f"the script raised {detail} before building a DataLoader"
    return f"the script raised {detail}{_where(outcome)}{_cut_note(outcome)}"


def describe_outcome(outcome: dict[str, Any], built_loader: bool) -> str:
    """The line for a run whose harness reported how the script ended."""
    how, detail = str(outcome["how"]), str(outcome["detail"])
    if how == "launcher":  # a launcher (main's --launcher) that failed before any rank ran: its own words
        return detail
    if how == "error":
        return describe_error(outcome, built_loader)
    if outcome.get("location"):
        detail += f" at {outcome['location']}"
    if how == "timeout":
        return f"a measurement ran out of time: {detail}"
    if how == "exit" and not built_loader:
        return detail + " before building a DataLoader"
    if how == "stopped" and outcome.get("emptied"):
        emptied = outcome["emptied"]
        return (f"stopped once every loader it built had run its epochs (at most {emptied['cap']} each, "
                "the later ones emptied)")
    return detail
