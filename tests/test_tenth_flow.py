"""Flow shapes of issue 32's tenth audit (code no one tuned dllint to), each as a minimal
fixture: the whole finding (position, message, the fix offered) where it fires, and the twins
that must stay silent (values left unknown, callers that disagree, no caller in view).
K10: loader options as a dict literal the callers build, handed to a factory's parameter (or
its ``**kwargs``) and splatted into ``DataLoader``."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import FIXTURES
from tests.test_fixtures import project_findings

RESTART = "workers restart every epoch (re-iterated by {}): add persistent_workers=True"
SAFE = ("safe", "Add `persistent_workers=True`")
# the test of the count the call reads from the dict: right whatever the caller's dict holds
SPLAT_TEST = ("safe", 'Add `persistent_workers=kwargs.get("num_workers", 0) > 0`')


def _fix(finding) -> tuple[str, str] | None:
    return None if finding.fix is None else (finding.fix.applicability, finding.fix.message)


def _project(root, code: str) -> set[tuple]:
    return project_findings(root, code)


# -- K10: a dict of loader options built by the callers, splatted by the factory --------------
def test_k10_the_callers_dict_literal_decides_the_splat():
    """A dict parameter every caller passes the same literal to (also through two calls), one
    per branch of ``{...} if args.cuda else {}`` (num_workers 1 or absent: may be > 0), and one
    dict splatted into the factory's ``**kwargs``. A dict read at run time, callers that
    disagree on ``persistent_workers``, a dict edited in a branch, ``num_workers: 0``, no
    caller: silent (fixtures/project/k10_callers_dict)."""
    root = FIXTURES / "project" / "k10_callers_dict"
    # another file's worker count: whether it is written as a number there is not known, so
    # the fix tests the dict's count (``--workers 0`` must keep working); a dict with 0 workers: silent
    assert _project(root, "DL201") == {
        ("data_loader.py", 9, 12, RESTART.format("train.py:15"), SPLAT_TEST),
        ("data_loader.py", 13, 12, RESTART.format("train.py:17"), SPLAT_TEST),
        ("data_loader.py", 17, 12, RESTART.format("train.py:19"), SPLAT_TEST),
    }


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_k10_fix_adds_persistent_workers_to_the_factory_call(tmp_path):
    """Same file: the one caller's literal has ``num_workers: 1``; the fix adds
    ``persistent_workers=True`` at the factory's call; the result re-lints clean and a second
    fix changes nothing."""
    case = FIXTURES / "fix_project" / "k10_callers_dict"
    shutil.copy(case / "before.py", tmp_path / "t.py")
    first = _dllint("t.py", "--no-cache", "--select", "DL201", "--format", "concise", cwd=tmp_path)
    assert first.stdout.splitlines()[0] == "t.py:6:12: DL201 [*] workers restart every epoch: add persistent_workers=True"
    _dllint("t.py", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()
    again = _dllint("t.py", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "t.py").read_text() == (case / "after.py").read_text()


def test_k10_a_dict_handed_to_a_function_that_is_no_factory_call_stays_unknown(tmp_path):
    """The caller's dict is edited in place after a call of its own (``kw.update(...)`` in a
    branch before the factory is called): the splat stays unknown, silent."""
    (tmp_path / "t.py").write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "def load(kwargs):\n"
        "    return DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, **kwargs)\n"
        "def main(flag):\n"
        "    kw = {'num_workers': 2}\n"
        "    if flag:\n"
        "        kw.update(persistent_workers=True)\n"
        "    loader = load(kw)\n"
        "    for epoch in range(3):\n"
        "        for b in loader:\n"
        "            pass\n",
        encoding="utf-8",
    )
    assert _project(tmp_path, "DL201") == set()


# -- K11: a returned tuple of loaders unpacked into a dict's items ------------------------------
def test_k11_each_unpacked_dict_item_is_followed_to_its_reads():
    """``loaders["src"], loaders["val"] = load_train()`` iterated as ``loaders[phase]`` every
    epoch: both loaders reported (before, only the shuffled one, as an unclaimed training
    loader). An item iterated once, an item never read, a dict made elsewhere: silent
    (fixtures/DL201/k11_tuple_into_dict_items.py; fix: fixtures/fix/DL201/k11_tuple_into_dict_items)."""
    from dllint.config import Settings
    from dllint.engine import Linter
    from lint_helpers import lint_path

    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL201" / "k11_tuple_into_dict_items.py"))
    found = {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == "DL201"}
    message = "workers restart every epoch: add persistent_workers=True"
    assert found == {(9, 13, message, SAFE), (10, 13, message, SAFE)}


# -- K1: dataset state changed every epoch through a loader parameter of another module -------
def test_k1_a_change_the_workers_read_made_in_another_module_keeps_dl201_silent():
    """``loader.dataset.shuffle_mapping()`` (which shuffles ``self.mapping`` in place) and
    ``loader.dataset.mapping = ...`` in ``train(loader)`` of another module, where
    ``__getitem__`` reads ``self.mapping``: silent. A method that changes only what the
    workers never read, an attribute they never read: reported, fix offered. A factory
    returning under ``if train:``: ``create_loader(True)``'s loader (shuffled through
    ``trainloader.dataset`` around ``for batch in trainloader``) silent, ``create_loader(False)``'s
    reported, by that call only (fixtures/project/k1_remote_dataset_change)."""
    root = FIXTURES / "project" / "k1_remote_dataset_change"
    assert _project(root, "DL201") == {
        ("data.py", 37, 12, RESTART.format("train.py:35"), SAFE),
        ("data.py", 41, 12, RESTART.format("train.py:36"), SAFE),
        ("data.py", 47, 12, RESTART.format("factory.py:14"), SAFE),
    }


# -- K6: an iterator renewed on StopIteration while the same loader is iterated inside the step loop
def test_k6_a_pass_inside_the_renewed_iterators_step_loop_withholds_the_fix():
    """``it = iter(loader)`` renewed on ``StopIteration`` in a step loop that also calls
    ``test(loader)``: reported without a fix, the message says why. Another loader evaluated,
    the evaluation after the step loop: the fix is offered (fixtures/DL201/k6_renewed_iterator_reentered.py).
    With ``persistent_workers=True`` already set, DL306 reports the inner pass
    (fixtures/DL306/k6_renewed_iterator_reentered.py)."""
    from dllint.config import Settings
    from dllint.engine import Linter
    from lint_helpers import lint_path

    linter = Linter(Settings(select=("ALL",)))
    result = lint_path(linter, str(FIXTURES / "DL201" / "k6_renewed_iterator_reentered.py"))
    found = {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == "DL201"}
    no_fix = ("workers restart every epoch; no fix: the loader is iterated again (line 9, through the call at line 22)"
              " inside its own pass: with persistent workers that would reset the outer pass at line 19; give the"
              " inner pass a loader of its own")
    plain = "workers restart every epoch: add persistent_workers=True"
    bare = no_fix.replace("line 22", "line 61").replace("line 19", "line 58")  # a bare ``except:`` renews it too
    assert found == {(13, 14, no_fix, None), (26, 14, plain, SAFE), (39, 14, plain, SAFE), (52, 14, bare, None)}
    result = lint_path(linter, str(FIXTURES / "DL306" / "k6_renewed_iterator_reentered.py"))
    assert [(f.line, f.column, f.message) for f in result.findings if f.code == "DL306"] == [
        (8, 43, "the loader is iterated again (line 8, through the call at line 21) inside its own pass: with persistent"
                " workers that resets the outer pass at line 18; give the inner pass a loader of its own")
    ]


# -- K5: a method of an object whose name is rebound in one block -----------------------------
def test_k5_the_binding_that_reaches_the_method_call_tells_the_class():
    """``res = make_models(); res = Results()`` then ``res.evaluate(loader)`` every epoch:
    reported. The last binding no class of this file, a binding in a branch: silent
    (fixtures/DL201/k5_rebound_instance.py)."""
    from dllint.config import Settings
    from dllint.engine import Linter
    from lint_helpers import lint_path

    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL201" / "k5_rebound_instance.py"))
    found = {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == "DL201"}
    assert found == {(40, 13, "workers restart every epoch: add persistent_workers=True", SAFE)}


# -- K8: a loader bound into functools.partial ---------------------------------------------------
def test_k8_each_call_of_a_partial_hands_its_function_the_loader():
    """``eval_fn = partial(evaluate, loader=loader)`` called every 10 steps, and a positional
    partial called every epoch: reported. Called once, handed on to unknown code: silent
    (fixtures/DL201/k8_partial_bound_loader.py)."""
    from dllint.config import Settings
    from dllint.engine import Linter
    from lint_helpers import lint_path

    result = lint_path(Linter(Settings(select=("ALL",))), str(FIXTURES / "DL201" / "k8_partial_bound_loader.py"))
    found = {(f.line, f.column, f.message, _fix(f)) for f in result.findings if f.code == "DL201"}
    message = "workers restart every epoch: add persistent_workers=True"
    assert found == {(15, 14, message, SAFE), (23, 14, message, SAFE)}
