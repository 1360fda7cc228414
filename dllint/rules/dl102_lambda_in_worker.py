from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import CALLABLE_SINKS, Shipped, shipped_expressions
from dllint.findings import Finding, Fix, HoistLambda
from dllint.rules import Rule
from dllint.rules.fix_values import comprehension_reads, forwarded_function

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class LambdaInWorker(Rule):
    """
    ## What it does
    Checks for a `lambda` that a multi-worker loader sends to its workers: as `collate_fn`,
    `worker_init_fn`, `sampler` or `batch_sampler`, or inside the arguments that build its
    dataset (a `transform=`, `transforms.Lambda(...)`, `Compose([...])`), directly or through
    names bound once (lists joined with `+` and their items taken by a constant index or slice
    too), also handed in by this file's calls of the function that builds the loader (but for
    a call that gives it no workers) or returned by a function of the file. A project `DataLoader` subclass that passes a lambda to torch's own
    `__init__` (`super().__init__(dataset, collate_fn=lambda b: ..., **kwargs)`) ships it with
    every instance: it counts where an instance may start workers (one in this file, or another
    file's call passing a known `num_workers > 0` or one from a command-line option, whose
    message then says `(when --workers > 0)`).

    ## Why is this bad?
    Under the `spawn` and `forkserver` start methods (Windows, macOS, and Linux from Python
    3.14) workers receive the dataset and these callables by pickle, and a lambda cannot be
    pickled: `PicklingError: Can't pickle <function <lambda>>` (or `AttributeError: Can't
    pickle local object`). The script works on Linux with `fork` and breaks everywhere else.

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=4, collate_fn=lambda batch: pad(batch, 0))
    ```

    ## Use instead
    ```python
    def collate(batch):
        return pad(batch, 0)

    loader = DataLoader(dataset, num_workers=4, collate_fn=collate)
    ```

    ## Fix safety
    Safe when the lambda uses no local names of the enclosing function: it is hoisted to a
    module-level `def` with a name derived from its use; a lambda that only forwards its
    parameters to a module-level function (`lambda b: collate(b)`) becomes that function
    (`collate_fn=collate`). Otherwise no fix (see DL103's). In a
    notebook the hoisted `def` is still not importable by spawn workers (DL106): unsafe there.

    ## References
    - [What can be pickled](https://docs.python.org/3/library/pickle.html#what-can-be-pickled-and-unpickled)
    - [Multiprocessing best practices (platform specifics)](https://pytorch.org/docs/stable/data.html#platform-specific-behaviors)
    """

    code = "DL102"
    name = "lambda-in-worker"
    summary = "lambda sent to worker processes cannot be pickled under spawn: use a module-level def"
    fix_safety = "sometimes"
    valid = (
        "from torch.utils.data import DataLoader\ndef collate(b):\n    return b\n"
        "DataLoader(ds, num_workers=2, collate_fn=collate)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, collate_fn=lambda b: b)\n",
        "from torch.utils.data import DataLoader\n"
        "DataLoader(Folder(sorted(files, key=lambda f: f.name)), num_workers=2)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, collate_fn=lambda b: b)\n",
        "from torch.utils.data import DataLoader\nimport torchvision.transforms as T\n"
        "tf = T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2)])\n"
        "DataLoader(Folder('data', transform=tf), num_workers=2)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        reported: set[int] = set()
        for loader in facts.loader_calls:
            if not loader.may_start_workers:
                continue
            for shipped in shipped_expressions(facts, loader, through_functions=True):
                if isinstance(shipped.expr, ast.Lambda) and id(shipped.expr) not in reported:
                    reported.add(id(shipped.expr))
                    message = f"lambda passed to workers (via {shipped.sink}) cannot be pickled under spawn: use a module-level def" + loader.when_workers()
                    yield self.report(facts, shipped.expr, message, self._fix(facts, shipped))
        for shipped, suffix in subclass_lambdas(facts):
            if id(shipped.expr) not in reported:
                reported.add(id(shipped.expr))
                message = f"lambda passed to workers (via {shipped.sink}) cannot be pickled under spawn: use a module-level def" + suffix
                yield self.report(facts, shipped.expr, message, self._fix(facts, shipped))

    @staticmethod
    def _fix(facts, shipped) -> Fix | None:
        if uses_enclosing_locals(facts, shipped.expr):
            return None
        statement = facts.module_statement_of(shipped.expr)
        forwarded = forwarded_function(facts.tree, shipped.expr, statement) if statement is not None else None
        if forwarded is not None:
            # `lambda b: collate(b)` is `collate`: no new def needed.
            return Fix("unsafe" if facts.is_notebook else "safe", ETA_REDUCTION.format(forwarded), HoistLambda(shipped.sink))
        if facts.is_notebook:
            # A notebook-level def is no more importable by spawn workers than the lambda (DL106).
            return Fix("unsafe", "Hoist the lambda to a notebook-level function (spawn workers still need it in a module: DL106)", HoistLambda(shipped.sink))
        return Fix("safe", "Hoist the lambda to a module-level function", HoistLambda(shipped.sink))

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import edit_of
        from dllint.fixes.hoist import derived_lambda_name, lambda_to_def, place_before

        lam = ctx.node_at(finding, cst.Lambda)
        callee = lam.body.func.value if isinstance(lam.body, cst.Call) and isinstance(lam.body.func, cst.Name) else None
        if callee is not None and finding.fix is not None and finding.fix.message == ETA_REDUCTION.format(callee):
            ctx.replace(lam, cst.Name(callee))  # the check found it forwards to that module-level name
            return
        statement = ctx.statement_of(lam)
        parent = ctx.parent(lam)
        if (
            ctx.parent(statement) is ctx.module
            and isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
            and len(statement.body) == 1
        ):
            # `name = lambda ...` at module level becomes `def name(...)` in place.
            definition = lambda_to_def(ctx, lam, parent.targets[0].target.value)
            line = definition.body.body[0].with_changes(trailing_whitespace=statement.trailing_whitespace)
            definition = definition.with_changes(leading_lines=statement.leading_lines, body=definition.body.with_changes(body=[line]))
            ctx.replace(statement, definition)
            return
        name = ctx.unique_name(derived_lambda_name(ctx, lam, edit_of(finding, HoistLambda).sink), site=lam)
        place_before(ctx, ctx.module_statement(lam), lambda_to_def(ctx, lam, name))
        ctx.replace(lam, cst.Name(name))


ETA_REDUCTION = "Replace the lambda with `{}`"


def subclass_lambdas(facts: FileFacts) -> Iterator[tuple[Shipped, str]]:
    """Lambdas a project DataLoader subclass of this file hands to torch's own ``__init__``
    (``super().__init__(dataset, collate_fn=lambda b: merge(b), **kwargs)``): every instance
    ships them, so they count where one instance may start workers (:func:`_subclass_workers`),
    with the message suffix that instance's loader gives."""
    for info in facts.classes.values():
        init = info.method("__init__") if info.is_loader else None
        if init is None or not isinstance(facts.scopes.parents.get(info.node), ast.Module):
            continue
        lambdas = [(k.value, k.arg) for call in ast.walk(init) if isinstance(call, ast.Call) and _super_init(call, info.node)
                   for k in call.keywords if k.arg in CALLABLE_SINKS and isinstance(k.value, ast.Lambda)]
        suffix = _subclass_workers(facts, info.node) if lambdas else None
        if suffix is not None:
            for lam, sink in lambdas:
                yield Shipped(lam, facts.scopes.scope_of(lam), sink), suffix


def _super_init(node: ast.Call, cls: ast.ClassDef) -> bool:
    """``super().__init__(...)``, ``super(Cls, self).__init__(...)`` or ``Base.__init__(self, ...)``
    with ``Base`` one of the class's bases."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"):
        return False
    receiver = node.func.value
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
        return True
    return any(ast.dump(receiver) == ast.dump(base) for base in cls.bases)


def _subclass_workers(facts: FileFacts, cls: ast.ClassDef) -> str | None:
    """Evidence that an instance of ``cls`` starts workers: a loader call of it in this file
    that may (its message suffix), or a call in another project file passing a known positive
    ``num_workers`` (or the CPU count), or one from a command-line option (its suffix, as for a
    call here); None without evidence (unknown is silent). The calls read are evidence even
    where another file imports the class and makes no call read (pretrain-gnns' ``model.py``
    imports ``DataLoaderFinetune`` and never uses it)."""
    for loader in facts.loader_calls:
        if isinstance(loader.node.func, (ast.Name, ast.Attribute)) and _names(loader.node.func, cls.name) and loader.may_start_workers:
            return loader.when_workers()
    project = facts.project
    elsewhere = project.calls_elsewhere(cls.name, complete=False) if project is not None and not project.summarizing else None
    for arguments in elsewhere or []:
        workers = arguments.constants.get("num_workers")
        if "num_workers" in arguments.cpu_counts or isinstance(workers, int) and not isinstance(workers, bool) and workers > 0:
            return ""
    options = [arguments.options["num_workers"] for arguments in elsewhere or [] if "num_workers" in arguments.options]
    return f" (when {options[0]} > 0)" if options else None


def _names(func: ast.expr, name: str) -> bool:
    return func.id == name if isinstance(func, ast.Name) else isinstance(func, ast.Attribute) and func.attr == name


def uses_enclosing_locals(facts, lam: ast.Lambda) -> bool:
    """Whether the lambda reads a name bound in an enclosing function (not module-level, not builtin)."""
    scope = facts.scopes.scopes[lam]
    comprehension_names = _comprehension_targets_around(facts, lam)
    own = comprehension_reads(lam.body)  # `lambda batch: [b[0] for b in batch]`: b is the comprehension's
    for node in ast.walk(lam.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in own:
            if node.id in comprehension_names:
                return True  # `[lambda x: x + i for i in ...]`: i lives in the comprehension
            found = facts.scopes.lookup(node.id, facts.scopes.scope_of(node))
            if found is not None and found[0] is not scope and found[0].is_function:
                return True
    return False


def _comprehension_targets_around(facts, node: ast.AST) -> set[str]:
    """Names bound by the comprehensions that enclose ``node`` (the scope table does not track them)."""
    names: set[str] = set()
    current = facts.scopes.parents.get(node)
    while current is not None:
        if isinstance(current, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for generator in current.generators:
                names.update(n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name))
        current = facts.scopes.parents.get(current)
    return names
