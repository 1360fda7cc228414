"""Typed fix data: every kind of edit round-trips through JSON; anything else is rejected."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dllint.findings import (
    EDIT_KINDS,
    AddDistributedSampler,
    Fix,
    HoistLambda,
    HoistLocalDefinition,
    InsertStatement,
    MoveAboveGuard,
    RemoveArguments,
    ReplaceText,
    SetArgument,
    WrapInMainGuard,
)

EXAMPLES = [
    SetArgument("persistent_workers", "True"),
    RemoveArguments(("prefetch_factor", "timeout")),
    HoistLambda("collate_fn"),
    HoistLocalDefinition("collate"),
    MoveAboveGuard("collate"),
    InsertStatement("sampler.set_epoch(epoch)", (6, 5)),
    AddDistributedSampler("DistributedSampler(ds)", ("shuffle",), "into", (2, 1), "loader.sampler.set_epoch(epoch)", (9, 9)),
    WrapInMainGuard(),
    ReplaceText((4, 3), (5, 1), ""),  # a YAML config's line removed
]


def test_every_edit_kind_has_an_example():
    assert {type(e) for e in EXAMPLES} == set(EDIT_KINDS.values())


@pytest.mark.parametrize("edit", EXAMPLES, ids=lambda e: type(e).__name__)
def test_fix_round_trips_through_json(edit):
    fix = Fix("unsafe", "do it", edit)
    assert Fix.from_json(json.loads(json.dumps(fix.to_json()))) == fix


@pytest.mark.parametrize("edit", EXAMPLES, ids=lambda e: type(e).__name__)
def test_edits_compare_hash_and_show_as_frozen_dataclasses_do(edit):
    """The shared _Record methods behave as the ones @dataclass(frozen=True) would generate."""
    cls = type(edit)
    reference = dataclasses.make_dataclass(cls.__name__, [(f.name, f.type) for f in dataclasses.fields(edit)], frozen=True)
    values = [getattr(edit, f.name) for f in dataclasses.fields(edit)]
    twin, ref = cls(*values), reference(*values)
    assert edit == twin and hash(edit) == hash(twin) == hash(ref) and repr(edit) == repr(ref)
    assert edit != ref and edit != tuple(values) and len({edit, twin}) == 1
    if values:
        other = cls(*values[:-1], None)
        assert edit != other and {edit, other} == {twin, other}
    fix = Fix("safe", "m", edit)
    assert fix == Fix("safe", "m", twin) and fix != Fix("unsafe", "m", edit) and repr(fix).startswith("Fix(applicability='safe'")


def test_edits_are_frozen_and_typos_fail():
    edit = SetArgument("pin_memory", "True")
    with pytest.raises(dataclasses.FrozenInstanceError):
        edit.value = "False"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SetArgument(nmae="pin_memory", value="True")  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        edit.nmae  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize(
    "row",
    [
        ["safe", "m", [["set", ["pin_memory", "True"]]]],  # the old tuple-of-keys form
        ["safe", "m", {"kind": "set-argument", "name": "pin_memory"}],  # a field missing
        ["safe", "m", {"kind": "set-argument", "name": "pin_memory", "value": "True", "extra": 1}],
        ["safe", "m", {"kind": "set-argument", "name": "pin_memory", "value": 1}],
        ["safe", "m", {"kind": "insert-statement", "statement": "x", "before": [1]}],
        ["safe", "m", {"kind": "remove-arguments", "names": "timeout"}],
        ["safe", "m", {"kind": "no-such-edit"}],
        ["maybe", "m", {"kind": "wrap-in-main-guard"}],
        ["safe", "m"],
    ],
)
def test_from_json_rejects_what_to_json_never_writes(row):
    with pytest.raises(ValueError):
        Fix.from_json(row)


def _offered_fixes():
    from dllint.config import Settings
    from lint_helpers import lint_source
    from dllint.rules import all_rules

    for rule in all_rules():
        for example in rule.invalid:
            for finding in lint_source(example, Settings(select=(rule.code,))):
                if finding.fix is not None:
                    yield finding


@pytest.mark.parametrize("finding", list(_offered_fixes()), ids=lambda f: f.code)
def test_every_offered_fix_carries_a_typed_edit_that_round_trips(finding):
    assert type(finding.fix.edit) in EDIT_KINDS.values()
    assert Fix.from_json(json.loads(json.dumps(finding.fix.to_json()))) == finding.fix
