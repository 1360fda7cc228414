from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

LOCKS = frozenset(
    f"threading.{name}" for name in ("Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event")
)
OPEN_HANDLES = {
    "io.open": "an open file",
    "gzip.open": "an open file",
    "gzip.GzipFile": "an open file",
    "h5py.File": "an open HDF5 file",
    "zipfile.ZipFile": "an open zip file",
    "tarfile.open": "an open tar file",
    "tarfile.TarFile": "an open tar file",
    "lmdb.open": "an open LMDB environment",
    "lmdb.Environment": "an open LMDB environment",
    "sqlite3.connect": "an open database connection",
    "socket.socket": "a socket",
}
# A class that defines how it is pickled decides for itself what the handle becomes.
PICKLE_HOOKS = ("__getstate__", "__reduce__", "__reduce_ex__")


class UnpicklableDatasetAttribute(Rule):
    """
    ## What it does
    Checks for a `Dataset`/`IterableDataset` subclass whose `__init__` stores a lock
    (`threading.Lock`, `RLock`, `Condition`, `Semaphore`, `Event`), an open file or
    connection (`open`, `gzip.open`, `h5py.File`, `lmdb.open`, `sqlite3.connect`,
    `socket.socket`, `zipfile.ZipFile`, `tarfile.open`) or a generator on `self`, where a
    multi-worker loader of the project may use it: silent when every loader over the class
    (in this file or another) has `num_workers=0`; with no loader in view it fires, as for a
    class written to be loaded.

    ## Why is this bad?
    Under the `spawn` and `forkserver` start methods (Windows, macOS, and Linux from Python
    3.14) each worker receives the dataset by pickle, and none of these objects can be
    pickled: `TypeError: cannot pickle '_thread.lock' object` (or `'_io.BufferedReader'`,
    `'generator'`, an h5py/lmdb error). Under `fork` the workers share one file offset or
    one database handle with the main process, which corrupts reads in ways that are hard
    to trace.

    ## Example
    ```python
    class Records(Dataset):
        def __init__(self, path):
            self.db = lmdb.open(path, readonly=True)

        def __getitem__(self, index):
            with self.db.begin() as txn:
                return txn.get(str(index).encode())
    ```

    ## Use instead
    ```python
    class Records(Dataset):
        def __init__(self, path):
            self.path = path
            self.db = None  # opened lazily, once per worker

        def __getitem__(self, index):
            if self.db is None:
                self.db = lmdb.open(self.path, readonly=True)
            with self.db.begin() as txn:
                return txn.get(str(index).encode())
    ```

    ## Fix safety
    No fix: where to open the resource (lazily in `__getitem__`, or in a `worker_init_fn`)
    is a design choice.

    ## References
    - [What can be pickled](https://docs.python.org/3/library/pickle.html#what-can-be-pickled-and-unpickled)
    - [Multi-process data loading](https://pytorch.org/docs/stable/data.html#multi-process-data-loading)
    """

    code = "DL104"
    name = "unpicklable-dataset-attribute"
    summary = "dataset stores an unpicklable object in __init__: spawn workers cannot receive it; open it lazily in __getitem__ or worker_init_fn"
    triggers = (b"Dataset",)
    needs_class_base = True  # findings are in the __init__ of a dataset class defined here
    valid = (
        "from torch.utils.data import Dataset\n"
        "class Ds(Dataset):\n    def __init__(self, path):\n        self.path = path\n        self.f = None\n"
        "    def __getitem__(self, i):\n        if self.f is None:\n            self.f = open(self.path)\n        return i\n",
        "import threading\nclass Cache:\n    def __init__(self):\n        self.lock = threading.Lock()\n",
        "from torch.utils.data import Dataset\n"
        "class Ds(Dataset):\n    def __init__(self, path):\n        with open(path) as f:\n            self.lines = f.readlines()\n",
        "import threading\nfrom torch.utils.data import Dataset\n"
        "class Ds(Dataset):\n    def __init__(self):\n        self.lock = threading.Lock()\n"
        "    def __getstate__(self):\n        return {}\n",
    )
    invalid = (
        "import h5py\nfrom torch.utils.data import Dataset\n"
        "class Ds(Dataset):\n    def __init__(self, path):\n        self.h5 = h5py.File(path, 'r')\n",
        "import threading\nfrom torch.utils.data import IterableDataset\n"
        "class Ds(IterableDataset):\n    def __init__(self):\n        self.lock = threading.Lock()\n",
        "from torch.utils.data import Dataset\n"
        "class Ds(Dataset):\n    def __init__(self, rows):\n        self.rows = (r for r in rows)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for cls in facts.dataset_classes:
            init = cls.method("__init__")
            if init is None or any(cls.method(hook) for hook in PICKLE_HOOKS):
                continue
            assignments = _self_assignments(init)
            found = []
            for index, (attribute, value, node) in enumerate(assignments):
                kind = _unpicklable_kind(facts, value, facts.scopes.scope_of(value))
                if kind is None:
                    continue
                if any(later == attribute for later, _, _ in assignments[index + 1 :]):
                    continue  # replaced before __init__ returns (e.g. closed and set to None)
                found.append((attribute, kind, node))
            if not found or _only_loaded_without_workers(facts, cls):
                continue  # (asked last: it summarizes the project files that import the class)
            for attribute, kind, node in found:
                verb = "open" if kind.startswith("an open") else "create"
                message = (
                    f"dataset '{cls.name}' stores {kind} in self.{attribute}: spawn workers cannot unpickle it; "
                    f"{verb} it lazily in __getitem__ or in a worker_init_fn"
                )
                yield self.report(facts, node, message)


def _only_loaded_without_workers(facts, cls) -> bool:
    """Every loader in view over the class (this file's, and other project files') has
    ``num_workers`` 0: no worker ever unpickles it. With none in view the class is written to
    be loaded, by workers for all we know."""
    here = facts.worker_code.loaders_using(cls)
    elsewhere = facts.project.loaders_elsewhere(facts, cls.node) if facts.project is not None and not facts.project.summarizing else []
    if not here and not elsewhere:
        return False
    return not any(loader.is_multi_worker for loader in here) and not any(use.multi_worker for _, use in elsewhere)


def _self_assignments(init: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.expr, ast.stmt]]:
    """``self.X = value`` statements of ``__init__`` (not of nested functions), in source order."""
    found: list[tuple[str, ast.expr, ast.stmt]] = []
    stack: list[ast.AST] = list(reversed(init.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        targets: list[ast.expr] = []
        value = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found.append((target.attr, value, node))  # type: ignore[arg-type]
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.append((target.attr, ast.Constant(None), node))
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.Assign, ast.AnnAssign, ast.Delete)):
            blocks = (ast.stmt, ast.excepthandler, ast.match_case)
            stack.extend(reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, blocks)]))
        elif isinstance(node, (ast.ExceptHandler, ast.match_case)):  # ExceptHandler: the one excepthandler
            stack.extend(reversed(node.body))
    return found


def _unpicklable_kind(facts, value: ast.expr, scope, depth: int = 0) -> str | None:
    """'a lock', 'an open file' or 'a generator' when ``value`` evidently builds one."""
    if depth > 4:
        return None
    if isinstance(value, ast.GeneratorExp):
        return "a generator"
    if isinstance(value, ast.Name):
        found = facts.scopes.single_value(value.id, scope)
        if found is not None and found[1].kind == "assign" and found[1].value is not None:
            return _unpicklable_kind(facts, found[1].value, found[0], depth + 1)
        return None
    if not isinstance(value, ast.Call):
        return None
    name = facts.qualname(value.func)
    if name in LOCKS:
        return "a lock"
    if name in OPEN_HANDLES:
        return OPEN_HANDLES[name]
    if _is_builtin_open(facts, value.func):
        return "an open file"
    if isinstance(value.func, ast.Name) and _is_generator_function(facts, value.func, scope):
        return "a generator"
    return None


def _is_builtin_open(facts, func: ast.expr) -> bool:
    return isinstance(func, ast.Name) and func.id == "open" and facts.scopes.lookup("open", facts.scopes.scope_of(func)) is None


def _is_generator_function(facts, func: ast.Name, scope) -> bool:
    found = facts.scopes.lookup(func.id, scope)
    if found is None or len(found[1]) != 1 or found[1][0].kind != "def":
        return False
    definition = found[1][0].node
    for node in ast.walk(definition):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            owner = facts.scopes.scope_of(node)
            if owner.node is definition:
                return True
    return False
