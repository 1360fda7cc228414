"""Which names may be project DataLoader subclasses, read from the text alone
(:mod:`dllint.project.class_text`), and what a lint answered by them depends on."""

from __future__ import annotations

from pathlib import Path

from project_helpers import lint_in_project, write_tree
from dllint.config import Settings
from dllint.project import ProjectIndex
from dllint.project.class_text import MAX_HEADER, scan
from dllint.deps import LoaderClassesDep

SETTINGS = Settings(select=("ALL",))


def test_a_header_leads_from_every_identifier_of_its_bases_to_the_class():
    found = scan(b"class A(pkg.Base, Mixin, metaclass=Meta):\n    pass\nclass B:\n    pass\n")
    assert found.names == {b"A", b"B"}
    assert {word for word, names in found.leads_to.items() if b"A" in names} == {b"pkg", b"Base", b"Mixin", b"metaclass", b"Meta"}
    assert not any(b"B" in names for names in found.leads_to.values())  # no bases


def test_nested_and_multi_line_bases_are_read_to_their_closing_parenthesis():
    text = b"class A(\n    make(Base)[int],\n    torch.utils.data.DataLoader,\n):\n    pass\n"
    assert scan(text).reached_from({b"DataLoader"}) == {b"DataLoader", b"A"}
    assert scan(b"class A(wrap(x), DataLoader): pass\n").reached_from({b"DataLoader"}) == {b"DataLoader", b"A"}


def test_an_alias_leads_from_the_name_to_the_alias():
    text = b"from torch.utils.data import DataLoader as TorchLoader\nclass Mine(TorchLoader):\n    pass\n"
    assert scan(text).reached_from({b"DataLoader"}) == {b"DataLoader", b"TorchLoader", b"Mine"}


def test_a_header_that_cannot_be_read_to_its_end_counts_as_reached():
    found = scan(b"class Broken(Base, (" + b"x" * MAX_HEADER)
    assert found.unread == {b"Broken"}
    assert b"Broken" in found.reached_from({b"DataLoader"})


def test_names_no_chain_of_headers_leads_to_from_a_loader_are_not_reached():
    text = b"class Model(nn.Module):\n    pass\nclass Head(Model):\n    pass\n# class Loose(DataLoader) in a comment\n"
    found = scan(text)
    assert found.reached_from({b"DataLoader"}) == {b"DataLoader", b"Loose"}  # a comment counts: text alone
    assert {b"Model", b"Head", b"Loose"} <= found.names


# -- in a project ------------------------------------------------------------------------
BASE = """\
from torch.utils.data import DataLoader as TorchLoader


class Base(TorchLoader):
    pass
"""
MODEL = """\
import torch


class Base(torch.nn.Module):
    pass
"""
INIT = "from .base import Base as MaskedDataLoader\n"
TRAIN = """\
from loaders import MaskedDataLoader


def main(dataset, epochs):
    loader = MaskedDataLoader(dataset, num_workers=4)
    for epoch in range(epochs):
        for batch in loader:
            print(batch)
"""


def lint(root: Path, name: str):
    index = ProjectIndex(root, SETTINGS)
    result = lint_in_project(index, root / name, SETTINGS)
    return [(f.line, f.code) for f in result.findings], result.deps, index


def test_a_subclass_reached_through_an_alias_and_a_re_export_is_a_loader(tmp_path):
    write_tree(tmp_path, {"loaders/__init__.py": INIT, "loaders/base.py": BASE, "train.py": TRAIN})
    found, deps, _ = lint(tmp_path, "train.py")
    assert found == [(5, "DL201")]
    assert not any(isinstance(d, LoaderClassesDep) for d in deps)  # decided by the summaries read


def test_a_project_class_that_no_header_leads_to_from_a_loader_is_decided_without_parsing(tmp_path):
    write_tree(tmp_path, {"loaders/__init__.py": INIT, "loaders/base.py": MODEL, "train.py": TRAIN})
    found, deps, index = lint(tmp_path, "train.py")
    assert found == []
    assert index.summarized == 0
    assert [d for d in deps if isinstance(d, LoaderClassesDep)] == [LoaderClassesDep(index.text.loader_class_names()[1])]
    assert deps.asks_callers()  # reconciled with the project before a cached result is trusted


def test_cached_findings_told_no_loader_class_are_relinted_when_a_base_becomes_one(tmp_path, relinted):
    from dllint.pipeline import RunOptions, run

    root = tmp_path / "project"
    write_tree(root, {"pyproject.toml": "", "loaders/__init__.py": INIT, "loaders/base.py": MODEL, "train.py": TRAIN,
                      "other.py": "class Other:\n    pass\n"})

    def check() -> list[tuple[int, str]]:
        outcome = run([str(root)], SETTINGS, RunOptions(jobs=1, cache_dir=str(tmp_path / "cache")))
        return [(f.line, f.code) for o in outcome.files if o.path.endswith("train.py") for f in o.findings]

    assert check() == []
    relinted.clear()
    write_tree(root, {"other.py": "class Other(object):\n    pass\n"})  # the names that may be loaders: the same
    assert check() == [] and relinted == ["other.py"]
    relinted.clear()
    write_tree(root, {"loaders/base.py": BASE})  # train.py never read base.py: the names it was told by changed
    assert check() == [(5, "DL201")]
    assert sorted(relinted) == ["base.py", "train.py"]
