"""A file's summary builds only what a question asks for: its facts when a deferred part is
first asked for, each class and function on its own (issue 32's cold run), with the same
answers as before."""

from __future__ import annotations

import ast
import textwrap

import dllint.facts.flow.summary as summary_module
from dllint.config import Settings
from dllint.facts.walk import walk_statements
from dllint.project import summarize

SETTINGS = Settings(select=("ALL",))

MODULE = """\
import torch
from torch.utils.data import DataLoader
from .datasets import make_dataset


class Holder:
    def __init__(self):
        self.device = torch.device("cuda")


class Other(Holder):
    def __init__(self):
        super().__init__()
        self.rng = None


def build(cfg):
    return DataLoader(make_dataset(cfg), num_workers=4)
"""


def _counting(monkeypatch, name: str) -> list[str]:
    """Records each call of ``summary_module.<name>`` (by its second argument's name, if any)."""
    asked: list[str] = []
    original = getattr(summary_module, name)

    def counted(*args):
        asked.append(getattr(args[1], "name", "") if len(args) > 1 else "")
        return original(*args)

    monkeypatch.setattr(summary_module, name, counted)
    return asked


def test_names_and_imports_need_no_facts_and_classes_are_summarized_one_by_one(monkeypatch):
    analysed = []
    original = summary_module._Source._analyse
    monkeypatch.setattr(summary_module._Source, "_analyse", lambda self, tree: analysed.append(self.path) or original(self, tree))
    classes = _counting(monkeypatch, "class_summary")
    summary = summarize("pkg/data.py", MODULE, SETTINGS)
    assert summary.imports == {"make_dataset": "1:datasets.make_dataset"}
    assert list(summary.classes) == ["Holder", "Other"] and "Other" in summary.classes
    assert list(summary.functions) == ["Holder.__init__", "Other.__init__", "build"]
    assert analysed == [] and classes == []
    assert summary.classes["Holder"].devices == {"device": "cuda"}
    assert summary.classes.get("Holder") is summary.classes["Holder"]
    assert classes == ["Holder"] and analysed == ["pkg/data.py"]  # Other was never asked for
    assert summary.classes["Other"].bases == ["Holder"] and classes == ["Holder", "Other"]
    assert analysed == ["pkg/data.py"]  # the facts are kept for the next question


def test_loaders_over_imports_are_found_when_first_asked_for():
    summary = summarize("pkg/data.py", MODULE, SETTINGS)
    [loader] = summary.loaders
    assert (loader.dataset, loader.line, loader.multi_worker, loader.worker_init) == ("1:datasets.make_dataset", 18, True, False)
    assert summary.loaders is summary.loaders


def test_a_class_that_cannot_be_summarized_keeps_only_its_bases(monkeypatch):
    def broken(facts, cls):
        raise RecursionError("too deep")

    monkeypatch.setattr(summary_module, "class_summary", broken)
    summary = summarize("pkg/data.py", MODULE, SETTINGS)
    assert summary.classes["Other"].bases == ["Holder"] and summary.classes["Other"].devices == {}
    assert summary.functions["build"].returns[0].kind == "loader"  # the rest of the file is still known


def test_a_set_epoch_receiver_is_found_for_each_parameter():
    text = textwrap.dedent(
        """
        def fit(loader, sampler, other, epochs):
            for epoch in range(epochs):
                loader.sampler.set_epoch(epoch)
                sampler.set_epoch(epoch)
                other.set_epoch
        """
    )
    fit = summarize("fit.py", text, SETTINGS).functions["fit"]
    assert [fit.effects[name].set_epoch for name in ("loader", "sampler", "other")] == [True, True, True]
    assert "epochs" not in fit.effects or not fit.effects["epochs"].set_epoch
    without = summarize("fit.py", text.replace("set_epoch", "reset"), SETTINGS).functions["fit"]
    assert not any(e.set_epoch for e in without.effects.values())


STATEMENTS = """\
import a
try:
    import b
    x = 1
except ImportError as error:
    import c as b
    def inner():
        import d
else:
    y: int = 2
finally:
    z += 1
match x:
    case 1 if y:
        import e
    case _:
        pass
for i in range(3):
    with open(f) as g:
        import f
else:
    class K:
        import h
        def m(self):
            self.v = lambda: (yield)
while True:
    from . import i
async def run():
    async for j in k:
        import l
    async with m:
        import n
"""


def test_walk_statements_lists_statements_in_the_order_of_ast_walk():
    tree = ast.parse(STATEMENTS)
    statements = [n for n in ast.walk(tree) if isinstance(n, (ast.stmt, ast.excepthandler, ast.match_case))]
    assert [n for n in walk_statements(tree)][1:] == statements
    imports = [n for n in walk_statements(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [a.name for n in imports for a in n.names] == ["a", "b", "i", "c", "e", "f", "h", "l", "n", "d"]  # by depth, as ast.walk
    method = tree.body[3].orelse[0].body[1]
    assert [type(n).__name__ for n in walk_statements(method)] == ["FunctionDef", "Assign"]


def test_a_file_whose_facts_cannot_be_built_is_one_nothing_is_known_of(monkeypatch):
    """The facts are built after the summary is handed out: a bug building them must not fail
    the lint that asks (as before, when the whole summary then came out empty)."""
    tries = []

    def broken(self, tree):
        tries.append(self.path)
        raise RecursionError("too deep")

    monkeypatch.setattr(summary_module._Source, "_analyse", broken)
    summary = summarize("pkg/data.py", MODULE, SETTINGS)
    assert summary.imports == {"make_dataset": "1:datasets.make_dataset"}  # made before the facts
    assert summary.functions["build"].returns == [] and summary.functions["build"].effects == {}
    assert summary.classes["Holder"].devices == {} and summary.loaders == [] and summary.calls == []
    assert tries == ["pkg/data.py"]  # tried once
