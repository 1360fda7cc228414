"""A loader's later epoch that crashed: the evidence of the rule whose crash it is.

A worker that fails in epoch 2 or later, when epoch 1 ran (non-persistent
workers restarted after the main process initialised CUDA or changed the
dataset), shows a DL1xx rule's crash that no check of the first iteration
saw. Its error is classified by :func:`dllint.probe.internals.crash_code`, the
same messages the checks read: ``Cannot re-initialize CUDA in forked
subprocess`` is DL105, ``daemonic processes are not allowed to have
children`` DL108, pickle's errors DL102/DL103/DL104, ``Can't get attribute
'X' on <module '__mp_main__'>`` DL107 (``'__main__'``, a notebook's, DL106).
The result is confirmed at the loader's call and at the line of the worker's
code that failed (the innermost frame of the user's code in the traceback
torch formats in a worker): it confirms a static finding of that code about
the loader or at that line (the ``.cuda()``, the ``Pool(...)``, also in
another file), or becomes a runtime finding at the loader's call. Any other crash (a
worker killed by a signal, the dataset's own exception) is no rule's: the
run's ending names it, as before.

Epoch 1 is not read here: the first batch the probe fetches before it is
the checks' evidence (DL105's check reads a failed first batch itself).
"""

from __future__ import annotations

from typing import Any

from dllint.probe.internals import crash_code
from dllint.probe.results import CONFIRMED, Anchor, Result

FIRST_LATER_EPOCH = 2


def crash_results(loader: int, failures: list[dict[str, Any]], anchor: Anchor | None) -> list[Result]:
    """One confirmed result per rule whose crash a later epoch of ``loader`` shows (its first such epoch)."""
    results: dict[str, Result] = {}
    for failure in failures:
        if failure["epoch"] < FIRST_LATER_EPOCH:
            continue
        said = failure.get("worker_said")
        code = crash_code(f"{failure['error']}\n{said}" if said else failure["error"])
        if code is None or code in results:
            continue
        error = f"a DataLoader worker died: {said}" if said else failure["error"]
        evidence = f"epoch {failure['epoch']} failed at batch {failure['batch']}: {error}"
        measurements = {"error": error, "epoch": failure["epoch"], "batch": failure["batch"], "triggered_by": "script"}
        results[code] = Result(code, CONFIRMED, evidence, measurements, _anchors(anchor, failure), loader)
    return list(results.values())


def _anchors(loader: Anchor | None, failure: dict[str, Any]) -> list[Anchor]:
    """The loader's call (where a runtime finding is reported), then the line in the worker's code
    that failed: a static finding there (the ``.cuda()``, the ``Pool(...)``, in any file) is about it."""
    anchors = [loader] if loader else []
    if failure.get("worker_frame"):
        path, line = failure["worker_frame"]
        anchors.append(Anchor(path, line, line))
    return anchors
