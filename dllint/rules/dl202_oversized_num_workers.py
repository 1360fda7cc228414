from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class OversizedNumWorkers(Rule):
    """
    ## What it does
    Checks for `num_workers` above the `max-workers` setting (default 16), or set to the
    machine's whole CPU count (`os.cpu_count()`, `multiprocessing.cpu_count()`,
    `len(os.sched_getaffinity(0))`, ...). The finding is reported where the value is written
    (an argparse default, a constant), else at the argument. An argparse default counts only
    while the file never rewrites it (`args.workers = args.workers // gpus_per_node`).

    The threshold is per process: well-maintained repositories run 10-16 workers per GPU on
    large machines, and whether that pays off depends on the machine, which a static check
    cannot see; `dllint --probe` sweeps `num_workers` and judges those counts. Above 16 per
    process, each further worker mostly adds memory (its own dataset copy and prefetched
    batches). A CPU count per rank in a distributed script is DL207.

    ## Why is this bad?
    Each worker is a full process with its own copy of the dataset object and its prefetched
    batches: memory grows with every worker, and past the cores that can feed them, throughput
    drops. `os.cpu_count()` counts the host's CPUs, not a container's quota, and leaves no core
    for the main process. In a distributed script every rank starts that many (see DL207).

    ## Example
    ```python
    parser.add_argument("--num_workers", type=int, default=32)
    loader = DataLoader(dataset, num_workers=os.cpu_count())
    ```

    ## Use instead
    ```python
    parser.add_argument("--num_workers", type=int, default=4)
    loader = DataLoader(dataset, num_workers=min(8, len(os.sched_getaffinity(0)) - 1))
    ```

    ## Fix safety
    No automatic fix: the right count depends on the machine. `dllint --probe` sweeps
    `num_workers` and recommends the smallest count within 5% of the best throughput.

    ## References
    - [Single- and multi-process data loading](https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading)
    """

    code = "DL202"
    name = "oversized-num-workers"
    summary = "num_workers is oversized"
    fix_safety = "none"
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4)\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=16)\n",
        "import os\nfrom torch.utils.data import DataLoader\nDataLoader(ds, num_workers=min(8, os.cpu_count()))\n",
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=args.workers)\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=24)\n",
        "import os\nfrom torch.utils.data import DataLoader\nDataLoader(ds, num_workers=os.cpu_count())\n",
        "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\n"
        "p.add_argument('--num_workers', type=int, default=32)\nargs = p.parse_args()\n"
        "DataLoader(ds, num_workers=args.num_workers)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        limit = facts.settings.max_workers
        reported: set[int] = set()
        for loader in (*facts.loader_calls, *facts.loader_settings):  # settings: TrainingArguments
            arg = loader.argument("num_workers")
            if arg is None:
                continue
            value = loader.value("num_workers")
            # Where the number is written: an argparse default or a constant elsewhere; the
            # argument itself when it is written in the call.
            origin = arg.node if value.origin is None or value.origin is arg.value else value.origin
            if value.is_int() and value.value > limit:
                message = oversized_message(value.value, limit)
            elif value.is_cpu_count and not facts.is_distributed:  # asked only here: DDP setup is a whole-file search
                message = "num_workers set to the whole CPU count: ignores container quotas and leaves no core for the main process; cap it (e.g. min(8, cpus - 1))"
            else:
                continue
            if id(origin) in reported:
                continue  # one finding per place the value is written
            reported.add(id(origin))
            yield self.report(facts, origin, message)

    def check_config(self, block) -> Iterator[Finding]:
        from dllint.configs.lint import config_finding

        limit = block.settings.max_workers
        value = block.value("num_workers")
        span = block.report_span("num_workers") if oversized(value, limit) else None
        if span is not None:
            message = oversized_message(value.value, limit)
            yield config_finding(self, block, span, message)


def oversized(value, limit: int) -> bool:
    """A known worker count above the ``max-workers`` setting (code and configs alike)."""
    return value.is_int() and value.value > limit


def oversized_message(number: int, limit: int) -> str:
    return (f"num_workers={shown_number(number)} exceeds max-workers={limit}: each worker is a process with its own "
            "memory; use fewer (dllint --probe measures the best count)")


def shown_number(value: int) -> str:
    """An integer as a message shows it; one too long for ``str`` (over 4,300 digits raises
    ValueError) or for a line, by its number of digits."""
    if value.bit_length() <= 1000:  # up to ~301 digits
        return str(value)
    digits = int((abs(value).bit_length() - 1) * 0.30102999566398120) + 1  # the fewest it can have ...
    return f"<a {digits + (abs(value) >= 10 ** digits)}-digit number>"  # ... or one more (10 ** n needs no str)
