"""Flow shapes found on code no one tuned dllint to (issue 32's eighth audit: E1, H2, H4, and
the seventh audit's Y6 met again), each as a minimal fixture: the whole finding (position,
message, the fix offered) where it fires, and the twins that must stay silent (correct code;
keys or values left unknown). Fix fixtures: fixtures/fix/DL201/e1_dict_comprehension and
fixtures/fix/DL206/h4_dict_comprehension (tests/test_fix_fixtures.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.facts import FileFacts
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_containers import HEAD, counts
from tests.test_fixtures import lint_project

RESTART = "workers restart every epoch: add persistent_workers=True"
PAGEABLE = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread page-locks "
            "them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")
SAME_ORDER = "DistributedSampler without set_epoch(): every epoch repeats the same order; call sampler.set_epoch(epoch) at the start of each epoch"
SET_PERSISTENT = ("safe", "Add `persistent_workers=True`")
PIN_IF_CUDA = ("safe", "Add `pin_memory=torch.cuda.is_available()`")

# (line, column, code, message, (fix applicability, fix message) or None) of the codes named
EXPECTED = {
    # E1: one loader per literal key; "val" iterated once: silent; the keys looped every epoch fire
    "DL201/e1_dict_comprehension.py": {
        (18, 19, "DL201", RESTART, SET_PERSISTENT),
        (27, 19, "DL201", RESTART, SET_PERSISTENT),
    },
    # H4: d[split] in a loop over the literal keys: its batches' CUDA copies are the loader's
    "DL206/h4_dict_comprehension.py": {
        (10, 19, "DL206", PAGEABLE, PIN_IF_CUDA),
        (20, 19, "DL206", PAGEABLE, PIN_IF_CUDA),
    },
    # Y6's flow part: the loader parameter rebound to the endless generator, whose `while True`
    # repeats its `for`: no fix (no epoch counter to call set_epoch with)
    "DL301/y6_endless_generator_rebound.py": {(30, 61, "DL301", SAME_ORDER, None)},
}


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_findings(name):
    code = name.split("/")[0]
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / name))
    found = {(f.line, f.column, f.code, f.message, _fix(f)) for f in result.findings if f.code == code}
    assert found == EXPECTED[name]


def test_h2_loaders_stored_by_split_and_read_by_key_in_another_module():
    """cs230's fetch_dataloader: both loaders fire (the val loader evaluated every epoch); a
    split read once, a split never read, keys that are no literals: silent."""
    root = FIXTURES / "project" / "h2_dict_by_split"
    found = {
        (str(path.relative_to(root)), f.line, f.column, f.code, f.message, _fix(f))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code == "DL201"
    }
    message = "workers restart every epoch (re-iterated by train.py:17): add persistent_workers=True"
    fix = ("safe", "Add `persistent_workers=num_workers > 0`")  # a parameter: a caller may pass 0
    assert found == {
        ("model/data_loader.py", 11, 22, "DL201", message, fix),
        ("model/data_loader.py", 13, 22, "DL201", message, fix),
    }


def test_y6_sampler_from_a_factory_whose_callers_pass_shuffle():
    """rosinality's data_sampler(dataset, shuffle, distributed): parameters without defaults that
    every call passes; a factory called with False, or with True and False: silent; set_epoch in
    the generator (another script): silent."""
    root = FIXTURES / "project" / "y6_factory_sampler"
    found = {
        (str(path.relative_to(root)), f.line, f.column, f.code, f.message, _fix(f))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code == "DL301"
    }
    assert found == {("train.py", 11, 16, "DL301", SAME_ORDER, None)}


def test_each_key_of_a_comprehension_is_a_loader_of_its_own():
    source = HEAD + textwrap.dedent("""\
        def main(data):
            loaders = {k: DataLoader(data[k], num_workers=2) for k in ["train", "val"]}
            for epoch in range(3):
                list(loaders["train"])
            list(loaders["val"])
            once = {k: DataLoader(data[k], num_workers=2) for k in ["train", "val"]}
            list(once["train"])
            list(once["val"])
            never = {k: DataLoader(data[k], num_workers=2) for k in ["train", "val"]}
            list(never["test"])
        """)
    assert counts(source) == {3: 2, 7: 1, 10: 0}


def test_a_loop_over_literal_keys_reads_one_entry_per_round():
    # The loop picking the key does not repeat one entry; the epoch loop around it does.
    source = HEAD + textwrap.dedent("""\
        def main(data):
            loaders = {"train": DataLoader(data, num_workers=2), "val": DataLoader(data, num_workers=2)}
            for split in ("train", "val"):
                list(loaders[split])
            again = {"train": DataLoader(data, num_workers=2)}
            for epoch in range(3):
                for split in ["train"]:
                    list(again[split])
        """)
    assert counts(source) == {3: 1, 6: 2}


def test_stored_per_round_each_round_builds_its_own_loader():
    # Built in the loop: one loader per key (narrowed by `if split == ...`); built before the
    # loop: the same loader under every key, read twice.
    source = HEAD + textwrap.dedent("""\
        def fresh(data):
            loaders = {}
            for split in ["train", "val", "test"]:
                if split == "train":
                    dl = DataLoader(data, shuffle=True, num_workers=2)
                elif split in ("val",):
                    dl = DataLoader(data, num_workers=2)
                else:
                    continue
                loaders[split] = dl
            for epoch in range(3):
                list(loaders["train"])
            list(loaders["val"])
            list(loaders["test"])

        def shared(data):
            dl = DataLoader(data, num_workers=2)
            loaders = {}
            for split in ["train", "val"]:
                loaders[split] = dl
            list(loaders["train"])
            list(loaders["val"])
        """)
    assert counts(source) == {6: 2, 8: 1, 18: 2}


@pytest.mark.parametrize("keys, read", [
    ("splits", 'loaders["train"]'),  # keys not literals
    ('["train", "val"] if k != "val"', 'loaders["train"]'),  # a filtered comprehension
    ('["train", "val"]', "loaders[split]"),  # a key nothing here passes
    ('["train", "train"]', 'loaders["train"]'),  # repeated keys: a later value replaces one
])
def test_keys_or_reads_left_unknown_claim_nothing(keys, read):
    source = HEAD + textwrap.dedent(f"""\
        def main(data, splits, split):
            loaders = {{k: DataLoader(data[k], num_workers=2) for k in {keys}}}
            for epoch in range(3):
                list({read})
        """)
    assert counts(source) == {3: 0}


def test_a_parameter_rebound_to_a_generator_is_no_longer_the_loader():
    """``loader = sample_data(loader)``: ``next(loader)`` draws from the generator (whose ``while
    True: for`` iterates the loader every round), not from the loader handed in."""
    source = HEAD + textwrap.dedent("""\
        def sample_data(loader):
            while True:
                for batch in loader:
                    yield batch

        def train(loader, steps):
            loader = sample_data(loader)
            for i in range(steps):
                batch = next(loader)

        def main(ds):
            train(DataLoader(ds, num_workers=2), 100)
        """)
    text = textwrap.dedent(source)
    facts = FileFacts("t.py", text, ast.parse(text), Settings(select=("ALL",)))
    (loader,) = facts.loader_calls
    uses = facts.usage.loader_uses(loader)
    assert [(u.kind.value, u.how.value, u.node.lineno) for u in uses] == [("iterate", "here", 4)]
    assert facts.usage.unknowns(loader) == []  # before: "handed to next() outside the project"


def test_a_rebinding_made_from_the_value_carries_it_into_the_next_pass():
    """``loader = tqdm(loader)`` in the epoch loop wraps the same loader again each pass (a
    parameter followed to the loads it reaches met this once the rebinding counted); a name
    rebound to another value in the loop meets this one on the first pass only."""
    source = HEAD + textwrap.dedent("""\
        from tqdm import tqdm

        def train(loader):
            for epoch in range(3):
                loader = tqdm(loader)
                for b in loader:
                    pass

        def main(ds, other):
            train(DataLoader(ds, num_workers=2))
            x = DataLoader(ds, num_workers=2)
            for epoch in range(3):
                x = tqdm(x)
                for b in x:
                    pass
            y = DataLoader(ds, num_workers=2)
            for epoch in range(3):
                for b in y:
                    pass
                y = other
        """)
    assert counts(source) == {11: 2, 12: 2, 17: 1}
