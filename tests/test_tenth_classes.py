"""Class shapes of issue 32's tenth audit (code no one tuned dllint to: "Classes as Python sees
them"), each as a minimal fixture: the whole finding (position, message, the fix offered) where
it fires, the twins that must stay silent, and the fix (before -> after, re-lint clean, a
second fix changes nothing).

K14 (victoresque/pytorch-template): the epoch loop is a base trainer's ``train()``, calling
``self._train_epoch(epoch)``, which the project's ``Trainer`` defines and where it iterates the
loader it stores (fixtures/project/k14_inherited_epoch_loop: the base in another module, the
trainer and its base each in a module of their own, or two classes up in the same file; twins: an override of the looping method, a base loop calling
another method, a loop calling the method on another object).

K13 across modules (TingsongYu/PyTorch-Tutorial-2nd's cyclegan): a wrapper whose ``__iter__``
yields its loader's batches unchanged, returned by a function of its module (through a method
returning ``self``) to another module that iterates it and copies the items to CUDA
(fixtures/project/k13b_wrapper_across_modules)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from dllint.facts.inherited_loops import loop_calls
from tests.conftest import FIXTURES

PIN = ("batches are copied to CUDA from pageable memory: add pin_memory=True so the loader's pin thread "
       "page-locks them while workers load, and each copy is faster (it stays blocking without non_blocking=True)")


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_k14_an_epoch_loop_inherited_from_a_base_class_re_iterates_the_subclass_loader():
    """The whole findings: the loop is named in the message where it is another module's."""
    out = _dllint(".", "--no-cache", "--select", "DL201,DL206", "--format", "concise", "-q",
                  cwd=FIXTURES / "project" / "k14_inherited_epoch_loop")
    found = out.stdout.splitlines()
    assert "train.py:19:14: DL201 [*] workers restart every epoch (re-iterated by train() inherited from BaseTrainer): " \
           "add persistent_workers=True" in found
    assert f"train.py:19:14: DL206 [*] {PIN}" in found
    assert "same_file.py:26:14: DL201 [*] workers restart every epoch: add persistent_workers=True" in found
    # three modules (the trainer's own, its base's, the loader's): trainers.py's summary records the
    # base to ask, and the project's answer to split.py reads base.py's summary
    assert "split.py:9:14: DL201 [*] workers restart every epoch (re-iterated by trainers.SplitTrainer()): " \
           "add persistent_workers=True" in found
    assert not [line for line in found if line.startswith("split.py:11:") and "DL201" in line]
    assert not [line for line in found if "silent_overridden.py" in line and "DL201" in line]


def test_k14_fix_adds_persistent_workers_and_a_second_fix_changes_nothing(tmp_path):
    case = FIXTURES / "fix_project" / "k14_inherited_epoch_loop"
    shutil.copy(case / "base.py", tmp_path / "base.py")
    shutil.copy(case / "before.py", tmp_path / "train.py")
    _dllint("train.py", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert (tmp_path / "train.py").read_text() == (case / "after.py").read_text()
    again = _dllint("train.py", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "train.py").read_text() == (case / "after.py").read_text()


def test_k14_loop_calls_records_only_self_calls_inside_the_methods_own_loops():
    """What a class's summary records (``ClassSummary.loop_calls``): a call after the loop, a
    call on another object, one in a nested function and a static method's are not."""
    import ast

    tree = ast.parse(
        "class T:\n"
        "    def train(self, n):\n"
        "        for e in range(n):\n"
        "            while True:\n"
        "                self.step(e)\n"
        "            other.skip()\n"
        "            def inner():\n"
        "                self.nested()\n"
        "        self.after()\n"
        "    @staticmethod\n"
        "    def helper(self):\n"
        "        for e in range(3):\n"
        "            self.static()\n"
    )
    assert loop_calls(tree.body[0]) == {"train": ["step"]}  # type: ignore[arg-type]


# K13 across modules (TingsongYu/PyTorch-Tutorial-2nd's cyclegan data/__init__.py): the wrapper
# and the function returning it in one module, the epoch loop iterating it in another.

def test_k13b_batches_a_wrapper_hands_to_another_module_are_the_loaders():
    """DL206 at the loader the wrapper stores: the whole finding; the twins (a changed yield, the
    wrapper inside a list, a method returning another object, no copy to CUDA) stay silent.
    DL201 where the other module iterates the wrapper every epoch; silent where it does so once."""
    out = _dllint(".", "--no-cache", "--select", "DL201,DL206", "--format", "concise", "-q",
                  cwd=FIXTURES / "project" / "k13b_wrapper_across_modules")
    found = out.stdout.splitlines()
    assert [line for line in found if "DL206" in line] == [
        f"wrappers/fires.py:17:27: DL206 [*] {PIN}",
        f"wrappers/silent.py:66:27: DL206 [*] {PIN}",  # the DL201 twin iterated once: its copies count
    ]
    # each pass over a wrapper runs its __iter__: DL201 where the caller iterates it every epoch
    assert [line.split(": DL201")[0] for line in found if "DL201" in line] == [
        "wrappers/fires.py:17:27", "wrappers/silent.py:11:27", "wrappers/silent.py:53:27",
    ]


def test_k13b_fix_pins_the_wrapped_loader_and_a_second_fix_changes_nothing(tmp_path):
    case = FIXTURES / "fix_project" / "k13b_wrapper_across_modules"
    shutil.copy(case / "train.py", tmp_path / "train.py")
    shutil.copy(case / "before.py", tmp_path / "data.py")
    first = _dllint("data.py", "--no-cache", "--select", "DL201,DL206", "--format", "concise", "-q", cwd=tmp_path)
    assert first.stdout.splitlines() == [
        "data.py:14:27: DL201 [*] workers restart every epoch (re-iterated by train.py:5): add persistent_workers=True",
        f"data.py:14:27: DL206 [*] {PIN}",
    ]
    _dllint("data.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert (tmp_path / "data.py").read_text() == (case / "after.py").read_text()
    again = _dllint("data.py", "--no-cache", "--select", "DL206", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "data.py").read_text() == (case / "after.py").read_text()


def test_k14_a_loader_class_chosen_by_a_name_read_at_run_time_stays_unknown(tmp_path):
    """``getattr(module, config["type"])(**config["args"])``: which class is built, and with
    which ``num_workers``, is read at run time (pytorch-template's JSON config, named on the
    command line): unknown, silent, even where every class of the module is a DataLoader
    subclass and the epoch loop is a base's (the inherited loop alone is not evidence of a
    multi-worker loader)."""
    (tmp_path / "loaders.py").write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "class MnistLoader(DataLoader):\n"
        "    def __init__(self, batch_size, num_workers=1):\n"
        "        super().__init__(TensorDataset(torch.zeros(8, 2)), batch_size=batch_size, num_workers=num_workers)\n"
    )
    (tmp_path / "base.py").write_text(
        "class BaseTrainer:\n"
        "    def train(self):\n"
        "        for epoch in range(3):\n"
        "            self._train_epoch(epoch)\n"
    )
    (tmp_path / "train.py").write_text(
        "import json\n"
        "import sys\n"
        "import loaders as module_data\n"
        "from base import BaseTrainer\n"
        "class Trainer(BaseTrainer):\n"
        "    def __init__(self, data_loader):\n"
        "        self.data_loader = data_loader\n"
        "    def _train_epoch(self, epoch):\n"
        "        for (x,) in self.data_loader:\n"
        "            x = x.to('cuda')\n"
        "if __name__ == '__main__':\n"
        "    config = json.load(open(sys.argv[1]))\n"
        "    loader = getattr(module_data, config['type'])(**config['args'])\n"
        "    Trainer(loader).train()\n"
    )
    out = _dllint(".", "--no-cache", "--select", "DL201,DL206", "--format", "concise", "-q", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout
