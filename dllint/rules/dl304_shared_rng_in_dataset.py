from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.rng import draws, held_generators, reseeds, stored_generators
from dllint.findings import Finding
from dllint.rules import Rule, quote

if TYPE_CHECKING:
    from dllint.facts import FileFacts

ENTRY_METHODS = ("__getitem__", "__getitems__", "__iter__")
WORKER_INIT_PREFIX = "def worker_init_fn(worker_id): info = torch.utils.data.get_worker_info(); "


class SharedRngInDataset(Rule):
    """
    ## What it does
    Checks for a dataset whose `__init__` stores its own random generator
    (`np.random.default_rng(...)`, `np.random.RandomState(...)`, `random.Random(...)`,
    `torch.Generator()`) that `__getitem__`/`__iter__` (or the methods they call) draws
    from, when a multi-worker loader of the same file uses the dataset without a
    `worker_init_fn`. Reported at the assignment in `__init__`; where the dataset inherits
    its `__init__` from a base class or mixin of another module that stores the generator,
    at that base in the class's header.

    ## Why is this bad?
    Each worker gets a copy of the dataset, generator state included. torch reseeds the
    global generators (`random`, `torch`, and NumPy's global state) in every worker, but not
    a generator object stored on the dataset: every worker draws the same sequence, so
    "random" augmentations repeat across workers. With `persistent_workers` off, workers
    are recreated from the untouched copy in the main process each epoch, so they repeat
    across epochs too.

    ## Example
    ```python
    class Crops(Dataset):
        def __init__(self, images):
            self.images = images
            self.rng = np.random.default_rng(0)

        def __getitem__(self, index):
            return random_crop(self.images[index], self.rng.integers(0, 32))

    loader = DataLoader(Crops(images), num_workers=4)
    ```

    ## Use instead
    ```python
    def worker_init_fn(worker_id):
        info = torch.utils.data.get_worker_info()
        info.dataset.rng = np.random.default_rng(info.seed % 2**32)

    loader = DataLoader(Crops(images), num_workers=4, worker_init_fn=worker_init_fn)
    ```

    ## Fix safety
    No fix: how the generator is reseeded (and whether runs must stay reproducible) is the
    author's choice. The message shows a `worker_init_fn` that reseeds it from
    `get_worker_info().seed`, which torch derives from the loader's base seed and worker id.

    ## References
    - [Randomness in multi-process data loading](https://pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading)
    - [Reproducibility: DataLoader](https://pytorch.org/docs/stable/notes/randomness.html#dataloader)
    """

    code = "DL304"
    name = "shared-rng-in-dataset"
    triggers = (b"Dataset",)  # a dataset class (its loaders may be in another file of the project)
    needs_class_base = True  # findings are in dataset classes defined here (facts.dataset_classes)
    summary = "dataset draws from its own generator, which torch does not reseed per worker: every worker repeats the same random draws"
    valid = (
        "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __init__(self):\n        self.rng = np.random.default_rng(0)\n"
        "    def __getitem__(self, i):\n        return self.rng.random()\n"
        "def init(worker_id):\n    pass\n"
        "DataLoader(Ds(), num_workers=4, worker_init_fn=init)\n",
        "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __init__(self):\n        self.rng = np.random.default_rng(0)\n"
        "    def __getitem__(self, i):\n        return self.rng.random()\n"
        "DataLoader(Ds(), num_workers=0)\n",
        "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __getitem__(self, i):\n        return np.random.random()\n"
        "DataLoader(Ds(), num_workers=4)\n",
    )
    invalid = (
        "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    def __init__(self):\n        self.rng = np.random.default_rng(0)\n"
        "    def __getitem__(self, i):\n        return self.rng.random()\n"
        "DataLoader(Ds(), num_workers=4)\n",
        "import random\nfrom torch.utils.data import DataLoader, IterableDataset\n"
        "class S(IterableDataset):\n    def __init__(self, seed):\n        self.rng = random.Random(seed)\n"
        "    def __iter__(self):\n        while True:\n            yield self.rng.random()\n"
        "loader = DataLoader(S(1), num_workers=2)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        if not facts.loader_calls and (facts.project is None or not facts.dataset_classes):
            return  # no loader here, and no other file to build one
        worker_code = facts.worker_code
        for cls in facts.dataset_classes:
            loaders = [
                f"on line {loader.node.lineno}"
                for loader in worker_code.loaders_using(cls)
                if loader.is_multi_worker and not loader.given("worker_init_fn") and not _may_have_worker_init(loader)
            ]
            if not loaders and facts.project is not None and not facts.project.summarizing:
                loaders = [f"in {where}" for where, use in facts.project.loaders_elsewhere(facts, cls.node) if use.multi_worker and not use.worker_init]
            if not loaders:
                continue
            init = worker_code.find_method(cls, "__init__")
            if init is None:
                yield from self._inherited(facts, cls, loaders[0])
                continue
            generators = stored_generators(facts, init)
            held = held_generators(facts, init)
            if not generators and not held:
                continue
            roots = [m for m in (worker_code.find_method(cls, name) for name in ENTRY_METHODS) if m is not None]
            reached = worker_code.reached_from(roots, cls)
            for attribute, (statement, holder, inner) in held.items():
                if attribute in generators or not draws(reached, attribute) or reseeds(reached, attribute):
                    continue
                message = (
                    f"self.{attribute} holds '{holder}' objects whose own random generator (self.{inner}) is copied "
                    f"into every worker unseeded (loader {loaders[0]} has no worker_init_fn): "
                    f"all workers draw the same numbers; reseed them in a worker_init_fn from "
                    f"torch.utils.data.get_worker_info().seed"
                )
                yield self.report(facts, statement, message)
            for attribute, (statement, call) in generators.items():
                shown = quote(facts, call.func)
                if not draws(reached, attribute) or reseeds(reached, attribute):
                    continue
                example = WORKER_INIT_PREFIX + _reseed_statement(facts, call, attribute, shown)
                message = (
                    f"self.{attribute} is copied into every worker unseeded (loader {loaders[0]} "
                    f"has no worker_init_fn): all workers draw the same numbers; reseed it, e.g. `{example}`"
                )
                yield self.report(facts, statement, message)


    def _inherited(self, facts: FileFacts, cls, loader: str) -> Iterator[Finding]:
        """A dataset class with no ``__init__`` of its own that draws from a generator its base
        class in another module stores (a mixin's ``self.rng``): reported at that base in the
        class's header, where this file meets it."""
        if facts.project is None or facts.project.summarizing:
            return
        worker_code = facts.worker_code
        roots = [m for m in (worker_code.find_method(cls, name) for name in ENTRY_METHODS) if m is not None]
        reached = worker_code.reached_from(roots, cls)
        for base in cls.node.bases:
            ancestors = facts.project.class_ancestors(facts, base)
            stored = next((a.stored_generators for a in ancestors if a.stored_generators), [])
            for attribute in stored:
                if draws(reached, attribute) and not reseeds(reached, attribute):
                    message = (
                        f"self.{attribute}, a random generator the __init__ of base class {quote(facts, base)} stores, is "
                        f"copied into every worker unseeded (loader {loader} has no worker_init_fn): all workers draw "
                        f"the same numbers; reseed it in a worker_init_fn from torch.utils.data.get_worker_info().seed"
                    )
                    yield self.report(facts, base, message)
            if ancestors:
                return  # the first project base's __init__ runs (Python's MRO for these bases)


def _reseed_statement(facts, call: ast.Call, attribute: str, shown: str) -> str:
    """What a ``worker_init_fn`` writes to give this worker its own stream."""
    factory = facts.qualname(call.func)
    if factory == "torch.Generator":
        return f"info.dataset.{attribute}.manual_seed(info.seed)"
    if factory == "numpy.random.Generator":
        shown = shown.rsplit(".", 1)[0] + ".default_rng" if "." in shown else "np.random.default_rng"
    return f"info.dataset.{attribute} = {shown}(info.seed % 2**32)"


def _may_have_worker_init(loader) -> bool:
    """An unresolvable splat may carry ``worker_init_fn``."""
    return loader.argument("worker_init_fn") is None and loader.unknown_splat
