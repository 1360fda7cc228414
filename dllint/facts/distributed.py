"""Distributed data parallel training in one file: what sets it up, which frameworks shard the
loaders themselves, which code runs on one rank only, and which samplers split data by rank (DL305).

The framework names live here, in one table, until the project index's framework table takes
them over.
"""

from __future__ import annotations

import ast
import operator
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.flow.syntax import ends_the_path
from dllint.facts.imports import dotted_name
from dllint.facts.values import follow
from dllint.facts.workers import passed_for

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

# Calls that set up a process group or wrap a model for DDP.
SETUP_CALLS = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.nn.DistributedDataParallel",
        # DeepSpeed sets up its own process group (``init_distributed``, also inside ``initialize``).
        "deepspeed.initialize",
        "deepspeed.init_distributed",
        "deepspeed.comm.init_distributed",
    }
)
# DeepSpeed builds its own distributed loader from the data handed to it here
# (https://deepspeed.readthedocs.io/en/latest/initialize.html: ``training_data``).
DEEPSPEED_INITIALIZE = "deepspeed.initialize"
# Words in a count compared with 1 (``if n_gpus > 1:``, ``if world_size > 1:``): the branch
# where it is 1 runs a single process, with no process group.
COMPARISONS = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Eq: operator.eq, ast.NotEq: operator.ne}
PROCESS_COUNT_WORDS = ("gpu", "world", "nproc", "n_proc", "num_proc", "device_count", "num_devices", "ndev")
# Environment variables torchrun / torch.distributed.launch set for every rank.
RANK_VARIABLES = frozenset({"LOCAL_RANK", "RANK", "WORLD_SIZE"})
# Training frameworks of their own, with their own multi-host model (one process per host, the
# devices split each batch: ``jax.pmap``). A file importing one that never touches
# ``torch.distributed`` only carries the rank variables along (Hugging Face's argparse
# boilerplate copies ``LOCAL_RANK`` into ``args.local_rank``): reading them is no DDP marker there.
OTHER_RUNTIMES = ("jax", "flax")
# Calls that run a function once per rank, each in a process of its own.
RANK_SPAWNS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn", "torch.multiprocessing.start_processes"})
# Frameworks that give each rank its own shard (they replace the sampler of the loaders they get):
# a file importing one hands its loaders to it. Module prefixes, and names imported from them.
# (DeepSpeed is not one: it shards only the ``training_data`` handed to ``initialize``.)
FRAMEWORKS = {
    "Lightning": ("lightning", "pytorch_lightning"),
    "accelerate": ("accelerate",),
    "HF Trainer": ("transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer", "trl"),
    "Composer": ("composer",),
}
# Samplers that know nothing of ranks: every rank draws from the whole dataset.
RANK_BLIND_SAMPLERS = frozenset(
    {
        f"torch.utils.data{module}.{name}"
        for module in ("", ".sampler")
        for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler")
    }
)
BATCH_SAMPLERS = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})
# Words in a condition that select one rank (``if rank == 0``, ``if is_main_process():``) or decide
# on the distributed mode (``if args.distributed:``, ``assert not multi_gpu``): code under such a
# condition may run on one rank only, or only without DDP.
RANK_CONDITION_WORDS = (
    "rank", "main_process", "is_main", "is_master", "master_process", "is_primary",
    "distributed", "ddp", "multi_gpu", "multigpu", "world",
)
# Lightning hooks: a file that defines them hands its loaders to a Trainer, which replaces their
# sampler (``use_distributed_sampler``), even when the Lightning import sits in another module.
LIGHTNING_HOOKS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})
# Words in a dataset's construction that shard it by rank by hand (``Subset(ds, idx[rank::world])``,
# ``ds.shard(num_shards=world_size, index=rank)``, ``split_dataset_by_node``).
SHARDING_WORDS = ("rank", "world", "shard", "split_dataset_by_node", "num_replicas")
# Words of the rank or world size a function computes with when it splits work by rank.
SPLIT_WORDS = ("rank", "world_size", "num_replicas", "num_tasks")
# Datasets that are iterable: DL302's ground, not DL305's.
ITERABLE_WORDS = ("IterableDataset", "IterDataPipe", "WebDataset", "wds.", "streaming")
MAX_DEPTH = 8
MAX_EXPRESSIONS = 32  # expressions followed back from a dataset argument


class Setup(NamedTuple):
    """Why the file counts as DDP training: the first call or variable read that says so."""

    node: ast.AST
    what: str


class DistributedFacts:
    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts

    # -- the file sets up DDP ------------------------------------------------------
    @cached_property
    def setups(self) -> list[Setup]:
        """Every call or rank-variable read that sets up (or joins) DDP, in file order:
        ``init_process_group``, ``DistributedDataParallel(...)``, DeepSpeed's ``initialize`` /
        ``init_distributed``, a rank variable read from the environment (``os.environ["RANK"]``,
        ``os.environ.get``, ``os.getenv``; not one read only in an ``if`` test), unless the file
        trains with JAX/Flax and never uses ``torch.distributed``."""
        facts = self.facts
        found: list[Setup] = []
        reads: list[Setup] = []
        for call in facts.calls:
            name = facts.qualname(call.func) or ""
            if name in SETUP_CALLS:
                found.append(Setup(call, name.rsplit(".", 1)[-1] if name.startswith("torch.") else name))
            elif name in ("os.getenv", "os.environ.get", "os.environ.setdefault") and call.args:
                variable = _constant(call.args[0])
                if variable in RANK_VARIABLES:
                    reads.append(Setup(call, variable))
        for node in facts.nodes if "environ" in facts.source else ():  # (os.environ spelt: else no read)
            # the key first: a string constant is cheap to test, the name of every subscript is not
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                variable = _constant(node.slice)
                if variable in RANK_VARIABLES and facts.qualname(node.value) == "os.environ":
                    reads.append(Setup(node, variable))
        if found or not self._other_runtime_only:
            found += [read for read in reads if not self._guard_only(read.node)]
        found = [setup for setup in found if not self._never_runs(setup.node)]
        return sorted(found, key=lambda s: (s.node.lineno, s.node.col_offset))  # type: ignore[attr-defined]

    def _never_runs(self, node: ast.AST) -> bool:
        """``node`` sits in a branch that an ``if`` of its function never takes, the test comparing
        a name bound once to a number written out with a number (``world_size = 1`` then ``if
        world_size > 1: model = DDP(model)``: the fourteenth audit's C5). A count from the command
        line or a parameter may be anything: not decided."""
        parents = self.facts.scopes.parents
        child, current = node, parents.get(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if isinstance(current, ast.If) and child is not current.test:
                taken = self._decided(current.test)
                if taken is not None and (child in current.body) != taken:
                    return True
            child, current = current, parents.get(current)
        return False

    def _decided(self, test: ast.expr) -> bool | None:
        """The value of ``name <op> number`` where ``name`` is bound once, to a number written out."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return None
        found = self.facts.scopes.single_value(test.left.id, self.facts.scopes.scope_of(test))
        value = found[1].value if found is not None and found[1].kind == "assign" else None
        bound = test.comparators[0]
        if not (isinstance(value, ast.Constant) and type(value.value) is int and isinstance(bound, ast.Constant) and type(bound.value) is int):
            return None
        compare = COMPARISONS.get(type(test.ops[0]))
        return compare(value.value, bound.value) if compare is not None else None

    def _guard_only(self, read: ast.AST, depth: int = 0) -> bool:
        """A rank variable read only to test it (``if int(os.getenv("RANK", "0")) == 0:
        write_config()``): code that only keeps a side effect to one process when launched by
        ``torchrun`` sets nothing up. The read may sit right in an ``if`` test, or reach tests
        only through a name bound once (``rank = int(os.getenv("RANK", "0"))`` then ``if rank
        == 0:``) or a same-file function's return value (``if is_main():``); used at least once."""
        parents = self.facts.scopes.parents
        child, current = read, parents.get(read)
        while current is not None and not isinstance(current, ast.stmt):
            child, current = current, parents.get(current)
        if isinstance(current, (ast.If, ast.While, ast.Assert)):
            return current.test is child
        if depth >= MAX_DEPTH:
            return False
        if isinstance(current, ast.Assign) and len(current.targets) == 1 and isinstance(current.targets[0], ast.Name):
            loads = self._loads_of(current.targets[0].id, current)
            return loads is not None and bool(loads) and all(self._guard_only(load, depth + 1) for load in loads)
        if isinstance(current, ast.Return):
            function = self.facts.scopes.enclosing_function(current)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sites = self._call_sites(function)
                return bool(sites) and all(self._guard_only(site, depth + 1) for site in sites)
        return False

    def _loads_of(self, name: str, assign: ast.Assign) -> list[ast.Name] | None:
        """Every read of ``name`` that refers to ``assign``, its one binding; None where the
        name is bound more than once."""
        scopes = self.facts.scopes
        single = scopes.single_value(name, scopes.scope_of(assign))
        if single is None or single[1].node is not assign:
            return None
        return [load for load, _ in self.facts.usage.loads_resolving_to(name, single[0])]

    @property
    def setup(self) -> Setup | None:
        """Why the file counts as DDP training: the first of :attr:`setups`."""
        return self.setups[0] if self.setups else None

    @property
    def _other_runtime_only(self) -> bool:
        """The file imports JAX/Flax and nothing of ``torch.distributed``."""
        names = self.facts.imports.values()
        other = any(n.split(".", 1)[0] in OTHER_RUNTIMES for n in names)
        return other and not any(n == "torch.distributed" or n.startswith("torch.distributed.") for n in names)

    @cached_property
    def framework(self) -> str | None:
        """A framework the file uses that shards its loaders across ranks itself."""
        for name in self.facts.imports.values():
            for framework, prefixes in FRAMEWORKS.items():
                if any(name == p or name.startswith(p + ".") for p in prefixes):
                    return framework
        parents = self.facts.scopes.parents
        for node in self.facts.functions:
            if node.name in LIGHTNING_HOOKS:
                if isinstance(parents.get(node), ast.ClassDef):
                    return "Lightning"
        return None

    # -- one rank only -----------------------------------------------------------------
    def one_rank_only(self, node: ast.AST) -> bool:
        """``node`` runs only on some rank, or only when not distributed: under ``if rank == 0:``
        (``is_main_process()``, ``if not args.distributed:``), after ``if rank != 0: return`` or
        ``assert not multi_gpu`` in an enclosing block, or in a same-file function called only
        that way."""
        return self._one_rank_only(node, 0)

    def _one_rank_only(self, node: ast.AST, depth: int) -> bool:
        facts = self.facts
        parents = facts.scopes.parents
        child, current = node, parents.get(node)
        while current is not None:
            if isinstance(current, (ast.If, ast.IfExp)) and child is not current.test and _names_a_rank(current.test):
                return True
            if isinstance(current, ast.If) and self._single_process_branch(current, child):
                return True
            if _guarded_before(current, child):
                return True
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if depth >= MAX_DEPTH:
                    return False
                if current.name in self._spawned:
                    return False  # each spawned process runs it: every rank (the direct call beside is the single-process path)
                sites = self._call_sites(current)
                return bool(sites) and all(self._one_rank_only(site, depth + 1) for site in sites)
            if isinstance(current, (ast.Lambda, ast.ClassDef)):
                return False
            child, current = current, parents.get(current)
        return False

    def _single_process_branch(self, branch_point: ast.If, child: ast.AST) -> bool:
        """``child`` lies in the branch of ``branch_point`` that runs without a process group:
        the one where a process count is 1 (``else:`` of ``if n_gpus > 1:``), or the one beside
        a branch that sets DDP up; either way, no setup inside ``child``'s own branch."""
        mine, other = (branch_point.body, branch_point.orelse) if child in branch_point.body else (branch_point.orelse, branch_point.body)
        if self._sets_up(mine):
            return False
        multi = _multi_process_branch(branch_point.test)
        if multi is not None:
            return (multi == "body") != (mine is branch_point.body)
        return self._sets_up(other)

    def _sets_up(self, statements: list[ast.stmt]) -> bool:
        return any(self.facts.contains(statement, setup.node) for statement in statements for setup in self.setups)

    def handed_to_deepspeed(self, loader: LoaderCall) -> bool:
        """The loader is the ``training_data`` of ``deepspeed.initialize``, which builds its own
        distributed loader from it."""
        facts = self.facts
        for call in facts.calls:
            if facts.qualname(call.func) != DEEPSPEED_INITIALIZE:
                continue
            data = next((k.value for k in call.keywords if k.arg == "training_data"), None)
            if data is loader.node or (
                isinstance(data, ast.Name) and facts.loops.refers_to(data.id, facts.scopes.scope_of(data), loader.node)
            ):
                return True
        return False

    def iterated_on_one_rank_only(self, loader: LoaderCall) -> bool:
        """Built on every rank but iterated only under a one-rank condition (``if rank == 0:``
        around the loop, or around the same-file call that leads to it), and never handed on."""
        uses = self.facts.usage.loader_uses(loader)
        if not uses or not all(use.iterates for use in uses):
            return False
        return all(
            self.one_rank_only(use.node) or any(self.one_rank_only(call) for call in use.via) for use in uses
        )

    def splits_work_by_rank(self, function: ast.AST) -> bool:
        """``function`` computes with the rank or world size (``start = rank * step``,
        ``chunks[get_rank()]``), not only in a condition (``if local_rank == 0: print(...)``)."""
        parents = self.facts.scopes.parents
        for node in ast.walk(function):
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                word = (node.id if isinstance(node, ast.Name) else node.attr).lower()
                if any(w in word for w in SPLIT_WORDS) and not _in_condition(node, function, parents):
                    return True
        return False

    @cached_property
    def _spawned(self) -> frozenset[str]:
        """Names of the functions the file starts one process per rank with:
        ``mp.spawn(main_worker, ...)``, ``start_processes(fn, ...)``."""
        names = set()
        for call in self.facts.calls:
            if call.args and isinstance(call.args[0], ast.Name) and self.facts.qualname(call.func) in RANK_SPAWNS:
                names.add(call.args[0].id)
        return frozenset(names)

    def _call_sites(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        return [
            call
            for call in self.facts.calls
            if (isinstance(call.func, ast.Name) and call.func.id == func.name)
            or (isinstance(call.func, ast.Attribute) and call.func.attr == func.name)
        ]

    # -- what the loader draws from ------------------------------------------------
    def sampler_kind(self, loader: LoaderCall) -> str:
        """``"none"`` (no sampler), ``"rank-blind"`` (a torch sampler that ignores ranks),
        ``"distributed"``, or ``"unknown"`` (built elsewhere, conditional, a parameter). A
        library loader that shards by rank itself (DGL's ``use_ddp=True``) is distributed."""
        flag = loader.library.shards_by_rank if loader.library else ""
        if flag:
            given = loader.value(flag).truthy()
            if given is not False:
                return "distributed" if given else "unknown"
        kinds = []
        for slot in ("sampler", "batch_sampler"):
            arg = loader.argument(slot)
            if arg is None:
                if loader.unknown_splat:
                    return "unknown"
                continue
            kinds.append(self._kind(arg.value, arg.scope, slot == "batch_sampler", 0))
        for kind in ("unknown", "distributed", "rank-blind"):
            if kind in kinds:
                return kind
        return "none"

    def _kind(self, expr: ast.expr, scope: Scope, batched: bool, depth: int) -> str:
        expr, scope = follow(expr, scope, self.facts)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return "none"
        if not isinstance(expr, ast.Call) or depth > MAX_DEPTH:
            return "unknown"
        name = self.facts.qualname(expr.func) or dotted_name(expr.func) or ""
        if "Distributed" in name.rsplit(".", 1)[-1]:
            return "distributed"
        if batched and name in BATCH_SAMPLERS:
            inner = next((k.value for k in expr.keywords if k.arg == "sampler"), None) if not expr.args else expr.args[0]
            return self._kind(inner, scope, False, depth + 1) if inner is not None else "unknown"
        if not batched and name in RANK_BLIND_SAMPLERS and not _mentions(expr, SHARDING_WORDS):
            return "rank-blind"
        return "unknown"

    def dataset_is_sharded_or_iterable(self, loader: LoaderCall) -> bool:
        """The dataset is split by rank by hand (``Subset(ds, idx[rank::world])``, ``files =
        files[rank::world_size]`` before ``FileDataset(files)``, ``idx.split(ceil(n /
        world))[rank]``, ``ds.shard(num_shards=world, index=rank)``), or is (or may be) an
        iterable dataset. The names its expression reads are followed through every binding
        before it (a name rebound to its own shard counts)."""
        arg = loader.argument("dataset")
        if arg is None:
            return True  # a splat or a keywords-only custom loader: unknown
        cls = self.facts.class_of_instance(arg.value, arg.scope)
        if cls is not None and cls.is_iterable_dataset:
            return True
        # (expression, its scope, whether a caller passed it: a call there that takes it with the
        # rank, `test_my_slice(engine, testset, rank, n)`, splits only that call's copy)
        pending: list[tuple[ast.expr, Scope, bool]] = [(arg.value, arg.scope, False)]
        seen: set[int] = set()
        while pending and len(seen) < MAX_EXPRESSIONS:
            expr, scope, passed = pending.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            if _mentions(expr, SHARDING_WORDS + ITERABLE_WORDS) or self._iterable_class(expr):
                return True
            if not passed and self._split_by_a_call(expr, scope, loader):
                return True
            pending.extend((value, where, passed) for value, where in self._bound_values(expr, scope))
            pending.extend((value, where, True) for value, where in self._passed_values(expr, scope))
        return False

    def _split_by_a_call(self, expr: ast.expr, scope: Scope, loader: LoaderCall) -> bool:
        """A name ``expr`` reads is handed, with the rank, to a call that may split it in place
        (``take_subset(dataset, rank, world_size)``): not a loader, not a sampler."""
        names = {node.id for node in ast.walk(expr) if isinstance(node, ast.Name)}
        calls = {id(c): c for name in names for c in self._calls_given.get(name, ())}.values()
        for call in calls:
            if call is loader.node or "Sampler" in (dotted_name(call.func) or "") or self.facts.loader_kind(call.func) is not None:
                continue
            given = [*call.args, *(k.value for k in call.keywords)]
            if self.facts.scopes.scope_of(call) is scope and any(_mentions(a, SHARDING_WORDS) for a in given):
                return True
        return False

    @cached_property
    def _calls_given(self) -> dict[str, list[ast.Call]]:
        """The calls each name is handed to as an argument (built once per file)."""
        found: dict[str, list[ast.Call]] = {}
        for call in self.facts.calls:
            for arg in (*call.args, *(k.value for k in call.keywords)):
                if isinstance(arg, ast.Name):
                    found.setdefault(arg.id, []).append(call)
        return found

    def _bound_values(self, expr: ast.expr, scope: Scope) -> list[tuple[ast.expr, Scope]]:
        """The values every name ``expr`` reads is bound to (assignments with a value; the whole
        value a name is unpacked from, ``train, val = partition_dataset(shard, ratios=...)``), and
        the argparse default an ``args.NAME`` stands for."""
        found = []
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                bound = self.facts.scopes.lookup(node.id, scope)
                if bound is not None:
                    found += [(b.value, bound[0]) for b in bound[1] if b.kind == "assign" and b.value is not None]
                    found += [(b.node.value, bound[0]) for b in bound[1] if b.kind == "other" and isinstance(b.node, ast.Assign)]
        followed, where = follow(expr, scope, self.facts)
        if followed is not expr:
            found.append((followed, where))
        return found

    def _passed_values(self, expr: ast.expr, scope: Scope) -> list[tuple[ast.expr, Scope]]:
        """What this file's calls pass for each parameter ``expr`` reads (``prepare_data(train_files)``
        after ``train_files = partition_dataset(...)[rank]``: the fourteenth audit's C10)."""
        found: list[tuple[ast.expr, Scope]] = []
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                bound = self.facts.scopes.lookup(node.id, scope)
                function = bound[0].node if bound is not None and any(b.kind == "param" for b in bound[1]) else None
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += passed_for(self.facts, function, node.id)
        return found

    def _iterable_class(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Call):
            name = dotted_name(expr.func)
            cls = self.facts.classes.get(name) if name else None
            return cls is not None and cls.is_iterable_dataset
        return False


def _constant(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _words(node: ast.AST) -> list[str]:
    words = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            words.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            words.append(sub.attr)
        elif isinstance(sub, ast.keyword) and sub.arg:
            words.append(sub.arg)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            words.append(sub.value)
    return [w.lower() for w in words]


def _mentions(node: ast.AST, needles: tuple[str, ...]) -> bool:
    source = ast.unparse(node) if any("." in n for n in needles) else ""
    lowered = [n.lower() for n in needles]
    return any(n in w for w in _words(node) for n in lowered) or any(n in source for n in needles if "." in n)


def _multi_process_branch(test: ast.expr) -> str | None:
    """For a test comparing a process or GPU count with 1 (``n_gpus > 1``, ``world_size >= 2``,
    ``torch.cuda.device_count() == 1``): the branch ("body" or "orelse") that runs several
    processes; None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and _mentions(test.left, PROCESS_COUNT_WORDS)):
        return None
    bound = test.comparators[0]
    if not (isinstance(bound, ast.Constant) and type(bound.value) is int):
        return None
    op, value = type(test.ops[0]), bound.value
    if (op is ast.Gt and value == 1) or (op is ast.GtE and value == 2) or (op is ast.NotEq and value == 1):
        return "body"
    if (op is ast.Eq and value == 1) or (op is ast.LtE and value == 1) or (op is ast.Lt and value == 2):
        return "orelse"
    return None


def _names_a_rank(test: ast.expr) -> bool:
    return _mentions(test, RANK_CONDITION_WORDS)


def _in_condition(node: ast.AST, top: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``node`` lies in the test of an ``if``/``while``/``assert`` or conditional expression
    below ``top``."""
    child, current = node, parents.get(node)
    while current is not None and child is not top:
        if isinstance(current, (ast.If, ast.While, ast.Assert, ast.IfExp)) and current.test is child:
            return True
        child, current = current, parents.get(current)
    return False


def _guarded_before(block: ast.AST, child: ast.AST) -> bool:
    """A statement of ``block`` before ``child`` lets only some ranks past: ``assert not
    multi_gpu``, ``if rank != 0: return``."""
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(block, field, None)
        if not isinstance(statements, list) or child not in statements:
            continue
        for stmt in statements[: statements.index(child)]:
            if isinstance(stmt, ast.Assert) and _names_a_rank(stmt.test):
                return True
            if (
                isinstance(stmt, ast.If)
                and _names_a_rank(stmt.test)
                and stmt.body
                and (isinstance(stmt.body[-1], ast.Continue) or ends_the_path(stmt.body[-1]))
            ):
                return True
    return False
