"""Loaders kept in dicts under constant string keys: each entry is followed on its own."""

from __future__ import annotations

import ast
import textwrap

from dllint.facts.flow.model import How
from dllint.config import Settings
from dllint.facts import FileFacts
from dllint.project import ProjectIndex, summarize
from tests.test_containers import HEAD, counts
from tests.test_project import lint, write

SETTINGS = Settings(select=("ALL",))


def hows(source: str) -> dict[int, list[str]]:
    text = textwrap.dedent(source)
    facts = FileFacts("t.py", text, ast.parse(text), SETTINGS)
    return {loader.node.lineno: [u.kind.value if u.how is How.HERE else u.how.value for u in facts.usage.loader_uses(loader)] for loader in facts.loader_calls}


def test_entries_stored_by_key_are_told_apart():
    source = HEAD + textwrap.dedent("""\
        def main(ds):
            data = {}
            data["train"] = DataLoader(ds, num_workers=2)
            data["val"] = DataLoader(ds, num_workers=2)
            for epoch in range(3):
                list(data["train"])
            list(data.get("val"))
        """)
    assert counts(source) == {4: 2, 5: 1}


def test_a_dict_display_entry_is_followed_through_its_return():
    source = HEAD + textwrap.dedent("""\
        def build(ds):
            return {
                "train": DataLoader(ds, num_workers=2),
                "val": DataLoader(ds, num_workers=2),
            }

        def main(ds):
            loaders = build(ds)
            for epoch in range(3):
                for batch in loaders["train"]:
                    pass
            for batch in loaders["val"]:
                pass
        """)
    assert counts(source) == {4: 2, 5: 1}


def test_values_and_items_loops_meet_each_entry_once_per_pass():
    source = HEAD + textwrap.dedent("""\
        def once(ds):
            d = {"a": DataLoader(ds, num_workers=2)}
            for name, dl in d.items():
                list(dl)

        def per_epoch(ds):
            d = {"a": DataLoader(ds, num_workers=2)}
            for epoch in range(3):
                for dl in d.values():
                    list(dl)
        """)
    assert counts(source) == {3: 1, 8: 2}


def test_looping_over_the_dict_itself_gives_keys_not_loaders():
    source = HEAD + textwrap.dedent("""\
        def main(ds):
            d = {"a": DataLoader(ds, num_workers=2)}
            for epoch in range(3):
                for name in d:
                    print(name)
                    if "a" in d:
                        pass
            list(d["a"])
        """)
    assert counts(source) == {3: 1}


def test_undecidable_dict_uses_stay_unclaimed():
    # A key that is not a constant, update(), a **splat after the entry, a dict that came in as
    # a parameter, a store again under the same key: which loader is read cannot be told.
    source = HEAD + textwrap.dedent("""\
        def by_name(ds, k):
            d = {"a": DataLoader(ds, num_workers=2)}
            for epoch in range(3):
                list(d[k])

        def updated(ds, other):
            d = {"a": DataLoader(ds, num_workers=2)}
            d.update(other)
            for epoch in range(3):
                list(d["a"])

        def splat(ds, other):
            d = {"a": DataLoader(ds, num_workers=2), **other}
            for epoch in range(3):
                list(d["a"])

        def into_a_parameter(ds, d):
            d["a"] = DataLoader(ds, num_workers=2)
            for epoch in range(3):
                list(d["a"])

        def stored_twice(ds):
            d = {}
            d["a"] = DataLoader(ds, num_workers=2)
            d["a"] = DataLoader(ds, num_workers=0)
            for epoch in range(3):
                list(d["a"])
        """)
    found = hows(source)
    assert all(uses == ["unclaimed"] for line, uses in found.items() if line != 26), found


def test_a_record_inside_a_dict_is_followed_to_its_field():
    source = HEAD + textwrap.dedent("""\
        from dataclasses import dataclass

        @dataclass
        class Info:
            dataloader: DataLoader

        def get(ds):
            loader = DataLoader(ds, num_workers=2)
            return Info(dataloader=loader)

        def main(ds):
            data = {}
            data["val"] = get(ds)
            for epoch in range(3):
                list(data["val"].dataloader)
        """)
    assert counts(source) == {9: 2}


def test_a_dict_returned_by_a_train_hook_is_iterated_each_epoch():
    source = HEAD + textwrap.dedent("""\
        from lightning.pytorch import LightningModule

        class Model(LightningModule):
            def train_dataloader(self):
                return {"a": DataLoader(self.ds, num_workers=2)}

            def test_dataloader(self):
                return {"a": DataLoader(self.ds, num_workers=2)}
        """)
    assert counts(source) == {6: 2, 9: 1}


CALLER = """\
from data import get_loaders


def main(ds):
    loaders = get_loaders(ds)
    for epoch in range(10):
        for batch in loaders["train"]:
            pass
    for batch in loaders.get("val"):
        pass
"""


def test_summary_records_each_entry_read_by_key():
    summary = summarize("train.py", CALLER, SETTINGS)
    call = summary.calls[0]
    assert call.target == "0:data.get_loaders"
    assert call.elements["['train']"].per_epoch
    assert call.elements["['val']"].iterations == 1 and not call.elements["['val']"].per_epoch


def test_dict_entries_followed_into_another_file(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "data.py": HEAD + (
            "\n\ndef get_loaders(ds):\n"
            "    loaders = {}\n"
            "    loaders[\"train\"] = DataLoader(ds, num_workers=2)\n"
            "    loaders[\"val\"] = DataLoader(ds, num_workers=2)\n"
            "    return loaders\n"
        ),
        "train.py": CALLER,
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "data.py")
    assert [(f.line, f.code) for f in result.findings if f.code == "DL201"] == [(6, "DL201")]
    assert str(tmp_path / "train.py") in result.deps


def test_a_caller_looping_over_a_returned_dict_gets_keys(tmp_path):
    # ``for name in get_loaders()`` is a loop over keys (list(name) spells each one out): it
    # says nothing about the loaders.
    write(tmp_path, {
        "pyproject.toml": "",
        "data.py": HEAD + "\n\ndef get_loaders(ds):\n    return {\"train\": DataLoader(ds, num_workers=2)}\n",
        "train.py": "from data import get_loaders\n\n\ndef main(ds):\n    for name in get_loaders(ds):\n        for epoch in range(3):\n            list(name)\n",
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "data.py")
    assert [f for f in result.findings if f.code == "DL201"] == []


def test_summary_records_a_dict_parameter_by_entry():
    text = textwrap.dedent("""\
        from other import zero_shot

        def evaluate(data, epoch):
            for batch in data["val"].dataloader:
                pass
            zero_shot(data)

        def opaque(data, key):
            list(data[key])
            print(data["val"])
        """)
    summary = summarize("train.py", text, SETTINGS)
    entries = summary.functions["evaluate"].entries["data"]
    assert entries["['val'].dataloader"].iterations == 1
    assert entries["?"].follow == [["0:other.zero_shot", "0", False, "*"]]
    assert "data" not in summary.functions["opaque"].entries  # d[key]: any entry


def _clip_tree(tmp_path, zero_shot_body: str):
    write(tmp_path, {
        "pyproject.toml": "",
        "data.py": HEAD + (
            "\n\ndef get_data(ds):\n"
            "    data = {}\n"
            "    data[\"zs\"] = DataLoader(ds, num_workers=2)\n"
            "    data[\"test\"] = DataLoader(ds, num_workers=2)\n"
            "    return data\n"
        ),
        "main.py": (
            "from data import get_data\nfrom train import evaluate\n\n\ndef main(ds):\n"
            "    data = get_data(ds)\n    for epoch in range(3):\n        evaluate(data)\n"
            "    list(data[\"test\"])\n"
        ),
        "train.py": "from zero_shot import zero_shot_eval\n\n\ndef evaluate(data):\n    print(data[\"val\"])\n    zero_shot_eval(data)\n",
        "zero_shot.py": "def zero_shot_eval(data, key=\"zs\"):\n" + zero_shot_body,
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    return [(f.line, f.code) for f in lint(index, tmp_path / "data.py").findings if f.code == "DL201"]


def test_a_dict_entry_followed_through_files_it_is_handed_whole(tmp_path):
    assert _clip_tree(tmp_path, "    if \"zs\" in data:\n        list(data[\"zs\"])\n") == [(6, "DL201")]


def test_a_dict_read_by_a_key_not_spelled_out_in_another_file_stays_silent(tmp_path):
    assert _clip_tree(tmp_path, "    print(data[\"other\"])\n    list(data[key])\n") == []


def test_an_entry_path_under_a_key_read_some_other_way_is_undecidable():
    from dllint.project.index import entry_effects
    from dllint.facts.flow.records import Effects

    text = "def zero_shot(data):\n    info = data['zs']\n    for batch in info.dataloader:\n        pass\n"
    entries = summarize("z.py", text, SETTINGS).functions["zero_shot"].entries["data"]
    assert "['zs'].dataloader" not in entries and "?" in entries
    assert entry_effects(entries, "['zs'].dataloader") == Effects(stores=True)  # not "?": the key is read
    assert entry_effects(entries, "['other'].dataloader") == entries["?"]
