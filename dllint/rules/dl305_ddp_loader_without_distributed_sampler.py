from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.distributed import DistributedFacts
from dllint.facts.samplers import DISTRIBUTED_SAMPLERS
from dllint.facts.training import names_before
from dllint.findings import AddDistributedSampler, Finding, Fix
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

SAMPLER_NAME = "DistributedSampler"
SAMPLER_MODULES = ("torch.utils.data", "torch.utils.data.distributed")
NOWHERE = (0, 0)  # a position the edit does not use


class DdpLoaderWithoutDistributedSampler(Rule):
    """
    ## What it does
    Checks, in a script that sets up distributed data parallel training (it calls
    `init_process_group`, `DistributedDataParallel(...)` or DeepSpeed's `initialize` /
    `init_distributed`, or reads `LOCAL_RANK`, `RANK` or `WORLD_SIZE` from the environment, as
    `torchrun` and `mp.spawn` workers do (not a read only `if` tests use, directly, through a
    name bound once or a same-file function's return value, to keep a side effect to one
    process; nor a set-up under an `if` that never runs, `world_size = 1` then `if world_size >
    1:`), unless the file trains with JAX/Flax and never
    imports `torch.distributed`), for a loader over a map-style dataset with no
    `sampler`/`batch_sampler`, or with a sampler that knows nothing of ranks (`RandomSampler`,
    `SequentialSampler`, `WeightedRandomSampler`). Silent for loaders built on one rank only
    (`if rank == 0:`) or in the single-process branch (`else:` of `if n_gpus > 1:`, or beside
    the branch that sets DDP up), over data split by rank by hand (`files[rank::world_size]`,
    `idx.split(ceil(n / world_size))[rank]`, `shard(num_shards=world, index=rank)`, followed
    through the names the dataset is built from, also a call they are unpacked from, `train, val
    = partition_dataset(shard, ratios=[0.8, 0.2])`, and what this file's calls pass for a
    parameter, `prepare_data(shard)`) or an `IterableDataset` (DL302's ground),
    iterated only on one rank, or unshuffled and iterated once outside any epoch loop by a
    function that then splits its work by rank (every rank embeds the whole set, then scores
    its own share: `sims[rank * step:...]`), with a sampler it cannot see (a parameter, a
    conditional), handed to DeepSpeed's `initialize(training_data=...)`, and in files that
    hand their loaders to a framework that shards them itself (Lightning, accelerate, the
    Hugging Face `Trainer`). Reported at the loader call.

    ## Why is this bad?
    Each rank of a DDP job runs the whole script. Without a `DistributedSampler` every rank
    iterates the entire dataset: an epoch does N times the work on N GPUs, every sample is seen
    N times per epoch (N copies of each gradient, averaged), and with `shuffle=True` the ranks
    draw different permutations of the same data. Training looks normal and nothing warns.

    ## Example
    ```python
    dist.init_process_group("nccl")
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    for epoch in range(10):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    dist.init_process_group("nccl")
    loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            ...
    ```

    ## Fix safety
    Unsafe: sets `sampler=DistributedSampler(dataset)` with the loader's `shuffle` moved into it
    (`shuffle=False` where the loader did not shuffle), imports it when needed, and inserts
    `<loader>.sampler.set_epoch(epoch)` at the start of the epoch loop when the loader is
    shuffled and iterated in one. Each rank then sees 1/N of the data per epoch, so the number
    of steps, the learning-rate schedule and evaluation numbers change. No fix for a sampler
    already given, a `batch_sampler`, or a dataset written as a call (it would be built twice).

    ## References
    - [torch.utils.data.distributed.DistributedSampler](https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler)
    - [Getting started with distributed data parallel](https://pytorch.org/tutorials/intermediate/ddp_tutorial.html)
    - [DeepSpeed initialize: training_data](https://deepspeed.readthedocs.io/en/latest/initialize.html)
    """

    code = "DL305"
    name = "ddp-loader-without-distributed-sampler"
    summary = "loader without a DistributedSampler in a DDP script: every rank iterates the whole dataset; pass sampler=DistributedSampler(dataset)"
    fix_safety = "unsafe"
    triggers = (b"init_process_group", b"DistributedDataParallel", b"RANK", b"WORLD_SIZE", b"deepspeed")
    literal_triggers = (b"RANK", b"WORLD_SIZE")  # os.environ["WORLD_SIZE"]
    needs_one_of = (b"DataLoader",)  # DDP setup alone reports nothing: the finding is on a loader call
    valid = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "dist.init_process_group('gloo')\nloader = DataLoader(ds, sampler=DistributedSampler(ds))\n",
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        "dist.init_process_group('gloo')\nif dist.get_rank() == 0:\n    val = DataLoader(ds)\n",
        "import lightning as L\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        "dist.init_process_group('gloo')\nloader = DataLoader(ds, shuffle=True)\nL.Trainer().fit(model, loader)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=True)\n",
    )
    invalid = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        "dist.init_process_group('nccl')\nloader = DataLoader(ds, batch_size=64, shuffle=True)\n",
        "import os\nfrom torch.utils.data import DataLoader, RandomSampler\n"
        "rank = int(os.environ['LOCAL_RANK'])\nloader = DataLoader(ds, sampler=RandomSampler(ds))\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        if not facts.loader_calls:
            return
        distributed = DistributedFacts(facts)
        setup = distributed.setup
        if setup is None or distributed.framework is not None:
            return
        for loader in facts.loader_calls:
            kind = distributed.sampler_kind(loader)
            if kind not in ("none", "rank-blind"):
                continue
            if distributed.dataset_is_sharded_or_iterable(loader) or distributed.one_rank_only(loader.node):
                continue
            if distributed.iterated_on_one_rank_only(loader) or _one_evaluation_pass(facts, loader, kind, distributed):
                continue
            if distributed.handed_to_deepspeed(loader):
                continue  # deepspeed.initialize(training_data=loader) builds a distributed loader of its own
            what = "no sampler" if kind == "none" else "a sampler that ignores ranks"
            message = (
                f"loader with {what} in a DDP script (it uses {setup.what}): every rank iterates the whole "
                "dataset; pass sampler=DistributedSampler(dataset)"
            )
            yield self.report(facts, loader.node, message, fix=self._fix(facts, loader) if kind == "none" else None)

    # -- the fix ---------------------------------------------------------------------------
    @staticmethod
    def _fix(facts, loader) -> Fix | None:
        dataset = loader.argument("dataset")
        if dataset is None or dataset.from_splat or not isinstance(dataset.value, (ast.Name, ast.Attribute)):
            return None
        if loader.argument("batch_sampler") is not None:
            return None
        shuffle = loader.argument("shuffle")
        if shuffle is not None and shuffle.from_splat:
            return None
        shuffled = loader.value("shuffle").truthy() if shuffle is not None else False
        sampler_name, import_how, import_at = _sampler_name(facts, loader)
        if sampler_name is None:
            return None
        dataset_code = ast.unparse(dataset.value)
        if shuffle is None or shuffled is False:
            call = f"{sampler_name}({dataset_code}, shuffle=False)"
        elif shuffled is True and isinstance(shuffle.value, ast.Constant):
            call = f"{sampler_name}({dataset_code})"
        else:
            call = f"{sampler_name}({dataset_code}, shuffle={ast.unparse(shuffle.value)})"
        message = f"Pass `sampler={call}`"
        statement, before = ("", NOWHERE) if shuffled is False else _set_epoch(facts, loader)
        if statement:
            message += f" and insert `{statement}` in the epoch loop"
        removed = ("shuffle",) if shuffle is not None else ()
        return Fix("unsafe", message, AddDistributedSampler(call, removed, import_how, import_at, statement, before))

    def apply_fix(self, ctx, finding: Finding) -> None:
        import libcst as cst

        from dllint.fixes import edit_of
        from dllint.fixes.arguments import argument_name, remove_arguments, set_argument

        edit = edit_of(finding, AddDistributedSampler)
        call = ctx.node_at(finding, cst.Call)
        for arg in call.args:
            if argument_name(call, arg) in edit.remove:
                remove_arguments(ctx, call, arg, edit.remove)
                break
        sampler = cst.parse_expression(edit.sampler)
        ctx.replace(call, lambda updated: set_argument(updated, "sampler", sampler))
        if edit.import_how == "into":
            _import_into(ctx, edit.import_at)
        elif edit.import_how == "before":
            _import_before(ctx, edit.import_at)
        if edit.set_epoch:
            statement = cst.parse_statement(edit.set_epoch, config=ctx.module.config_for_parsing)
            ctx.insert_before(_statement_at(ctx, edit.set_epoch_before), [statement])


def _one_evaluation_pass(facts, loader, kind: str, distributed: DistributedFacts) -> bool:
    """An unshuffled loader the file iterates once, outside any epoch loop, never hands on, in a
    function that then splits its work by rank (BLIP's retrieval test: every rank embeds the
    whole set, then scores ``sims[rank * step:...]``). A one-pass test loop that only keeps its
    printing to rank 0 still evaluates the whole set on every rank: N times the work, and
    per-rank metrics over the same data, so it is reported."""
    if kind != "none" or loader.value("shuffle").truthy() is not False and not loader.value("shuffle").is_absent:
        return False
    uses = facts.usage.loader_uses(loader)
    if not uses or not all(use.iterates for use in uses) or facts.loops.epoch_iteration(loader) is not None:
        return False
    functions = [facts.scopes.enclosing_function(use.node) for use in uses]
    return all(function is not None and distributed.splits_work_by_rank(function) for function in functions)


def _sampler_name(facts, loader) -> tuple[str | None, str, tuple[int, int]]:
    """How the file can name ``DistributedSampler``, and how it gets imported (see
    :class:`AddDistributedSampler`)."""
    for local, qualified in sorted(facts.imports.items()):
        if qualified in DISTRIBUTED_SAMPLERS:
            return local, "", NOWHERE
    func = loader.node.func
    if isinstance(func, ast.Attribute) and facts.qualname(func.value) in SAMPLER_MODULES:
        return f"{ast.unparse(func.value)}.{SAMPLER_NAME}", "", NOWHERE
    if SAMPLER_NAME in facts.imports or any(SAMPLER_NAME in scope.bindings for scope in facts.scopes.scopes.values()):
        return None, "", NOWHERE  # the name means something else here
    imports = [s for s in facts.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    for stmt in imports:
        if (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module in SAMPLER_MODULES
            and stmt.level == 0
            and all(a.name != "*" for a in stmt.names)
        ):
            return SAMPLER_NAME, "into", (stmt.lineno, stmt.col_offset + 1)
    after = next((s for s in facts.tree.body if imports and s.lineno > imports[-1].lineno), None)
    if after is None:
        return None, "", NOWHERE
    return SAMPLER_NAME, "before", (after.lineno, after.col_offset + 1)


def _set_epoch(facts, loader) -> tuple[str, tuple[int, int]]:
    """DL301's edit for the new sampler: ``<loader>.sampler.set_epoch(epoch)`` first in the epoch
    loop, and where it goes; ``("", NOWHERE)`` without an epoch loop or a name for the loader."""
    use = facts.loops.epoch_iteration(loader)
    if use is None:
        return "", NOWHERE
    loop = facts.loops.epoch_loops(use)[-1]
    if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name)):
        return "", NOWHERE
    scope = facts.scopes.scope_of(loop)
    visible = set(names_before(scope, loop))
    names = sorted(n for n in facts.loops.loader_names(loader, use, scope) if n in visible)
    if not names:
        return "", NOWHERE
    first = loop.body[0]
    return f"{names[0]}.sampler.set_epoch({loop.target.id})", (first.lineno, first.col_offset + 1)


def _statement_at(ctx, where):
    import libcst as cst

    from dllint.fixes import FixUnavailable

    start = (where[0], where[1] - 1)
    for node in ctx.state.nodes_on_line(start[0]):
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and ctx.span(node)[0] == start:
            return node
    raise FixUnavailable(f"no statement at {where[0]}:{where[1]}")


def _import_into(ctx, where) -> None:
    """Add ``DistributedSampler`` to an existing ``from torch.utils.data import ...``."""
    import libcst as cst

    line = _statement_at(ctx, where)

    def add(updated):
        body = []
        for small in updated.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                names = list(small.names)
                names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                small = small.with_changes(names=[*names, cst.ImportAlias(name=cst.Name(SAMPLER_NAME))])
            body.append(small)
        return updated.with_changes(body=body)

    ctx.replace(line, add)


def _import_before(ctx, where) -> None:
    import libcst as cst

    statement = _statement_at(ctx, where)
    new = cst.parse_statement(f"from torch.utils.data.distributed import {SAMPLER_NAME}", config=ctx.module.config_for_parsing)
    ctx.insert_before(statement, [new])
