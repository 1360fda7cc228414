from __future__ import annotations

import ast
from typing import Iterator

from dllint.facts.workers import local_definition, shipped_expressions
from dllint.findings import Finding, Fix
from dllint.rules import Rule


class LocalCallableInWorker(Rule):
    """
    ## What it does
    Checks for a function or class defined inside another function (a closure, a nested
    `Dataset` class) that a multi-worker loader sends to its workers: as `collate_fn`,
    `worker_init_fn`, `sampler`, `batch_sampler`, the dataset itself, or inside the arguments
    that build the dataset. Reported where it is handed over (`collate_fn=collate`, `Local()`).

    ## Why is this bad?
    Pickle stores functions and classes by their importable name; a local one has none.
    Under `spawn`/`forkserver` the loader fails with `AttributeError: Can't pickle local
    object 'main.<locals>.collate'`.

    ## Example
    ```python
    def main(pad_value):
        def collate(batch):
            return pad(batch, pad_value)

        loader = DataLoader(dataset, num_workers=4, collate_fn=collate)
    ```

    ## Use instead
    ```python
    def collate(batch, pad_value):
        return pad(batch, pad_value)

    def main(pad_value):
        loader = DataLoader(dataset, num_workers=4, collate_fn=functools.partial(collate, pad_value=pad_value))
    ```

    ## Fix safety
    Unsafe: the definition is hoisted to module level with its captured names turned into
    parameters bound with `functools.partial`; a closure that rebinds captured names
    (`nonlocal`) would change meaning.

    ## References
    - [What can be pickled](https://docs.python.org/3/library/pickle.html#what-can-be-pickled-and-unpickled)
    """

    code = "DL103"
    name = "local-callable-in-worker"
    summary = "function or class defined inside a function cannot be pickled under spawn: define it at module level"
    fix_safety = "unsafe"
    valid = (
        "from torch.utils.data import DataLoader\ndef collate(b):\n    return b\n"
        "def main():\n    DataLoader(ds, num_workers=2, collate_fn=collate)\n",
        "from torch.utils.data import DataLoader\n"
        "def main():\n    def collate(b):\n        return b\n    DataLoader(ds, collate_fn=collate)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "def main():\n    def collate(b):\n        return b\n    DataLoader(ds, num_workers=2, collate_fn=collate)\n",
        "from torch.utils.data import DataLoader, Dataset\n"
        "def main():\n    class Local(Dataset):\n        pass\n    DataLoader(Local(), num_workers=2)\n",
    )

    def check(self, facts) -> Iterator[Finding]:
        reported: set[int] = set()
        for loader in facts.loader_calls:
            if not loader.is_multi_worker:
                continue
            for shipped in shipped_expressions(facts, loader):
                target = shipped.expr.func if isinstance(shipped.expr, ast.Call) else shipped.expr
                definition = local_definition(facts, target, shipped.scope)
                if definition is None or id(shipped.expr) in reported:
                    continue
                if isinstance(shipped.expr, ast.Call) and not isinstance(definition, ast.ClassDef):
                    continue  # calling a local function ships its result, not the function
                reported.add(id(shipped.expr))
                kind = "class" if isinstance(definition, ast.ClassDef) else "function"
                message = f"local {kind} '{definition.name}' sent to workers (via {shipped.sink}) cannot be pickled under spawn: define it at module level"
                fix = Fix("unsafe", f"Hoist `{definition.name}` to module level", (("name", definition.name),))
                yield self.report(facts, shipped.expr, message, fix)
