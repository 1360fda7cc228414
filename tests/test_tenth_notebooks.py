"""DL106 shapes of issue 32's tenth audit (code no one tuned dllint to): B4, B6, B7, B8, each as a
minimal notebook fixture (fixtures/DL106/b4_*, b6_*, b7_*, b8_*): the whole finding (cell,
position, message; DL106 offers no fix) where it fires, and the twins that must stay silent."""

from __future__ import annotations

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.inputs.notebook import notebook_from_percent
from dllint.per_file import lint as lint_bytes
from lint_helpers import lint_path
from tests.conftest import FIXTURES

ALL = Settings(select=("ALL",))
SQUARES = "class Squares(Dataset):\n    def __len__(self):\n        return 8\n\n    def __getitem__(self, i):\n        return i * i\n"


def notebook_class(name: str, sink: str = "dataset") -> str:
    return (f"class '{name}' is defined in the notebook, so spawn workers cannot unpickle it (via {sink}): move it to a"
            " .py module and import it")


def dl106(result) -> set[tuple]:
    """(cell, line, column, message, fix) of each DL106 finding."""
    return {(f.cell, f.line, f.column, f.message, f.fix) for f in result.findings if f.code == "DL106"}


def fixture(name: str) -> set[tuple]:
    return dl106(lint_path(Linter(ALL), str(FIXTURES / "DL106" / name)))


def percent(source: str) -> set[tuple]:
    return dl106(lint_bytes(Linter(ALL), "nb.ipynb", notebook_from_percent(source)))


# -- B4: a notebook class that redefines a name an earlier cell imported ------------------------
def test_b4_the_class_cell_replaces_the_import_from_its_cell_on():
    """Cell order decides: the read before the class cell is the import (silent), the reads after
    it (module level, or in a function defined below it) are the notebook's class; a function
    whose name a later cell imports again, and a read after that import, are silent."""
    assert fixture("b4_class_redefines_import.ipynb") == {
        (5, 1, 14, notebook_class("Squares"), None),
        (6, 3, 23, notebook_class("Squares"), None),
    }


def test_b4_a_class_defined_only_in_a_branch_leaves_the_name_unknown():
    assert fixture("b4_redefined_in_a_branch.ipynb") == set()


@pytest.mark.parametrize(
    ("between", "expected"),
    [
        ("", {(3, 1, 12, notebook_class("Squares"), None)}),
        # the import rebinds it again in a later statement of the same cell: the import is live
        ("from utils import Squares\n", set()),
        # an assignment in between: a value, not the notebook's definition (unknown: silent)
        ("Squares = make_dataset_class()\n", set()),
    ],
)
def test_b4_the_last_binding_above_the_read_is_the_one_the_kernel_sees(between, expected):
    source = f"# %%\nfrom torch.utils.data import DataLoader, Dataset\nfrom utils import Squares\n# %%\n{SQUARES}{between}# %%\n"
    assert percent(source + "DataLoader(Squares(), num_workers=2)\n") == expected


def test_b4_the_distilbert_form_three_loaders_in_one_cell():
    """dl-fundamentals' units 8-10: the import in one cell, ``class IMDBDataset(Dataset)`` later,
    three datasets for 4-worker loaders in the next cell: each construction reported."""
    source = (
        "# %%\nfrom torch.utils.data import DataLoader, Dataset\nfrom local_dataset_utilities import IMDBDataset\n"
        f"# %%\n{SQUARES.replace('Squares', 'IMDBDataset')}"
        "# %%\ntrain_dataset = IMDBDataset(imdb_tokenized, partition_key='train')\n"
        "val_dataset = IMDBDataset(imdb_tokenized, partition_key='validation')\n"
        "train_loader = DataLoader(dataset=train_dataset, batch_size=12, shuffle=True, num_workers=4)\n"
        "val_loader = DataLoader(dataset=val_dataset, batch_size=12, num_workers=4)\n"
    )
    assert percent(source) == {(3, 1, 17, notebook_class("IMDBDataset"), None), (3, 2, 15, notebook_class("IMDBDataset"), None)}


# -- B8: a notebook dataset class named `Dataset`, shadowing torch's ----------------------------
def test_b8_a_class_named_dataset_is_the_notebooks_from_its_cell_on():
    assert fixture("b8_class_named_dataset.ipynb") == {(4, 1, 21, notebook_class("Dataset"), None)}


def test_b8_subclassing_torch_by_its_path_and_built_in_a_notebook_class():
    """The hw6-diffusion form: ``self.ds = Dataset(folder)`` in a notebook class's ``__init__``."""
    assert fixture("b8_named_dataset_by_torch_path.ipynb") == {(4, 3, 19, notebook_class("Dataset"), None)}


def test_b8_torchs_dataset_read_before_the_class_cell_is_torchs():
    source = "# %%\nfrom torch.utils.data import DataLoader, Dataset\nDataLoader(Dataset(), num_workers=2)\n# %%\n"
    assert percent(source + SQUARES.replace("Squares", "Dataset")) == set()


# -- B7: a notebook dataset built and returned by a notebook factory function --------------------
def test_b7_what_a_notebook_factory_returns_reaches_the_workers():
    """Reported where the factory builds the notebook class (also for a loader built in a notebook
    class's method); a factory of an imported class, one only a loader without workers uses: silent."""
    assert fixture("b7_factory_returns_dataset.ipynb") == {
        (3, 10, 15, notebook_class("Squares"), None),
        (3, 23, 12, notebook_class("Squares"), None),
    }


def test_b7_a_method_of_the_notebook_class_that_returns_the_dataset():
    """The loader's class asks one of its own methods for the dataset (``self.build_dataset()``)."""
    source = (
        f"# %%\nfrom torch.utils.data import DataLoader, Dataset\n{SQUARES}"
        "# %%\nclass Trainer:\n    def build_dataset(self):\n        return Squares()\n\n"
        "    def prepare(self):\n        self.loader = DataLoader(self.build_dataset(), num_workers=2)\n"
    )
    assert percent(source) == {(2, 3, 16, notebook_class("Squares"), None)}


def test_b7_a_factory_bound_twice_is_unknown():
    source = (
        f"# %%\nfrom torch.utils.data import DataLoader, Dataset\nfrom squares import make\n{SQUARES}"
        "# %%\ndef make():\n    return Squares()\n# %%\nmake = make_other\nDataLoader(make(), num_workers=2)\n"
    )
    assert percent(source) == set()


# -- B6: a notebook dataset handed to a notebook function that builds the loader ----------------
def test_b6_what_the_calls_pass_for_the_loaders_parameter_reaches_the_workers():
    """Reported at the construction in the call (also through ``random_split``, and in a tuple the
    function unpacks, element by element; in an ``if`` arm, bound a line above the call in the same
    arm); an imported class, a call passing ``workers=0``, the notebook's class in the element that
    goes to the loader without workers, a read after the ``if`` (either arm's binding): silent."""
    assert fixture("b6_function_builds_loader.ipynb") == {
        (5, 1, 22, notebook_class("Squares"), None),
        (5, 2, 37, notebook_class("Squares"), None),
        (6, 2, 15, notebook_class("Squares"), None),
        (7, 4, 41, notebook_class("Squares"), None),
    }


def test_b6_the_meta_learning_form_three_datasets_in_a_tuple():
    """Lhy HW15 2021: ``dataloader_init((train_set, val_set, test_set))`` builds three 2-worker
    loaders (``num_workers=2`` a parameter's default) from the tuple it unpacks."""
    source = (
        f"# %%\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n{SQUARES}"
        "# %%\ndef dataloader_init(datasets, num_workers=2):\n    train_set, val_set, test_set = datasets\n"
        "    train_loader = DataLoader(train_set, batch_size=5, num_workers=num_workers)\n"
        "    val_loader = DataLoader(val_set, batch_size=5, num_workers=num_workers)\n"
        "    test_loader = DataLoader(test_set, batch_size=5, num_workers=num_workers)\n"
        "    return train_loader, val_loader, test_loader\n\n"
        "train_set, val_set = torch.utils.data.random_split(Squares(), [6, 2])\n"
        "test_set = Squares()\n"
        "loaders = dataloader_init((train_set, val_set, test_set))\n"
    )
    assert percent(source) == {(2, 8, 52, notebook_class("Squares"), None), (2, 9, 12, notebook_class("Squares"), None)}


def test_b6_a_workers_parameter_defaulting_to_zero_left_out_by_the_call():
    source = (
        f"# %%\nfrom torch.utils.data import DataLoader, Dataset\n{SQUARES}"
        "# %%\ndef make_loader(dataset, workers=0):\n    return DataLoader(dataset, num_workers=workers)\n\n"
        "make_loader(Squares())\nmake_loader(Squares(), workers=4)\n"
    )
    assert percent(source) == {(2, 5, 13, notebook_class("Squares"), None)}


# -- B4 in a DataModule: the reads run in setup, a method defined below the class cell ------------
DATAMODULE = (
    "class DataModule(L.LightningDataModule):\n"
    "    def setup(self, stage):\n"
    "        self.train_dataset = IMDBDataset(tokenized, partition_key='train')\n"
    "\n"
    "    def train_dataloader(self):\n"
    "        return DataLoader(dataset=self.train_dataset, batch_size=12, shuffle=True, num_workers=4)\n"
)


@pytest.mark.parametrize(
    ("later", "expected"),
    [
        # dl-fundamentals 9.5: setup runs after every cell above the DataModule's, the class cell included
        ("", {(3, 3, 30, notebook_class("IMDBDataset"), None)}),
        # a later cell imports the name again: setup may run after it (unknown: silent)
        ("# %%\nfrom local_dataset_utilities import IMDBDataset\n", set()),
    ],
)
def test_b4_the_batchsize_finder_form_a_datamodule_setup_reads_the_notebook_class(later, expected):
    source = (
        "# %%\nimport lightning as L\nfrom torch.utils.data import DataLoader, Dataset\n"
        "from local_dataset_utilities import IMDBDataset\n"
        f"# %%\n{SQUARES.replace('Squares', 'IMDBDataset')}# %%\n{DATAMODULE}{later}"
    )
    assert percent(source) == expected
