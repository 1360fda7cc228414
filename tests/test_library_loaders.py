"""The table of library loaders (dllint.knowledge.loaders) and how the facts read it."""

from __future__ import annotations

import ast

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_source
from dllint.facts import FileFacts
from dllint.knowledge.loaders import (
    FRAMEWORK_LOADER_SETTINGS,
    LIBRARY_LOADERS,
    TORCH_KEYWORD_ONLY,
    TORCH_POSITIONAL,
    library_loader,
)


@pytest.mark.parametrize("entry", LIBRARY_LOADERS, ids=lambda e: e.name)
def test_every_entry_is_complete_and_cites_its_docs(entry):
    assert entry.docs.startswith("https://"), entry
    assert entry.qualnames and all(library_loader(name) is entry for name in entry.qualnames)
    assert len(set(entry.positional)) == len(entry.positional)
    assert entry.samples in ("", *entry.positional), "the samples are a positional parameter or none"
    torch_params = set(TORCH_POSITIONAL + TORCH_KEYWORD_ONLY)
    assert set(entry.sets_itself) <= torch_params and set(entry.defaults) <= torch_params


def test_settings_map_onto_torch_parameters_and_cite_their_docs():
    for settings in FRAMEWORK_LOADER_SETTINGS:
        assert settings.docs.startswith("https://")
        assert set(settings.arguments.values()) <= set(TORCH_POSITIONAL + TORCH_KEYWORD_ONLY)
        assert set(settings.defaults) <= set(settings.arguments.values())


def _loader(source: str):
    facts = FileFacts("t.py", source, ast.parse(source), Settings())
    (loader,) = facts.loader_calls
    return loader


def test_positional_arguments_bind_the_library_signature():
    monai = _loader("from monai.data import DataLoader\nDataLoader(ds, 4)\n")
    assert monai.num_workers.value == 4 and monai.argument("batch_size") is None
    dgl = _loader("import dgl\ndgl.dataloading.DataLoader(g, nids, sampler, batch_size=8, num_workers=2)\n")
    assert ast.unparse(dgl.dataset) == "nids" and dgl.num_workers.value == 2 and not dgl.pins_batches


def test_neighbour_loaders_draw_their_seed_nodes_and_set_collate_fn_themselves():
    loader = _loader(
        "from torch_geometric.loader import NeighborLoader\n"
        "NeighborLoader(data, [10], input_nodes=idx, collate_fn=f, num_workers=2)\n"
    )
    assert ast.unparse(loader.dataset) == "idx" and loader.argument("collate_fn") is None


def test_documented_defaults_that_differ_from_torch():
    loader = _loader("import dgl\ndgl.graphbolt.DataLoader(pipe, num_workers=4)\n")
    assert loader.value("persistent_workers").truthy() is True


def test_thread_workers_are_not_processes():
    threads = _loader("from monai.data import ThreadDataLoader\nThreadDataLoader(ds, num_workers=4, use_thread_workers=True)\n")
    processes = _loader("from monai.data import ThreadDataLoader\nThreadDataLoader(ds, num_workers=4)\n")
    assert not threads.is_multi_worker and processes.is_multi_worker


def test_a_look_alike_is_no_loader():
    source = "from mylib import DataLoader\nDataLoader(ds, num_workers=4)\n"
    assert FileFacts("t.py", source, ast.parse(source), Settings()).loader_calls == []


LOOP = "for epoch in range(3):\n    for b in loader:\n        pass\n"


def test_no_fix_where_positional_arguments_bind_other_parameters():
    positional = lint_source("from monai.data import DataLoader\nloader = DataLoader(ds, 4)\n" + LOOP, Settings(select=("DL201",)))
    keywords = lint_source("from monai.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n" + LOOP, Settings(select=("DL201",)))
    assert [f.fix for f in positional] == [None]
    assert [f.fix.edit.name for f in keywords] == ["persistent_workers"]


def test_a_file_naming_only_a_library_loader_passes_the_prefilter():
    source = "from torch_geometric.loader import NeighborLoader\nloader = NeighborLoader(data, [10], num_workers=4)\n" + LOOP
    assert Linter(Settings(select=("DL201",))).prefilter.screen(source.encode()) is not None
    assert [f.code for f in lint_source(source, Settings(select=("DL201",)))] == ["DL201"]
