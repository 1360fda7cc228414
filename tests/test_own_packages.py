"""A package dllint otherwise takes for an outside one (``timm``, ``accelerate``) is the
project's own when it lives in the project: linting timm's repository, ``train.py``'s calls
into ``timm.data`` are followed."""

from __future__ import annotations

from pathlib import Path

from dllint.config import Settings
from dllint.project import ProjectIndex
from tests.project_helpers import lint_in_project

SETTINGS = Settings(select=("DL201",))
FACTORY = """\
from torch.utils.data import DataLoader


def create_loader(dataset, num_workers=4):
    return DataLoader(dataset, num_workers=num_workers)
"""
TRAIN = """\
from timm.data import create_loader

loader = create_loader(dataset)
for epoch in range(10):
    for batch in loader:
        pass
"""


def lint(root: Path, path: Path) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_in_project(ProjectIndex(root, SETTINGS), path, SETTINGS).findings]


def make(root: Path, package: str, init: bool = True) -> Path:
    (root / package / "data").mkdir(parents=True)
    if init:
        (root / package / "__init__.py").write_text("")
        (root / package / "data" / "__init__.py").write_text("from .loader import create_loader\n")
    (root / package / "data" / "loader.py").write_text(FACTORY)
    (root / "train.py").write_text(TRAIN.replace("timm", package))
    return root / package / "data" / "loader.py"


def test_calls_into_the_projects_own_timm_are_followed(tmp_path):
    factory = make(tmp_path, "timm")
    assert ProjectIndex(tmp_path, SETTINGS).files.own_roots == {"timm"}
    assert lint(tmp_path, factory) == [(5, "DL201")]


def test_a_namespace_package_counts_too(tmp_path):
    factory = make(tmp_path, "timm", init=False)
    (tmp_path / "train.py").write_text(TRAIN.replace("from timm.data import", "from timm.data.loader import"))
    assert ProjectIndex(tmp_path, SETTINGS).files.own_roots == {"timm"}
    assert lint(tmp_path, factory) == [(5, "DL201")]


def test_an_outside_timm_is_not_followed(tmp_path):
    factory = make(tmp_path, "mytimm")
    (tmp_path / "train.py").write_text(TRAIN)  # imports the installed timm, not the project's mytimm
    assert ProjectIndex(tmp_path, SETTINGS).files.own_roots == frozenset()
    assert lint(tmp_path, factory) == []


def test_summaries_follow_own_roots(tmp_path):
    """A file's summary records calls into an own package only where it is the project's: the
    same content in a project without it records none."""
    with_timm = tmp_path / "a"
    make(with_timm, "timm")
    train = with_timm / "train.py"
    summary = ProjectIndex(with_timm, SETTINGS).summaries.summary(str(train.resolve()))[0]
    assert [c.target for c in summary.calls] == ["0:timm.data.create_loader"]
    without = tmp_path / "b"
    without.mkdir()
    (without / "train.py").write_text(train.read_text())
    assert ProjectIndex(without, SETTINGS).summaries.summary(str((without / "train.py").resolve()))[0].calls == []
