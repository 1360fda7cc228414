"""Shapes of the three course repositories added to issue 32's tenth audit (L1-L3 in
benchmarks/FALSE_POSITIVE_SHAPES.md), each as a minimal fixture of our own.
L1: a ``for`` of provably at most one trip (``range(1)``, ``range(a, a + 1)``) repeats nothing,
so a loader iterated once inside it is not re-iterated (fixtures/DL201/l1_one_trip_loops.py,
fixtures/fix/DL201/l1_one_trip_loops: the fix touches only the loader a two-trip loop repeats).
L2: a ``**`` splat of ``{...} if cond else {...}`` in the same function is either branch's dict
(fixtures/DL201/l2_conditional_splat.py; fixtures/fix/DL201/l2_conditional_splat: the fix tests
the count the call reads, ``kwargs.get("num_workers", 0) > 0``, so the CPU branch keeps working)."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tests.test_fixtures import project_findings

SAFE_PARAMETER = ("safe", "Add `persistent_workers=workers > 0`")


def test_l1_a_caller_loop_of_one_trip_does_not_repeat_the_pass():
    """The factory's loader is iterated once under ``range(1)`` and once per trip of
    ``range(start, start + 1)`` in the caller: neither repeats it; the epoch loop of
    ``range(epochs)`` over another call does, and is the one the finding names."""
    root = FIXTURES / "project" / "l1_one_trip_caller"
    message = "workers restart every epoch (re-iterated by train.py:11): add persistent_workers=True"
    assert project_findings(root, "DL201") == {("data.py", 6, 12, message, SAFE_PARAMETER)}


def test_l2_a_conditional_dict_splat_is_either_branch(tmp_path):
    """One branch writes ``num_workers: 1``, neither writes ``persistent_workers``: DL201, with
    the fix that tests the dict's count; ``pin_memory`` written in one branch only is unknown,
    so DL206 stays silent."""
    script = tmp_path / "t.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def main(use_cuda):\n"
        "    kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}\n"
        "    loader = DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, **kwargs)\n"
        "    for epoch in range(3):\n"
        "        for (x,) in loader:\n"
        "            x.cuda()\n"
    )
    assert project_findings(tmp_path, "DL206") == set()
    assert project_findings(tmp_path, "DL201") == {
        ("t.py", 7, 14, "workers restart every epoch: add persistent_workers=True",
         ("safe", 'Add `persistent_workers=kwargs.get("num_workers", 0) > 0`')),
    }
