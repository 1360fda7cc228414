from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts

START_METHODS = ("fork", "spawn", "forkserver")


class InvalidLoaderValue(Rule):
    """
    ## What it does
    Checks for values torch rejects: `num_workers`, `timeout` or `prefetch_factor` below 0,
    `prefetch_factor=0`, and a `multiprocessing_context` string other than `fork`, `spawn`
    or `forkserver`.

    ## Why is this bad?
    Negative values raise `ValueError` when the loader is built; `prefetch_factor=0` fails an
    assertion on the first batch; an unknown start method raises `ValueError` too.

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=-1, multiprocessing_context="threads")
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, num_workers=4, multiprocessing_context="spawn")
    ```

    ## Fix safety
    No fix: the intended value is not knowable.

    ## References
    - [multiprocessing start methods](https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods)
    """

    code = "DL005"
    name = "invalid-loader-value"
    summary = "invalid DataLoader value"
    value_arguments = ("num_workers", "timeout", "prefetch_factor", "multiprocessing_context")
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, prefetch_factor=2, multiprocessing_context='spawn')\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=-1)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, prefetch_factor=0)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, multiprocessing_context='thread')\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            for name in CHECKED:
                arg = loader.argument(name)
                message = invalid_value_message(name, loader.value(name)) if arg is not None else None
                if message and arg is not None:
                    yield self.report(facts, arg.node, message)

    def check_config(self, block) -> Iterator[Finding]:
        from dllint.configs.lint import config_finding

        if not block.values_reach_torch:
            return  # a framework may translate them first (lightly: num_workers -1 means all cores)
        for name in CHECKED:
            message = invalid_value_message(name, block.value(name)) if block.entry(name) is not None else None
            span = block.report_span(name) if message else None
            if span is not None:
                yield config_finding(self, block, span, message)


CHECKED = ("num_workers", "timeout", "prefetch_factor", "multiprocessing_context")


def invalid_value_message(name: str, value) -> str | None:
    """What torch would reject in this argument's known value (code and configs alike)."""
    if not value.is_const:
        return None
    if name == "multiprocessing_context":
        if isinstance(value.value, str) and value.value not in START_METHODS:
            return f"multiprocessing_context={value.value!r} is not a start method (fork, spawn, forkserver): torch raises ValueError"
        return None
    if not isinstance(value.value, (int, float)) or isinstance(value.value, bool):
        return None
    if value.value < 0:
        return f"{name}={value.value} is negative: torch raises ValueError"
    if name == "prefetch_factor" and value.value == 0:
        return "prefetch_factor=0 fails an assertion on the first batch: use at least 1, or None without workers"
    return None
