"""Flow shapes of issue 32's ninth audit (code no one tuned dllint to): J4, J5, J6, each as a
minimal fixture: the whole finding (position, message, the fix offered) where it fires, and the
twins that must stay silent (values left unknown, shapes that do not line up). Fix fixtures:
fixtures/fix/DL201/j5_constructor_argument and fixtures/fix/DL201/j6_nested_tuples
(tests/test_fix_fixtures.py: before -> after, re-lint clean, a second fix changes nothing)."""

from __future__ import annotations

import textwrap

from dllint.config import Settings
from dllint.engine import Linter
from dllint.facts.flow.model import Passes
from lint_helpers import lint_path
from tests.conftest import FIXTURES
from tests.test_containers import HEAD, counts
from tests.test_fixtures import project_findings

RESTART = "workers restart every epoch: add persistent_workers=True"
NOTEBOOK_CLASS = ("class 'DS' is defined in the notebook, so spawn workers cannot unpickle it (via dataset): move it to a"
                  " .py module and import it")
SET_PERSISTENT = ("safe", "Add `persistent_workers=True`")


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


def _found(result, code: str) -> set[tuple]:
    return {(f.cell, f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == code}


def _project(root, code: str) -> set[tuple]:
    return project_findings(root, code)


# -- J4: a notebook's Dataset class reaching the workers through random_split's pieces --------
def test_j4_the_pieces_of_random_split_carry_the_notebook_class_to_the_workers():
    """Reported at ``DS()``, as where the dataset is handed over directly; joined again by
    ``ConcatDataset`` (a starred target) too. An imported class, no workers, fork, a piece of
    something else: silent (fixtures/DL106/j4_random_split.ipynb)."""
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL106" / "j4_random_split.ipynb"))
    assert _found(result, "DL106") == {(4, 1, 11, NOTEBOOK_CLASS, None), (5, 2, 28, NOTEBOOK_CLASS, None)}


# -- J5: a worker count passed to the constructor reaches __init__'s parameter ------------------
def test_j5_a_constructor_call_passes_init_its_parameters():
    """By keyword and by position; the loader stored on ``self`` followed to ``dls.train``
    iterated every epoch; a class building itself keeps its default (2). Unknown values (read at
    run time, 0 beside one, a splat), a class never built or picked from a dict (default 0), an
    instance iterated once: silent."""
    root = FIXTURES / "project" / "j5_constructor_argument"
    fix = ("safe", "Add `persistent_workers=workers > 0`")  # a parameter: a call may pass 0
    assert _project(root, "DL201") == {
        ("train.py", 24, 22, RESTART, fix),
        ("train.py", 29, 22, RESTART, fix),
        ("train.py", 34, 22, RESTART, fix),
    }


def _project_of(tmp_path, source: str):
    (tmp_path / "train.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return _project(tmp_path, "DL201")


LOADERS = """\
    import os
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    class Loaders:
        def __init__(self, workers={default}):
            self.train = DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, num_workers=workers)

    def fit(dls):
        for epoch in range(3):
            for batch in dls.train:
                pass

    if __name__ == "__main__":
        {calls}
    """


def test_j5_a_constructor_called_twice_with_different_constants_is_as_a_function_called_so(tmp_path):
    # One call passes 2: evidence that the loader may start workers (as for a factory function).
    calls = "fit(Loaders(workers=0))\n        fit(Loaders(workers=2))"
    assert len(_project_of(tmp_path, LOADERS.format(default=0, calls=calls))) == 1


def test_j5_every_construction_passing_0_keeps_the_loader_single_process(tmp_path):
    calls = "fit(Loaders(workers=0))\n        fit(Loaders(0))"
    assert _project_of(tmp_path, LOADERS.format(default=2, calls=calls)) == set()
    assert len(_project_of(tmp_path, LOADERS.format(default=2, calls="fit(Loaders())"))) == 1  # left at 2


def test_a_default_computed_in_the_file_that_every_call_leaves_counts_as_written_in_place(tmp_path):
    """``workers=int(os.cpu_count() / 2)`` (Lightning's basic-gan DataModule built as
    ``MNISTDataModule()``): no call overrides it, so it is read as the expression itself, which may
    be > 0; the same for a factory function."""
    assert len(_project_of(tmp_path, LOADERS.format(default="int(os.cpu_count() / 2)", calls="fit(Loaders())"))) == 1
    factory = """\
        import os
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        def make(workers=int(os.cpu_count() / 2)):
            return DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, num_workers=workers)

        def fit(train):
            for epoch in range(3):
                for batch in train:
                    pass

        if __name__ == "__main__":
            fit(make())
        """
    assert len(_project_of(tmp_path, factory)) == 1


# -- J6: loaders and their iterators returned as nested tuples --------------------------------
def test_j6_nested_tuples_follow_positions_to_the_renewal_on_stop_iteration():
    """``train`` renewed by ``get_batch`` on StopIteration (also read back as ``loaders[0]``);
    ``val``, never renewed, and a starred target: silent."""
    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL201" / "j6_nested_tuples.py"))
    parameter = ("safe", "Add `persistent_workers=num_workers > 0`")  # num_workers a parameter: a call may pass 0
    assert _found(result, "DL201") == {(None, 11, 13, RESTART, parameter), (None, 17, 13, RESTART, SET_PERSISTENT)}


def test_nested_targets_take_the_elements_at_their_positions():
    source = HEAD + textwrap.dedent("""\
        def build(ds):
            a = DataLoader(ds, num_workers=2)
            b = DataLoader(ds, num_workers=2)
            return (a, b), [a]
        def main(ds):
            (x, y), (z,) = build(ds)
            for epoch in range(3):
                list(y)
            list(x)
            list(z)
        """)
    assert counts(source) == {3: Passes.PER_EPOCH, 4: Passes.PER_EPOCH}  # x and z are a: two passes


def test_nested_targets_that_do_not_line_up_claim_nothing():
    # A starred part, a position beyond the target, a part that is no name: which element
    # goes where is not told, so no use is claimed (a loader nobody claims is not re-iterated).
    source = HEAD + textwrap.dedent("""\
        def build(ds):
            a = DataLoader(ds, num_workers=2)
            return (a, a), (a,)
        def main(ds, holder):
            (*x, y), _ = build(ds)
            for epoch in range(3):
                list(y)
        def other(ds, holder):
            (holder.x, _), _ = build(ds)
            for epoch in range(3):
                list(holder.x)
        """)
    assert counts(source) == {3: Passes.NONE}
