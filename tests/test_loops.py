"""Unit tests of the loop, sampler and device facts behind DL203-DL207, DL301 and DL303."""

from __future__ import annotations

import ast
import textwrap

import pytest

from dllint.config import Settings
from lint_helpers import lint_source
from dllint.facts import FileFacts
from dllint.facts.device_kinds import cuda_device_kind
from dllint.facts.loops import names_bound_in_loop
from dllint.findings import InsertStatement, SetArgument

ALL = Settings(select=("ALL",))
HEADER = "import torch\nfrom torch.utils.data import DataLoader, DistributedSampler, Dataset\n"


def facts_of(source: str) -> FileFacts:
    source = HEADER + textwrap.dedent(source)
    return FileFacts("<test>", source, ast.parse(source), ALL)


def findings(source: str, code: str):
    return [f for f in lint_source(HEADER + textwrap.dedent(source), ALL) if f.code == code]


# -- epoch loops ---------------------------------------------------------------------


def test_epoch_iteration_through_a_same_file_call():
    facts = facts_of(
        """
        def run(loader):
            for b in loader:
                pass
        def main():
            loader = DataLoader(ds, num_workers=2)
            for epoch in range(3):
                run(loader)
        """
    )
    (loader,) = facts.loader_calls
    use = facts.loops.epoch_iteration(loader)
    assert use is not None
    assert [type(l).__name__ for l in facts.loops.epoch_loops(use)] == ["For"]


def test_comprehensions_are_not_epoch_loops():
    facts = facts_of("loader = DataLoader(ds, num_workers=2)\nbatches = [b for b in loader]\n")
    (loader,) = facts.loader_calls
    assert facts.loops.iterations(loader)
    assert facts.loops.epoch_iteration(loader) is None


def test_rebuilding_loop_repeats_the_iteration_but_not_of_the_same_object():
    facts = facts_of("for epoch in range(3):\n    for b in DataLoader(ds, num_workers=2):\n        pass\n")
    (loader,) = facts.loader_calls
    assert facts.loops.epoch_iteration(loader) is not None
    assert facts.loops.epoch_iteration(loader, same_object=True) is None


def test_names_bound_in_loop():
    loop = ast.parse("for i, x in items:\n    y = f(x)\n    def g(): z = 1\n").body[0]
    assert names_bound_in_loop(loop) == {"i", "x", "y", "g"}


# -- dataset mutations (DL303, DL201's fix) --------------------------------------------

MUTATING_CLASS = """
class Stages(Dataset):
    def set_stage(self, stage):
        self._store(stage)
    def _store(self, stage):
        self.stage = stage
    def peek(self):
        return self.stage
"""


@pytest.mark.parametrize(
    ("statement", "mutates"),
    [
        ("loader.dataset.stage = epoch", True),
        ("loader.dataset.table[epoch] = 1", True),
        ("ds.stage += 1", True),
        ("ds.set_stage(epoch)", True),  # assigns self.* through another method
        ("setattr(loader.dataset, 'stage', epoch)", True),
        ("ds.peek()", False),
        ("print(loader.dataset.stage)", False),
        ("loader.sampler.set_epoch(epoch)", False),
        ("other.stage = epoch", False),
    ],
)
def test_dataset_mutations(statement, mutates):
    facts = facts_of(
        MUTATING_CLASS
        + f"""
def main(other):
    ds = Stages()
    loader = DataLoader(ds, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        {statement}
        for b in loader:
            pass
"""
    )
    (loader,) = facts.loader_calls
    assert facts.dataset_mutated_in_loop(loader) is mutates


def test_mutation_outside_the_repeating_loop_does_not_count():
    facts = facts_of(
        MUTATING_CLASS
        + "ds = Stages()\nloader = DataLoader(ds, num_workers=2)\nds.set_stage(1)\n"
        "for b in loader:\n    pass\n"
    )
    (loader,) = facts.loader_calls
    assert not facts.dataset_mutated_in_loop(loader)


def test_dl201_offers_no_fix_where_the_dataset_changes_in_the_loop():
    source = MUTATING_CLASS + (
        "def main():\n    ds = Stages()\n    loader = DataLoader(ds, num_workers=2)\n"
        "    for epoch in range(3):\n        ds.set_stage(epoch)\n        for b in loader:\n            pass\n"
    )
    (finding,) = findings(source, "DL201")
    assert finding.fix is None
    (plain,) = findings(source.replace("ds.set_stage(epoch)", "ds.peek()"), "DL201")
    assert plain.fix is not None


# -- samplers (DL301) ----------------------------------------------------------------------


def test_sampler_feeds_through_batch_sampler_and_escapes():
    facts = facts_of(
        """
        from torch.utils.data import BatchSampler
        a = DistributedSampler(ds)
        la = DataLoader(ds, batch_sampler=BatchSampler(a, 4, False))
        b = DistributedSampler(ds)
        register(b)
        lb = DataLoader(ds, sampler=b)
        """
    )
    first, second = facts.samplers.distributed
    assert [how for _, how in first.feeds] == ["batch_sampler"] and not first.escapes
    assert [how for _, how in second.feeds] == ["sampler"] and second.escapes


@pytest.mark.parametrize(
    ("call", "reaches"),
    [
        ("s.set_epoch(0)", True),
        ("loader.sampler.set_epoch(0)", True),
        ("other_loader.sampler.set_epoch(0)", False),  # provably another loader's sampler
        ("t.set_epoch(0)", False),  # another DistributedSampler
        ("ds.set_epoch(0)", False),
        ("helper(s)", True),  # a same-file function that calls set_epoch on its parameter
        ("helper(t)", False),
    ],
)
def test_set_epoch_reaches_the_sampler(call, reaches):
    facts = facts_of(
        f"""
        def helper(sampler):
            sampler.set_epoch(1)
        s = DistributedSampler(ds)
        t = DistributedSampler(ds)
        loader = DataLoader(ds, sampler=s)
        other_loader = DataLoader(ds, sampler=t)
        {call}
        """
    )
    sampler = facts.samplers.distributed[0]
    assert facts.samplers.set_epoch_may_be_called(sampler) is reaches


def test_dl301_fix_data_names_sampler_epoch_variable_and_loop():
    source = (
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(3):\n    for b in loader:\n        pass\n"
    )
    (finding,) = findings(source, "DL301")
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    assert finding.fix.edit == InsertStatement("sampler.set_epoch(epoch)", (6, 5))  # HEADER is two lines


def test_dl301_fix_uses_the_loader_when_the_sampler_has_no_name():
    source = "loader = DataLoader(ds, sampler=DistributedSampler(ds))\nfor e in range(3):\n    for b in loader:\n        pass\n"
    (finding,) = findings(source, "DL301")
    assert finding.fix.edit.statement == "loader.sampler.set_epoch(e)"


def test_dl301_no_fix_for_while_loops_or_maybe_none_samplers():
    source = "loader = DataLoader(ds, sampler=DistributedSampler(ds))\nwhile True:\n    for b in loader:\n        pass\n"
    (finding,) = findings(source, "DL301")
    assert finding.fix is None
    source = (
        "s = DistributedSampler(ds) if dist else None\nloader = DataLoader(ds, sampler=s)\n"
        "for e in range(3):\n    for b in loader:\n        pass\n"
    )
    (finding,) = findings(source, "DL301")
    assert finding.fix is None  # loader.sampler may be a RandomSampler without set_epoch


# -- devices (DL206) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "kind"),
    [
        ("'cuda'", "cuda"),
        ("'cuda:1'", "cuda"),
        ("f'cuda:{rank}'", "cuda"),
        ("torch.device('cuda', rank)", "cuda"),
        ("torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "maybe"),
        ("'cpu'", None),
        ("'cudafake'", None),
        ("device", None),
    ],
)
def test_cuda_device_kind(expr, kind):
    facts = facts_of(f"x = {expr}\n")
    value = facts.tree.body[-1].value
    assert cuda_device_kind(facts, value, facts.scopes.module) == kind


def test_dl206_fix_value():
    loop = "for x, y in loader:\n    x = x.{}\n"
    # Blocking copies: DL206 fires for a loader with workers (its pin thread works in the background).
    (maybe,) = findings("loader = DataLoader(ds, num_workers=2)\n" + loop.format("to('cuda' if torch.cuda.is_available() else 'cpu')"), "DL206")
    assert maybe.fix.edit == SetArgument("pin_memory", "torch.cuda.is_available()")
    (always,) = findings("loader = DataLoader(ds, num_workers=2)\n" + loop.format("cuda()"), "DL206")
    assert always.fix.edit == SetArgument("pin_memory", "True")
