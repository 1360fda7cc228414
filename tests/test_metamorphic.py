"""Metamorphic tests (issue 32): refactorings that must not change a finding, and edits that
must, applied to every fixture that fires.

A finding is about code, not about which folders happen to be linted together or what a
function is called. Each transformation below rewrites a fixture (or a project fixture) in a
temporary project and compares its findings, positions mapped, with the same fixture linted
as a project of its own:

- ``namesakes``: an unrelated module defines every module-level function and class name of
  the fixture again, and calls each with other arguments (``num_workers=8``);
- ``copies``: the whole project copied into two sibling folders, their parent linted;
- ``renamed``: every module-level function renamed, with its calls (columns mapped);
- ``nested``: the project moved two folders down, behind a ``sys.path.insert`` of a path built
  from ``__file__`` in the script that runs it.

The moves that need a shape of their own (a factory moved to another module and imported in
each way Python allows, the dataset's ``__init__`` moved into a mixin of another module, the
epoch loop moved into a base class's method) are templates at the end, each with an edit that
must change the finding (a caller passing ``num_workers=0`` changed to 2).
"""

from __future__ import annotations

import ast
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.per_file import lint as lint_file
from dllint.project import ProjectIndex
from tests.conftest import FIXTURES, expected_findings

SETTINGS = Settings(select=("ALL",))
SINGLE = sorted(p for p in FIXTURES.glob("DL[0-9][0-9][0-9]/*.py") if expected_findings(p.read_text("utf-8", "replace")))
PROJECTS = sorted(p for p in (FIXTURES / "project").iterdir() if p.is_dir())
SUFFIX = "_mm"

Found = set[tuple[str, int, int, str]]  # (path relative to the project, line, column, code)


def lint_tree(root: Path, only: Path | None = None) -> Found:
    """Every finding of the ``.py`` files under ``only`` (default: all), linted as one project
    rooted at ``root``."""
    index = ProjectIndex(root, SETTINGS)
    linter = Linter(SETTINGS)
    found: Found = set()
    for path in sorted((only or root).rglob("*.py")):
        result = lint_file(linter, str(path), path.read_bytes(), index.view(str(path)))
        assert not result.errors, result.errors
        found |= {(path.relative_to(only or root).as_posix(), f.line, f.column, f.code) for f in result.findings}
    return found


def module_names(sources: list[str]) -> tuple[set[str], set[str]]:
    """(functions, classes) defined at module level in any of ``sources``."""
    functions: set[str] = set()
    classes: set[str] = set()
    for source in sources:
        try:
            body = ast.parse(source).body
        except SyntaxError:  # (DL000's fixtures)
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.add(node.name)
            elif isinstance(node, ast.ClassDef):
                classes.add(node.name)
    return functions, classes


def namesakes(functions: set[str], classes: set[str]) -> str:
    """A module that defines the same names and calls each with arguments of its own."""
    lines = ["# Namesakes: nothing here is imported by the project's other files.", ""]
    for name in sorted(functions):
        lines += [f"def {name}(*args, **kwargs):", "    return None", ""]
    for name in sorted(classes):
        lines += [f"class {name}:", "    def __init__(self, *args, **kwargs):", "        pass", ""]
    lines += ["def _uses():"]
    lines += [f"    {name}(1, 2, num_workers=8, persistent_workers=False)" for name in sorted(functions | classes)] or ["    pass"]
    return "\n".join(lines) + "\n"


def copy_single(path: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    target = into / path.name
    shutil.copyfile(path, target)
    return target


_ALONE: dict[Path, frozenset[tuple[str, int, int, str]]] = {}


def fires_alone(fixture: Path, tmp_path: Path) -> frozenset[tuple[str, int, int, str]]:
    """The findings of ``fixture`` (a file, or a project folder) copied alone into ``tmp_path``
    and linted as its own project: the reference every transformation of it is compared with.
    Computed once per fixture for the module (the transformations of one fixture share it);
    positions are relative to the copy, so they do not depend on where it was made."""
    if fixture not in _ALONE:
        if fixture.is_dir():
            copy = tmp_path / "alone" / "project"
            shutil.copytree(fixture, copy)
        else:
            copy = copy_single(fixture, tmp_path / "alone").parent
        _ALONE[fixture] = frozenset(lint_tree(copy))
    return _ALONE[fixture]


# -- single-file fixtures ------------------------------------------------------------------
@pytest.mark.parametrize("path", SINGLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_namesake_module_beside_a_fixture_changes_nothing(path, tmp_path):
    alone = fires_alone(path, tmp_path)
    assert alone, "the fixture fires"
    root = tmp_path / "beside"
    copy_single(path, root)
    source = path.read_text("utf-8", "replace")
    (root / "zz_namesakes.py").write_text(namesakes(*module_names([source])))
    assert {f for f in lint_tree(root) if f[0] == path.name} == alone


@pytest.mark.parametrize("path", SINGLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_fixture_copied_into_two_sibling_folders_fires_the_same_in_each(path, tmp_path):
    alone = fires_alone(path, tmp_path)
    parent = tmp_path / "parent"
    for copy in ("chapter1", "chapter2"):
        copy_single(path, parent / copy)
    for copy in ("chapter1", "chapter2"):
        assert lint_tree(parent, parent / copy) == alone, copy


@pytest.mark.parametrize("path", SINGLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_renaming_a_fixtures_functions_and_their_calls_moves_no_finding(path, tmp_path):
    source = path.read_text("utf-8", "replace")
    functions = renameable(module_names([source])[0])
    if not functions:
        pytest.skip("no module-level function to rename")
    alone = fires_alone(path, tmp_path)
    root = tmp_path / "renamed"
    root.mkdir()
    (root / path.name).write_text(rename(source, functions))
    assert lint_tree(root) == {(f, line, shifted(source, functions, line, column), code) for f, line, column, code in alone}


# Names the rule catalog gives a meaning of their own (framework hooks, a script's entry point,
# evaluation by its name): renaming one changes what the code is, not how it is spelt.
MEANINGFUL = re.compile(r"^(?:main|.*dataloader.*|.*_step|setup|prepare_data|on_.*|.*(?:eval|valid|test|predict|infer).*|train|fit|forward|__\w+__)$")


def renameable(functions: set[str]) -> set[str]:
    return {name for name in functions if not MEANINGFUL.match(name)}


def _word(names: set[str]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")


def rename(source: str, names: set[str]) -> str:
    return _word(names).sub(lambda m: m.group(1) + SUFFIX, source)


def shifted(source: str, names: set[str], line: int, column: int) -> int:
    """The column a finding at (line, column) of ``source`` moves to once ``names`` are renamed."""
    text = source.splitlines()[line - 1]
    before = [m for m in _word(names).finditer(text) if m.end() < column]
    return column + len(SUFFIX) * len(before)


# -- project fixtures ----------------------------------------------------------------------
@pytest.mark.parametrize("root", PROJECTS, ids=lambda p: p.name)
def test_a_namesake_module_in_a_project_changes_nothing(root, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(root, project)
    alone = fires_alone(root, tmp_path)
    sources = [p.read_text() for p in project.rglob("*.py")]
    (project / "zz_namesakes.py").write_text(namesakes(*module_names(sources)))
    assert {f for f in lint_tree(project) if f[0] != "zz_namesakes.py"} == alone


@pytest.mark.parametrize("root", PROJECTS, ids=lambda p: p.name)
def test_a_project_copied_into_two_sibling_folders_fires_the_same_in_each(root, tmp_path):
    alone = fires_alone(root, tmp_path)
    parent = tmp_path / "parent"
    for copy in ("recipe_a", "recipe_b"):
        shutil.copytree(root, parent / copy)
    for copy in ("recipe_a", "recipe_b"):
        assert lint_tree(parent, parent / copy) == alone, copy


@pytest.mark.parametrize("root", PROJECTS, ids=lambda p: p.name)
def test_a_project_behind_a_sys_path_insert_fires_the_same(root, tmp_path):
    alone = fires_alone(root, tmp_path)
    outer = tmp_path / "outer"
    shutil.copytree(root, outer / "third_party" / "proj")
    (outer / "run.py").write_text(
        "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'third_party', 'proj'))\n"
    )
    assert lint_tree(outer, outer / "third_party" / "proj") == alone


# -- moves that need a shape of their own ---------------------------------------------------
FACTORY = """\
from torch.utils.data import DataLoader


def make(dataset, workers=0):
    return DataLoader(dataset, batch_size=8, num_workers=workers)
"""

CALLER = """\
{imports}


def main(dataset):
    loader = {call}(dataset, workers={workers})
    for epoch in range(10):
        for batch in loader:
            pass
"""

IMPORTS = {
    "absolute": ("from helpers import make", "make"),
    "module": ("import helpers", "helpers.make"),
    "module as": ("import helpers as h", "h.make"),
    "from as": ("from helpers import make as build", "build"),
    "star": ("from helpers import *", "make"),
}


def factory_project(root: Path, imports: str, call: str, workers: int, package: bool = False) -> Path:
    """The factory in ``helpers.py``, its one caller in ``train.py`` (in package ``pkg`` with a
    relative import when ``package``), and a namesake ``make`` in an unrelated module."""
    folder = root / "pkg" if package else root
    folder.mkdir(parents=True, exist_ok=True)
    if package:
        (folder / "__init__.py").write_text("")
    (folder / "helpers.py").write_text(FACTORY)
    (folder / "train.py").write_text(CALLER.format(imports=imports, call=call, workers=workers))
    (root / "tools.py").write_text("def make(dataset, workers=8):\n    return dataset\n\n\nmake([], workers=16)\n")
    return folder / "helpers.py"


@pytest.mark.parametrize("how", [*IMPORTS, "relative"])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_factory_moved_to_another_module_is_judged_by_its_one_caller_however_imported(how, workers, tmp_path):
    imports, call = IMPORTS.get(how, ("from .helpers import make", "make"))
    helpers = factory_project(tmp_path, imports, call, workers, package=how == "relative")
    found = {(line, column, code) for path, line, column, code in lint_tree(tmp_path) if path.endswith("helpers.py") and code == "DL201"}
    # The edit that must change the finding: the one caller's num_workers=0 changed to 2.
    assert found == ({(5, 12, "DL201")} if workers else set()), helpers


MIXIN = """\
import numpy as np


class AugmentMixin:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
"""

DATASET = """\
from torch.utils.data import DataLoader, Dataset
{imports}


class Crops({bases}):
{init}
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return self.rng.random()


loader = DataLoader(Crops(), batch_size=4, num_workers={workers})
"""

OWN_INIT = "    def __init__(self, seed=0):\n        self.rng = np.random.default_rng(seed)\n"


@pytest.mark.parametrize("workers", [0, 2])
def test_a_generator_stored_by_a_mixin_of_another_module_is_dl304_as_if_written_in_the_class(workers, tmp_path):
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "data.py").write_text(DATASET.format(imports="import numpy as np", bases="Dataset", init=OWN_INIT, workers=workers))
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "augment.py").write_text(MIXIN)
    (tmp_path / "mixed" / "data.py").write_text(
        DATASET.format(imports="from augment import AugmentMixin", bases="AugmentMixin, Dataset", init="", workers=workers)
    )
    own = {code for _, _, _, code in lint_tree(tmp_path, tmp_path / "own")}
    mixed = {(path, code) for path, _, _, code in lint_tree(tmp_path, tmp_path / "mixed")}
    assert ("DL304" in own) == bool(workers)
    assert (("data.py", "DL304") in mixed) == bool(workers)  # reported at the base in the class header


BASE_TRAINER = """\
class BaseTrainer:
    def __init__(self, loader):
        self.loader = loader

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.step(batch)

    def step(self, batch):
        pass
"""

TRAINER = """\
from torch.utils.data import DataLoader
{imports}


class Trainer({bases}):
{body}

def main(dataset):
    loader = DataLoader(dataset, batch_size=8, num_workers={workers})
    Trainer(loader).fit(10)
"""


@pytest.mark.parametrize("workers", [0, 2])
def test_an_epoch_loop_moved_into_a_base_class_of_another_module_still_re_iterates(workers, tmp_path):
    own_body = textwrap.indent(BASE_TRAINER.split("\n", 1)[1], "")
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "train.py").write_text(TRAINER.format(imports="", bases="", body=own_body, workers=workers))
    (tmp_path / "based").mkdir()
    (tmp_path / "based" / "base.py").write_text(BASE_TRAINER)
    (tmp_path / "based" / "train.py").write_text(
        TRAINER.format(imports="from base import BaseTrainer", bases="BaseTrainer", body="    pass\n", workers=workers)
    )
    own = {(line, code) for _, line, _, code in lint_tree(tmp_path, tmp_path / "own") if code == "DL201"}
    based = {(line, code) for _, line, _, code in lint_tree(tmp_path, tmp_path / "based") if code == "DL201"}
    assert own == ({(19, "DL201")} if workers else set())
    assert based == ({(10, "DL201")} if workers else set())


SCRIPT = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

pairs = TensorDataset(torch.randn(32, 3), torch.randn(32, 1))
loader = DataLoader(pairs, batch_size=4, shuffle=True, num_workers={workers})


def fit(net, opt):
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(net(x), y).backward()
            opt.step()


if __name__ == "__main__":
    net = torch.nn.Linear(3, 1)
    fit(net, torch.optim.SGD(net.parameters(), lr=0.1))
"""
LOADER_LINE = 5  # the module-level loader of SCRIPT; what follows it moves to the importer

MOVED_IMPORTS = {
    "from": ("from data import loader", "loader"),
    "from as": ("from data import loader as batches", "batches"),
    "module": ("import data", "data.loader"),
}


@pytest.mark.parametrize("how", MOVED_IMPORTS)
@pytest.mark.parametrize("workers", [0, 2])
def test_a_module_level_loader_moved_to_another_module_and_imported_fires_the_same(how, workers, tmp_path):
    """The script's loader (and what it is built from) moved into ``data.py``; the script imports
    it and keeps everything after it: the finding stays, at the same line and column of the
    new module (which keeps the moved lines where they were)."""
    source = SCRIPT.format(workers=workers)
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "train.py").write_text(source)
    alone = {(line, column, code) for _, line, column, code in lint_tree(tmp_path / "alone") if code == "DL201"}
    imports, name = MOVED_IMPORTS[how]
    lines = source.splitlines(keepends=True)
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "data.py").write_text("".join(lines[:LOADER_LINE]))
    rest = re.sub(r"\bloader\b", name, "".join(lines[LOADER_LINE:]))
    (tmp_path / "moved" / "train.py").write_text(f"import torch\n{imports}\n{rest}")
    moved = lint_tree(tmp_path / "moved")
    assert {(line, column, code) for path, line, column, code in moved if path == "data.py" and code == "DL201"} == alone
    assert not any(path == "train.py" and code == "DL201" for path, _, _, code in moved)
    # The edit that must change the finding: num_workers=0 changed to 2.
    assert alone == ({(LOADER_LINE, 10, "DL201")} if workers else set())
