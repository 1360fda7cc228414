from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.flow.model import RemoteLoop
from dllint.facts.training import names_before
from dllint.facts.values import maybe_none
from dllint.findings import Finding, Fix, InsertStatement
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Use


class MissingSetEpoch(Rule):
    """
    ## What it does
    Checks for a `DistributedSampler` (with `shuffle` not `False`) whose loader is iterated
    in an epoch loop, directly, through the project's functions, or by the callers of the
    factory that returns it (`data_utils.build_loader` returning the loader, `train.py`
    iterating it every epoch), while nothing calls `set_epoch` on the sampler or on
    `<loader>.sampler`: not in this file, and not in the files its loader reaches. A sampler a
    factory returns goes where its callers' loaders take it (a caller passing it to a loader it
    loops over every epoch, in its file or through the project's functions). A sampler
    or loader handed to code outside the project (a trainer) may get `set_epoch` called
    there, and is left alone; so is one whose epochs are run by a framework that calls
    `set_epoch` itself (Lightning's `train_dataloader`/`val_dataloader` hooks and
    `trainer.fit`, Hugging Face `Trainer.get_train_dataloader`). Silent for a loader iterated
    only for evaluation (under `torch.no_grad()`/`torch.inference_mode()`, or in a function for
    validation or testing, and never in a loop that calls `.backward()` or an optimizer's
    `step()`): it feeds an average, whose value does not depend on the order. Reported at the
    sampler construction.

    ## Why is this bad?
    `DistributedSampler` shuffles with a generator seeded by `seed + epoch`, and `epoch` only
    changes through `set_epoch`. Without it every epoch visits the samples in exactly the same
    order on every rank: the model trains on one fixed permutation, which silently hurts
    convergence. Nothing raises or warns.

    ## Example
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(100):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for batch in loader:
            ...
    ```

    ## Fix safety
    Unsafe: inserts `sampler.set_epoch(epoch)` (or `loader.sampler.set_epoch(epoch)`) as the
    first statement of the epoch loop. It changes the order of samples, and so the results,
    of every run after the first epoch. No fix is offered for a `while` loop or a loop without
    a plain counter.

    ## References
    - [torch.utils.data.distributed.DistributedSampler](https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler)
    """

    code = "DL301"
    name = "missing-set-epoch"
    summary = "DistributedSampler without set_epoch(): every epoch repeats the same order; call sampler.set_epoch(epoch) at the start of each epoch"
    fix_safety = "unsafe"
    triggers = (b"DistributedSampler",)
    valid = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(10):\n    sampler.set_epoch(epoch)\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
        "for epoch in range(10):\n    loader.sampler.set_epoch(epoch)\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False))\n"
        "for epoch in range(10):\n    for b in loader:\n        pass\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "def make(ds):\n    return DataLoader(ds, sampler=DistributedSampler(ds))\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(10):\n    for b in loader:\n        pass\n",
        "from torch.utils.data.distributed import DistributedSampler\nfrom torch.utils.data import DataLoader\n"
        "def train_one_epoch(loader):\n    for b in loader:\n        pass\n"
        "def main(ds):\n    loader = DataLoader(ds, sampler=DistributedSampler(ds, shuffle=True))\n"
        "    for epoch in range(3):\n        train_one_epoch(loader)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        analysis = facts.samplers
        for sampler in analysis.distributed:
            if sampler.shuffle.truthy() is not True and not sampler.shuffle.is_absent:
                continue  # shuffle=False, or unknown
            if sampler.escapes:
                continue
            if not sampler.feeds:
                if sampler.epochs_elsewhere and not analysis.set_epoch_may_be_called(sampler):
                    yield self.report(facts, sampler.node)  # the epoch loop is in another file: no fix here
                continue
            if any(facts.loops.escapes(loader) for loader, _ in sampler.feeds):
                continue  # a trainer elsewhere may call loader.sampler.set_epoch
            if all(facts.training.evaluation_only(loader) for loader, _ in sampler.feeds):
                continue  # its batches only feed an average: their order does not matter
            epoch = next(
                (
                    (loader, how, use)
                    for loader, how in sampler.feeds
                    if (use := facts.loops.epoch_iteration(loader)) and not _framework_sets_epoch(facts, use)
                ),
                None,
            )
            if epoch is None or analysis.set_epoch_may_be_called(sampler):
                continue
            yield self.report(facts, sampler.node, fix=self._fix(facts, sampler, *epoch))

    @staticmethod
    def _fix(facts, sampler, loader, how, use) -> Fix | None:
        loop = facts.loops.epoch_loops(use)[-1]
        if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name)):
            return None
        scope = facts.scopes.scope_of(loop)
        receiver = None
        for name in names_before(scope, loop):
            if facts.loops.refers_to(name, scope, sampler.node):
                receiver = name
                break
        argument = loader.argument("sampler")
        if receiver is None and how == "sampler" and not maybe_none(argument.value, argument.scope, facts):
            loaders = facts.loops.loader_names(loader, use, scope)
            visible = [n for n in loaders if n in names_before(scope, loop)]
            if visible:
                receiver = f"{sorted(visible)[0]}.sampler"
        if receiver is None:
            return None
        first = loop.body[0]
        statement = f"{receiver}.set_epoch({loop.target.id})"
        return Fix(
            "unsafe",
            f"Insert `{statement}` at the start of the epoch loop",
            InsertStatement(statement, (first.lineno, first.col_offset + 1)),
        )

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import FixUnavailable, edit_of

        edit = edit_of(finding, InsertStatement)
        where, statement = edit.before, edit.statement
        start = (where[0], where[1] - 1)
        first = next(
            (n for n in ctx.state.nodes_on_line(start[0]) if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and ctx.span(n)[0] == start),
            None,
        )
        if first is None:
            raise FixUnavailable(f"no statement at {where[0]}:{where[1]}")
        ctx.insert_before(first, [cst.parse_statement(statement, config=ctx.module.config_for_parsing)])


def _framework_sets_epoch(facts: FileFacts, use: Use) -> bool:
    """Only a framework's own epoch loop repeats this iteration (Lightning's fit loop, Hugging
    Face's ``Trainer``): it calls ``sampler.set_epoch(epoch)`` itself before every epoch."""
    loops = facts.loops.epoch_loops(use)
    return bool(loops) and all(isinstance(loop, RemoteLoop) and loop.framework for loop in loops)
