"""The byte prefilter answers exactly what its gates say, however its scan is arranged.

The engine searches first for a few strings (keys shared by many triggers, one side of each
gate), then for each gate's strings at most once. The reference here searches every gate's
strings in every file, one by one, as the gates define them: both must agree on every input.
"""

from __future__ import annotations

import itertools
import random

import pytest

from dllint.config import Settings
from dllint.configs.lint import CONFIG_TRIGGERS, YAML_SUFFIXES, could_be_config
from dllint.engine import Linter
from dllint.prefilter import _DICT_CONFIG_BYTES, _class_base, _shared_keys
from dllint.rules import all_rules


def _reference_gates(linter: Linter, haystack: bytes | str) -> tuple:
    """Each gate searched for on its own, every trigger and need of it, no scan shared."""
    text = isinstance(haystack, str)
    live = []
    for gate in linter.prefilter.gates:
        hits = [t for t in gate.triggers if (t.decode() if text else t) in haystack]
        if not hits:
            continue
        if gate.needs and not any((t.decode() if text else t) in haystack for t in gate.needs):
            continue
        if gate.class_base and not any(_class_base(t, text).search(haystack) for t in hits):
            continue
        live.append(gate)
    return tuple(live)


def _reference_prefilter(linter: Linter, data: bytes, path: str = "") -> tuple | None:
    if path.endswith(YAML_SUFFIXES):
        return () if linter.config_rules and could_be_config(data) else None
    live = _reference_gates(linter, data)
    if live:
        return live
    if not linter.config_rules or b"\ndef " in data or b"\nclass " in data or _DICT_CONFIG_BYTES.search(data):
        return None
    return () if any(t in data for t in CONFIG_TRIGGERS) else None


_CUSTOM = Settings(extend_loader_classes=frozenset({"pkg.FastLoader", "pkg.StreamSampler", "pkg.Shards"}))
# Names whose longest shared substring starts inside a character (é and ĩ end in the same byte).
_NON_ASCII = Settings(extend_loader_classes=frozenset({"pkg.éShards", "pkg.ĩShards", "pkg.ĩShardsB"}))
LINTERS = {
    "default": Linter(Settings()),
    "custom loaders": Linter(_CUSTOM),
    "non-ASCII loaders": Linter(_NON_ASCII),
    **{code: Linter(Settings(select=(code,))) for code in sorted(rule.code for rule in all_rules())},
}


def _strings(linter: Linter) -> list[bytes]:
    """Every string the gates look for, and every key standing in for some."""
    found = {t for gate in linter.prefilter.gates for t in (*gate.triggers, *gate.needs, *gate.literal)}
    return sorted(found | set(linter.prefilter._key_of.values()) | {key for key, _ in linter.prefilter.first_searches})


def _inputs(linter: Linter) -> list[bytes]:
    """Each string alone, in a class header, and cut across a line or short of a byte; pairs of
    them; config-like files (a module of bindings naming a loader key, with or without a def)."""
    strings = _strings(linter)
    inputs = [b"", b"x = 1\n", b"Loader", b"Sampler", b"rocess", b"Data\nLoader", b"DataLoade", b"ataLoader"]
    for s in strings:
        inputs += [s, b"import x\n" + s + b"\n", b"class D(" + s + b"):\n    pass\n", b"from m import " + s + b" as L\n"]
        inputs += [s[:1] + b"\n" + s[1:], s[:-1] + b"\n" + s[-1:], s[1:], s[:-1], s[: len(s) // 2] + b" " + s[len(s) // 2 :]]
    inputs += [a + b"\n" + b for a, b in itertools.combinations(strings, 2)]
    for trigger in CONFIG_TRIGGERS:
        for tail in (b"", b"\ndef f():\n    pass\n", b"\nclass C:\n    pass\n", b"\nif x:\n    y = 1\n"):
            inputs += [trigger + b" = 4\nbatch_size = 8\n" + tail, b"def f():\n    pass\n" + trigger + b" = 4\n"]
            inputs += [trigger + b" = 4\nRANK = 0\n" + tail, trigger + b" = 4\nx = 'Loader'\n" + tail]
    return inputs


# Files around the one screened in a project's joined text (a bytearray): every trigger and key of
# every gate, and module-level definitions, which its bytes must not borrow.
_NEIGHBOURS = b"\n".join(sorted({s for linter in LINTERS.values() for s in _strings(linter)})) + b"\nclass D(Dataset):\ndef f():\n"


def _in_joined_text(linter: Linter, data: bytes) -> tuple | None:
    """What the prefilter answers on ``data`` screened where it lies in a project's joined text."""
    joined = bytearray(_NEIGHBOURS + b"\n\0" + data + b"\0\n" + _NEIGHBOURS)
    start = len(_NEIGHBOURS) + 2
    return linter.prefilter.screen(joined, "m.py", start, start + len(data))


@pytest.mark.parametrize("name", sorted(LINTERS))
def test_the_prefilter_answers_as_the_gates_do_one_by_one(name):
    linter = LINTERS[name]
    for data in _inputs(linter):
        assert linter.prefilter.screen(data, "m.py") == _reference_prefilter(linter, data, "m.py"), data
        assert _in_joined_text(linter, data) == _reference_prefilter(linter, data, "m.py"), data
        text = data.decode("utf-8", "replace")
        assert linter.prefilter.live_gates(text) == _reference_gates(linter, text), data
        for path in ("conf.yaml", "conf.yml"):
            assert linter.prefilter.screen(data, path) == _reference_prefilter(linter, data, path), (path, data)


def test_the_inputs_open_gates_and_fall_through_to_the_config_check():
    """The equivalence above is tested on inputs that reach every answer."""
    linter = LINTERS["default"]
    answers = [linter.prefilter.screen(data, "m.py") for data in _inputs(linter)]
    assert None in answers and () in answers
    opened = {gate for answer in answers if answer for gate in answer}
    assert opened == set(linter.prefilter.gates)


_FRAGMENTS = sorted({s for linter in ("default", "custom loaders", "non-ASCII loaders") for s in _strings(LINTERS[linter])}) + [
    *(b"\n", b" ", b"class D(", b"):", b" as ", b"def ", b"\ndef f():\n", b"Data", b"Load", b"er", b"Sam", b"pler"),
    *(b"process", b"\nif x:\n", b"num_workers = 2\n", b"# ", b'"""', b"\xff\xfe", "é".encode()),
]


@pytest.mark.parametrize("name", ["default", "custom loaders", "non-ASCII loaders", "DL305", "DL101", "DL104"])
def test_the_prefilter_answers_as_the_gates_do_on_any_mix(name):
    """Strings, their pieces and code around them, mixed at random (seeded: the same mixes each run)."""
    linter = LINTERS[name]
    rng = random.Random(25)
    for _ in range(300):
        data = b"".join(rng.choices(_FRAGMENTS, k=rng.randrange(12)))
        assert linter.prefilter.screen(data, "m.py") == _reference_prefilter(linter, data, "m.py"), data
        assert _in_joined_text(linter, data) == _reference_prefilter(linter, data, "m.py"), data
        text = data.decode("utf-8", "replace")
        assert linter.prefilter.live_gates(text) == _reference_gates(linter, text), data


@pytest.mark.parametrize("name", sorted(LINTERS))
def test_the_first_scan_covers_one_side_of_every_gate(name):
    """A gate opens only on one of its triggers and, with needs, one of those too: each gate has
    a side every string of which holds a string the first scan looks for."""
    linter = LINTERS[name]
    searched = {s for key, members in linter.prefilter.first_searches for s in (members or (key,))}
    assert searched == set(linter.prefilter.first_scan)
    for gate in linter.prefilter.gates:
        sides = [gate.triggers] + ([gate.needs] if gate.needs else [])
        assert any(all(any(s in t for s in searched) for t in side) for side in sides), gate.codes


def test_the_first_scan_of_the_default_rules():
    """Loader names share `Loader` and `Sampler` (found by the scan, not listed): one search
    each; DL305's triggers need a loader's name, so they are never searched for."""
    linter = LINTERS["default"]
    keys = [key for key, _ in linter.prefilter.first_searches]
    assert keys == [b"Dataset", b"Loader", b"Sampler", b"TrainingArguments", b"get_context", b"multiprocessing"]
    assert b"RANK" not in linter.prefilter.first_scan and b"deepspeed" not in linter.prefilter.first_scan
    custom = dict(LINTERS["custom loaders"].prefilter.first_searches)
    assert b"FastLoader" in custom[b"Loader"] and b"StreamSampler" in custom[b"Sampler"]
    assert custom[b"Shards"] == ()  # a name sharing nothing is searched for on its own


def test_shared_keys_take_the_key_most_strings_hold():
    assert _shared_keys([b"FooLoader", b"BarLoader", b"Baz"]) == {b"FooLoader": b"Loader", b"BarLoader": b"Loader"}
    # the longest substring as many hold; a string that is the key maps to nothing
    assert _shared_keys([b"IterableDataset", b"Dataset"]) == {b"IterableDataset": b"Dataset"}
    assert _shared_keys([b"xDataLoaderA", b"yDataLoaderB"]) == {b"xDataLoaderA": b"DataLoader", b"yDataLoaderB": b"DataLoader"}
    # shorter than six bytes: no key (`Pool` and `spawn` are searched for as they are)
    assert _shared_keys([b"aPool", b"bPool", b"spawn"]) == {}
    # ASCII only: a key is never part of a character (it is searched for in text too)
    names = ["éShards".encode(), "ĩShards".encode()]
    assert _shared_keys(names) == dict.fromkeys(names, b"Shards")
    assert dict(LINTERS["non-ASCII loaders"].prefilter.first_searches)[b"Shards"] == tuple(sorted(names))
    keys = _shared_keys([b"ASampler", b"BSampler", b"CSampler", b"XLoader", b"YLoader"])
    assert set(keys.values()) == {b"Sampler", b"Loader"}
