"""A module-level loader imported by name into another module (issue 32): its passes are the
importers' reads (``from data import train_loader``, ``import data`` then ``data.train_loader``,
``as`` names, re-exports, star imports), through their own functions as a same-file
module-level loader's are. An import that does not resolve to it, or one inside a function,
adds nothing (silent). Fixtures: ``fixtures/project/imported_loader_*``,
``fixtures/fix_project/imported_loader``."""

from __future__ import annotations

import shutil
import subprocess
import sys

from dllint.config import Settings
from dllint.project import ProjectIndex
from tests.conftest import FIXTURES
from tests.project_helpers import lint_in_project, write_tree
from tests.test_fixtures import project_findings
from tests.test_project import check_project

RESTART = "workers restart every epoch (re-iterated by {}): add persistent_workers=True"
SAFE = ("safe", "Add `persistent_workers=True`")

DATA = """\
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(list(range(8)), batch_size=2, num_workers={workers})
"""

EPOCHS = """\
from data import train_loader


def main():
    for epoch in range(1, 10):
        for b in train_loader:
            pass


if __name__ == "__main__":
    main()
"""


def test_the_three_module_shape_is_decided_by_the_pipeline_that_imports_the_loaders():
    """``Data/data.py`` builds the loaders at import time (options splatted from ``{...} if
    args.use_cuda else {}``), ``Pipeline/run.py`` imports them by name and passes over them in
    step functions it never calls itself, ``train.py`` calls those every epoch: both loaders are
    reported, naming the pipeline's pass. The twins stay silent: an importer that passes once,
    and loaders with no workers."""
    root = FIXTURES / "project" / "imported_loader_modules"
    # the fix tests the count the splat holds: right whichever branch of the options ran
    splat = ("safe", 'Add `persistent_workers=loader_options.get("num_workers", 0) > 0`')
    assert project_findings(root, "DL201") == {
        ("epochs/Data/data.py", 10, 14, RESTART.format("epochs/Pipeline/run.py:9"), splat),
        ("epochs/Data/data.py", 11, 16, RESTART.format("epochs/Pipeline/run.py:20"), splat),
    }


def test_every_way_of_importing_the_name_reaches_the_loader():
    """``import loaders`` then ``loaders.batches``, ``from loaders import batches as stream``, a
    package ``__init__`` re-exporting it, ``import feeds.source`` then
    ``feeds.source.batches``, ``from loaders import *``: each fires at the loader; an import
    of a module the project does not hold, or an import inside a function: silent."""
    root = FIXTURES / "project" / "imported_loader_forms"
    found = {(path, line, column) for path, line, column, _, _ in project_findings(root, "DL201")}
    assert found == {
        ("module_import/loaders.py", 6, 11),
        ("alias/loaders.py", 6, 11),
        ("package/feeds/source.py", 6, 11),
        ("dotted/feeds/source.py", 6, 11),
        ("star/loaders.py", 6, 11),
    }


def test_a_sampler_beside_an_imported_loader_is_reshuffled_only_where_the_importer_says(tmp_path):
    """The loader's epochs are the importer's: a ``DistributedSampler`` it feeds is DL301 when
    the importer never calls ``set_epoch``; an importer that calls it on the sampler it imports
    silences it."""
    root = FIXTURES / "project" / "imported_loader_forms"
    assert {(path, line) for path, line, *_ in project_findings(root, "DL301")} == {("sampler/data.py", 7)}


def test_a_loader_the_importer_iterates_once_or_never_is_silent(tmp_path):
    """One pass at the importer's module level, a pass in a function called once there, and an
    importer that only hands the name on to nothing: no finding, and no DL101 for the pass an
    importer makes (it runs in the importer, under its own guard)."""
    write_tree(tmp_path / "module_level", {"data.py": DATA.format(workers=4), "train.py": "from data import train_loader\nfor b in train_loader:\n    pass\n"})
    write_tree(tmp_path / "called_once", {"data.py": DATA.format(workers=4), "train.py": EPOCHS.replace("for epoch in range(1, 10):\n        ", "if True:\n        ")})
    write_tree(tmp_path / "unused", {"data.py": DATA.format(workers=4), "train.py": "from data import train_loader\nprint(len('x'))\n"})
    assert project_findings(tmp_path, "DL201") == set()
    assert project_findings(tmp_path, "DL101") == set()


def test_the_importers_epochs_report_at_the_loader_without_dl101(tmp_path):
    """The brief's minimal shape: reported at ``data.py``'s loader, naming the importer's loop;
    the importer's pass runs under its own main guard, so no DL101 at the loader's module."""
    write_tree(tmp_path, {"data.py": DATA.format(workers=4), "train.py": EPOCHS})
    assert project_findings(tmp_path, "DL201") == {("data.py", 4, 16, RESTART.format("train.py:6"), SAFE)}
    assert project_findings(tmp_path, "DL101") == set()
    write_tree(tmp_path, {"data.py": DATA.format(workers=0)})
    assert project_findings(tmp_path, "DL201") == set()


def test_a_binding_the_importers_never_see_is_not_theirs(tmp_path):
    """A loader bound under the module's main guard (run as a script only), and one a later
    module-level binding always replaces: the importer's epochs are another value's."""
    guarded = DATA.format(workers=4).replace("train_loader = ", 'train_loader = None\nif __name__ == "__main__":\n    train_loader = ')
    replaced = DATA.format(workers=4) + "train_loader = DataLoader(list(range(8)), batch_size=2)\n"
    write_tree(tmp_path / "guarded", {"data.py": guarded, "train.py": EPOCHS})
    write_tree(tmp_path / "replaced", {"data.py": replaced, "train.py": EPOCHS})
    assert project_findings(tmp_path, "DL201") == set()


def test_importers_in_two_scripts_that_each_pass_once_are_one_pass(tmp_path):
    """Two scripts, each passing once over the loader they import (separate runs): the passes
    of different importers join (at most one of them is the run), they do not add up."""
    once = "from data import train_loader\nfor b in train_loader:\n    pass\n"
    write_tree(tmp_path, {"data.py": DATA.format(workers=4), "stats.py": once, "export.py": once})
    assert project_findings(tmp_path, "DL201") == set()


def test_the_importer_is_a_dependency_of_the_loaders_findings(tmp_path, relinted):
    """Cached findings of ``data.py`` follow its importer: an importer that starts passing over
    the loader every epoch brings the finding, and one that stops takes it away."""
    root = tmp_path / "project"
    write_tree(root, {"pyproject.toml": "", "data.py": DATA.format(workers=4), "train.py": "from data import train_loader\nfor b in train_loader:\n    pass\n"})
    cache = tmp_path / "cache"
    assert check_project(root, cache)["data.py"] == []
    relinted.clear()
    write_tree(root, {"train.py": EPOCHS})
    assert check_project(root, cache)["data.py"] == [(4, "DL201")]
    assert sorted(relinted) == ["data.py", "train.py"]
    write_tree(root, {"train.py": "import data\n"})
    assert check_project(root, cache)["data.py"] == []


def test_the_summary_records_what_an_importer_does_with_each_form(tmp_path):
    """``FileSummary.imported``: a name, ``module.name``, a star-bound name; an import inside a
    function is no module-level binding (None)."""
    write_tree(tmp_path, {
        "data.py": DATA.format(workers=4),
        "a.py": EPOCHS,
        "b.py": "import data\nfor epoch in range(3):\n    for b in data.train_loader:\n        pass\n",
        "c.py": "from data import *\nfor b in train_loader:\n    pass\n",
        "d.py": "def main():\n    from data import train_loader\n    for b in train_loader:\n        pass\n",
    })
    index = ProjectIndex(tmp_path, Settings(select=("ALL",)))
    summary = lambda name: index.summaries.summary(str(tmp_path / name))[0]  # noqa: E731
    a, b, c = summary("a.py").imported("train_loader"), summary("b.py").imported("data.train_loader"), summary("c.py").imported("train_loader")
    assert (a.line, a.effects.iterations, a.effects.per_epoch) == (6, 1, True)
    assert (b.line, b.effects.iterations, b.effects.per_epoch) == (3, 1, True)
    assert (c.line, c.effects.iterations, c.effects.per_epoch) == (2, 1, False)
    assert summary("d.py").imported("train_loader") is None
    result = lint_in_project(index, tmp_path / "data.py", Settings(select=("DL201",)))
    assert [(f.line, f.code) for f in result.findings] == [(4, "DL201")]


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_fix_adds_persistent_workers_at_the_imported_loaders(tmp_path):
    """``dllint --fix`` over the project: both loaders of ``data.py`` (one with options
    splatted from a dict literal) get ``persistent_workers=True``; the result lints clean and
    a second fix changes nothing."""
    case = FIXTURES / "fix_project" / "imported_loader"
    for path in (case / "before").iterdir():
        shutil.copy(path, tmp_path / path.name)
    first = _dllint(".", "--no-cache", "--select", "DL201", "--format", "concise", cwd=tmp_path)
    assert first.stdout.splitlines()[:2] == [
        "data.py:7:16: DL201 [*] " + RESTART.format("train.py:10"),
        "data.py:8:15: DL201 [*] " + RESTART.format("train.py:15"),
    ]
    _dllint(".", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert (tmp_path / "data.py").read_text() == (case / "after" / "data.py").read_text()
    assert (tmp_path / "train.py").read_text() == (case / "before" / "train.py").read_text()
    again = _dllint(".", "--no-cache", "--select", "DL201", "--fix", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert (tmp_path / "data.py").read_text() == (case / "after" / "data.py").read_text()


PEEK_THEN_EVALUATE = """\
import data

loader = data.test_loader
for batch in loader:
    print(batch)
    break


def evaluate(model, loader):
    for batch in loader:
        model(batch)


evaluate(print, loader)
"""


def test_an_importers_passes_one_after_another_count_as_in_one_file(tmp_path):
    """A peek at one batch, then an evaluation: two passes in no loop. As in one file, the
    workers start twice (DL201, no loop elsewhere to name), and there is no epoch loop: DL203
    (opt-in, for a loader without workers) stays silent (PyTorch-Computer-Vision-Cookbook's
    ``Chapter09``: a notebook reading ``mydataset.test_dl``)."""
    loader = "from torch.utils.data import DataLoader\ntest_loader = DataLoader(list(range(100)), batch_size=1{})\n"
    write_tree(tmp_path / "workers", {"data.py": loader.format(", num_workers=2"), "nb.py": PEEK_THEN_EVALUATE})
    write_tree(tmp_path / "none", {"data.py": loader.format(""), "nb.py": PEEK_THEN_EVALUATE})
    single = "workers restart every epoch: add persistent_workers=True"
    assert project_findings(tmp_path, "DL201") == {("workers/data.py", 2, 15, single, SAFE)}
    assert project_findings(tmp_path, "DL203") == set()
