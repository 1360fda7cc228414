"""A fix that adds a keyword to a custom loader class's construction must be one the class
takes: ``MnistLoader(8, num_workers=2, persistent_workers=True)`` raises ``TypeError`` when
``MnistLoader.__init__`` has no such parameter (found on victoresque/pytorch-template, whose
loaders are ``BaseDataLoader`` subclasses). Same file: no fix, and the message says where the
keyword goes; ``**kwargs``, the parameter itself, or no ``__init__`` of its own: the fix as
for torch's DataLoader; a class of another module: unsafe (its ``__init__`` is not read here).
Fix fixture (the classes that take it): fixtures/fix/DL201/loader_subclass_keywords."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tests.test_fixtures import lint_project, project_findings

RESTART = "workers restart every epoch: add persistent_workers=True"


def test_the_fix_adds_only_keywords_the_loader_class_takes():
    root = FIXTURES / "project" / "loader_subclass_keywords"
    safe = ("safe", "Add `persistent_workers=True`")
    assert project_findings(root, "DL201") == {
        ("loaders.py", 29, 9, RESTART + " to the DataLoader call in `MnistLoader.__init__` (it takes no `persistent_workers`)", None),
        ("loaders.py", 30, 9, RESTART, safe),  # **kwargs
        ("loaders.py", 31, 9, RESTART, safe),  # no __init__ of its own: torch's
        ("loaders.py", 32, 9, RESTART, safe),  # the parameter itself
        ("train.py", 7, 26, RESTART, ("unsafe", "Add `persistent_workers=True` (right only if `MnistLoader` takes `persistent_workers`)")),
    }


def test_pin_memory_is_placed_the_same_way(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "class Fixed(DataLoader):\n"
        "    def __init__(self, batch_size, num_workers=2):\n"
        "        super().__init__(TensorDataset(torch.zeros(8, 2)), batch_size=batch_size, num_workers=num_workers)\n\n\n"
        "loader = Fixed(2, num_workers=2)\n"
        "for (x,) in loader:\n"
        "    x.cuda()\n"
    )
    [finding] = [f for f in lint_project(tmp_path)[script].findings if f.code == "DL206"]
    assert (finding.line, finding.column, finding.fix) == (10, 10, None)
    assert finding.message.startswith(
        "batches are copied to CUDA from pageable memory: add pin_memory=True to the DataLoader call in "
        "`Fixed.__init__` (it takes no `pin_memory`) so the loader's pin thread"
    )
