"""Shapes found on code no one tuned dllint to (issue 32's fifth and sixth audits), each as a
minimal project fixture: the whole finding (position and message) where it fires, and the
undecidable twins that must stay silent (the fixtures' markers say where nothing else fires)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.test_fixtures import lint_project

CPU_COUNT = (
    "num_workers set to the whole CPU count: ignores container quotas and leaves no core for the main process; "
    "cap it (e.g. min(8, cpus - 1))"
)
RESTART = "workers restart every epoch (re-iterated by train.py:{}): add persistent_workers=True"

PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")

EXPECTED = {
    # V3 (values another module holds, or a file read at run time, are unknown: silent) and
    # W3 (a CPU-count default no caller overrides)
    "caller_values": {
        ("helper.py", 8, 15, "DL202", CPU_COUNT),
        ("helper.py", 25, 12, "DL201", RESTART.format(30)),
        ("helper.py", 30, 12, "DL201", RESTART.format(31)),
        ("helper.py", 45, 12, "DL201", RESTART.format(34)),
        ("helper.py", 50, 12, "DL201", RESTART.format(35)),
    },
    # W4: a Dataset whose base is a project class of another module
    "dataset_base_elsewhere": {
        ("vision_data/lsun.py", 14, 9, "DL104", "dataset 'LSUNClass' stores an open LMDB environment in self.env: spawn workers "
         "cannot unpickle it; open it lazily in __getitem__ or in a worker_init_fn"),
        ("vision_data/lsun.py", 23, 9, "DL104", "dataset 'LocalSubclass' stores a lock in self.lock: spawn workers cannot "
         "unpickle it; create it lazily in __getitem__ or in a worker_init_fn"),
    },
    # Sixth audit X2 (and the fifth's W6): a factory called as an attribute of the package,
    # re-exported through two star imports (pkg/__init__.py, then pkg/data/__init__.py)
    "package_star_reexports": {
        ("pkg/data/loaders.py", 8, 13, "DL201", RESTART.replace("train.py:{}", "run.py:5")),
        ("pkg/data/loaders.py", 9, 12, "DL201", RESTART.replace("train.py:{}", "run.py:5")),
    },
    # Fifth audit W6: the evaluation helper copies to its model's device
    # (``list(net.parameters())[0].device``), where the training helper moved the model first
    "model_device": {
        ("run.py", 11, 18, "DL206", PAGEABLE),
        ("run.py", 12, 17, "DL206", PAGEABLE),
    },
    # Sixth audit X1: ``torch`` bound only by ``from helpers import *``
    "star_bound_modules": {
        ("train.py", 9, 14, "DL201", "workers restart every epoch: add persistent_workers=True"),
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    root = FIXTURES / "project" / name
    expected = EXPECTED[name]
    codes = {code for _, _, _, code, _ in expected}
    found = {
        (str(path.relative_to(root)), f.line, f.column, f.code, f.message)
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code in codes
    }
    assert found == expected


RESTART_HERE = "workers restart every epoch: add persistent_workers=True"
NOTEBOOK_CLASS = "{} '{}' is defined in the notebook, so spawn workers cannot unpickle it (via dataset): move it to a .py module and import it"

# Single-file fixtures of the same shapes: (cell, line, column, code, message) of the codes named.
SINGLE = {
    "DL201/dict_entries.py": {  # V3: a dict literal's entry is its value
        (None, 17, 8, "DL201", RESTART_HERE), (None, 19, 11, "DL201", RESTART_HERE), (None, 21, 9, "DL201", RESTART_HERE),
    },
    "DL201/appended_loaders.py": {(None, 11, 22, "DL201", RESTART_HERE)},  # W1
    "DL206/generator_batches.py": {(None, 8, 14, "DL206", PAGEABLE)},  # X3
    "DL206/batch_name_rebound.py": {  # V8, and a rebinding under a branch (seventh audit, edm fid.py)
        (None, 9, 10, "DL206", PAGEABLE), (None, 10, 9, "DL206", PAGEABLE), (None, 12, 12, "DL206", PAGEABLE),
    },
    "DL201/splat_rebound.py": {(None, 11, 10, "DL201", RESTART_HERE)},  # a notebook's kwargs rebound (seventh audit)
    "DL206/variable_wrapper.py": {(None, 7, 11, "DL206", PAGEABLE)},  # Y2: Variable(x).cuda()
    "DL206/returned_device.py": {(None, 7, 10, "DL206", PAGEABLE)},  # X2: device = try_gpu(), a function of the file
    "DL206/copied_before_rebound.py": {(None, 8, 10, "DL206", PAGEABLE)},  # Y1: img = img.cuda() under an if, rebound after
    "DL106/collator_rebound.ipynb": {(4, 1, 12, "DL106", NOTEBOOK_CLASS.format("class", "Collator").replace("(via dataset)", "(via collate_fn)"))},  # Y5
    "DL305/spawned_and_called.py": {  # X4
        (None, 18, 18, "DL305", "loader with no sampler in a DDP script (it uses init_process_group): every rank iterates "
         "the whole dataset; pass sampler=DistributedSampler(dataset)"),
    },
    "DL106/eager_dataset_map.ipynb": {  # V10
        (7, 2, 21, "DL106", NOTEBOOK_CLASS.format("class", "IMDBDataset")),
        (8, 4, 43, "DL106", NOTEBOOK_CLASS.format("function", "tokenize_text")),
    },
    "DL106/stored_on_self.ipynb": {(4, 3, 30, "DL106", NOTEBOOK_CLASS.format("class", "ClassicDataset"))},  # W5
}


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_whole_findings_of_single_files(name):
    from dllint.config import Settings
    from dllint.engine import Linter
    from lint_helpers import lint_path

    expected = SINGLE[name]
    codes = {code for *_, code, _ in expected}
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / name))
    assert {(f.cell, f.line, f.column, f.code, f.message) for f in result.findings if f.code in codes} == expected
