from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Iterator

from dllint.facts.devices import batch_cuda_copies, torch_alias
from dllint.findings import Finding, Fix, SetArgument
from dllint.rules import Rule
from dllint.rules.fix_values import from_command_line

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class PinMemoryMissing(Rule):
    """
    ## What it does
    Checks for a loader without a truthy `pin_memory` whose batches are copied to CUDA in the
    loop that iterates it (in this file, through wrappers such as `tqdm` or a logger's
    `log_every`, or in the project's function the loader is passed to or returned to): `.cuda()`, `.to(device, non_blocking=True)`, or `.to(device)` where `device`
    resolves to a CUDA device (`"cuda"`, `f"cuda:{rank}"`, `torch.device("cuda" if
    torch.cuda.is_available() else "cpu")`). Reported at the loader call.

    ## Why is this bad?
    A copy from pageable host memory goes through a staging buffer the driver pins on the
    fly, so it is slower and always synchronous: `non_blocking=True` then overlaps nothing.
    With `pin_memory=True` the loader's pin thread puts each batch in page-locked memory
    ahead of time, and the copy can run asynchronously while the GPU computes.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4)
    for images, labels in loader:
        images = images.cuda(non_blocking=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=torch.cuda.is_available())
    ```

    ## Fix safety
    Safe: adds `pin_memory=torch.cuda.is_available()`, or `pin_memory=True` where the file
    moves batches with `.cuda()` or to a CUDA device no command-line option changes. Pinning changes where
    the batch lives on the host, not its values. No fix is offered when `torch` is not
    imported under its own name. In a config file, adding `pin_memory: true` is safe;
    changing a written `pin_memory: false` is unsafe (it may be deliberate).

    ## References
    - [Memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
    - [A guide on good usage of non_blocking and pin_memory()](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
    """

    code = "DL206"
    name = "pin-memory-missing"
    summary = "batches are copied to CUDA from pageable memory: add pin_memory=True so copies run asynchronously"
    fix_safety = "sometimes"  # unsafe where a config file writes pin_memory: false
    value_arguments = ("pin_memory",)
    valid = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
        "for x, y in loader:\n    x = x.cuda(non_blocking=True)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds)\nfor x, y in loader:\n    x = x.to(device)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds)\nmodel.cuda()\nfor x, y in loader:\n    out = model(x)\n",
    )
    invalid = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nfor x, y in loader:\n    x = x.cuda(non_blocking=True)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def train(loader):\n    for i, batch in enumerate(loader):\n"
        "        inputs = {k: v.to(device) for k, v in batch.items()}\n"
        "train(DataLoader(ds, batch_size=8))\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if loader.value("pin_memory").truthy() is not False:
                continue  # pinned, or unknown (a variable, a splat)
            if loader.keywords_only and loader.argument("pin_memory") is None:
                continue  # a DataLoader subclass may pin by default
            iterations = facts.loops.iterations(loader)
            copies = [c for use in iterations for c in batch_cuda_copies(facts, use)]
            elsewhere = [use.copies for use in iterations if use.copies]  # in another file of the project
            if copies or elsewhere:
                yield self.report(facts, loader.node, fix=self._fix(facts, loader, copies))

    def check_config(self, block) -> Iterator[Finding]:
        """A block of a config that puts the work on CUDA (``accelerator: gpu``, ``device:
        cuda``) with ``pin_memory`` false, or absent where torch's default applies."""
        from dllint.configs.lint import config_finding, setting_fix, setting_message

        if not block.cuda or not unpinned(block):
            return
        if block.entry("pin_memory") is None and not block.torch_defaults:
            return  # the framework's own default for it is not in the config
        span = block.report_span("pin_memory") or block.block_span
        if span is not None:
            message = f"batches are copied to CUDA from pageable memory: {setting_message(block, 'pin_memory', True)} so copies run asynchronously"
            entry = block.entry("pin_memory")
            if entry is not None and not block.is_local(entry):  # from another file of the defaults list
                where = os.path.relpath(entry.path, os.path.dirname(os.path.abspath(block.path)))
                message += f" (pin_memory: false in {where}:{entry.key_span.line})"
            yield config_finding(self, block, span, message, setting_fix(block, "pin_memory", True))

    @staticmethod
    def _fix(facts, loader, copies) -> Fix | None:
        arg = loader.argument("pin_memory")
        if arg is not None and arg.from_splat:
            return None
        torch = torch_alias(facts)
        # `True` only for a device no command line changes: `--device cpu` must not be told to pin.
        if any(c.unconditional and not _device_from_command_line(facts, c.call) for c in copies) and "is_available" not in facts.source:
            value = "True"
        elif torch is not None:
            value = f"{torch}.cuda.is_available()"
        else:
            return None
        return Fix("safe", f"Add `pin_memory={value}`", SetArgument("pin_memory", value))

    def apply_fix(self, ctx, finding: Finding) -> None:
        from dllint.fixes.arguments import set_reported_argument

        set_reported_argument(ctx, finding)


def unpinned(loader) -> bool:
    """``pin_memory`` known to be falsy (absent counts): a loader call or a config block."""
    return loader.value("pin_memory").truthy() is False


def _device_from_command_line(facts, call: ast.Call) -> bool:
    """``batch.to(args.device)``, where ``args.device`` resolved to its argparse default ``"cuda"``."""
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    return device is not None and from_command_line(facts, device, facts.scopes.scope_of(call))
