"""Functions handed on instead of called: loader factories passed to known higher-order
utilities (``apply_to_collection``, ``map``) and hooks assigned onto framework instances
from outside their class (``dm.train_dataloader = f``)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.facts import FileFacts
from dllint.project import ProjectIndex
from dllint.facts.frameworks import assigned_hook, callback_result
from dllint.knowledge.frameworks import Result
from lint_helpers import lint_python_bytes
from tests.project_helpers import lint_in_project, write_tree

SETTINGS = Settings(select=("ALL",))


def facts_of(text: str) -> FileFacts:
    text = textwrap.dedent(text)
    return FileFacts("t.py", text, ast.parse(text), SETTINGS)


def lint(text: str) -> list[tuple[int, str]]:
    result = lint_python_bytes(Linter(Settings(select=("DL201",))), "t.py", textwrap.dedent(text).encode())
    assert not result.errors
    return [(f.line, f.code) for f in result.findings]


def named_load(facts: FileFacts, name: str) -> ast.Name:
    """The one load of ``name`` that is an argument (the callback)."""
    loads = [
        n for n in ast.walk(facts.tree)
        if isinstance(n, ast.Name) and n.id == name and not isinstance(facts.scopes.parents.get(n), ast.Assign)
        and not (isinstance(facts.scopes.parents.get(n), ast.Call) and facts.scopes.parents[n].func is n)
    ]
    assert len(loads) == 1
    return loads[0]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("apply_to_collection(data, Dataset, make)", Result.RESULT),
        ("apply_to_collection(data, Dataset, function=make)", Result.RESULT),
        ("apply_to_collection(data, make, Dataset)", None),  # the dtype's place
        ("apply_to_collection(*rest, make)", None),  # where it lands is unknown
        ("map(make, datasets)", Result.ELEMENTS),
        ("filter(make, datasets)", None),  # not a utility that hands back what it returns
    ],
)
def test_callback_positions(call, expected):
    facts = facts_of(f"from lightning_utilities import apply_to_collection\ndef make(ds): pass\nx = {call}\n")
    load = named_load(facts, "make")
    found = callback_result(facts, load, facts.scopes.scope_of(load))
    assert (found[1] if found else None) == expected


@pytest.mark.parametrize(
    "header",
    [
        "from mylib import apply_to_collection",  # a function of the same name elsewhere
        "def map(f, xs): return f",  # a shadowed builtin
    ],
)
def test_callback_of_an_unknown_utility(header):
    call = "map(make, datasets)" if "map" in header else "apply_to_collection(data, Dataset, make)"
    facts = facts_of(f"{header}\ndef make(ds): pass\nx = {call}\n")
    load = named_load(facts, "make")
    assert callback_result(facts, load, facts.scopes.scope_of(load)) is None


def test_callback_imported_from_any_lightning_package():
    for module in ("lightning_utilities.core.apply_func", "lightning.fabric.utilities.apply_func", "pytorch_lightning.utilities"):
        facts = facts_of(f"from {module} import apply_to_collection\ndef make(ds): pass\nx = apply_to_collection(d, D, make)\n")
        load = named_load(facts, "make")
        assert callback_result(facts, load, facts.scopes.scope_of(load)) is not None, module


ASSIGNED = """
import lightning.pytorch as L
from pl_bolts.datamodules import CIFAR10DataModule
from transformers import Trainer

class DM(L.LightningDataModule):
    @classmethod
    def build(cls):
        dm = cls()
        dm.train_dataloader = f
    @staticmethod
    def static(cls):
        dm = cls()
        dm.train_dataloader = f
    def setup(self):
        self.val_dataloader = f

class Plain:
    @classmethod
    def build(cls):
        obj = cls()
        obj.train_dataloader = f

cifar = CIFAR10DataModule()
cifar.test_dataloader = f
plain = Plain()
plain.train_dataloader = f
trainer = Trainer(model)
trainer.get_train_dataloader = f
trainer.get_eval_dataloader = f
trainer.train_dataloader = f
"""


def test_assigned_hooks():
    facts = facts_of(ASSIGNED)
    found = []
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            hook = assigned_hook(facts, node.targets[0], facts.scopes.scope_of(node))
            found.append((ast.unparse(node.targets[0]), hook and (hook.name, hook.per_epoch)))
    assert sorted(found, key=str) == sorted([
        ("dm.train_dataloader", ("train_dataloader", True)),  # cls() in a classmethod of a data module
        ("dm.train_dataloader", None),  # a static method's first argument is no class
        ("self.val_dataloader", ("val_dataloader", True)),
        ("obj.train_dataloader", None),  # cls() of a class that is no framework's
        ("cifar.test_dataloader", ("test_dataloader", False)),  # a data module from outside the project
        ("plain.train_dataloader", None),
        ("trainer.get_train_dataloader", ("get_train_dataloader", True)),  # Hugging Face's Trainer
        ("trainer.get_eval_dataloader", ("get_eval_dataloader", False)),
        ("trainer.train_dataloader", None),  # a Lightning hook on a Hugging Face trainer
    ], key=str)


def test_hook_assigned_from_a_nested_function():
    source = """
    import lightning.pytorch as L
    from torch.utils.data import DataLoader

    class DM(L.LightningDataModule):
        def setup(self, stage=None):
            def train():
                return DataLoader(self.train_set, num_workers=4)

            def test():
                return DataLoader(self.test_set, num_workers=4)

            self.train_dataloader = train
            self.test_dataloader = test
    """
    assert lint(source) == [(8, "DL201")]
    assert lint(source.replace("self.train_dataloader = train", "self.other = train")) == []


def test_lambda_assigned_as_a_hook():
    source = """
    from pl_bolts.datamodules import MNISTDataModule
    from torch.utils.data import DataLoader

    dm = MNISTDataModule()
    dm.train_dataloader = lambda: DataLoader(train_set, num_workers=4)
    dm.predict_dataloader = lambda: DataLoader(predict_set, num_workers=4)
    """
    assert lint(source) == [(6, "DL201")]


SHARED = """
from lightning_utilities import apply_to_collection
from torch.utils.data import DataLoader, Dataset

def make(ds):
    return DataLoader(ds, num_workers=4)

first = apply_to_collection(a, Dataset, make)
for batch in first:
    pass
second = apply_to_collection(b, Dataset, make)
for batch in second:
    pass
"""


def test_one_factory_through_two_utility_calls_builds_two_loaders():
    assert lint(SHARED) == []
    assert lint(SHARED.replace("for batch in second:", "for epoch in range(3):\n  for batch in second:")) == [(6, "DL201")]
    # without the utility, the same factory's result iterated twice through one name is re-iterated
    assert lint(SHARED.replace("second = apply_to_collection(b, Dataset, make)", "second = first")) == [(6, "DL201")]


MAPPED = """
from torch.utils.data import DataLoader

def make(ds):
    return DataLoader(ds, num_workers=4)

"""


def test_map_elements():
    once = "for dl in map(make, datasets):\n    for batch in dl:\n        pass\n"
    assert lint(MAPPED + once) == []
    each_per_epoch = "for dl in map(make, datasets):\n    for epoch in range(3):\n        for batch in dl:\n            pass\n"
    assert lint(MAPPED + each_per_epoch) == [(5, "DL201")]
    kept = "loaders = tuple(map(make, datasets))\nfor epoch in range(3):\n    for dl in loaders:\n        for batch in dl:\n            pass\n"
    assert lint(MAPPED + kept) == [(5, "DL201")]
    assert lint(MAPPED + kept.replace("for epoch in range(3):", "if True:")) == []


DATAMODULE = """\
import lightning.pytorch as L


class FolderDataModule(L.LightningDataModule):
    pass
"""
SCRIPT = """\
from torch.utils.data import DataLoader

from data.module import FolderDataModule


def train_loader():
    return DataLoader(range(8), num_workers=4)


dm = FolderDataModule()
dm.train_dataloader = train_loader
"""


def test_hook_assigned_onto_a_project_class_of_another_file(tmp_path: Path):
    write_tree(tmp_path, {"data/__init__.py": "", "data/module.py": DATAMODULE, "train.py": SCRIPT})
    script = tmp_path / "train.py"
    result = lint_in_project(ProjectIndex(tmp_path, SETTINGS), script, SETTINGS)
    assert [(f.line, f.code) for f in result.findings if f.code == "DL201"] == [(7, "DL201")]
    assert str((tmp_path / "data" / "module.py").resolve()) in result.deps
    # the class is no data module any more: nobody known calls the function
    (tmp_path / "data" / "module.py").write_text(DATAMODULE.replace("(L.LightningDataModule)", "").replace("DataModule", "Folder"))
    script.write_text(SCRIPT.replace("FolderDataModule", "Folder"))
    result = lint_in_project(ProjectIndex(tmp_path, SETTINGS), script, SETTINGS)
    assert [f for f in result.findings if f.code == "DL201"] == []
