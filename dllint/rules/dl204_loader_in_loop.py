from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.loops import STATEMENT_LOOPS, loaded_names, names_bound_in_loop
from dllint.facts.rebuilt import rebuilding_call
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall


class LoaderInLoop(Rule):
    """
    ## What it does
    Checks for a multi-worker loader that is built inside a `for`/`while` body and iterated
    there, with arguments that do not change from one pass to the next (a loader over a
    different dataset each pass, e.g. one per fold or per task, is left alone). A loader
    built by a function that the loop calls, in this file or another module, directly or
    through functions that return it (`load_data()` returning what `load_testing()` built),
    counts the same when each call makes one pass over it; it is reported where it is built.
    A loader built under an `if` that some passes skip (`if epoch == unfreeze_epoch:`) and
    iterated outside it is built on those passes only: the others iterate the loader they
    have again (DL201's).

    ## Why is this bad?
    Every pass builds a new loader, so every pass starts all its worker processes again
    (under `spawn`/`forkserver` each one re-imports the main module and unpickles the
    dataset), and `persistent_workers` cannot help: the loader holding the workers is
    thrown away. Built once before the loop, the loader keeps its workers alive across
    epochs.

    ## Example
    ```python
    for epoch in range(100):
        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
    for epoch in range(100):
        for batch in loader:
            ...
    ```

    ## Fix safety
    No automatic fix: moving the construction changes when the dataset is read, which the
    loop body may depend on.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    - `dllint --probe train.py` measures the start-up stall per epoch.
    """

    code = "DL204"
    name = "loader-in-loop"
    summary = "DataLoader built inside the loop: its workers start again on every pass; build it once before the loop"
    fix_safety = "none"
    valid = (
        "from torch.utils.data import DataLoader\n"
        "for epoch in range(10):\n    for b in DataLoader(ds, num_workers=0):\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "for fold in folds:\n    loader = DataLoader(fold, num_workers=4)\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    for b in loader:\n        pass\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "for epoch in range(10):\n    loader = DataLoader(ds, num_workers=4)\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "while step < total:\n    for b in DataLoader(ds, num_workers=2, shuffle=True):\n        step += 1\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        bound_in: dict[ast.AST, set[str]] = {}  # a loop's rebound names, computed once per loop (not per loader)
        for loader in facts.loader_calls:
            if not loader.is_multi_worker:
                continue
            loops = [loop for loop in facts.usage.construction_loops(loader.node) if isinstance(loop, STATEMENT_LOOPS)]
            if not loops:
                rebuilding = rebuilding_call(facts, loader)
                if rebuilding is not None:
                    builder, function, call = rebuilding
                    where = f"{builder}()" if builder == function else f"{builder}() and handed back by {function}()"
                    yield self.report(facts, loader.node, f"DataLoader built in {where}, called at line {call.lineno} inside a loop:"
                                      " its workers start again on every pass; build it once before the loop")
                    continue
                elsewhere = _rebuilt_elsewhere(facts, loader)
                if elsewhere is not None:
                    builder, where = elsewhere
                    yield self.report(facts, loader.node, f"DataLoader built in {builder}(), reached from {where} inside a loop:"
                                      " its workers start again on every pass; build it once before the loop")
                continue
            innermost = loops[-1]
            if not any(innermost in use.loops for use in facts.loops.iterations(loader)):
                continue  # built in the loop, iterated elsewhere (or never)
            if innermost not in bound_in:
                bound_in[innermost] = names_bound_in_loop(innermost)
            if loaded_names(loader.node) & bound_in[innermost]:
                continue  # built from what this pass produced: a different loader each pass
            yield self.report(facts, loader.node)


def _rebuilt_elsewhere(facts: FileFacts, loader: LoaderCall) -> tuple[str, str] | None:
    """(the builder's name, "file:line") where every pass over ``loader`` is made by callers in
    other files whose loop builds it anew each pass (``load_data()`` in train.py's epoch loop,
    returning what this file's ``load_testing()`` built: transferlearning's DAAN)."""
    function = facts.scopes.enclosing_function(loader.node)
    uses = facts.loops.iterations(loader)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not uses or not all(use.rebuilt for use in uses):
        return None
    return function.name, min(use.rebuilt for use in uses)
