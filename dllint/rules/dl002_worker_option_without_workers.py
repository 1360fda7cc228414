from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.values import maybe_none
from dllint.findings import Finding, Fix, RemoveArguments, SetArgument
from dllint.rules import Rule
from dllint.rules.fix_values import operand_source, workers_from_splat, workers_test

if TYPE_CHECKING:
    from dllint.facts import FileFacts

ERRORS = {
    "prefetch_factor": "ValueError: prefetch_factor option could only be specified in multiprocessing",
    "multiprocessing_context": "ValueError: multiprocessing_context can only be used with multi-process loading",
    "timeout": "AssertionError on the first batch: timeout needs num_workers > 0",
}
WITHOUT_WORKERS = {"prefetch_factor": "None", "multiprocessing_context": "None", "timeout": "0"}  # torch's defaults
YAML_WITHOUT_WORKERS = {"prefetch_factor": "null", "multiprocessing_context": "null", "timeout": "0"}


class WorkerOptionWithoutWorkers(Rule):
    """
    ## What it does
    Checks for worker-only options on a loader whose `num_workers` is 0 or omitted:
    `prefetch_factor` (not `None`), `multiprocessing_context`, or a `timeout` above 0.

    ## Why is this bad?
    These options configure worker processes that do not exist. torch raises when the loader
    is built (`ValueError: prefetch_factor option could only be specified in multiprocessing`,
    `ValueError: multiprocessing_context can only be used with multi-process loading`) or, for
    `timeout`, with an `AssertionError` on the first batch.

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=0, prefetch_factor=4)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, num_workers=0)
    ```

    ## Fix safety
    Safe: removing the option restores what torch does without workers; in a config file the
    fix sets torch's default instead (`prefetch_factor: null`), keeping the key the code reads. Where `num_workers`
    is not a number written at the call (`args.workers`, whose default is 0), the fix keeps the
    option for when workers run: `prefetch_factor=4 if args.workers > 0 else None`.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    """

    code = "DL002"
    fix_at_argument = True  # a SetArgument fix edits the call whose argument is reported
    name = "worker-option-without-workers"
    summary = "worker-only option without workers"
    fix_safety = "safe"
    value_arguments = ("prefetch_factor", "multiprocessing_context", "timeout", "num_workers")
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4, prefetch_factor=4, timeout=30)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, prefetch_factor=None, timeout=0)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, prefetch_factor=pf)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, prefetch_factor=4)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, multiprocessing_context='spawn')\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, timeout=10)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if not loader.num_workers.is_zero_or_absent():
                continue
            for option, error in ERRORS.items():
                arg = loader.argument(option)
                if arg is None or not self._offending(facts, loader, option, arg):
                    continue
                fix = None if arg.from_splat else self._fix(facts, loader, option, arg)
                message = f"{option} without workers: {error}; remove it or set num_workers > 0"
                yield self.report(facts, arg.node, message, fix)

    @staticmethod
    def _offending(facts, loader, option: str, arg) -> bool:
        value = loader.value(option)
        if option == "timeout" or value.is_const:
            return offending_value(option, value)
        # A call such as mp.get_context("spawn") is a context, never None.
        return isinstance(arg.value, ast.Call) or (
            isinstance(arg.value, ast.Name) and not maybe_none(arg.value, arg.scope, facts) and option == "multiprocessing_context"
        )

    def check_config(self, block) -> Iterator[Finding]:
        from dllint.configs.lint import config_finding, key_value, value_fix

        if not block.num_workers.is_zero_or_absent():
            return
        for option, error in ERRORS.items():
            if block.entry(option) is None or not offending_value(option, block.value(option)):
                continue
            if option == "timeout" and not block.explicit:
                continue  # beside merely loader-like keys, a `timeout` may configure something else
            span = block.report_span(option, "num_workers")
            if span is not None:
                # Set torch's own default, never delete the key: code reads it (cfg.loader.prefetch_factor).
                unset = key_value(block, option, YAML_WITHOUT_WORKERS[option], WITHOUT_WORKERS[option])
                message = f"{option} without workers: {error}; set {unset} or num_workers > 0"
                yield config_finding(self, block, span, message, value_fix(block, option, YAML_WITHOUT_WORKERS[option], WITHOUT_WORKERS[option]))

    @staticmethod
    def _fix(facts, loader, option: str, arg) -> Fix:
        test = workers_test(facts, loader)
        if test is not None:
            # num_workers=args.workers resolves to 0 here, not on every command line: keep the option for workers.
            value = f"{operand_source(facts, arg.value)} if {test} else {WITHOUT_WORKERS[option]}"
            return Fix("safe", f"Set `{option}={value}`", SetArgument(option, value))
        if workers_from_splat(loader):
            return Fix("unsafe", f"Remove `{option}` (right only while the `**` dict's num_workers is 0)", RemoveArguments((option,)))
        return Fix("safe", f"Remove `{option}`", RemoveArguments((option,)))


def offending_value(option: str, value) -> bool:
    """A worker-only option whose known value needs workers (code and configs alike)."""
    if option == "timeout":
        return value.is_const and isinstance(value.value, (int, float)) and value.value > 0
    return value.is_const and value.value is not None
