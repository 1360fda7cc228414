from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule
from dllint.rules.reentry import reentry_message, reported_at

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class LoaderReenteredWhileIterating(Rule):
    """
    ## What it does
    Checks for a loader with `persistent_workers=True` (and workers) that is iterated again
    while one of its own passes is live: a `for`, `iter()`, `enumerate()` or a project
    function that iterates it, run inside `for batch in loader:` over the same loader, in this
    file or through the project's functions (an evaluation helper that draws a few batches
    from the training loader every N steps); also inside a step loop that draws from an
    `iter(loader)` renewed on `StopIteration` (its pass is live across the steps).

    ## Why is this bad?
    With persistent workers torch keeps one iterator per loader, and `iter(loader)` resets
    it. The inner pass therefore restarts the outer one: when the inner pass recurs more
    often than the epoch's length the epoch never ends (measured with torch 2.13: an epoch
    of a 44-batch loader still running after 400 batches); otherwise batches are silently
    repeated and skipped. Without persistent workers each pass has an iterator of its own,
    so the same code works, and adding `persistent_workers=True` (DL201's advice) is what
    breaks it.

    ## Example
    ```python
    loader = DataLoader(ds, num_workers=4, persistent_workers=True)
    for epoch in range(10):
        for step, batch in enumerate(loader):
            train_step(batch)
            if step % 100 == 0:
                evaluate(model, loader)  # iterates `loader` again
    ```

    ## Use instead
    ```python
    loader = DataLoader(ds, num_workers=4, persistent_workers=True)
    probe_loader = DataLoader(ds, num_workers=0)  # a loader of its own for the inner pass
    for epoch in range(10):
        for step, batch in enumerate(loader):
            train_step(batch)
            if step % 100 == 0:
                evaluate(model, probe_loader)
    ```

    ## Fix safety
    No automatic fix: the inner pass needs a loader of its own, and which settings it
    should have (workers, sampler) is the user's call.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
      (`persistent_workers`: the iterator is kept alive and reset by `iter()`)
    """

    code = "DL306"
    name = "loader-reentered-while-iterating"
    summary = "the loader is iterated again inside its own pass: with persistent workers that resets the outer pass"
    fix_safety = "none"
    value_arguments = ("persistent_workers", "num_workers")
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "val = DataLoader(vs, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    for batch in loader:\n        for v in val:\n            pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\n"
        "for batch in loader:\n    for again in loader:\n        break\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "def evaluate(dl):\n    for i, b in enumerate(dl):\n        break\n"
        "for epoch in range(10):\n    for step, batch in enumerate(loader):\n        evaluate(loader)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if not loader.is_multi_worker or loader.value("persistent_workers").truthy() is not True:
                continue
            reported: set[int] = set()
            for inner, outer in facts.usage.reentries(loader):
                node = reported_at(inner)
                if id(node) in reported:
                    continue
                reported.add(id(node))
                yield self.report(facts, node, reentry_message(facts, inner, outer, "resets the outer pass at line"))
