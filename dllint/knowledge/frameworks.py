"""What frameworks do with the loaders handed to them: one table, pure data, each entry
citing the documented behaviour it encodes. Extend a table to teach dllint another
framework (README.md lists what is understood); the analysis that applies these tables is
:mod:`dllint.facts.frameworks`. Nothing here imports the rest of dllint.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class Hook(NamedTuple):
    """A method a framework calls to get a loader, and how often it iterates what it gets."""

    name: str
    per_epoch: bool
    bases: tuple[str, ...]  # last components of the framework base classes that define it


LIGHTNING_BASES = ("LightningDataModule", "LightningModule")
HF_TRAINER_BASES = ("Trainer", "Seq2SeqTrainer")

HOOKS = {
    hook.name: hook
    for hook in (
        # Lightning, "LightningDataModule" / "Hooks" docs: ``Trainer.fit`` calls
        # train_dataloader()/val_dataloader() once and iterates those loaders every epoch
        # (``reload_dataloaders_every_n_epochs`` aside); test/predict iterate theirs once.
        Hook("train_dataloader", True, LIGHTNING_BASES),
        Hook("val_dataloader", True, LIGHTNING_BASES),
        Hook("test_dataloader", False, LIGHTNING_BASES),
        Hook("predict_dataloader", False, LIGHTNING_BASES),
        # transformers, "Trainer" docs: get_train_dataloader() is built once per train() and
        # iterated every epoch; get_eval/test_dataloader() are rebuilt per evaluation.
        Hook("get_train_dataloader", True, HF_TRAINER_BASES),
        Hook("get_eval_dataloader", False, HF_TRAINER_BASES),
        Hook("get_test_dataloader", False, HF_TRAINER_BASES),
    )
}


class Passing(Enum):
    """What a framework call does with a loader passed to it."""

    PER_EPOCH = "per-epoch"  # iterates it every epoch of its own loop
    ONCE = "once"  # iterates it once
    SAME = "same"  # hands the same loader back (wrapped), for the caller to iterate


class CallRule(NamedTuple):
    """``receiver.method(...)``: what the call does with the loaders passed at ``positions``
    or ``keywords`` (both empty: every argument)."""

    method: str
    receiver: str  # a word the receiver's name or its constructor's name contains (lower case)
    effect: Passing
    positions: tuple[int, ...] = ()
    keywords: tuple[str, ...] = ()


CALLS = (
    # Lightning ``Trainer.fit(model, train_dataloaders, val_dataloaders, datamodule)``: runs
    # max_epochs epochs over the train loaders, validating every epoch (once for max_epochs=1).
    CallRule("fit", "trainer", Passing.PER_EPOCH, (1, 2), ("train_dataloaders", "val_dataloaders", "train_dataloader", "val_dataloader")),
    # Lightning ``Trainer.validate/test/predict(model, dataloaders)``: one pass.
    CallRule("validate", "trainer", Passing.ONCE, (1,), ("dataloaders",)),
    CallRule("test", "trainer", Passing.ONCE, (1,), ("dataloaders", "test_dataloaders")),
    CallRule("predict", "trainer", Passing.ONCE, (1,), ("dataloaders",)),
    # accelerate ``Accelerator.prepare(*args)``: "returns the prepared objects in the same
    # order"; a loader comes back wrapped to shard and to move batches to the device.
    CallRule("prepare", "accelerator", Passing.SAME),
    CallRule("prepare_data_loader", "accelerator", Passing.SAME),
    # accelerate ``Accelerator.skip_first_batches(dataloader, num_batches)``: the same loader, skipping.
    CallRule("skip_first_batches", "accelerator", Passing.SAME, (0,), ("dataloader",)),
    # Lightning Fabric ``Fabric.setup_dataloaders(*dataloaders)``: one loader back per argument
    # (a distributed sampler and device placement added).
    CallRule("setup_dataloaders", "fabric", Passing.SAME),
)
class EngineRun(NamedTuple):
    """A training engine handed the loader: at its ``run`` (``method``) or, with ``method``
    None, at its constructor (``constructors``: what builds the engine, or the constructor
    itself), as the argument at ``positions``/``keywords``; it iterates the loader once per
    epoch of the count at ``epochs`` (a position and a keyword), ``default_epochs`` when that
    is left out (None: required)."""

    constructors: frozenset[str]
    method: str | None
    positions: tuple[int, ...]
    keywords: tuple[str, ...]
    epochs: tuple[int, str]
    default_epochs: int | None


IGNITE_ENGINES = frozenset(
    f"ignite.engine.{name}" for name in ("Engine", "DeterministicEngine", "create_supervised_trainer", "create_supervised_evaluator")
) | frozenset({"ignite.engine.engine.Engine", "ignite.engine.deterministic.DeterministicEngine"})
ENGINE_RUNS = (
    # PyTorch-Ignite ``Engine.run(data, max_epochs=None, epoch_length=None)``: "max_epochs: Max epochs to run
    # for ... If a new state should be created (first run or run again from ended engine), its default value
    # is 1"; each epoch iterates ``data`` anew (a new iterator of a loader: its workers start again).
    EngineRun(IGNITE_ENGINES, "run", (0,), ("data",), (1, "max_epochs"), 1),
    # MONAI ``SupervisedTrainer(device, max_epochs, train_data_loader, network, ...)`` (an Ignite engine):
    # ``run()`` trains ``max_epochs`` epochs over ``train_data_loader``.
    EngineRun(frozenset({"monai.engines.SupervisedTrainer", "monai.engines.trainer.SupervisedTrainer",
                         "monai.engines.GanTrainer", "monai.engines.trainer.GanTrainer"}),
              None, (2,), ("train_data_loader",), (1, "max_epochs"), None),
)

# PyTorch-Ignite events fired once a run (``Events`` docs): a handler on one of them
# (``@trainer.on(Events.COMPLETED)``) runs once, not every epoch as any other callback may.
ONCE_EVENTS = frozenset({"STARTED", "COMPLETED", "EXCEPTION_RAISED", "TERMINATE"})

# accelerate's module-level forms of the same wrappers.
SAME_FUNCTIONS = frozenset(
    {
        "accelerate.skip_first_batches",
        "accelerate.data_loader.skip_first_batches",
        "accelerate.data_loader.prepare_data_loader",
    }
)
# torch.utils.data samplers that draw a random order (a loader given one is a training loader);
# ``DistributedSampler`` shuffles by default and needs ``set_epoch`` (torch docs), which
# Lightning's fit loop and Hugging Face's ``Trainer`` call themselves on the loaders they iterate.
RANDOM_SAMPLERS = frozenset({"RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler", "DistributedSampler"})
# Lightning ``Trainer.fit`` arguments that hand it a module or the train loaders.
FIT_MODULES = ("model", "datamodule", "train_dataloaders")
# The Lightning trainer's methods that call each hook and iterate the loader it returns ("Trainer" docs).
HOOK_CALLERS = {
    "train_dataloader": ("fit",),
    "val_dataloader": ("fit", "validate"),
    "test_dataloader": ("test",),
    "predict_dataloader": ("predict",),
}


class Result(Enum):
    """What a higher-order utility hands back of the function it is given."""

    RESULT = "result"  # the function's result, in the data's structure
    ELEMENTS = "elements"  # an iterable of its results, one per element


class HigherOrder(NamedTuple):
    """A utility that calls the function it is given and hands back what that returns."""

    name: str
    roots: tuple[str, ...]  # the packages it is imported from; () for a builtin
    position: int  # of the function among the positional arguments
    keyword: str | None  # the function's keyword, if it takes one
    result: Result


HIGHER_ORDER = (
    # lightning_utilities ``apply_to_collection(data, dtype, function, ...)``: applies
    # ``function`` to each element of ``data`` of type ``dtype``, keeping ``data``'s structure.
    HigherOrder("apply_to_collection", ("lightning_utilities", "lightning", "lightning_fabric", "pytorch_lightning"), 2, "function", Result.RESULT),
    # builtin ``map(function, iterable)``: an iterator of ``function``'s results.
    HigherOrder("map", (), 0, None, Result.ELEMENTS),
)
