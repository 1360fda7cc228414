"""Which mappings of a config are DataLoader settings (loader blocks), and what they say.

A mapping is a loader block when it is
- a Hydra node that builds a DataLoader (``_target_: torch.utils.data.DataLoader``);
- a detectron2 ``L(build_..._loader)(...)`` / ``L(DataLoader)(...)`` call with ``num_workers``;
- any mapping with ``num_workers`` and at least one other DataLoader argument: NeMo's
  ``train_ds:``/``validation_ds:``, Lightning CLI's ``data: init_args:``, mmengine's
  ``train_dataloader = dict(...)``, a plain ``loader:`` section.

A :class:`ConfigBlock` answers what a :class:`~dllint.facts.loaders.LoaderCall` answers
about argument values (``value(name)`` as a :class:`~dllint.facts.values.Value`), so a
rule keeps one predicate for code and configs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from dllint.configs.document import ConfigDocument, Entry, Mapping, Node, Scalar, Span, lookup, walk
from dllint.facts.loaders import ALL_PARAMS, LOADER_QUALNAMES
from dllint.facts.values import ABSENT, Value, dynamic

if TYPE_CHECKING:
    from dllint.config import Settings

# Keys that name a block without saying what it is for (`train: {dataloader: {...}}`,
# `data: {init_args: {...}}`): the name that counts is the one above them.
WRAPPER_KEYS = frozenset({"init_args", "dataloader", "data_loader", "loader", "dataloader_params", "dataloader_cfg", "params", "kwargs"})
# `train`, `training`, `train_ds`, `train_dataloader`, `trainloader`, `trn_loader`; not `trainer`.
TRAIN_NAME = re.compile(r"^(?:train|training|trn)(?![a-z])|^train(?:loader|dataloader|set|data|ds|dl)", re.I)
EVAL_NAME = re.compile(r"(val|valid|validation|test|eval|evaluation|predict|inference|infer|dev)", re.I)
LOADER_NAME = re.compile(r"(data_?loader|_loader$|^loader$|_dl$)", re.I)
GPU_ACCELERATORS = frozenset({"gpu", "cuda"})
# A block named as a loader's keyword arguments (super-gradients' ``train_dataloader_params``,
# ``loader_kwargs``): by its name, the mapping is what the code passes as ``DataLoader(**...)``.
KWARGS_NAME = re.compile(r"(?:data_?loader|loader)_?(?:params|kwargs)$", re.I)
# Whether the project's code hands the mapping at a key path to a DataLoader whole (``**cfg.loader``):
# the project's answer (:meth:`dllint.project.view.ProjectView.config_handed_whole`), recording what it read.
Linked = Callable[[tuple[str, ...]], bool]


def unlinked(key_path: tuple[str, ...]) -> bool:
    """No project in view: no code is known to hand a block on."""
    return False


@dataclass(eq=False)
class ConfigBlock:
    """One loader block of one config file."""

    document: ConfigDocument
    key_path: tuple[str, ...]  # e.g. ("model", "train_ds")
    mapping: Mapping
    key: Entry | None  # the entry whose value the block is (None for a file that is the block)
    settings: Settings
    # A Hydra/L(...) DataLoader or a key that says "loader": not merely loader-like keys.
    explicit: bool = False
    is_training: bool = False
    # The config says the batches go to a CUDA device (Lightning `accelerator: gpu`, `device: cuda`).
    cuda: bool = False
    # The framework builds the loader with an endless sampler (mmengine InfiniteSampler,
    # detectron2's training loader): one pass, workers never restart.
    endless: bool = False
    # Absent keys fall back to torch's defaults (a Hydra DataLoader node), not the framework's.
    torch_defaults: bool = False
    linked: Linked = unlinked

    @property
    def takes_new_keys(self) -> bool:
        """A key added here reaches the DataLoader: Hydra instantiates the DataLoader node with
        all its keys, mmengine and detectron2 pass a Python dict config's on, the project's code
        splats the block into a DataLoader (``DataLoader(ds, **cfg.train.loader)``), or the block is
        named as a loader's keyword arguments (:data:`KWARGS_NAME`). Code that reads the keys
        one by one (``config.train.dataloader.num_workers``) never reads a new one, and yacs
        rejects a key its defaults lack: unknown is silent."""
        named_kwargs = bool(self.key_path) and KWARGS_NAME.search(str(self.key_path[-1])) is not None
        return self.torch_defaults or self.document.format == "python" or named_kwargs or self.linked(self.key_path)

    @property
    def builder(self) -> str | None:
        """The class or function the block is handed to, when the config names one
        (Hydra ``_target_``, Lightning ``class_path`` beside ``init_args``, mmengine ``type``,
        detectron2 ``L(f)``)."""
        if self.mapping.target:
            return self.mapping.target
        target = _string(self.mapping.get("_target_")) or _string(self.mapping.get("type"))
        if target is None and self.key_path and self.key_path[-1] == "init_args":
            parent = lookup(self.document.root, self.key_path[:-1])
            target = _string(parent.get("class_path")) if isinstance(parent, Mapping) else None
        return target

    @property
    def values_reach_torch(self) -> bool:
        """torch receives the values as written: a Hydra DataLoader node, or a Python dict
        config (mmengine passes ``train_dataloader`` to ``DataLoader(**cfg)``, detectron2's
        loader builders pass ``num_workers`` on). A framework reading a YAML section may
        translate them first (lightly reads ``num_workers: -1`` as "all cores";
        super-gradients moves ``shuffle`` into its sampler)."""
        return self.torch_defaults or self.document.format == "python"

    @property
    def path(self) -> str:
        return self.document.path

    @property
    def name(self) -> str:
        return ".".join(self.key_path) or "<root>"

    def entry(self, name: str) -> Entry | None:
        return self.mapping.entries.get(name)

    def value(self, name: str) -> Value:
        """As ``LoaderCall.value``: const, absent, or dynamic (unknown)."""
        entry = self.mapping.entries.get(name)
        if entry is None:
            return dynamic() if self.mapping.open else ABSENT
        if isinstance(entry.value, Scalar):
            return Value("const", entry.value.value)
        return dynamic()

    def given(self, name: str) -> bool:
        """Written with a value that is not (provably) null."""
        entry = self.mapping.entries.get(name)
        return entry is not None and not (isinstance(entry.value, Scalar) and entry.value.value is None)

    @property
    def num_workers(self) -> Value:
        return self.value("num_workers")

    def is_local(self, entry: Entry | None) -> bool:
        """Written in this file (not inherited from a base/defaults file)."""
        return entry is not None and entry.path == self.document.path

    def report_span(self, *names: str) -> Span | None:
        """Where a finding about ``names`` goes: the first of their keys written in this file;
        None when all of them are inherited (the file that writes them reports it)."""
        for name in names:
            entry = self.entry(name)
            if self.is_local(entry):
                return entry.key_span  # type: ignore[union-attr]
        return None

    @property
    def block_span(self) -> Span | None:
        """The block's own place: its key (``train_ds:``), or for a Python config the
        ``dict(...)``/``L(...)(...)`` it is built with; None when it is inherited."""
        if self.document.format == "python":
            return self.mapping.span if self.mapping.path == self.document.path and self.mapping.node is not None else None
        if self.key is not None:
            return self.key.key_span if self.is_local(self.key) else None
        target = self.entry("_target_")
        return target.key_span if target is not None and self.is_local(target) else None


def find_blocks(document: ConfigDocument, settings: Settings, linked: Linked = unlinked) -> list[ConfigBlock]:
    """The loader blocks of a (resolved) document, in file order; ``linked``: what the
    project's code hands to a DataLoader whole (:attr:`ConfigBlock.takes_new_keys`)."""
    cuda = says_cuda(document.root)
    blocks = []
    for path, mapping, key in _mappings(document.root):
        if document.format == "python" and path and (path[0] in document.splatted or path[0] not in document.local_keys):
            continue  # handed to a loader call in code, or only inherited: reported elsewhere
        block = classify(document, path, mapping, key, settings)
        if block is not None:
            block.cuda, block.linked = cuda, linked
            blocks.append(block)
    return blocks


def classify(document: ConfigDocument, path: tuple[str, ...], mapping: Mapping, key: Entry | None, settings: Settings) -> ConfigBlock | None:
    target = mapping.target or _string(mapping.get("_target_")) or _string(mapping.get("class_path"))
    entries = mapping.entries
    torch_loader = target is not None and (target in LOADER_QUALNAMES or target == "DataLoader")
    lazy_loader = document.format == "python" and target is not None and "loader" in target.rsplit(".", 1)[-1].lower()
    loader_keys = [k for k in entries if k in ALL_PARAMS and k != "num_workers"]
    if not (torch_loader or (lazy_loader and "num_workers" in entries) or ("num_workers" in entries and loader_keys)):
        return None
    names = [p for p in path if not p.startswith("[")]
    meaningful = [p for p in names if p.lower() not in WRAPPER_KEYS]
    name = meaningful[-1] if meaningful else ""
    last_two = names[-2:]
    explicit = torch_loader or lazy_loader or any(LOADER_NAME.search(p) for p in last_two)
    training = bool(name) and bool(TRAIN_NAME.search(name)) and not EVAL_NAME.search(name)
    if lazy_loader and target is not None:
        training = training or "train" in target.rsplit(".", 1)[-1].lower()
    sampler = mapping.get("sampler")
    sampler_type = (sampler.target or _string(sampler.get("type")) or "") if isinstance(sampler, Mapping) else ""
    endless = "infinite" in sampler_type.lower() or (lazy_loader and "detection_train_loader" in (target or ""))
    return ConfigBlock(
        document, path, mapping, key, settings,
        explicit=explicit, is_training=training, endless=endless, torch_defaults=torch_loader,
    )


def _mappings(root: Node) -> Iterator[tuple[tuple[str, ...], Mapping, Entry | None]]:
    """Every mapping once (:func:`~dllint.configs.document.walk`: aliases and cycles cost nothing)."""
    for path, node, key in walk(root):
        if isinstance(node, Mapping):
            yield path, node, key


def _string(node: Node | None) -> str | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else None


def says_cuda(root: Node) -> bool:
    """The config puts the work on CUDA: ``accelerator: gpu``/``cuda`` (Lightning),
    ``device: cuda...``, ``gpus: N`` with N > 0 (older Lightning)."""
    for _, mapping, _ in _mappings(root):
        for key, entry in mapping.entries.items():
            value = entry.value.value if isinstance(entry.value, Scalar) else None
            lowered = key.lower()
            if lowered == "accelerator" and isinstance(value, str) and value.lower() in GPU_ACCELERATORS:
                return True
            if lowered == "device" and isinstance(value, str) and value.lower().startswith("cuda"):
                return True
            if lowered == "gpus" and isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return True
    return False

