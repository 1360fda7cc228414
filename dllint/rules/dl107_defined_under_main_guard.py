from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import shipped_expressions
from dllint.findings import Finding, Fix, MoveAboveGuard
from dllint.rules import Rule
from dllint.rules.fix_values import comprehension_reads

if TYPE_CHECKING:
    from dllint.facts import FileFacts

BUILTIN_NAMES = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__spec__", "__builtins__"}
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class DefinedUnderMainGuard(Rule):
    """
    ## What it does
    Checks for a function or class defined inside the `if __name__ == "__main__":` block that
    a multi-worker loader uses: as its dataset class, `collate_fn`, `worker_init_fn`,
    `sampler`, or inside the arguments that build the dataset (a transform). Reported at the
    definition.

    ## Why is this bad?
    Under `spawn` and `forkserver` (Windows, macOS, and Linux from Python 3.14) each worker
    imports the script as `__mp_main__`, where the guard's body never runs, then unpickles
    the dataset and callables by name: `AttributeError: Can't get attribute 'collate' on
    <module '__mp_main__'>`. The script works under `fork` and breaks everywhere else.

    ## Example
    ```python
    if __name__ == "__main__":
        def collate(batch):
            return pad(batch)

        loader = DataLoader(dataset, num_workers=4, collate_fn=collate)
    ```

    ## Use instead
    ```python
    def collate(batch):
        return pad(batch)

    if __name__ == "__main__":
        loader = DataLoader(dataset, num_workers=4, collate_fn=collate)
    ```

    ## Fix safety
    Safe when the definition reads only module-level names bound outside the guard (and
    builtins): it is moved, unchanged, to just above the guard. When it reads names the guard
    binds (`args`, a model), no fix is offered: moving it would not make those names exist in
    the workers; nor when it is nested in a block inside the guard (`if True:` under it).

    ## References
    - [multiprocessing: the spawn and forkserver start methods](https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods)
    - [Platform-specific behaviors of DataLoader](https://pytorch.org/docs/stable/data.html#platform-specific-behaviors)
    """

    code = "DL107"
    name = "defined-under-main-guard"
    summary = "defined under `if __name__ == \"__main__\":` but used by loader workers: spawn workers cannot find it; define it above the guard"
    fix_safety = "sometimes"
    triggers = (b"DataLoader",)  # needs a multi-worker loader (and a guard); other rules already scan for this
    valid = (
        "from torch.utils.data import DataLoader\n"
        "def collate(b):\n    return b\n"
        "if __name__ == '__main__':\n    DataLoader(ds, num_workers=2, collate_fn=collate)\n",
        "from torch.utils.data import DataLoader\n"
        "if __name__ == '__main__':\n    def collate(b):\n        return b\n"
        "    DataLoader(ds, num_workers=0, collate_fn=collate)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "if __name__ == '__main__':\n    def collate(b):\n        return b\n"
        "    DataLoader(ds, num_workers=2, collate_fn=collate)\n",
        "from torch.utils.data import DataLoader, Dataset\n"
        "if __name__ == '__main__':\n    class Ds(Dataset):\n        pass\n"
        "    DataLoader(Ds(), num_workers=2)\n",
    )

    def apply_fix(self, ctx, finding: Finding) -> None:
        """Move the definition out of the guard's body to just above the guard."""
        import libcst as cst

        from dllint.fixes import FixUnavailable, edit_of, without_blank_prefix
        from dllint.fixes.hoist import adjust_leading_lines, place_before
        from dllint.fixes.main_guard import main_guard_of

        name = edit_of(finding, MoveAboveGuard).name
        guard = main_guard_of(ctx.module)
        if guard is None or not isinstance(guard.body, cst.IndentedBlock):
            raise FixUnavailable("no main guard block")
        matches = [s for s in guard.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name]
        if len(matches) != 1:
            raise FixUnavailable(f"'{name}' is not defined once directly in the guard")
        if len(guard.body.body) == 1:
            raise FixUnavailable("the guard would be left empty")
        body = list(guard.body.body)
        index = body.index(matches[0])
        ctx.remove(matches[0])
        if index == 0:  # the next statement now opens the block: no blank line before it
            adjust_leading_lines(ctx, body[1], without_blank_prefix)
        place_before(ctx, guard, matches[0])

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        guard = facts.main_guard
        if guard is None:
            return
        reported: set[int] = set()
        for loader in facts.loader_calls:
            if not loader.may_start_workers:
                continue
            for shipped in shipped_expressions(facts, loader):
                definition = _guard_definition(facts, shipped.expr, shipped.scope, guard)
                if definition is None or id(definition) in reported:
                    continue
                if isinstance(shipped.expr, ast.Call) and not isinstance(definition, ast.ClassDef):
                    continue  # calling a function ships its result, not the function
                reported.add(id(definition))
                kind = "class" if isinstance(definition, ast.ClassDef) else "function"
                message = (
                    f"{kind} '{definition.name}' is defined under `if __name__ == \"__main__\":` and sent to workers "
                    f"(via {shipped.sink}): spawn workers cannot find it; define it above the guard"
                ) + loader.when_workers()
                yield self.report(facts, definition, message, _fix(facts, definition, guard))


def _guard_definition(
    facts, expr: ast.expr, scope, guard: ast.If
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The module-level ``def``/``class`` bound only inside the main guard that ``expr`` names."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if not isinstance(target, ast.Name):
        return None
    found = facts.scopes.lookup(target.id, scope)
    if found is None or not found[0].is_module or len(found[1]) != 1:
        return None
    binding = found[1][0]
    node = binding.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or facts.module_statement_of(node) is not guard:
        return None  # bound otherwise than by a def or class (the bindings "def" and "class"), or not under the guard
    return node


def _fix(facts, definition: ast.AST, guard: ast.If) -> Fix | None:
    """Moving the definition above the guard: offered only where the fix can do it (the
    definition directly in the guard's body, reading only names bound above it)."""
    if not any(stmt is definition for stmt in guard.body) or not _reads_only_module_names(facts, definition, guard):
        return None
    return Fix(
        "safe",
        f"Move `{definition.name}` above `if __name__ == \"__main__\":`",  # type: ignore[attr-defined]
        MoveAboveGuard(definition.name),  # type: ignore[attr-defined]
    )


def _reads_only_module_names(facts, definition: ast.AST, guard: ast.If) -> bool:
    """Every name the definition reads is its own, a builtin, or bound at module level outside the guard."""
    own = comprehension_reads(definition)  # the scope table does not track comprehensions
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or id(node) in own:
            continue
        found = facts.scopes.lookup(node.id, facts.scopes.scope_of(node))
        if found is None:
            if node.id not in BUILTIN_NAMES:
                return False
            continue
        owner, bindings = found
        if not owner.is_module:
            if not facts.contains(definition, owner.node):
                return False  # a local of an enclosing block's function (cannot happen at module level)
            continue
        for binding in bindings:
            if binding.node is definition:
                continue
            if facts.module_statement_of(binding.node) is guard:
                return False
    return True

