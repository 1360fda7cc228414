from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import local_definition, shipped_expressions
from dllint.findings import Finding, Fix, HoistLocalDefinition
from dllint.rules import Rule
from dllint.rules.fix_values import comprehension_reads

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class LocalCallableInWorker(Rule):
    """
    ## What it does
    Checks for a function or class defined inside another function (a closure, a nested
    `Dataset` class) that a multi-worker loader sends to its workers: as `collate_fn`,
    `worker_init_fn`, `sampler`, `batch_sampler`, the dataset itself, or inside the arguments
    that build the dataset; also one a same-file function returns (`collate_fn=make_collate(pad)`,
    `Ds = get_dataset(); DataLoader(Ds(), ...)`). Reported where it is handed over
    (`collate_fn=collate`, `Local()`).

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
    keyword parameters bound with `functools.partial`. Of an object the closure only reads
    attributes from (`self.pad_value`), the attributes are bound, read once when the loader is
    built, so that the workers do not receive the whole object (a Lightning module and its
    trainer). No fix for a closure that rebinds captured names (`nonlocal`), a class that reads
    local names, or a definition that uses another local function.

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

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        reported: set[int] = set()
        for loader in facts.loader_calls:
            if not loader.may_start_workers:
                continue
            for shipped in shipped_expressions(facts, loader):
                target = shipped.expr.func if isinstance(shipped.expr, ast.Call) else shipped.expr
                definition = local_definition(facts, target, shipped.scope)
                if definition is None and isinstance(shipped.expr, ast.Call) and id(shipped.expr) not in reported:
                    message = _made_by_a_factory(facts, shipped, target)
                    if message is not None:
                        reported.add(id(shipped.expr))
                        yield self.report(facts, shipped.expr, message + loader.when_workers())
                    continue
                if definition is None or id(shipped.expr) in reported:
                    continue
                if isinstance(shipped.expr, ast.Call) and not isinstance(definition, ast.ClassDef):
                    continue  # calling a local function ships its result, not the function
                reported.add(id(shipped.expr))
                kind = "class" if isinstance(definition, ast.ClassDef) else "function"
                message = f"local {kind} '{definition.name}' sent to workers (via {shipped.sink}) cannot be pickled under spawn: define it at module level" + loader.when_workers()
                yield self.report(facts, shipped.expr, message, _fix(facts, definition))

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import edit_of
        from dllint.fixes.hoist import hoist_local_definition

        hoist_local_definition(ctx, ctx.node_at(finding, cst.BaseExpression), edit_of(finding, HoistLocalDefinition).name)


def _made_by_a_factory(facts, shipped, target: ast.expr) -> str | None:
    """The message for a call whose value a same-file function made from a local definition:
    an instance of the local class it returns (``Ds = get_dataset(); Ds()``), or the local
    function it returns (``collate_fn=make_collate(pad)``); None otherwise."""
    local_class = _class_made_by(facts, target, shipped.scope)
    if local_class is not None:
        return (f"'{ast.unparse(target)}' is the local class '{local_class.name}' a function returns, and its instance "
                f"is sent to workers (via {shipped.sink}): it cannot be pickled under spawn; define the class at module level")
    made = _closure_made_by(facts, shipped.expr, shipped.scope)
    if made is None:
        return None
    called = target.id if isinstance(target, ast.Name) else "the call"
    return (f"'{called}()' returns the local function '{made.name}', sent to workers (via {shipped.sink}): it cannot be "
            "pickled under spawn; define it at module level and bind its settings with functools.partial")


def _class_made_by(facts, func: ast.expr, scope) -> ast.ClassDef | None:
    """The local class a same-file function returns, constructed by ``func``:
    ``get_dataset()(...)``, or ``Ds(...)`` where ``Ds = get_dataset()``."""
    if isinstance(func, ast.Name):
        found = facts.scopes.single_value(func.id, scope)
        if found is None or found[1].kind != "assign" or not isinstance(found[1].value, ast.Call):
            return None
        func, scope = found[1].value, found[0]
    if not isinstance(func, ast.Call):
        return None
    made = _made_by(facts, func, scope)
    return made if isinstance(made, ast.ClassDef) else None


def _closure_made_by(facts, call: ast.Call, scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The nested ``def`` a same-file factory returns (``collate_fn=make_collate(pad)``)."""
    made = _made_by(facts, call, scope)
    return made if isinstance(made, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _made_by(facts, call: ast.Call, scope) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The nested ``def`` or ``class`` a same-file factory that ``call`` calls returns."""
    factory = facts.usage.same_file_function(call.func, scope)
    if not isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    factory_scope = facts.scopes.scopes[factory]
    returned = [n.value for n in ast.walk(factory) if isinstance(n, ast.Return) and n.value is not None]
    for value in returned:
        if facts.scopes.scope_of(value) is not factory_scope:
            continue  # a return inside a nested function
        definition = local_definition(facts, value, factory_scope)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return definition
    return None


def _fix(facts, definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Fix | None:
    """The hoisting fix, unless what ``fixes.hoist`` refuses to hoist is already visible here (then
    no fix is advertised that ``--fix`` could not apply)."""
    if any(isinstance(n, ast.Nonlocal) for n in ast.walk(definition)):
        return None
    header: list[ast.AST] = [*definition.decorator_list]
    if isinstance(definition, ast.ClassDef):
        header += [*definition.bases, *(k.value for k in definition.keywords)]
    else:
        header += [definition.args, *([definition.returns] if definition.returns else [])]
    if _enclosing_locals(facts, header, definition):
        return None  # evaluated where it is defined: `def collate(b, pad=pad_value)`
    body = [n for n in ast.iter_child_nodes(definition) if n not in header and not isinstance(n, ast.arguments)]
    captured = _enclosing_locals(facts, body, definition)
    if captured and isinstance(definition, ast.ClassDef):
        return None  # a class reading locals: they have to go through its constructor
    if definition.name in captured or any(b.kind in ("def", "class") for bindings in captured.values() for b in bindings):
        return None  # recursion through the function, or a local callable that cannot be pickled either
    return Fix("unsafe", f"Hoist `{definition.name}` to module level", HoistLocalDefinition(definition.name))


def _enclosing_locals(facts, parts: list[ast.AST], definition: ast.AST) -> dict:
    """Names read in ``parts`` that an enclosing function binds (not ``definition`` itself), with their bindings."""
    found: dict = {}
    for part in parts:
        own = comprehension_reads(part)
        for node in ast.walk(part):
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or id(node) in own:
                continue
            lookup = facts.scopes.lookup(node.id, facts.scopes.scope_of(node))
            if lookup is None or not lookup[0].is_function or facts.contains(definition, lookup[0].node):
                continue
            found[node.id] = lookup[1]
    return found

