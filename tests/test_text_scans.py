"""The byte scans of every project file (:mod:`dllint.project.class_text`'s aliases,
:mod:`dllint.project.imports`' statements) read the same as the patterns they stand for,
however the matches fall."""

from __future__ import annotations

import re

from dllint.project import imports
from dllint.project.class_text import scan as scan_classes
from dllint.project.imports import ImportBinding, scan as scan_imports

# What the alias scan stands for: every non-overlapping match of this pattern, left to right.
_ALIAS_PATTERN = re.compile(rb" as[ \t]+(\w+)")


def _aliases_by_pattern(data: bytes, start: int, end: int) -> set[bytes]:
    return {m.group(1) for m in _ALIAS_PATTERN.finditer(data, start, end)}


def test_an_as_inside_the_name_of_the_previous_alias_starts_no_alias():
    # " as as as": one alias, "as"; the third "as" follows the first match, not a space of its own
    assert scan_classes(b"x as as as").aliases == {b"as"}
    found = scan_classes(b"x as as y")
    assert found.aliases == {b"as"}  # " as y" begins inside " as as": no alias "y"
    assert found.leads_to == {b"x": {b"as"}}


def test_an_as_without_a_space_before_it_or_a_name_after_it_is_no_alias():
    assert scan_classes(b"class Base: pass\nhas x\nbas\tk\n").aliases == set()
    assert scan_classes(b"a as\tb").aliases == {b"b"}  # a tab after "as" counts, before it not
    assert scan_classes(b"a\tas b").aliases == set()


def test_aliases_are_those_of_the_pattern_at_every_start_and_end():
    samples = [b" as as as", b"x as as y", b"as y", b" as y", b"a as\tb", b"q  as  z", b"(f) as g", b"\x00 as k", b"import a as b, c as d"]
    for data in samples:
        for start in range(len(data) + 1):
            for end in range(start, len(data) + 1):
                assert scan_classes(data, start, end).aliases == _aliases_by_pattern(data, start, end), (data, start, end)


def test_a_statement_read_once_binds_in_each_file_that_holds_it():
    statement = b"from .data import make, Loader as L\n"
    first = scan_imports("a.py", statement)
    second = scan_imports("b.py", b"import os\n" + statement)
    assert first == [ImportBinding("a.py", "make", "1:data.make"), ImportBinding("a.py", "L", "1:data.Loader")]
    assert second[1:] == [ImportBinding("b.py", "make", "1:data.make"), ImportBinding("b.py", "L", "1:data.Loader")]


def test_the_statements_read_are_let_go_when_there_are_too_many(monkeypatch):
    monkeypatch.setattr(imports, "MAX_STATEMENTS", 2)
    imports._STATEMENTS.clear()
    bindings = scan_imports("a.py", b"import a\nimport b\nimport c\nimport a\n")
    assert [b.local for b in bindings] == ["a", "b", "c", "a"]
    assert len(imports._STATEMENTS) <= 2
