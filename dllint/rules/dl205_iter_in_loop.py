from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.flow.model import EPOCH_LOOPS, Loop
from dllint.facts.loops import STATEMENT_LOOPS
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

# Inside these, a fresh iterator is made at an epoch boundary (StopIteration, step % n == 0).
GUARDS = (ast.ExceptHandler, ast.If, ast.IfExp, ast.match_case)


class IterInLoop(Rule):
    """
    ## What it does
    Checks for `iter(loader)` on a multi-worker loader inside a loop body where the new
    iterator yields only one pass's worth of batches: `next(iter(loader))`, or
    `it = iter(loader)` followed by `next(it)` in the same loop body. A fresh iterator made
    on `StopIteration` or under an `if` (the epoch-boundary idiom), or one that an inner loop
    drains, is left alone.

    ## Why is this bad?
    Each `iter(loader)` starts all worker processes (or, with persistent workers, resets
    them), reshuffles, and prefetches `num_workers * prefetch_factor` batches, only for the
    loop to take one batch and throw the rest away. The data seen is also not an epoch:
    with `shuffle=True` every step draws from a fresh permutation.

    ## Example
    ```python
    for step in range(10_000):
        images, labels = next(iter(loader))
        ...
    ```

    ## Use instead
    ```python
    batches = iter(loader)
    for step in range(10_000):
        try:
            images, labels = next(batches)
        except StopIteration:
            batches = iter(loader)
            images, labels = next(batches)
        ...
    ```

    ## Fix safety
    No automatic fix: where the iterator should be created depends on how the loop counts
    epochs.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    """

    code = "DL205"
    name = "iter-in-loop"
    summary = "iter(loader) inside the loop starts every worker again for one batch: create the iterator once, outside the loop"
    fix_safety = "none"
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=0)\nfor step in range(100):\n    x = next(iter(loader))\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nit = iter(loader)\nfor step in range(100):\n"
        "    try:\n        x = next(it)\n    except StopIteration:\n        it = iter(loader)\n        x = next(it)\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nfor epoch in range(10):\n    it = iter(loader)\n"
        "    for step in range(len(loader)):\n        x = next(it)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nfor step in range(100):\n    x = next(iter(loader))\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nwhile True:\n    it = iter(loader)\n    x, y = next(it)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if not loader.is_multi_worker:
                continue
            built = set(map(id, facts.usage.construction_loops(loader.node)))
            for use in facts.loops.iterations(loader):
                call = use.node
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "iter"):
                    continue
                repeating = [loop for loop in use.loops if isinstance(loop, EPOCH_LOOPS) and id(loop) not in built]
                if repeating and not self._guarded(facts, call, repeating[-1]) and self._one_pass(facts, call):
                    yield self.report(facts, call)

    @staticmethod
    def _guarded(facts, call: ast.Call, loop: Loop) -> bool:
        parents = facts.scopes.parents
        current = parents.get(call)
        while current is not None and current is not loop:
            if isinstance(current, GUARDS):
                return True
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False  # the loop is in a caller: the call sites decide
            current = parents.get(current)
        return False

    @staticmethod
    def _one_pass(facts, call: ast.Call) -> bool:
        """The iterator serves only the current pass: ``next(iter(x))``, or bound to a name that
        only ``next(name)`` reads, in the same innermost loop as the ``iter`` call."""
        parents = facts.scopes.parents
        parent = parents.get(call)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next":
            return parent.args[:1] == [call]
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
            return False
        name = parent.targets[0].id
        scope = facts.scopes.scope_of(call)
        bindings = scope.bindings.get(name, [])
        if len(bindings) != 1:
            return False
        home = _innermost_loop(facts, call, scope)
        reads = [load for load in scope.loads if load.id == name]
        if not reads:
            return False
        for load in reads:
            user = parents.get(load)
            if not (isinstance(user, ast.Call) and isinstance(user.func, ast.Name) and user.func.id == "next"):
                return False
            if _innermost_loop(facts, load, scope) is not home:
                return False
        return True


def _innermost_loop(facts, node: ast.AST, scope) -> ast.AST | None:
    loops = [loop for loop in facts.usage.enclosing_loops(node, scope) if isinstance(loop, STATEMENT_LOOPS)]
    return loops[-1] if loops else None
