from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import local_definition, shipped_expressions
from dllint.findings import Finding, Fix
from dllint.rules import Rule

if TYPE_CHECKING:
    import libcst as cst


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
            if not loader.may_start_workers:
                continue
            for shipped in shipped_expressions(facts, loader):
                target = shipped.expr.func if isinstance(shipped.expr, ast.Call) else shipped.expr
                definition = local_definition(facts, target, shipped.scope)
                if definition is None and isinstance(shipped.expr, ast.Call) and id(shipped.expr) not in reported:
                    made = _closure_made_by(facts, shipped.expr, shipped.scope)
                    if made is not None:
                        reported.add(id(shipped.expr))
                        message = (
                            f"'{target.id if isinstance(target, ast.Name) else 'the call'}()' returns the local function "
                            f"'{made.name}', sent to workers (via {shipped.sink}): it cannot be pickled under spawn; "
                            "define it at module level and bind its settings with functools.partial"
                        ) + loader.when_workers()
                        yield self.report(facts, shipped.expr, message)
                    continue
                if definition is None or id(shipped.expr) in reported:
                    continue
                if isinstance(shipped.expr, ast.Call) and not isinstance(definition, ast.ClassDef):
                    continue  # calling a local function ships its result, not the function
                reported.add(id(shipped.expr))
                kind = "class" if isinstance(definition, ast.ClassDef) else "function"
                message = f"local {kind} '{definition.name}' sent to workers (via {shipped.sink}) cannot be pickled under spawn: define it at module level" + loader.when_workers()
                fix = Fix("unsafe", f"Hoist `{definition.name}` to module level", (("name", definition.name),))
                yield self.report(facts, shipped.expr, message, fix)

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import FixUnavailable, without_blank_prefix
        from dllint.fixes.hoist import (
            adjust_leading_lines,
            captured_names,
            clashes_at_module_level,
            definition_table,
            has_nonlocal,
            local_cst_definition,
            names_in,
            place_before,
            references,
        )

        name = finding.fix.get("name") if finding.fix else None
        handed_over = ctx.node_at(finding, cst.BaseExpression)
        owner, definition = _owner_and_definition(ctx, handed_over, name)
        if has_nonlocal(definition):
            raise FixUnavailable(f"'{name}' rebinds names of its function (nonlocal)")
        owner_lines = _lines(ctx, owner)
        table = definition_table(ctx.text, name, _lines(ctx, definition))
        captured = captured_names(table)
        if name in captured:
            raise FixUnavailable(f"'{name}' refers to itself through its function")
        if captured and isinstance(definition, cst.ClassDef):
            raise FixUnavailable(f"class '{name}' reads local names ({', '.join(captured)}): pass them to its constructor")
        owner_locals = {s.get_name() for s in definition_table(ctx.text, owner.name.value, owner_lines).get_symbols() if s.is_local() or s.is_free()}
        header = [*definition.decorators]
        if isinstance(definition, cst.FunctionDef):
            header += [definition.params, *([definition.returns] if definition.returns else [])]
        else:
            header += [*definition.bases, *definition.keywords]
        evaluated_locals = set().union(*(names_in(part) for part in header)) & owner_locals if header else set()
        if evaluated_locals:
            raise FixUnavailable(f"'{name}' is defined with local names ({', '.join(sorted(evaluated_locals))})")
        for captured_name in captured:
            try:
                local_cst_definition(ctx, owner, captured_name)
            except FixUnavailable:
                continue
            raise FixUnavailable(f"'{name}' uses the local '{captured_name}', which cannot be pickled either")
        uses = references(owner, name, definition)
        if any(isinstance(ctx.parent(use), (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)) for use in uses):
            raise FixUnavailable(f"'{name}' is reassigned in '{owner.name.value}'")
        new_name = name
        if name in ctx.state.reserved_names or clashes_at_module_level(ctx.text, name, owner_lines):
            new_name = ctx.unique_name(name)
        ctx.state.reserved_names.add(new_name)
        hoisted = definition.with_changes(name=cst.Name(new_name))
        if captured:
            params = hoisted.params
            hoisted = hoisted.with_changes(params=params.with_changes(kwonly_params=[*params.kwonly_params, *(cst.Param(cst.Name(n)) for n in captured)]))
            bound = ", ".join(f"{n}={n}" for n in captured)
            replacement = cst.parse_expression(f"functools.partial({new_name}, {bound})")
            ctx.ensure_import("functools")
        else:
            replacement = cst.Name(new_name)
        place_before(ctx, ctx.module_statement(owner), hoisted)
        ctx.remove(definition)
        block = ctx.parent(definition)
        if isinstance(block, cst.IndentedBlock) and block.body[0] is definition and len(block.body) > 1:
            adjust_leading_lines(ctx, block.body[1], without_blank_prefix)
        if captured or new_name != name:
            for use in uses:
                ctx.replace(use, replacement)


def _lines(ctx, node: cst.CSTNode) -> range:
    (start, _), (end, _) = ctx.span(node)
    return range(start, end + 1)


def _closure_made_by(facts, call: ast.Call, scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The nested ``def`` a same-file factory returns (``collate_fn=make_collate(pad)``)."""
    factory = facts.usage.same_file_function(call.func, scope)
    if not isinstance(factory, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    factory_scope = facts.scopes.scopes[factory]
    returned = [n.value for n in ast.walk(factory) if isinstance(n, ast.Return) and n.value is not None]
    for value in returned:
        if facts.scopes.scope_of(value) is not factory_scope:
            continue  # a return inside a nested function
        definition = local_definition(facts, value, factory_scope)
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return definition
    return None


def _owner_and_definition(ctx, node: cst.CSTNode, name: str | None):
    """The function that defines ``name`` locally (the nearest one around ``node``) and the definition."""
    import libcst as cst

    from dllint.fixes import FixUnavailable
    from dllint.fixes.hoist import local_cst_definition

    if not name:
        raise FixUnavailable("the finding names no definition")
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            try:
                return ancestor, local_cst_definition(ctx, ancestor, name)
            except FixUnavailable:
                continue
    raise FixUnavailable(f"cannot find the local definition of '{name}'")
