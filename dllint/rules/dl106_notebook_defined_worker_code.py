from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import named_definitions, shipped_expressions
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

FORK_ONLY = frozenset({"fork"})


# Samplers run in the main process: torch sends workers the dataset, collate_fn and
# worker_init_fn, never the sampler or batch sampler (the fifth audit's V9).
MAIN_PROCESS_SINKS = frozenset({"sampler", "batch_sampler"})


class NotebookDefinedWorkerCode(Rule):
    """
    ## What it does
    Checks, in Jupyter notebooks only, for a multi-worker loader whose workers need a class or
    function defined in the notebook itself: the dataset class, `collate_fn`, `worker_init_fn`,
    or a transform passed to the dataset. A sampler or batch sampler runs in the main process
    (torch never sends it to workers): a notebook's own is fine. Reported where it is handed
    over (`Ds(...)`, `collate_fn=collate`).

    ## Why is this bad?
    Everything defined in a notebook lives in the kernel's `__main__`. Pickle stores classes
    and functions by module and name; a `spawn` or `forkserver` worker (the default on
    Windows, macOS and, from Python 3.14, Linux) imports a fresh `__main__` that is
    ipykernel's launcher, not the notebook, and fails with
    `AttributeError: Can't get attribute 'Ds' on <module '__main__' (built-in)>`. The
    notebook works on a Linux machine with `fork` and breaks on a laptop.

    ## Example
    ```python
    # cell 1
    class Squares(Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, i):
            return i * i

    # cell 2
    loader = DataLoader(Squares(), num_workers=4)
    ```

    ## Use instead
    Move the definitions to a module next to the notebook and import them:
    ```python
    # cell 1
    from squares import Squares

    # cell 2
    loader = DataLoader(Squares(), num_workers=4)
    ```
    or, where only Linux matters, ask for `fork` explicitly:
    `DataLoader(Squares(), num_workers=4, multiprocessing_context="fork")`.

    ## Fix safety
    No fix: where the code should live is the author's choice.

    ## References
    - [Multiprocessing: using a pool of workers (interactive interpreter caveat)](https://docs.python.org/3/library/multiprocessing.html#using-a-pool-of-workers)
    - [torch.utils.data: platform-specific behaviors](https://pytorch.org/docs/stable/data.html#platform-specific-behaviors)
    """

    code = "DL106"
    name = "notebook-defined-worker-code"
    summary = "defined in the notebook, so spawn workers cannot unpickle it: move it to a .py module and import it"
    # DL106 only fires in notebooks: these examples are notebooks written in the percent
    # format, one ``# %%`` line per code cell (dllint.inputs.notebook.notebook_from_percent builds one).
    valid = (
        "# %%\nfrom torch.utils.data import DataLoader, Dataset\nfrom squares import Squares\n"
        "# %%\nDataLoader(Squares(), num_workers=2)\n",
        "# %%\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    pass\n"
        "# %%\nDataLoader(Ds(), num_workers=0)\n"
        "DataLoader(Ds(), num_workers=2, multiprocessing_context='fork')\n",
        "# %%\nfrom torch.utils.data import DataLoader, Sampler\nfrom squares import Squares\n"
        "class FewShotBatchSampler(Sampler):\n    def __iter__(self):\n        yield [0, 1]\n"
        "# %%\nDataLoader(Squares(), batch_sampler=FewShotBatchSampler(None), num_workers=2)\n",
    )
    invalid = (
        "# %%\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class Ds(Dataset):\n    pass\n"
        "# %%\nDataLoader(Ds(), num_workers=2)\n",
        "# %%\nfrom torch.utils.data import DataLoader\n"
        "def collate(batch):\n    return batch\n"
        "# %%\nDataLoader(ds, num_workers=4, collate_fn=collate)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        if not facts.is_notebook:
            return
        reported: set[int] = set()
        for loader in facts.loader_calls:
            if not loader.may_start_workers or self._fork_only(facts, loader):
                continue
            for shipped in shipped_expressions(facts, loader):
                if id(shipped.expr) in reported or shipped.sink in MAIN_PROCESS_SINKS:
                    continue
                definition = self._notebook_definition(facts, shipped.expr, shipped.scope)
                if definition is None:
                    continue
                reported.add(id(shipped.expr))
                kind = "class" if isinstance(definition, ast.ClassDef) else "function"
                message = (
                    f"{kind} '{definition.name}' is defined in the notebook, so spawn workers cannot unpickle it"
                    f" (via {shipped.sink}): move it to a .py module and import it"
                ) + loader.when_workers()
                yield self.report(facts, shipped.expr, message)

    @staticmethod
    def _fork_only(facts, loader) -> bool:
        """``multiprocessing_context="fork"``: workers inherit ``__main__`` and nothing is pickled by name."""
        value = loader.value("multiprocessing_context")
        return value.is_const and value.value in FORK_ONLY

    @staticmethod
    def _notebook_definition(facts, expr: ast.expr, scope) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
        """The notebook-level ``def``/``class`` that ``expr`` hands to workers: a name referring to
        one, or a call constructing a notebook class (calling a function ships its result)."""
        constructs = isinstance(expr, ast.Call)
        found = named_definitions(facts, expr.func if isinstance(expr, ast.Call) else expr, scope)
        # Functions defined inside functions are DL103's; a name also imported may be the import.
        if found is None or not found[0].is_module:
            return None
        definition = found[1][-1].node
        if constructs and not isinstance(definition, ast.ClassDef):
            return None
        return definition  # type: ignore[return-value]
