from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.workers import shipped_expressions
from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Binding

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
    over (`Ds(...)`, `collate_fn=collate`), also where the notebook's own functions carry it
    to the loader: a dataset a notebook function builds and returns (`get_dataset()`), or one
    passed to the notebook function that builds the loader (`make_loader(Ds())`), a tuple it
    unpacks included.

    A name means what the kernel binds it to when the cells run in order: a class cell that
    redefines an imported name (`from utils import Squares`, then `class Squares(Dataset)`,
    or `class Dataset(Dataset)`) is the notebook's class from that cell on, and the import
    before it. A name whose binding is unknown there (a class defined under `if`, a function
    that may run after a later cell imports the name again) stays silent.

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
            for shipped in shipped_expressions(facts, loader, through_functions=True):
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
        name = expr.func if isinstance(expr, ast.Call) else expr
        found = facts.scopes.lookup(name.id, scope) if isinstance(name, ast.Name) else None
        # Functions defined inside functions are DL103's.
        if found is None or not found[1] or not found[0].is_module:
            return None
        bindings = found[1]
        # Bound only by def/class statements: a notebook definition whichever runs. Also imported
        # or assigned: the binding live where the name is read decides (B4).
        live = bindings[-1] if all(b.kind in ("def", "class") for b in bindings) else _live_binding(facts, name, bindings)
        definition = live.node if live is not None else None
        if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        return None if constructs and not isinstance(definition, ast.ClassDef) else definition


def _live_binding(facts: FileFacts, read: ast.expr, bindings: list[Binding]) -> Binding | None:
    """The module-level binding that ``read`` sees when the cells run in order: the last one in a
    module statement above the read's (``from utils import Squares`` in cell 1, then ``class
    Squares(Dataset)`` in cell 2: cell 3's ``Squares()`` is the notebook's class). A read inside
    a function runs when it is called, after every cell above its ``def``, but maybe after a later
    rebinding too: then, as for a binding in a branch or a loop, it is unknown (None)."""
    read_at = facts.module_statement_of(read)
    deferred = facts.scopes.enclosing_function(read) is not None
    before: list[tuple[int, Binding]] = []
    for binding in bindings:
        top = facts.module_statement_of(binding.node)
        if read_at is None or top is None or top is read_at or facts.statement_of(binding.node) is not top:
            return None
        if top.lineno < read_at.lineno:
            before.append((top.lineno, binding))
        elif deferred:
            return None
    return max(before, key=lambda pair: pair[0])[1] if before else None
