from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Iterator

from dllint.facts.batches import batch_copies
from dllint.facts.device_kinds import torch_alias
from dllint.findings import Finding, Fix, SetArgument
from dllint.rules import Rule
from dllint.rules.fix_values import added_keyword_fix, from_command_line, keyword_place

if TYPE_CHECKING:
    from dllint.facts import FileFacts


NON_BLOCKING_MESSAGE = (
    "batches are copied to CUDA with non_blocking=True from pageable memory, which makes those copies synchronous: "
    "add pin_memory=True so they can overlap compute"
)
BLOCKING_MESSAGE = (
    "batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread "
    "page-locks them while workers load, and each copy is faster (it stays blocking without non_blocking=True)"
)


class PinMemoryMissing(Rule):
    """
    ## What it does
    Checks for a loader without a truthy `pin_memory` whose batches are copied to CUDA in the
    loop that iterates it (in this file, through wrappers such as `tqdm` or a logger's
    `log_every`, or in the project's function the loader is passed to or returned to, also
    bound into `functools.partial(evaluate, loader=loader)` and called wherever the partial goes,
    or in the project's function or method the batch is handed to, `model.parse_batch(batch)`,
    or where a generator function of this file yields the batch or a field of it,
    `yield data["gt"]`, to a loop here or to another module's function that iterates it):
    `.cuda()`, `.to(device, non_blocking=True)`, or `.to(device)` where `device` resolves to a
    CUDA device (`"cuda"`, `f"cuda:{rank}"`, `torch.device("cuda" if torch.cuda.is_available()
    else "cpu")`, or what a function of the same file returns, `try_gpu()`, where each of its
    returns is a device written out; or the device of a model, `list(net.parameters())[0].device`,
    in a function called by one that moved `net` to a device parameter first; or `self.device`
    kept by `__init__` from what every construction of the class passes, `Ensemble(device=device)`,
    also as an entry of `**kwargs`). It fires when a copy asks for `non_blocking=True`, or when the loader has
    workers. Silent for a loader without workers whose copies are all blocking (whether
    pinning pays then depends on the batch size: the probe measures it), and for batches that
    torch's `pin_memory` leaves as they are (DGL's graphs and blocks, per the table of library
    loaders; also a plain `DataLoader` whose `collate_fn` is `dgl.batch` or a function of this
    file returning `dgl.batch(...)`), and for a project `DataLoader` subclass called without `pin_memory` whose code
    (or a base's, up to torch's) names `pin_memory`: it may pin by default (one that never
    names it keeps torch's `False`). Also checks Hugging Face `TrainingArguments(dataloader_pin_memory=False)` with
    workers, handed to a `Trainer` that trains. Reported at the loader call.

    ## Why is this bad?
    A copy from pageable host memory goes through a staging buffer the driver pins on the
    fly, so it is slower and always synchronous. With `non_blocking=True` the code asks for a
    copy that overlaps compute and does not get one; pinned batches make it asynchronous. A
    blocking copy stays blocking, but from pinned memory it is faster, and with workers the
    loader's pin thread page-locks the next batches in the background. The message says
    which of the two it found.

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
    changing a written `pin_memory: false` is unsafe (it may be deliberate). A loader class of the
    project whose `__init__` takes no `pin_memory` gets no fix at its construction (the message
    names the DataLoader call in that `__init__`); one of another module gets it as unsafe.

    ## References
    - [Memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
    - [dgl.DGLGraph.pin_memory_](https://www.dgl.ai/dgl_docs/generated/dgl.DGLGraph.pin_memory_.html) (in place: torch's `pin_memory` does not call it)
    - [A guide on good usage of non_blocking and pin_memory()](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
    """

    code = "DL206"
    name = "pin-memory-missing"
    summary = BLOCKING_MESSAGE
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
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=8)\nfor x, y in loader:\n    x = x.to('cuda')\n",
        "import dgl\nloader = dgl.dataloading.GraphDataLoader(ds, num_workers=4)\n"
        "for g, y in loader:\n    g = g.to('cuda', non_blocking=True)\n",
    )
    invalid = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\nfor x, y in loader:\n    x = x.cuda(non_blocking=True)\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def train(loader):\n    for i, batch in enumerate(loader):\n"
        "        inputs = {k: v.to(device) for k, v in batch.items()}\n"
        "train(DataLoader(ds, batch_size=8, num_workers=2))\n",
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds)\nfor x, y in loader:\n    x = x.to('cuda', non_blocking=True)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        for loader in facts.loader_calls:
            if loader.value("pin_memory").truthy() is not False:
                continue  # pinned, or unknown (a variable, a splat)
            if loader.keywords_only and loader.argument("pin_memory") is None and facts.custom_loader_may_pin(loader.node.func):
                continue  # a DataLoader subclass may pin by default (its code names pin_memory)
            if not loader.pins_batches or _collates_unpinned_batches(facts, loader):
                continue  # graphs torch's pin_memory leaves as they are: pinning changes nothing
            iterations = facts.loops.iterations(loader)
            found = [batch_copies(facts, use) for use in iterations]
            copies = [c for here, _ in found for c in here]
            elsewhere = [use.copies for use in iterations if use.copies]  # in another file of the project
            elsewhere += [handed for _, handed in found if handed]  # model.parse_batch(batch)
            if not copies and not elsewhere:
                continue
            message = self._message(loader, any(c.non_blocking for c in copies) or any(e.non_blocking for e in elsewhere))
            if message is not None:
                yield self.report(facts, loader.node, keyword_place(message, loader, "pin_memory"), fix=self._fix(facts, loader, copies))
        for settings in facts.loader_settings:
            yield from self._check_settings(facts, settings)

    @staticmethod
    def _message(loader, non_blocking: bool) -> str | None:
        """What pinning would change: ``non_blocking=True`` copies (here, or in a function of the
        project the batch is handed to) from pageable memory are synchronous, so pinning lets
        them overlap compute; blocking copies stay blocking and only get faster, which pays off
        without extra cost when workers feed a pin thread. None for blocking copies without
        workers (the probe measures whether pinning pays)."""
        if non_blocking:
            return NON_BLOCKING_MESSAGE
        return BLOCKING_MESSAGE if loader.is_multi_worker else None

    def _check_settings(self, facts: FileFacts, settings) -> Iterator[Finding]:
        """``TrainingArguments(dataloader_pin_memory=False, dataloader_num_workers=4)`` handed to
        a ``Trainer`` that trains: it copies every batch to its device (CUDA when available)."""
        from dllint.facts.training import framework_passes

        if settings.value("pin_memory").truthy() is not False or not settings.is_multi_worker:
            return
        if framework_passes(facts, settings) == 0:
            return
        yield self.report(facts, settings.node, f"{settings.settings.framework} copies batches to CUDA from pageable memory: "
                          "set dataloader_pin_memory=True so its pin thread page-locks them while workers load")

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
            message = f"batches are copied to CUDA from pageable memory: {setting_message(block, 'pin_memory', True)} so the loader page-locks them (faster copies, which overlap compute with non_blocking=True)"
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
        return added_keyword_fix(loader, Fix("safe", f"Add `pin_memory={value}`", SetArgument("pin_memory", value)))


def unpinned(loader) -> bool:
    """``pin_memory`` known to be falsy (absent counts): a loader call or a config block."""
    return loader.value("pin_memory").truthy() is False


def _device_from_command_line(facts, call: ast.Call) -> bool:
    """``batch.to(args.device)``, where ``args.device`` resolved to its argparse default ``"cuda"``."""
    device = next((k.value for k in call.keywords if k.arg == "device"), None) if not call.args else call.args[0]
    return device is not None and from_command_line(facts, device, facts.scopes.scope_of(call))


def _collates_unpinned_batches(facts, loader) -> bool:
    """The loader's ``collate_fn`` makes batches torch's ``pin_memory`` leaves as they are: a
    library function (``collate_fn=dgl.batch``), or a function of this file that returns a
    library graph (``return dgl.batch(graphs), labels``), per the library knowledge table."""
    from dllint.knowledge.loaders import UNPINNED_BATCH_BUILDERS

    argument = loader.argument("collate_fn")
    if argument is None:
        return False
    value = argument.value
    if facts.qualname(value) in UNPINNED_BATCH_BUILDERS:
        return True
    function = facts.usage.same_file_function(value, argument.scope)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            parts = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
            if any(isinstance(part, ast.Call) and facts.qualname(part.func) in UNPINNED_BATCH_BUILDERS for part in parts):
                return True
    return False
