from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Sequence

from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

# torch.cuda calls that neither create a CUDA context nor need one: the seeding calls are
# queued until CUDA is initialised, the queries read the driver without a context.
CONTEXT_FREE_CUDA_CALLS = frozenset(
    f"torch.cuda.{name}"
    for name in (
        "is_available",
        "device_count",
        "is_initialized",
        "manual_seed",
        "manual_seed_all",
        "seed",
        "seed_all",
        "empty_cache",
    )
)
CONTEXT_FREE_CUDA_PREFIXES = ("torch.cuda.nvtx.", "torch.cuda.amp.")
TORCH_DEVICE = frozenset({"torch.device"})


class CudaInWorker(Rule):
    """
    ## What it does
    Checks for CUDA work inside code that a multi-worker loader of the same file runs in its
    workers: `.cuda()`, `.to("cuda")`, `device="cuda"`, or `torch.cuda.*` calls in the
    dataset's `__getitem__`/`__getitems__`/`__iter__` (and the methods and same-file
    functions they call), in `collate_fn` or in `worker_init_fn`. Silent for a loader whose
    `multiprocessing_context` is `"spawn"` or `"forkserver"` (or `get_context(...)` of one):
    its workers never fork, and their cost (a CUDA context per worker) is what
    `dllint --probe` measures.

    ## Why is this bad?
    Under `fork`, a worker cannot use CUDA once the main process has initialised it (it
    always has, by training time): `RuntimeError: Cannot re-initialize CUDA in forked
    subprocess`. Under `spawn`, each worker creates its own CUDA context (hundreds of MB of
    GPU memory per worker) and tensors it returns on the GPU go through CUDA IPC. Load and
    collate on the CPU, then move the batch in the training loop (with `pin_memory=True` and
    `non_blocking=True`).

    ## Example
    ```python
    class Images(Dataset):
        def __getitem__(self, index):
            return load(self.paths[index]).cuda()

    loader = DataLoader(Images(paths), num_workers=4)
    ```

    ## Use instead
    ```python
    class Images(Dataset):
        def __getitem__(self, index):
            return load(self.paths[index])

    loader = DataLoader(Images(paths), num_workers=4, pin_memory=True)
    for batch in loader:
        batch = batch.cuda(non_blocking=True)
    ```

    ## Fix safety
    No fix: the device transfer has to move to the training loop.

    ## References
    - [CUDA in multiprocessing](https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing)
    - [Memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
    """

    code = "DL105"
    name = "cuda-in-worker"
    summary = "CUDA used in code that runs in loader workers: fork workers cannot re-initialise CUDA; move batches to the GPU in the training loop"
    triggers = (b"DataLoader",)  # needs a multi-worker loader; `cuda` is in 8% of real files, most with no loader
    valid = (
        "from torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        return load(i).cuda()\n"
        "DataLoader(Ds(), num_workers=0)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def seed(worker_id):\n    torch.cuda.manual_seed_all(worker_id)\n"
        "DataLoader(ds, num_workers=2, worker_init_fn=seed)\n",
        "from torch.utils.data import DataLoader\n"
        "for batch in DataLoader(ds, num_workers=2):\n    batch = batch.cuda()\n",
        "from torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        return load(i).cuda()\n"
        "DataLoader(Ds(), num_workers=4, multiprocessing_context='spawn')\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        return load(i).cuda()\n"
        "DataLoader(Ds(), num_workers=4)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def collate(batch):\n    return torch.stack(batch).to('cuda')\n"
        "DataLoader(ds, num_workers=2, collate_fn=collate)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        worker_code = facts.worker_code
        if not worker_code.functions:
            return
        reported: set[int] = set()
        for function in worker_code.functions:
            body: Sequence[ast.AST] = [function.body] if not isinstance(function.body, list) else function.body
            for node in (n for stmt in body for n in ast.walk(stmt)):
                found = _cuda_use(facts, node)
                if found is None or id(found[0]) in reported:
                    continue
                where = worker_code.worker_function_of(found[0])
                if where is None:
                    continue
                forking = [loader for loader in where.loaders if not _never_forks(facts, loader)]
                if not forking:
                    continue
                reported.add(id(found[0]))
                line = forking[0].node.lineno
                message = (
                    f"{found[1]} in {where.entry}, which runs in the workers of the loader on line {line}: "
                    "forked workers cannot re-initialise CUDA; move the batch to the GPU in the training loop"
                ) + forking[0].when_workers()
                yield self.report(facts, found[0], message)


def _cuda_use(facts, node: ast.AST) -> tuple[ast.AST, str] | None:
    """(where to report, what it is) when ``node`` does CUDA work."""
    if isinstance(node, ast.Call):
        func = node.func
        name = facts.qualname(func) or ""
        if name.startswith("torch.cuda.") and _creates_context(name):
            return node, f"`{name}()`"
        if isinstance(func, ast.Attribute) and func.attr == "cuda" and name != "torch.cuda":
            return node, "`.cuda()`"
        if isinstance(func, ast.Attribute) and func.attr == "to":
            device = next((k.value for k in node.keywords if k.arg == "device"), None) if not node.args else node.args[0]
            if device is not None and _is_cuda_device(facts, device):
                return node, "`.to(cuda)`"
        return None
    if isinstance(node, ast.keyword) and node.arg == "device" and _is_cuda_device(facts, node.value):
        call = facts.scopes.parents.get(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to":
            return None  # reported as `.to(cuda)`
        if isinstance(call, ast.Call) and facts.qualname(call.func) in TORCH_DEVICE:
            return None  # building a device object does no CUDA work
        return node, "`device=cuda`"
    return None


NON_FORK_METHODS = frozenset({"spawn", "forkserver"})


def _never_forks(facts, loader) -> bool:
    """The loader's ``multiprocessing_context`` is provably spawn or forkserver: a string, or a
    ``get_context("spawn")`` call (``multiprocessing``'s or ``torch.multiprocessing``'s)."""
    argument = loader.argument("multiprocessing_context")
    if argument is None:
        return False
    value = loader.value("multiprocessing_context")
    if value.is_const:
        return value.value in NON_FORK_METHODS
    call = value.origin if isinstance(value.origin, ast.Call) else argument.value
    if not isinstance(call, ast.Call) or not call.args:
        return False
    name = facts.qualname(call.func) or ""
    method = facts.resolve(call.args[0])
    return name.endswith("get_context") and method.is_const and method.value in NON_FORK_METHODS


def _creates_context(name: str) -> bool:
    return name not in CONTEXT_FREE_CUDA_CALLS and not name.startswith(CONTEXT_FREE_CUDA_PREFIXES)


def _is_cuda_device(facts, expr: ast.expr) -> bool:
    """A literal CUDA device: ``"cuda"``, ``"cuda:0"``, ``torch.device("cuda")``, or a name bound once to one."""
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) in TORCH_DEVICE and expr.args:
        expr = expr.args[0]
    value = facts.resolve(expr)
    if value.is_const and isinstance(value.value, str):
        return value.value == "cuda" or value.value.startswith("cuda:")
    if isinstance(value.origin, ast.Call) and value.origin is not expr:
        return _is_cuda_device(facts, value.origin)
    return False
