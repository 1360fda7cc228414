from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts import is_main_guard
from dllint.facts.frameworks import hook_callers
from dllint.findings import Finding, Fix, WrapInMainGuard
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class MissingMainGuard(Rule):
    """
    ## What it does
    Checks for module-level code that starts worker processes outside an
    `if __name__ == "__main__":` block: iterating a multi-worker loader (directly, through
    a function of the same file, or by a trainer's `fit`, `validate`, `test` or `predict`
    handed an instance of the class whose Lightning hook returns the loader),
    `torch.multiprocessing.spawn`, `Process(...).start()`, or `Pool(...)`. Reported once, at
    the first such statement. An `if` that calls the file's own predicate returning
    `__name__ == "__main__"` (`def is_main(): return __name__ == "__main__"`) is a main guard
    too.

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
    imported names defined by those statements would no longer find them. No fix is offered
    when a `def` or `class` sits inside a block that would move (`if True:`, `try:`): under the
    guard, spawn workers could not find it (DL107).

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
    # ...and a loader, or a starter of processes: `Pool`, `spawn`, `start_processes`, `Process` (for `.start()`)
    needs_one_of = (b"DataLoader", b"Pool", b"Process", b"spawn", b"start_processes")
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

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        if facts.is_notebook:
            # A kernel's __main__ is ipykernel's launcher: spawn workers import that, never the
            # cells, so nothing re-runs. What breaks there instead is DL106.
            return
        triggers: list[ast.stmt] = []
        options: dict[int, str] = {}  # statement -> suffix naming the option its loader waits for
        # facts.usage (and the scope table under it) only for a file that starts workers or processes
        for loader in facts.loader_calls:
            if loader.may_start_workers:
                for use in facts.usage.loader_uses(loader):
                    if use.iterates and not use.importer:  # (an importer's pass runs in its file)
                        found = module_triggers(facts, use.node, use.via) or framework_triggers(facts, use.node)
                        for statement in found:
                            options.setdefault(id(statement), loader.when_workers())
                        triggers += found
        for start in facts.process_starts:
            if not start.is_executor:  # an executor starts processes lazily, on first submit
                found = module_triggers(facts, start.call)
                for statement in found:
                    options[id(statement)] = ""
                triggers += found
        candidates = [
            s for s in triggers
            if s is not facts.main_guard and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not _guarded_by_predicate(facts, s)
        ]
        if candidates:
            first = min(candidates, key=lambda s: (s.lineno, s.col_offset))
            message = self.summary + options.get(id(first), "") if options.get(id(first)) else None
            yield self.report(facts, first, message, fix=_fix(facts))

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import edit_of
        from dllint.fixes.main_guard import guarded_module

        edit_of(finding, WrapInMainGuard)
        reported = ctx.module_statement(ctx.node_at(finding, cst.BaseStatement))
        new = guarded_module(ctx.module, reported)
        ctx.replace(ctx.module, new)


def _fix(facts: FileFacts) -> Fix | None:
    """The wrap, unless it would bury a definition nested in a moved block (``if True: class
    Ds``) under the guard, where spawn workers cannot find it (DL107)."""
    from dllint.fixes.main_guard import buries_a_definition

    if buries_a_definition(facts.tree.body):
        return None
    return Fix("unsafe", "Move the script's statements under `if __name__ == \"__main__\":`", WrapInMainGuard())


def _guarded_by_predicate(facts: FileFacts, statement: ast.stmt) -> bool:
    """``if is_main():`` where the file's own ``def is_main(): return __name__ == "__main__"`` is
    the test: a main guard by another name (a spawn worker imports the module as ``__mp_main__``)."""
    if not isinstance(statement, ast.If) or statement.orelse:
        return False
    test = statement.test
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and not test.args and not test.keywords):
        return False
    found = [s for s in facts.tree.body if isinstance(s, ast.FunctionDef) and s.name == test.func.id]
    if len(found) != 1 or not _returns_main_guard_test(found[0]):
        return False
    rebound = facts.scopes.module.bindings.get(test.func.id)  # a later `is_main = ...` is another test
    return rebound is None or len(rebound) == 1


def _returns_main_guard_test(function: ast.FunctionDef) -> bool:
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    if function.args.args or function.args.posonlyargs or len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    value = body[0].value
    return value is not None and is_main_guard(ast.If(test=value, body=[], orelse=[]))


def framework_triggers(facts: FileFacts, node: ast.AST) -> list[ast.stmt]:
    """The module-level statements holding a trainer call that calls the framework hook returning
    the loader at ``node``: ``trainer.fit(model, MnistDataModule())`` at module level iterates
    what ``train_dataloader()`` returns."""
    function = facts.scopes.enclosing_function(node)
    calls = hook_callers(facts, function) if function is not None else []
    return [statement for statement in map(facts.module_statement_of, calls) if statement is not None]


def module_triggers(facts: FileFacts, node: ast.AST, via: tuple[ast.Call, ...] = ()) -> list[ast.stmt]:
    """Module-level statements whose execution reaches ``node`` (through same-file calls)."""
    result: list[ast.stmt] = []
    _triggers(facts, via[0] if via else node, result, set())
    return result


def _triggers(facts: FileFacts, node: ast.AST, out: list[ast.stmt], seen: set[ast.AST]) -> None:
    scope = facts.scopes.scope_of(node)
    while not scope.is_module and not scope.is_function and scope.parent is not None:
        scope = scope.parent  # class bodies run at import: keep climbing
    if scope.is_module:
        stmt = facts.module_statement_of(node)
        if stmt is not None and stmt not in out:
            out.append(stmt)
        return
    func = scope.node
    if func in seen or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    seen.add(func)
    owner = scope.parent
    while owner is not None and not owner.is_module and not owner.is_function:
        owner = owner.parent
    if owner is None or isinstance(facts.scopes.parents.get(func), ast.ClassDef):
        return  # methods: called through instances the analysis does not track
    for load, _ in facts.usage.loads_resolving_to(func.name, owner):
        parent = facts.scopes.parents.get(load)
        if isinstance(parent, ast.Call) and parent.func is load:
            _triggers(facts, parent, out, seen)
