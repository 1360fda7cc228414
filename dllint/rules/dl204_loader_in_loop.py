from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.loops import STATEMENT_LOOPS, loaded_names, names_bound_in_loop
from dllint.facts.values import argument_for
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Use
    from dllint.facts.loaders import LoaderCall


class LoaderInLoop(Rule):
    """
    ## What it does
    Checks for a multi-worker loader that is built inside a `for`/`while` body and iterated
    there, with arguments that do not change from one pass to the next (a loader over a
    different dataset each pass, e.g. one per fold or per task, is left alone).

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
                rebuilding = _rebuilding_call(facts, loader)
                if rebuilding is not None:
                    function, call = rebuilding
                    yield self.report(facts, loader.node, f"DataLoader built in {function}(), called at line {call.lineno} inside a loop:"
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


def _rebuilding_call(facts: FileFacts, loader: LoaderCall) -> tuple[str, ast.Call] | None:
    """(the function's name, the call) where the function that builds ``loader`` is called
    (in this file) inside a loop, and each call makes one pass over the loader it builds: in
    the call (tenth audit K15: a nested ``run_epoch()`` the epoch loop calls), or where the
    call hands it back inside the loop. None where the loader is built from what the loop
    rebinds (passed to the function, or read by it from an enclosing scope), or where the
    function iterates it in a loop of its own (a whole training run per call)."""
    function = facts.scopes.enclosing_function(loader.node)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    uses = facts.loops.iterations(loader)
    if not uses or any(use.loops for use in uses):
        return None  # never iterated, or iterated more than once per construction (DL201's question)
    if _runs_epochs(facts, function):
        return None  # a whole training run per call: the loop around the call is over runs, not epochs
    inputs = _inputs(facts, function, loader.node)
    bound = 1 if isinstance(facts.scopes.parents.get(function), ast.ClassDef) else 0  # a method: self
    for call in facts.usage.callers(function):
        loops = [loop for loop in facts.usage.enclosing_loops(call, facts.scopes.scope_of(call)) if isinstance(loop, STATEMENT_LOOPS)]
        if not loops or not all(_in_the_call(facts, function, call, loops[-1], use) for use in uses):
            continue
        if _passed_names(function, call, inputs, bound) & names_bound_in_loop(loops[-1]):
            continue  # built from what this pass produced: a different loader each pass
        return function.name, call
    return None


def _in_the_call(facts: FileFacts, function: ast.AST, call: ast.Call, loop: ast.AST, use: Use) -> bool:
    """``use`` is a pass made by the call of ``function``: inside it (directly or through a
    helper it calls), or by the loop's own body on what the call hands back."""
    origin = use.via[0] if use.via else use.node
    if facts.contains(function, origin):
        return True
    after = use.via[1] if len(use.via) > 1 else use.node
    return origin is call and facts.contains(loop, after)


def _runs_epochs(facts: FileFacts, function: ast.AST) -> bool:
    """``function`` repeats a pass over some loader of the file in a loop of its own (an epoch
    loop over its training loader: one call is a training run)."""
    return any(
        isinstance(loop, STATEMENT_LOOPS) and facts.contains(function, loop)
        for other in facts.loader_calls
        for use in facts.loops.iterations(other)
        for loop in use.loops
    )


def _inputs(facts: FileFacts, function: ast.AST, node: ast.AST) -> set[str]:
    """The names ``node`` is computed from, and those the ``if`` tests that decide whether it
    runs read (``if data_feats is None:``), followed through the assignments of ``function``
    (``data = self.train_dataset if split == "train" else ...`` gives ``split``)."""
    scope = facts.scopes.scopes[function]
    names = loaded_names(node)
    for test in facts.usage.lookups.if_arms(node):
        names |= loaded_names(test.test)
    todo = list(names)
    while todo:
        for binding in scope.bindings.get(todo.pop(), ()):
            if binding.kind in ("assign", "other"):
                new = loaded_names(binding.value if binding.value is not None else binding.node) - names
                names |= new
                todo += new
    return names


def _passed_names(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, inputs: set[str], bound: int) -> set[str]:
    """The names the loader's ``inputs`` take from the call: what it passes for the parameters
    among them (everything it passes, where a splat hides which), and the names the function
    reads from enclosing scopes (a closure over a name the loop rebinds)."""
    parameters = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    if function.args.vararg is not None:
        parameters.add(function.args.vararg.arg)
    if function.args.kwarg is not None:
        parameters.add(function.args.kwarg.arg)
    names = inputs - parameters
    for param in inputs & parameters:
        passed = argument_for(call, function, param, bound)
        if passed is None:
            return names | loaded_names(call)
        if isinstance(passed, ast.expr):
            names |= loaded_names(passed)
    return names
