"""The fix pass's one code generation: the positions it resolves are LibCST's, and rendering only
the edited top-level statements gives the text a whole-module transform gives."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dllint.fixes import Edits, FileState, apply_edits

TEXT = '''#!/usr/bin/env python
# a header comment

import os

def make(n):
    def inner(x):
        return x + n  # keep
    return inner


class Data:
    size = 3

if __name__ == "__main__":
    print(make(1)(2))
# a footer comment
'''


def _nodes(state: FileState, line: int, kind: type, **fields) -> list[cst.CSTNode]:
    """Nodes as the fixes find them: by the line they are on."""
    return [
        n
        for n in state.nodes_on_line(line)
        if isinstance(n, kind) and all(getattr(n, k) == v for k, v in fields.items()) and state.where[n].start.line == line
    ]


def _described(positions) -> list[tuple[str, object]]:
    return [(type(n).__name__, r) for n, r in positions.items()]


def test_positions_are_libcsts_in_its_order():
    state = FileState.parse(TEXT)
    expected = MetadataWrapper(cst.parse_module(TEXT)).resolve(PositionProvider)
    assert _described(state.positions) == _described(expected)


def test_a_statement_positioned_alone_is_positioned_as_in_the_whole_module():
    whole = _described(FileState.parse(TEXT).positions)
    for line in range(1, TEXT.count("\n") + 1):
        state = FileState.parse(TEXT)
        nodes = state.nodes_on_line(line)
        alone = [(type(n).__name__, state.where.positions[n]) for n in nodes]
        assert alone == [item for item in whole if item in alone]  # the same positions, in the same order
        if line == 6:  # `def make(n):` is positioned without the rest of the module
            assert not state.where.complete and len(alone) < len(whole)


def _rename(name: str):
    return lambda node: node.with_changes(value=name)


@pytest.mark.parametrize("complete", [False, True], ids=["statements-alone", "whole-module"])
@pytest.mark.parametrize(
    "edit",
    ["nested_name", "two_statements", "insert_top_level", "remove_top_level", "insert_nested"],
)
def test_statement_render_matches_whole_module(edit, complete):
    state = FileState.parse(TEXT)
    if complete:
        state.where.resolve_all()
    edits = Edits()
    if edit in ("nested_name", "two_statements"):
        edits.transforms[id(_nodes(state, 8, cst.Name, value="n")[0])] = [_rename("count")]
    if edit == "two_statements":
        edits.transforms[id(_nodes(state, 13, cst.Name, value="size")[0])] = [_rename("length")]
    if edit == "insert_top_level":
        edits.inserts[id(_nodes(state, 12, cst.ClassDef)[0])] = [cst.parse_statement("X = 1\n")]
    if edit == "remove_top_level":
        edits.transforms[id(_nodes(state, 12, cst.ClassDef)[0])] = [lambda node: cst.RemovalSentinel.REMOVE]
    if edit == "insert_nested":
        edits.inserts[id(_nodes(state, 8, cst.SimpleStatementLine)[0])] = [
            cst.parse_statement("y = 2\n")
        ]
    assert state.where.complete == complete
    whole = apply_edits(state.module, edits)
    assert apply_edits(state.module, edits, state) == whole
    assert whole != TEXT


def test_module_edits_and_missing_trailing_newline_take_the_whole_module_path():
    for text in (TEXT, TEXT.rstrip("\n")):
        state = FileState.parse(text)
        edits = Edits()
        edits.imports.append("sys")
        edits.transforms[id(_nodes(state, 13, cst.Name, value="size")[0])] = [_rename("length")]
        assert "import sys" in apply_edits(state.module, edits, state)
        assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits)


@pytest.mark.parametrize("text", ["x = f(1)", "x = f(1)\n", "# c\nx = f(1)\r\ny = 2\r\n", "@d\n# c\n\n@e\ndef g(): f()\n"])
def test_edge_layouts_render_as_the_whole_module(text):
    state = FileState.parse(text)
    line = next(i for i, source in enumerate(text.splitlines(), 1) if "f(" in source)
    name = _nodes(state, line, cst.Name, value="f")[0]
    edits = Edits()
    edits.transforms[id(name)] = [_rename("h")]
    assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits) == text.replace("f(", "h(")
