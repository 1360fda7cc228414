from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding, Fix, RemoveArguments, SetArgument
from dllint.rules import Rule
from dllint.rules.fix_values import operand_source, workers_from_splat, workers_test

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class PersistentWorkersWithoutWorkers(Rule):
    """
    ## What it does
    Checks for `persistent_workers=True` on a loader whose `num_workers` is 0 or omitted.

    ## Why is this bad?
    There are no worker processes to keep alive: torch refuses the combination when the
    loader is built, with `ValueError: persistent_workers option needs num_workers > 0`.
    It is a common leftover after lowering `num_workers` to 0 to debug (or on Windows).

    ## Example
    ```python
    loader = DataLoader(dataset, num_workers=0, persistent_workers=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, num_workers=0)
    ```

    ## Fix safety
    Safe: removing the argument restores what torch would do with no workers. In a config
    file the fix sets the key (`persistent_workers: false`; `persistent_workers=False` in a
    Python dict config, added in the file being fixed when a `_base_` sets it) and never
    deletes it: the code that reads the key keeps working. Where
    `num_workers` is not a number written at the call (`args.workers`, whose default is 0),
    the fix sets `persistent_workers=<num_workers> > 0` instead, so that other values keep
    their persistent workers.

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    """

    code = "DL001"
    fix_at_argument = True  # a SetArgument fix edits the call whose argument is reported
    name = "persistent-workers-without-workers"
    summary = "persistent_workers=True needs num_workers > 0 (torch raises ValueError): set it to `num_workers > 0`, or remove it"
    fix_safety = "safe"
    value_arguments = ("persistent_workers", "num_workers")
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, persistent_workers=True)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, persistent_workers=False)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=n, persistent_workers=True)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, persistent_workers=True, **kwargs)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, persistent_workers=True)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, persistent_workers=True)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            arg = loader.argument("persistent_workers")
            if arg is None or not persistent_without_workers(loader):
                continue
            yield self.report(facts, arg.node, fix=None if arg.from_splat else self._fix(facts, loader, arg))

    @staticmethod
    def _fix(facts, loader, arg) -> Fix:
        test = workers_test(facts, loader)
        if test is not None:
            # num_workers=args.workers resolves to 0 here, not on every command line: keep it conditional.
            value = test if _is_true(arg.value) else f"{operand_source(facts, arg.value)} and {test}"
            return Fix("safe", f"Set `persistent_workers={value}`", SetArgument("persistent_workers", value))
        if workers_from_splat(loader):
            return Fix("unsafe", "Remove `persistent_workers` (right only while the `**` dict's num_workers is 0)", RemoveArguments(("persistent_workers",)))
        return Fix("safe", "Remove `persistent_workers`", RemoveArguments(("persistent_workers",)))

    def check_config(self, block) -> Iterator[Finding]:
        from dllint.configs.lint import config_finding, key_value, value_fix

        if block.entry("persistent_workers") is None or not persistent_without_workers(block):
            return
        span = block.report_span("persistent_workers", "num_workers")
        if span is not None:
            # A config's key is read by code (cfg.loader.persistent_workers): set it, never delete it.
            written, wanted = key_value(block, "persistent_workers", "true", "True"), key_value(block, "persistent_workers", "false", "False")
            message = f"{written} needs num_workers > 0 (torch raises ValueError): set {wanted}"
            yield config_finding(self, block, span, message, value_fix(block, "persistent_workers", "false", "False"))


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


def persistent_without_workers(loader) -> bool:
    """The one predicate of the rule: a loader call or a config block (both answer ``value``)."""
    return loader.value("num_workers").is_zero_or_absent() and bool(loader.value("persistent_workers").truthy())
