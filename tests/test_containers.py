"""Loaders that travel inside tuples and lists: each element is followed on its own."""

from __future__ import annotations

import ast
import textwrap

from dllint.config import Settings
from dllint.facts import FileFacts
from dllint.project import ProjectIndex, summarize
from tests.test_project import lint, write

SETTINGS = Settings(select=("ALL",))


def counts(source: str) -> dict[int, int]:
    """{line of each loader: iteration_count} for one file seen alone."""
    text = textwrap.dedent(source)
    facts = FileFacts("t.py", text, ast.parse(text), SETTINGS)
    return {loader.node.lineno: facts.usage.iteration_count(loader) for loader in facts.loader_calls}


HEAD = "from torch.utils.data import DataLoader\n"


def test_a_for_target_shadows_an_earlier_binding_of_its_name():
    # Before: the loop variable's loads inside the body counted as the second loader's.
    source = HEAD + textwrap.dedent("""\
        def main(ds, names):
            dev = DataLoader(ds, num_workers=2)
            test = DataLoader(ds, num_workers=2)
            for name, test in zip(names, [dev, test]):
                for batch in test:
                    pass
        """)
    assert counts(source) == {3: 1, 4: 1}


def test_each_element_of_a_looped_container_meets_the_loop_once():
    source = HEAD + textwrap.dedent("""\
        def main(ds):
            a = DataLoader(ds, num_workers=2)
            b = DataLoader(ds, num_workers=2)
            for i, dl in enumerate((a, b)):
                list(dl)
            for epoch in range(3):
                for dl in [a]:
                    list(dl)
        """)
    assert counts(source) == {3: 2, 4: 1}


def test_unpacked_and_indexed_elements_are_told_apart():
    source = HEAD + textwrap.dedent("""\
        def run(pair):
            first, second = pair
            for epoch in range(3):
                list(first)
            list(second)

        def main(ds):
            a = DataLoader(ds, num_workers=2)
            b = DataLoader(ds, num_workers=2)
            run([a, b])
            c = DataLoader(ds, num_workers=2)
            d = DataLoader(ds, num_workers=2)
            both = (c, d)
            list(both[1])
            for epoch in range(3):
                list(both[0])
        """)
    assert counts(source) == {9: 2, 10: 1, 12: 2, 13: 1}


def test_an_undecidable_element_is_kept_as_before():
    # pair[i] may be either loader: neither is counted as iterated (nor as claimed).
    source = HEAD + textwrap.dedent("""\
        def main(ds, i):
            pair = [DataLoader(ds, num_workers=2), DataLoader(ds, num_workers=2)]
            for epoch in range(3):
                list(pair[i])
        """)
    text = textwrap.dedent(source)
    facts = FileFacts("t.py", text, ast.parse(text), SETTINGS)
    for loader in facts.loader_calls:
        assert [u.how.value for u in facts.usage.loader_uses(loader)] == ["unclaimed"]


CALLER = """\
from data import build_loaders


def main(ds):
    model, train, val = build_loaders(ds)
    for epoch in range(10):
        for batch in train:
            pass
    for batch in val:
        pass
    for dl in build_loaders(ds):
        list(dl)
"""


def test_summary_records_each_unpacked_element():
    summary = summarize("train.py", CALLER, SETTINGS)
    unpacked, looped = summary.calls
    assert unpacked.elements["1"].per_epoch and unpacked.elements["2"].iterations == 1
    assert not unpacked.elements["2"].per_epoch and unpacked.elements["0"].empty
    assert list(looped.elements) == ["*"] and looped.elements["*"].iterations == 1


def test_summary_records_a_result_returned_as_it_is():
    text = "from .build import build as _build\n\nclass Data:\n    def get(self, cfg):\n        return _build(cfg)\n"
    assert [c.returned_by for c in summarize("d.py", text, SETTINGS).calls] == ["Data.get"]


def test_tuple_elements_followed_through_a_dispatcher_in_another_file(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .build import build_loaders as _build\n\n\ndef build_loaders(ds):\n    return _build(ds)\n",
        "pkg/build.py": HEAD + (
            "\n\ndef build_loaders(ds):\n"
            "    train = DataLoader(ds, num_workers=2)\n"
            "    val = DataLoader(ds, num_workers=2)\n"
            "    return None, train, val\n"
        ),
        "train.py": CALLER.replace("from data", "from pkg"),
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "pkg" / "build.py")
    assert [(f.line, f.code) for f in result.findings if f.code == "DL201"] == [(5, "DL201")]
    assert str(tmp_path / "train.py") in result.deps and str(tmp_path / "pkg" / "__init__.py") in result.deps


def test_two_calls_of_a_factory_build_two_loaders():
    # Each call builds a loader of its own, iterated once; one iterated twice still counts.
    source = HEAD + textwrap.dedent("""\
        def build(ds):
            return DataLoader(ds, num_workers=2), len(ds)

        def make(ds):
            loader = DataLoader(ds, num_workers=2)
            return loader

        def main(ds):
            train, n = build(ds)
            list(train)
            val, n = build(ds)
            list(val)
            a = make(ds)
            list(a)
            b = make(ds)
            list(b)
            list(b)
        """)
    assert counts(source) == {3: 1, 6: 2}


def test_a_with_target_that_rebinds_its_own_argument_is_followed_once():
    # ``with split(inputs) as inputs`` used to recurse until RecursionError while summarizing.
    text = "def f(state, inputs):\n    with state.split(inputs) as inputs:\n        for x in inputs:\n            pass\n"
    summary = summarize("s.py", text, SETTINGS)
    assert "f" in summary.functions
