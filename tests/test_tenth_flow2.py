"""Flow shapes of issue 32's tenth audit still missed after tests/test_tenth_flow.py, each as a
minimal fixture of our own: the whole finding (position, message, the fix offered) where it
fires, and the twins that must stay silent.
K10 on ``self``: loaders stored by a trainer's ``__init__`` (also unpacked from a factory's
tuple) and read back by a method the one trainer runs every epoch."""

from __future__ import annotations

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_fixtures import project_findings

RESTART = "workers restart every epoch: add persistent_workers=True"
REITERATED = "workers restart every epoch (re-iterated by {}): add persistent_workers=True"
SAFE = ("safe", "Add `persistent_workers=True`")
SPLAT_TEST = ("safe", 'Add `persistent_workers=kwargs.get("num_workers", 0) > 0`')  # the count the call reads


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


def _single(path, code: str) -> set[tuple]:
    result = lint_path(Linter(Settings(select=("ALL",))), str(path))
    return {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == code}


def _project(root, code: str) -> set[tuple]:
    return project_findings(root, code)


# -- K10 on self: stored by __init__, read by a method run every epoch on the one instance -----
def test_k10b_a_loader_stored_by_init_is_reiterated_by_the_instances_method():
    """``self.val_loader = DataLoader(...)`` in ``__init__`` (and ``self.a, self.b =
    make_loaders()``), ``trainer.validation()`` every epoch on the one trainer: reported, fix
    offered. The method run once, a trainer built every epoch, a class built twice, a loader
    stored by ``setup()`` run every epoch, or by ``__init__`` and again by ``reset()`` every
    epoch: silent (fixtures/DL201/k10b_stored_in_init.py)."""
    assert _single(FIXTURES / "DL201" / "k10b_stored_in_init.py", "DL201") == {(16, 27, RESTART, SAFE), (34, 11, RESTART, SAFE)}


def test_k10b_loaders_unpacked_onto_self_in_another_file_are_followed_to_the_methods():
    """deeplab's shape: ``self.train_loader, self.val_loader, self.test_loader =
    make_data_loader(args, **kwargs)`` in ``Trainer.__init__`` of train.py, ``validation()``
    every ``--eval-interval`` epochs: the val loader is reported with the train loader (before,
    only the shuffled one, as an unclaimed training loader); the test loader, never read, and a
    tester's loader tested once: silent (fixtures/project/k10b_stored_on_self)."""
    root = FIXTURES / "project" / "k10b_stored_on_self"
    assert _project(root, "DL201") == {
        ("loaders.py", 9, 20, REITERATED.format("train.py:13"), SPLAT_TEST),
        ("loaders.py", 10, 18, REITERATED.format("train.py:13"), SPLAT_TEST),
    }


# -- K15: a loader built by a function the epoch loop calls ----------------------------------
def test_k15_a_loader_built_by_a_function_the_loop_calls_is_dl204():
    """A nested ``run_epoch()`` building its loader (``num_workers=config.num_workers``) and
    iterating it once, called every epoch; a method run through ``self.one_epoch()``; a
    factory whose loader the loop iterates: DL204, no fix, the message names the function and
    the call. Built over what the loop passes or rebinds, under a test of what the loop passes
    (features cached across calls), a function that runs several epochs itself (DL201 there) or
    trains before evaluating once, called outside a loop: no DL204
    (fixtures/DL204/k15_built_by_a_call_in_the_loop.py)."""
    path = FIXTURES / "DL204" / "k15_built_by_a_call_in_the_loop.py"
    message = "DataLoader built in {}(), called at line {} inside a loop: its workers start again on every pass; build it once before the loop"
    assert _single(path, "DL204") == {
        (31, 22, message.format("run_epoch", 36), None),
        (43, 22, message.format("one_epoch", 40), None),
        (80, 16, message.format("make", 83), None),
    }
    assert _single(path, "DL201") == {(69, 18, RESTART, SAFE), (100, 17, RESTART, SAFE)}


def test_k15_a_loader_handed_back_through_functions_to_the_loop_is_dl204():
    """DAAN's shape in one file: ``load_data()`` returns what ``load_testing()`` built (also as a
    tuple element), the epoch loop calls ``load_data()`` and iterates the loader once: DL204 at
    the construction, naming both functions and the looping call. Called once before the loop
    (DL201 instead), handed to a function that iterates it itself (a run per call), built from
    what the loop passes down, zero workers: no DL204
    (fixtures/DL204/k15b_handed_back_through_calls.py)."""
    path = FIXTURES / "DL204" / "k15b_handed_back_through_calls.py"
    message = ("DataLoader built in {}() and handed back by {}(), called at line {} inside a loop: its workers start again"
               " on every pass; build it once before the loop")
    assert _single(path, "DL204") == {
        (14, 19, message.format("load_testing", "load_data", 72), None),
        (24, 12, message.format("make_twice", "make_loaders", 75), None),
    }
    assert _single(path, "DL201") == {(37, 12, RESTART, SAFE)}


def test_k15_a_loader_another_modules_loop_rebuilds_every_pass_is_dl204_where_it_is_built():
    """transferlearning's DAAN across modules: train.py's epoch loop calls ``load_data()``, which
    returns what ``data_loader.load_testing()`` built (``**kwargs`` with one worker under CUDA),
    and ``test()`` iterates it once; a factory called straight in the loop: DL204 in
    data_loader.py, naming the looping call. The factory called once before the loop (DL201
    there), built from what the loop passes, zero workers, a loader iterated by a function the
    loop calls: no DL204 (fixtures/project/k15b_rebuilt_across_modules)."""
    root = FIXTURES / "project" / "k15b_rebuilt_across_modules"
    message = ("DataLoader built in {}(), reached from train.py:{} inside a loop: its workers start again on every pass;"
               " build it once before the loop")
    assert project_findings(root, "DL204") == {
        ("data_loader.py", 9, 19, message.format("load_testing", 26), None),
        ("data_loader.py", 14, 12, message.format("load_direct", 29), None),
    }
    assert {found[:3] for found in project_findings(root, "DL201")} == {("data_loader.py", 18, 12)}


def test_l3_a_module_alias_bound_through_two_star_imports_is_resolved():
    """bat67's semantic segmentation script: ``from nets import *``, nets does ``from blocks import
    *``, blocks does ``import torch.utils.data as data``: ``data.DataLoader`` is torch's (DL201 with
    its fix, DL101 at the module-level epoch loop). A file binding ``data`` itself, a module whose
    ``__all__`` leaves ``data`` out: silent (fixtures/project/l3_star_chain)."""
    root = FIXTURES / "project" / "l3_star_chain"
    assert project_findings(root, "DL201") == {("main.py", 8, 10, RESTART, SAFE)}
    assert project_findings(root, "DL101") == {
        ("main.py", 10, 1, "module-level code starts worker processes without an `if __name__ == \"__main__\":` guard:"
         " spawn workers re-run it", ("unsafe", "Move the script's statements under `if __name__ == \"__main__\":`")),
    }


# -- K12: fit of the project's own subclass; a static method inherited across modules ---------
def test_k12_a_method_called_on_the_construction_itself_is_followed():
    """``MyEnsemble(...).fit(train_loader, epochs=3, test_loader=valid_loader)``, ``fit`` the
    project's override: both loaders reported, fix offered. A method left to the outside base,
    a method iterating once, a name bound to one of two classes: silent
    (fixtures/DL201/k12_method_of_a_construction.py)."""
    assert _single(FIXTURES / "DL201" / "k12_method_of_a_construction.py", "DL201") == {
        (40, 20, RESTART, SAFE),
        (41, 20, RESTART, SAFE),
    }


def test_k12_a_static_method_inherited_from_a_base_in_another_module_is_the_subclass_s():
    """TingsongYu's shape: ``engine.EnsembleTrainer.train_one_epoch(train_loader, model)`` in
    ``fit``'s epoch loop, ``train_one_epoch`` defined on its base ``ModelTrainer``: the loader
    is reported with the one passed to the subclass's own ``evaluate`` (before, only that one).
    A loader handed only to an inherited method that never iterates it: silent
    (fixtures/project/k12_inherited_static)."""
    root = FIXTURES / "project" / "k12_inherited_static"
    assert _project(root, "DL201") == {("train.py", 24, 13, RESTART, SAFE), ("train.py", 25, 13, RESTART, SAFE)}


def test_k12_fix_adds_persistent_workers_and_relints_clean(tmp_path):
    """The fix on the project copy: ``persistent_workers=True`` on both loaders; the result
    re-lints clean and a second fix changes nothing."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(FIXTURES / "project" / "k12_inherited_static", tmp_path / "p")
    root = tmp_path / "p"
    before = "".join(line.split("  # expect")[0] + "\n" for line in (root / "train.py").read_text().splitlines())
    (root / "train.py").write_text(before)  # the markers' comments would make the fixed lines wrap

    def dllint(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "dllint", ".", "--no-cache", "--select", "DL201", "--project-root", ".", *args]
        return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120)

    dllint("--fix")
    fixed = (root / "train.py").read_text()
    assert fixed == before.replace("num_workers=4)", "num_workers=4, persistent_workers=True)", 2)  # train, valid
    again = dllint("--fix")
    assert again.returncode == 0, again.stdout
    assert (root / "train.py").read_text() == fixed
