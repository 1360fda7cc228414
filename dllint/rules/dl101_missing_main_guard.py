from __future__ import annotations

import ast
from typing import Iterator

from dllint.facts.imports import dotted_name
from dllint.findings import Finding, Fix
from dllint.rules import Rule

PROCESS_STARTERS = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "torch.multiprocessing.Pool",
    }
)
PROCESS_CLASSES = frozenset({"multiprocessing.Process", "torch.multiprocessing.Process", "multiprocessing.context.Process"})


class MissingMainGuard(Rule):
    """
    ## What it does
    Checks for module-level code that starts worker processes outside an
    `if __name__ == "__main__":` block: iterating a multi-worker loader (directly or through
    a function of the same file), `torch.multiprocessing.spawn`, `Process(...).start()`, or
    `Pool(...)`. Reported once, at the first such statement.

    ## Why is this bad?
    Under `spawn` and `forkserver` (Windows, macOS, and Linux from Python 3.14) each worker
    imports the main module afresh. Without the guard, that import runs the training code
    again inside the worker, which tries to start workers of its own: `RuntimeError: An
    attempt has been made to start a new process before the current process has finished its
    bootstrapping phase.`

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=4)
    for epoch in range(10):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    def main():
        loader = DataLoader(dataset, num_workers=4)
        for epoch in range(10):
            for batch in loader:
                ...

    if __name__ == "__main__":
        main()
    ```

    ## Fix safety
    Unsafe: the fix moves the module's executable statements under a main guard, keeping
    imports, `def`, `class` and constant assignments at module level. Other modules that
    imported names defined by those statements would no longer find them.

    ## References
    - [multiprocessing: safe importing of the main module](https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods)
    """

    code = "DL101"
    name = "missing-main-guard"
    summary = "module-level code starts worker processes without an `if __name__ == \"__main__\":` guard: spawn workers re-run it"
    fix_safety = "unsafe"
    # Every process starter above resolves through an import naming `multiprocessing`; ctx.Pool needs
    # `get_context`. (`Process`/`Pool` alone matched 1/4 of real files: `ImageProcessor`, `MaxPool2d`.)
    triggers = (b"DataLoader", b"multiprocessing", b"get_context")
    valid = (
        "from torch.utils.data import DataLoader\n"
        "def main():\n    for b in DataLoader(ds, num_workers=2):\n        pass\n"
        "if __name__ == '__main__':\n    main()\n",
        "from torch.utils.data import DataLoader\nfor b in DataLoader(ds):\n    pass\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\nfor b in loader:\n    pass\n",
        "from torch.utils.data import DataLoader\n"
        "def main():\n    for b in DataLoader(ds, num_workers=2):\n        pass\nmain()\n",
        "import torch.multiprocessing as mp\ndef run(rank):\n    pass\nmp.spawn(run, nprocs=2)\n",
    )

    def check(self, facts) -> Iterator[Finding]:
        if facts.is_notebook:
            # A kernel's __main__ is ipykernel's launcher: spawn workers import that, never the
            # cells, so nothing re-runs. What breaks there instead is DL106.
            return
        triggers: list[ast.stmt] = []
        usage = facts.usage
        for loader in facts.loader_calls:
            if loader.is_multi_worker:
                for use in usage.loader_uses(loader):
                    if use.kind == "iterate":
                        triggers += usage.module_triggers(use.node, use.via)
        for node in self._process_starts(facts):
            triggers += usage.module_triggers(node)
        candidates = [
            s for s in triggers if s is not facts.main_guard and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]
        if candidates:
            first = min(candidates, key=lambda s: (s.lineno, s.col_offset))
            yield self.report(facts, first, fix=Fix("unsafe", "Move the script's statements under `if __name__ == \"__main__\":`"))

    @staticmethod
    def _process_starts(facts) -> Iterator[ast.AST]:
        process_names: set[str] = set()
        for call in facts.calls:
            name = facts.qualname(call.func)
            if name in PROCESS_STARTERS or _is_context_method(facts, call, "Pool"):
                yield call
            elif name in PROCESS_CLASSES or _is_context_method(facts, call, "Process"):
                parent = facts.scopes.parents.get(call)
                if isinstance(parent, ast.Attribute) and parent.attr == "start":
                    yield call
                elif isinstance(parent, ast.Assign):
                    process_names.update(t.id for t in parent.targets if isinstance(t, ast.Name))
        for call in facts.calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "start" and isinstance(func.value, ast.Name):
                if func.value.id in process_names:
                    yield call

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes.main_guard import guarded_module

        reported = ctx.module_statement(ctx.node_at(finding, cst.BaseStatement))
        new = guarded_module(ctx.module, reported)
        ctx.replace(ctx.module, new)


def _is_context_method(facts, call: ast.Call, method: str) -> bool:
    """``ctx.Pool(...)`` where ``ctx = multiprocessing.get_context(...)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == method):
        return False
    base = func.value
    if isinstance(base, ast.Name):
        found = facts.scopes.single_value(base.id, facts.scopes.scope_of(call))
        if found is None or found[1].value is None:
            return False
        base = found[1].value
    return isinstance(base, ast.Call) and (dotted_name(base.func) or "").endswith("get_context")
