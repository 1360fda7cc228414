from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import follow, is_cpu_count_call
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

MAX_DEPTH = 8


class PerRankOversubscription(Rule):
    """
    ## What it does
    Checks, in a distributed script (one that calls `init_process_group`, builds a
    `DistributedSampler`, or reads `LOCAL_RANK`/`LOCAL_WORLD_SIZE`), for a `num_workers`
    taken from the machine's CPU count (`os.cpu_count()`, `len(os.sched_getaffinity(0))`,
    ..., also `cpus - 1` or `max(1, cpus - 2)`) that is not divided among the ranks of the
    node. Reported at the `num_workers` argument.

    ## Why is this bad?
    `torchrun --nproc-per-node 8` runs the script 8 times on one machine. Each rank reads the
    same CPU count and starts that many workers, so a 64-core node runs 512 worker
    processes fighting for 64 cores, each with its own copy of the dataset and its prefetched
    batches: throughput drops and host memory runs out.

    ## Example
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler, num_workers=os.cpu_count())
    ```

    ## Use instead
    ```python
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    workers = max(1, len(os.sched_getaffinity(0)) // local_world_size - 1)
    loader = DataLoader(dataset, sampler=sampler, num_workers=workers)
    ```

    ## Fix safety
    No automatic fix: how to split the cores depends on the launcher and on what else runs
    on the node. `dllint --probe` under `torchrun` measures the total against the cores.

    ## References
    - [torchrun environment variables](https://pytorch.org/docs/stable/elastic/run.html#environment-variables)
    """

    code = "DL207"
    name = "per-rank-oversubscription"
    summary = "every rank starts num_workers = the whole CPU count: divide it by the local world size"
    fix_safety = "none"
    valid = (
        "import os\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "world = int(os.environ['LOCAL_WORLD_SIZE'])\n"
        "DataLoader(ds, sampler=DistributedSampler(ds), num_workers=os.cpu_count() // world)\n",
        "import os\nfrom torch.utils.data import DataLoader\n"
        "DataLoader(ds, num_workers=os.cpu_count())\n",
        "import os\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "DataLoader(ds, sampler=DistributedSampler(ds), num_workers=min(4, os.cpu_count()))\n",
    )
    invalid = (
        "import os\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "DataLoader(ds, sampler=DistributedSampler(ds), num_workers=os.cpu_count())\n",
        "import os, multiprocessing\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        "dist.init_process_group('nccl')\nworkers = multiprocessing.cpu_count() - 1\n"
        "DataLoader(ds, num_workers=workers)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        if not facts.loader_calls or not facts.is_distributed:
            return
        for loader in facts.loader_calls:
            arg = loader.argument("num_workers")
            if arg is not None and _whole_cpu_count(facts, arg.value, arg.scope, 0):
                yield self.report(facts, arg.node)


def _whole_cpu_count(facts, expr: ast.expr, scope, depth: int) -> bool:
    """``expr`` is the node's CPU count, give or take a constant: not divided, not capped by ``min``."""
    if depth > MAX_DEPTH:
        return False
    expr, scope = follow(expr, scope, facts)
    if isinstance(expr, ast.Call):
        if is_cpu_count_call(expr, facts):
            return True
        func = expr.func
        if isinstance(func, ast.Name) and facts.scopes.lookup(func.id, scope) is None:
            if func.id == "max":  # max(1, cpus - 1): a floor, not a share
                return any(_whole_cpu_count(facts, a, scope, depth + 1) for a in expr.args)
            if func.id == "int" and len(expr.args) == 1:
                return _whole_cpu_count(facts, expr.args[0], scope, depth + 1)
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Sub, ast.Add)):
        return isinstance(expr.right, ast.Constant) and _whole_cpu_count(facts, expr.left, scope, depth + 1)
    return False
