"""What frameworks do with the loaders handed to them: one table, from each framework's
documentation. Extend a table below to teach dllint another framework; README.md lists
what is understood.

- Lightning (``LightningDataModule``/``LightningModule``): ``Trainer.fit`` calls
  ``train_dataloader()``/``val_dataloader()`` once and iterates those loaders every epoch
  (``reload_dataloaders_every_n_epochs`` aside); ``test``/``predict`` iterate theirs once.
  ``trainer.fit(model, train_dataloaders, val_dataloaders)`` iterates its loaders every
  epoch (once for a ``Trainer(max_epochs=1)``); ``validate``/``test``/``predict`` once.
- Hugging Face ``transformers.Trainer``: builds its own loaders from ``train_dataset``;
  a subclass's ``get_train_dataloader`` is iterated every epoch, ``get_eval_dataloader``
  and ``get_test_dataloader`` are rebuilt per evaluation (one pass each).
- accelerate: ``accelerator.prepare(..., loader, ...)`` and ``prepare_data_loader`` hand
  back the same loader for flow purposes (wrapped to shard and to move batches to the
  device); ``accelerator.skip_first_batches(loader, n)`` likewise.
- Lightning Fabric: ``fabric.setup_dataloaders(loader, ...)`` hands back the same loader(s)
  (a distributed sampler and device placement added), one per argument, like ``prepare``.
- ``DistributedSampler`` shuffles by default and needs ``set_epoch`` (DL301), which
  Lightning's fit loop and Hugging Face's ``Trainer`` call themselves on the loaders
  they iterate every epoch;
  ``RandomSampler``, ``WeightedRandomSampler``, ``SubsetRandomSampler`` and
  ``DistributedSampler`` mark a training loader.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dllint.facts.imports import dotted_name

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope


@dataclass(frozen=True)
class Hook:
    """A method a framework calls to get a loader, and how often it iterates what it gets."""

    name: str
    per_epoch: bool
    bases: tuple[str, ...]  # last components of the framework base classes that define it


LIGHTNING_BASES = ("LightningDataModule", "LightningModule")
HF_TRAINER_BASES = ("Trainer", "Seq2SeqTrainer")

HOOKS = {
    hook.name: hook
    for hook in (
        Hook("train_dataloader", True, LIGHTNING_BASES),
        Hook("val_dataloader", True, LIGHTNING_BASES),
        Hook("test_dataloader", False, LIGHTNING_BASES),
        Hook("predict_dataloader", False, LIGHTNING_BASES),
        Hook("get_train_dataloader", True, HF_TRAINER_BASES),
        Hook("get_eval_dataloader", False, HF_TRAINER_BASES),
        Hook("get_test_dataloader", False, HF_TRAINER_BASES),
    )
}
FRAMEWORK_ROOTS = ("lightning", "pytorch_lightning", "transformers", "accelerate")


@dataclass(frozen=True)
class CallRule:
    """``receiver.method(...)``: what the call does with the loaders passed at ``positions``
    or ``keywords`` ("per-epoch", "once", or "same": the same loader is handed back)."""

    method: str
    receiver: str  # a word the receiver's name or its constructor's name contains (lower case)
    effect: str
    positions: tuple[int, ...] = ()  # None-like empty: every positional argument
    keywords: tuple[str, ...] = ()


CALLS = (
    CallRule("fit", "trainer", "per-epoch", (1, 2), ("train_dataloaders", "val_dataloaders", "train_dataloader", "val_dataloader")),
    CallRule("validate", "trainer", "once", (1,), ("dataloaders",)),
    CallRule("test", "trainer", "once", (1,), ("dataloaders", "test_dataloaders")),
    CallRule("predict", "trainer", "once", (1,), ("dataloaders",)),
    CallRule("prepare", "accelerator", "same"),
    CallRule("prepare_data_loader", "accelerator", "same"),
    CallRule("skip_first_batches", "accelerator", "same", (0,), ("dataloader",)),
    CallRule("setup_dataloaders", "fabric", "same"),
)
SAME_FUNCTIONS = frozenset(
    {
        "accelerate.skip_first_batches",
        "accelerate.data_loader.skip_first_batches",
        "accelerate.data_loader.prepare_data_loader",
    }
)
RANDOM_SAMPLERS = frozenset({"RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler", "DistributedSampler"})
DISTRIBUTED_SAMPLERS = frozenset({"DistributedSampler"})


def framework_call(facts: FileFacts, call: ast.Call, keyword: str | None, index: int | None, scope: Scope) -> str | None:
    """What a framework call does with the argument at ``keyword``/``index``."""
    func = call.func
    if facts.qualname(func) in SAME_FUNCTIONS:
        return "same"
    if not isinstance(func, ast.Attribute):
        return None
    constructor = _constructor(facts, func.value, scope)
    receiver = (dotted_name(func.value) or "").lower()
    if constructor is not None:
        receiver += " " + (dotted_name(constructor.func) or "").lower()
    for rule in CALLS:
        if rule.method != func.attr or rule.receiver not in receiver:
            continue
        if not rule.positions and not rule.keywords:
            return rule.effect
        if keyword is not None and keyword in rule.keywords or index is not None and index in rule.positions:
            if rule.effect == "per-epoch" and constructor is not None and _one_epoch(constructor):
                return "once"  # Trainer(max_epochs=1).fit(model, loader)
            return rule.effect
    return None


def _constructor(facts: FileFacts, expr: ast.expr, scope: Scope) -> ast.Call | None:
    """The call that built the receiver: ``Trainer(...).fit``, or a name bound once to a call."""
    if isinstance(expr, ast.Call):
        return expr
    if isinstance(expr, ast.Name):
        found = facts.scopes.single_value(expr.id, scope)
        if found is not None and isinstance(found[1].value, ast.Call):
            return found[1].value
    return None


def _one_epoch(constructor: ast.Call) -> bool:
    """``max_epochs=1`` written at the constructor (a ``**`` splat may override it)."""
    if any(k.arg is None for k in constructor.keywords):
        return False
    value = next((k.value for k in constructor.keywords if k.arg == "max_epochs"), None)
    return isinstance(value, ast.Constant) and type(value.value) is int and value.value <= 1


def hook_of(facts: FileFacts, function: ast.AST) -> Hook | None:
    """The framework hook ``function`` implements: a method named like one, in a class whose
    bases (through same-file classes) include the framework's."""
    hook = HOOKS.get(getattr(function, "name", ""))
    if hook is None:
        return None
    owner = facts.scopes.parents.get(function)
    if not isinstance(owner, ast.ClassDef):
        return None
    return hook if _derives_from(facts, owner, hook.bases, 0) else None


def _derives_from(facts: FileFacts, cls: ast.ClassDef, bases: tuple[str, ...], depth: int) -> bool:
    if depth > 8:
        return False
    for base in cls.bases:
        name = facts.qualname(base) or dotted_name(base) or ""
        last = name.rsplit(".", 1)[-1]
        if last in bases or last.endswith("DataModule") and "LightningDataModule" in bases:
            return True
        local = facts.classes.get(name)
        if local is not None and local.node is not cls and _derives_from(facts, local.node, bases, depth + 1):
            return True
    return False
