"""The loader classes of well-known libraries that subclass or wrap torch's DataLoader, and the
framework settings that configure the loader a framework builds (the rule catalog "Loader call").

Each entry says what its documentation says: the names it is imported under, its positional
signature (the parameters a positional argument binds, in order), the defaults that differ from
torch's, the torch arguments it sets itself (a value passed for one is dropped), whether torch's
``pin_memory`` pins its batches, and the page it encodes. Keyword arguments not in the signature
go on to torch's DataLoader (``**kwargs``), so they keep torch's names.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple

# torch's own DataLoader, by the names it is imported as.
TORCH_LOADER_QUALNAMES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

# torch.utils.data.DataLoader's own signature (torch 2.x): positional, then keyword-only.
TORCH_POSITIONAL = (
    "dataset",
    "batch_size",
    "shuffle",
    "sampler",
    "batch_sampler",
    "num_workers",
    "collate_fn",
    "pin_memory",
    "drop_last",
    "timeout",
    "worker_init_fn",
    "multiprocessing_context",
    "generator",
)
TORCH_KEYWORD_ONLY = ("prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")

_NO_DEFAULTS: Mapping[str, object] = MappingProxyType({})


class LibraryLoader(NamedTuple):
    """A library's loader class, as its documentation describes it (a NamedTuple: cheaper to
    define at import than a dataclass, which a one-file run would pay for)."""

    library: str
    qualnames: frozenset[str]
    positional: tuple[str, ...]  # the parameters positional arguments bind, in order
    # Which parameter holds the samples the loader draws (torch's ``dataset``): a graph loader's
    # seed nodes (``input_nodes``); empty when no argument does (the loader draws every node).
    samples: str = "dataset"
    defaults: Mapping[str, object] = _NO_DEFAULTS  # defaults that differ from torch's
    sets_itself: tuple[str, ...] = ()  # torch arguments the class passes itself, dropping the caller's
    pins_batches: bool = True  # torch's pin_memory pins its batches (False: graph objects it leaves as they are)
    batches: str = "tensors"  # what a batch is, for messages
    # A keyword that, when true, makes the class give each rank its own shard
    # (a DistributedSampler of its own: DGL's ``use_ddp``).
    shards_by_rank: str = ""
    # A keyword that, when true, runs the workers as threads of the main process, not processes.
    thread_workers: str = ""
    docs: str = ""

    @property
    def name(self) -> str:
        return min(self.qualnames, key=len).rsplit(".", 1)[-1]


def _names(*modules: str, name: str) -> frozenset[str]:
    return frozenset(f"{module}.{name}" for module in modules)


# torch_geometric.data: the names before 2.0, which 2.x keeps as aliases.
_PYG = ("torch_geometric.loader", "torch_geometric.data")
_PYG_DOCS = "https://pytorch-geometric.readthedocs.io/en/latest/modules/loader.html"

LIBRARY_LOADERS: tuple[LibraryLoader, ...] = (
    # DataLoader(dataset, batch_size=1, shuffle=False, follow_batch=None, exclude_keys=None, **kwargs);
    # it sets collate_fn=Collater(...) after ``kwargs.pop('collate_fn', None)``. Its batches are
    # ``Batch`` objects, whose ``pin_memory()`` pins every attribute: torch's pin_memory calls it.
    LibraryLoader(
        "PyG",
        _names(*_PYG, "torch_geometric.loader.dataloader", name="DataLoader"),
        ("dataset", "batch_size", "shuffle", "follow_batch", "exclude_keys"),
        sets_itself=("collate_fn",),
        batches="graph batches",
        docs=_PYG_DOCS + "#torch_geometric.loader.DataLoader",
    ),
    LibraryLoader(
        "PyG",
        _names(*_PYG, name="DataListLoader") | _names(*_PYG, name="DenseDataLoader"),
        ("dataset", "batch_size", "shuffle"),
        sets_itself=("collate_fn",),
        batches="graph batches",
        docs=_PYG_DOCS + "#torch_geometric.loader.DataListLoader",
    ),
    # NeighborLoader(data, num_neighbors, input_nodes=None, ..., **kwargs): the samples are the
    # seed nodes ``input_nodes`` (every node when None); NodeLoader sets collate_fn itself.
    LibraryLoader(
        "PyG",
        _names(*_PYG, name="NeighborLoader") | _names(*_PYG, name="HGTLoader"),
        ("data", "num_neighbors", "input_nodes"),
        samples="input_nodes",
        sets_itself=("collate_fn",),
        batches="sampled subgraphs",
        docs=_PYG_DOCS + "#torch_geometric.loader.NeighborLoader",
    ),
    # LinkNeighborLoader(data, num_neighbors, edge_label_index=None, ..., **kwargs)
    LibraryLoader(
        "PyG",
        _names(*_PYG, name="LinkNeighborLoader"),
        ("data", "num_neighbors", "edge_label_index"),
        samples="edge_label_index",
        sets_itself=("collate_fn",),
        batches="sampled subgraphs",
        docs=_PYG_DOCS + "#torch_geometric.loader.LinkNeighborLoader",
    ),
    # NeighborSampler(edge_index, sizes, node_idx=None, ..., **kwargs) (the pre-2.0 sampler-loader)
    LibraryLoader(
        "PyG",
        _names(*_PYG, name="NeighborSampler"),
        ("edge_index", "sizes", "node_idx"),
        samples="node_idx",
        sets_itself=("collate_fn",),
        batches="sampled adjacencies",
        docs=_PYG_DOCS + "#torch_geometric.loader.NeighborSampler",
    ),
    # ClusterLoader(cluster_data, **kwargs), RandomNodeLoader(data, num_parts, **kwargs),
    # ShaDowKHopSampler(data, depth, num_neighbors, node_idx=None, ..., **kwargs),
    # GraphSAINT*Sampler(data, batch_size, ..., **kwargs): keyword arguments go to torch's DataLoader.
    LibraryLoader(
        "PyG",
        frozenset().union(
            *(
                _names(*_PYG, name=name)
                for name in (
                    "ClusterLoader",
                    "RandomNodeLoader",
                    "RandomNodeSampler",
                    "ShaDowKHopSampler",
                    "GraphSAINTSampler",
                    "GraphSAINTNodeSampler",
                    "GraphSAINTEdgeSampler",
                    "GraphSAINTRandomWalkSampler",
                )
            )
        ),
        ("data",),
        samples="",
        sets_itself=("collate_fn",),
        batches="sampled subgraphs",
        docs=_PYG_DOCS,
    ),
    # GraphDataLoader(dataset, collate_fn=None, use_ddp=False, ddp_seed=0, **kwargs): batches are
    # ``(DGLGraph, labels)``; a DGLGraph has ``pin_memory_()``, not ``pin_memory()``, so torch's
    # pin thread leaves the graph in pageable memory.
    LibraryLoader(
        "DGL",
        _names("dgl.dataloading", "dgl.dataloading.dataloader", "dgl.dataloading.pytorch", name="GraphDataLoader"),
        ("dataset", "collate_fn", "use_ddp", "ddp_seed"),
        pins_batches=False,
        batches="DGL graphs",
        shards_by_rank="use_ddp",
        docs="https://www.dgl.ai/dgl_docs/generated/dgl.dataloading.GraphDataLoader.html",
    ),
    # DataLoader(graph, indices, graph_sampler, device=None, use_ddp=False, ddp_seed=0,
    # batch_size=1, drop_last=False, shuffle=False, ..., **kwargs): batches are
    # ``(input_nodes, output_nodes, blocks)``, blocks that torch's pin thread does not pin
    # (DGL pins features itself: ``pin_prefetcher``, ``use_uva``). NodeDataLoader and
    # EdgeDataLoader are its older names.
    LibraryLoader(
        "DGL",
        _names("dgl.dataloading", "dgl.dataloading.dataloader", name="DataLoader")
        | _names("dgl.dataloading", "dgl.dataloading.pytorch", name="NodeDataLoader")
        | _names("dgl.dataloading", "dgl.dataloading.pytorch", name="EdgeDataLoader"),
        ("graph", "indices", "graph_sampler", "device", "use_ddp", "ddp_seed", "batch_size", "drop_last", "shuffle"),
        samples="indices",
        pins_batches=False,
        batches="DGL blocks",
        shards_by_rank="use_ddp",
        docs="https://www.dgl.ai/dgl_docs/generated/dgl.dataloading.DataLoader.html",
    ),
    # graphbolt.DataLoader(datapipe, num_workers=0, persistent_workers=True, max_uva_threads=10240):
    # persistent workers by default.
    LibraryLoader(
        "DGL",
        _names("dgl.graphbolt", name="DataLoader"),
        ("datapipe", "num_workers", "persistent_workers", "max_uva_threads"),
        samples="",
        defaults=MappingProxyType({"persistent_workers": True}),
        pins_batches=False,
        batches="GraphBolt minibatches",
        docs="https://www.dgl.ai/dgl_docs/generated/dgl.graphbolt.DataLoader.html",
    ),
    # WebLoader(*args, **kw) builds ``DataLoader(*args, **kw)``: torch's own signature.
    LibraryLoader(
        "webdataset",
        _names("webdataset", "webdataset.compat", "webdataset.pipeline", "webdataset.dataset", name="WebLoader"),
        TORCH_POSITIONAL,
        docs="https://webdataset.github.io/webdataset/webdataset/#webdataset.WebLoader",
    ),
    # monai.data.DataLoader(dataset, num_workers=0, **kwargs)
    LibraryLoader(
        "MONAI",
        _names("monai.data", "monai.data.dataloader", name="DataLoader"),
        ("dataset", "num_workers"),
        docs="https://docs.monai.io/en/stable/data.html#dataloader",
    ),
    # ThreadDataLoader(dataset, buffer_size=1, buffer_timeout=0.01, repeats=1,
    # use_thread_workers=False, **kwargs): with use_thread_workers, num_workers are threads.
    LibraryLoader(
        "MONAI",
        _names("monai.data", "monai.data.thread_buffer", name="ThreadDataLoader"),
        ("dataset", "buffer_size", "buffer_timeout", "repeats", "use_thread_workers"),
        thread_workers="use_thread_workers",
        docs="https://docs.monai.io/en/stable/data.html#threaddataloader",
    ),
)


# Library calls whose result torch's ``pin_memory`` leaves as it is (an object with no
# ``pin_memory()`` method, not a tensor or a container of tensors), as a plain DataLoader's
# ``collate_fn`` or what a project collate function returns (alone or in a tuple): pinning such
# batches changes nothing. DGL: ``dgl.batch`` builds a DGLGraph (it has ``pin_memory_()``, not
# ``pin_memory()``), https://www.dgl.ai/dgl_docs/generated/dgl.batch.html.
UNPINNED_BATCH_BUILDERS = frozenset({"dgl.batch", "dgl.batch_hetero", "dgl.graph", "dgl.heterograph"})

# Hugging Face ``datasets``: ``Dataset.map(fn)``/``filter(fn)`` run ``fn`` over the table when
# called and keep the result (Arrow, cached), not the function
# (https://huggingface.co/docs/datasets/process#map): what a loader over the result pickles for
# its workers holds no ``fn``. The calls that make such datasets (``DatasetDict`` too):
EAGER_DATASET_SOURCES = frozenset(
    {"datasets.load_dataset", "datasets.load_from_disk", "datasets.Dataset.from_dict", "datasets.Dataset.from_pandas",
     "datasets.Dataset.from_list", "datasets.Dataset.from_csv", "datasets.Dataset.from_json"}
)
EAGER_DATASET_METHODS = frozenset({"map", "filter"})  # and what they return is such a dataset again


class FrameworkLoaderSettings(NamedTuple):
    """A framework's settings object whose arguments configure the loader the framework builds
    (Hugging Face ``TrainingArguments``: ``dataloader_num_workers`` is the ``num_workers`` of the
    ``Trainer``'s loaders). The settings call stands for the loader: its findings go there."""

    framework: str
    qualnames: frozenset[str]
    arguments: Mapping[str, str]  # settings keyword -> torch DataLoader parameter
    defaults: Mapping[str, object]  # the framework's defaults for those parameters
    receivers: frozenset[str]  # the classes that take the settings and build the loader
    receiver_keyword: str  # how a receiver is handed them (``args=``) ...
    receiver_position: int  # ... or positionally (``Trainer(model, args)``)
    run_method: str  # the receiver's method that runs the training epochs
    epochs: str  # the settings keyword holding the number of epochs, and its default
    epochs_default: float
    steps: str  # a step budget that, when positive, overrides the epochs
    # How the framework copies each batch to the device: "blocking" (``tensor.to(device)``)
    copies: str
    docs: str = ""


_HF_TRAINING_ARGS = "https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments"

# TrainingArguments: dataloader_num_workers (default 0), dataloader_pin_memory (default True),
# dataloader_persistent_workers (default False), dataloader_prefetch_factor (default None),
# dataloader_drop_last (default False); num_train_epochs (default 3.0), max_steps (default -1,
# "overrides num_train_epochs" when positive). Trainer.get_train_dataloader builds one
# torch DataLoader with them, and Trainer.train iterates it once per epoch; _prepare_input moves
# each batch with ``data.to(device=self.args.device)`` (a blocking copy; CUDA when available).
HF_TRAINING_ARGUMENTS = FrameworkLoaderSettings(
    framework="Hugging Face Trainer",
    qualnames=frozenset(
        {
            "transformers.TrainingArguments",
            "transformers.training_args.TrainingArguments",
            "transformers.Seq2SeqTrainingArguments",
            "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
        }
    ),
    arguments=MappingProxyType(
        {
            "dataloader_num_workers": "num_workers",
            "dataloader_pin_memory": "pin_memory",
            "dataloader_persistent_workers": "persistent_workers",
            "dataloader_prefetch_factor": "prefetch_factor",
            "dataloader_drop_last": "drop_last",
        }
    ),
    defaults=MappingProxyType({"pin_memory": True, "persistent_workers": False}),
    receivers=frozenset(
        {
            "transformers.Trainer",
            "transformers.trainer.Trainer",
            "transformers.Seq2SeqTrainer",
            "transformers.trainer_seq2seq.Seq2SeqTrainer",
        }
    ),
    receiver_keyword="args",
    receiver_position=1,
    run_method="train",
    epochs="num_train_epochs",
    epochs_default=3.0,
    steps="max_steps",
    copies="blocking",
    docs=_HF_TRAINING_ARGS,
)

FRAMEWORK_LOADER_SETTINGS: tuple[FrameworkLoaderSettings, ...] = (HF_TRAINING_ARGUMENTS,)


# Each class by every name it is imported under.
_BY_QUALNAME = {name: entry for entry in LIBRARY_LOADERS for name in entry.qualnames}
_SETTINGS_BY_QUALNAME = {name: entry for entry in FRAMEWORK_LOADER_SETTINGS for name in entry.qualnames}
# The last names these classes are called by: a call of another name is no library loader.
LIBRARY_LOADER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _BY_QUALNAME)
LOADER_SETTINGS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _SETTINGS_BY_QUALNAME)


def library_loader(qualname: str | None) -> LibraryLoader | None:
    """The library loader class ``qualname`` names, if it is one."""
    return _BY_QUALNAME.get(qualname) if qualname else None


def loader_settings(qualname: str | None) -> FrameworkLoaderSettings | None:
    """The framework settings class ``qualname`` names, if it is one."""
    return _SETTINGS_BY_QUALNAME.get(qualname) if qualname else None
