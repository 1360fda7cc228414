"""Values and passes of issue 32's tenth audit, second top-up (B3, B5, L1 through a name, B2),
each as a minimal fixture of our own: the whole finding (position, message, the fix offered)
where it fires, and the twins that must stay silent, among them values the engine cannot
decide (unknown is silent)."""

from __future__ import annotations

from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_fixtures import project_findings

RESTART = "workers restart every epoch: add persistent_workers=True"
BY_HOOK = "workers restart every epoch (re-iterated by the framework calling {}()): add persistent_workers=True"


def _safe(expression: str) -> tuple[str, str]:
    return ("safe", f"Add `persistent_workers={expression}`")


def _single(path, code: str) -> set[tuple]:
    """``code``'s whole findings in one file linted alone: (line, column, message, fix)."""
    result = lint_path(Linter(Settings(select=("ALL",))), str(path))
    return {(f.line, f.column, f.message, None if f.fix is None else (f.fix.applicability, f.fix.message)) for f in result.findings if f.code == code}


# -- B3: self.num_workers from __init__'s parameter, per class ---------------------------------
def test_b3_each_class_reads_its_own_stored_worker_count():
    """dl-fundamentals' ``shared_utilities.py``: DataModules of one file each store
    ``self.num_workers`` from their own ``__init__``. Before, the second store of the name in
    the file made every read unknown ("may be > 0"): DL201 on all of them. Now each read is its
    own class's value: constructions that leave the default 0, a class nothing constructs
    (default 0), a ``**`` splat or a class handed to ``LightningCLI`` (unknown): silent; a
    construction passing 4, a default of 2, a subclass storing 4: reported, with the fix that
    tests the count. A construction in a file whose summary does not read it (an instance that
    only shows a batch) leaves the count unknown beside the default, not the default; beside a
    construction passing 4 it is still reported (fixtures/project/b3_datamodule_defaults)."""
    root = FIXTURES / "project" / "b3_datamodule_defaults"
    assert project_findings(root, "DL201") == {
        ("plain.py", 26, 18, RESTART, _safe("self.num_workers > 0")),
        ("plain.py", 37, 18, RESTART, _safe("self.workers > 0")),
        ("shared.py", 41, 16, BY_HOOK.format("train_dataloader"), _safe("self.num_workers > 0")),
        ("shared.py", 44, 16, BY_HOOK.format("val_dataloader"), _safe("self.num_workers > 0")),
        ("shared.py", 87, 16, BY_HOOK.format("train_dataloader"), _safe("self.num_workers > 0")),
    }


def test_b3_a_construction_passing_workers_elsewhere_makes_the_class_multi_worker(tmp_path):
    """The same DataModule as the silent one, constructed in another file with
    ``num_workers=4``: reported on both per-epoch hooks; with ``num_workers=0`` passed: silent."""
    source = (FIXTURES / "project" / "b3_datamodule_defaults" / "shared.py").read_text()
    (tmp_path / "shared.py").write_text(source)
    script = "import lightning as L\nfrom shared import MnistDataModule\n\nL.Trainer().fit(None, datamodule=MnistDataModule(num_workers={}))\n"
    (tmp_path / "run.py").write_text(script.format(4))
    found = {(path, line) for path, line, *_ in project_findings(tmp_path, "DL201")}
    assert {("shared.py", 27), ("shared.py", 30)} <= found
    (tmp_path / "run.py").write_text(script.format(0))
    found = {(path, line) for path, line, *_ in project_findings(tmp_path, "DL201")}
    assert not {("shared.py", 27), ("shared.py", 30)} & found


# -- B5: a loader name rebound under a flag bound to True -----------------------------------
def test_b5_a_loader_replaced_under_a_true_flag_is_never_iterated():
    """Lhy 2021 HW13: ``train_loader`` (2 workers) rebound under ``if do_semi:`` with ``do_semi
    = True`` before ``main()`` (or a module-level epoch loop) iterates the name: only the rebound
    loader, without workers, is iterated: silent. A flag bound to ``False``, a flag computed at
    run time, a command-line option, a name bound twice, or a call of the iterating function
    before the rebinding: reported, with the fix (fixtures/DL201/b5_*.py)."""
    fixtures = FIXTURES / "DL201"
    safe = _safe("True")
    assert _single(fixtures / "b5_rebound_under_a_constant_flag.py", "DL201") == {
        (15, 16, RESTART, safe), (16, 16, RESTART, safe), (17, 16, RESTART, safe), (18, 17, RESTART, safe),
    }
    assert _single(fixtures / "b5_rebound_before_a_module_loop.py", "DL201") == {(14, 19, RESTART, safe)}


def test_b5_a_lambda_only_in_a_replaced_loader_never_reaches_workers():
    """The dataset's ``loader=lambda ...`` goes to the 2-worker loader that ``if do_semi:``
    replaces before any read, and to the rebound loader without workers: silent. The lambdas of
    the iterated 2-worker loaders (one iterated before its name is rebound): reported, with the
    hoisting fix
    (fixtures/DL102/b5_lambda_in_a_replaced_loader.py)."""
    message = "lambda passed to workers (via dataset) cannot be pickled under spawn: use a module-level def"
    hoist = ("safe", "Hoist the lambda to a module-level function")
    assert _single(FIXTURES / "DL102" / "b5_lambda_in_a_replaced_loader.py", "DL102") == {
        (23, 31, message, hoist), (25, 31, message, hoist),
    }


# -- L1 through a name: the epoch count bound to 1 --------------------------------------------
def test_l1n_a_loop_counted_by_a_name_bound_to_one_makes_one_pass():
    """``num_epochs = 1; for epoch in range(num_epochs):`` (also a module-level name) and
    ``for e, epoch in enumerate(range(config["n_epoch"]))`` with ``config = {"n_epoch": 1}``:
    one trip, one pass: silent. A count of 2, a name bound twice, a command-line option or a
    parameter defaulting to 1, a dict changed after it is built, a computed key: reported, with
    the fix (fixtures/DL201/l1n_one_trip_through_a_name.py)."""
    safe = _safe("True")
    assert _single(FIXTURES / "DL201" / "l1n_one_trip_through_a_name.py", "DL201") == {
        (17, 7, RESTART, safe), (18, 11, RESTART, safe), (19, 10, RESTART, safe),
        (20, 13, RESTART, safe), (21, 11, RESTART, safe), (22, 12, RESTART, safe),
    }


def test_l1n_the_count_in_the_callers_file_decides_a_factorys_loader(tmp_path):
    """A factory's loader iterated in another file's loop of ``range(n_epochs)``: with
    ``n_epochs = 1`` one pass (silent); with ``n_epochs = 3`` reported at the factory, naming
    the caller."""
    (tmp_path / "loaders.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def make():\n    return DataLoader(TensorDataset(torch.arange(8.0)), batch_size=2, num_workers=2)\n"
    )
    script = "from loaders import make\n\n\ndef main():\n    n_epochs = {}\n    loader = make()\n" \
             "    for epoch in range(n_epochs):\n        for (x,) in loader:\n            x.sum()\n"
    (tmp_path / "train.py").write_text(script.format(1))
    assert project_findings(tmp_path, "DL201") == set()
    (tmp_path / "train.py").write_text(script.format(3))
    reiterated = "workers restart every epoch (re-iterated by train.py:6): add persistent_workers=True"
    assert project_findings(tmp_path, "DL201") == {("loaders.py", 6, 12, reiterated, _safe("True"))}


# -- B2: a factory's loader checked once before the epoch loop, then every epoch ---------------
def test_b2_a_helper_run_before_the_loop_and_in_it_iterates_per_epoch():
    """hysts' ``validate(0, ...)`` under ``val_first``, then every ``val_period`` epochs, on a
    loader from another module's factory: the caller's summary folds a pass outside the loop
    and passes inside it (before, the second reach of the helper's one ``for`` was dropped as a
    duplicate, and the loop with it): reported at the factory, naming the caller, with the fix.
    Handed to the helper once, or in both arms of an ``if``: one pass, silent
    (fixtures/project/b2_checked_before_the_loop)."""
    root = FIXTURES / "project" / "b2_checked_before_the_loop"
    reiterated = "workers restart every epoch (re-iterated by train.py:12): add persistent_workers=True"
    assert project_findings(root, "DL201") == {("loaders.py", 10, 12, reiterated, _safe("True"))}


def test_b2_a_distributed_sampler_read_only_by_evaluation_passes_elsewhere_needs_no_set_epoch():
    """The same shape with shuffling ``DistributedSampler``s (hysts' ``val_sampler``): the
    validation loader, now counted per epoch in the caller, is evaluated there under
    ``torch.no_grad()`` on every pass: its order does not matter, so DL301 stays silent for its
    sampler (the caller's summary records that every pass is an evaluation pass); the train
    loader's sampler is reported, without a fix (the epoch loop is in the other file). Both
    loaders: DL201 (fixtures/project/b2_evaluation_sampler)."""
    root = FIXTURES / "project" / "b2_evaluation_sampler"
    repeats = "DistributedSampler without set_epoch(): every epoch repeats the same order; call sampler.set_epoch(epoch) at the start of each epoch"
    assert project_findings(root, "DL301") == {("loaders.py", 15, 21, repeats, None)}
    reiterated = "workers restart every epoch (re-iterated by train.py:24): add persistent_workers=True"
    assert project_findings(root, "DL201") == {
        ("loaders.py", 17, 20, reiterated, _safe("True")), ("loaders.py", 18, 18, reiterated, _safe("True")),
    }
