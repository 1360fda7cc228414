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


def _nodes(state: FileState, kind: type, **fields) -> list[cst.CSTNode]:
    return [n for n in state.positions if isinstance(n, kind) and all(getattr(n, k) == v for k, v in fields.items())]


def test_positions_are_libcsts_in_its_order():
    state = FileState.parse(TEXT)
    expected = MetadataWrapper(cst.parse_module(TEXT)).resolve(PositionProvider)
    assert [(type(n).__name__, r) for n, r in state.positions.items()] == [(type(n).__name__, r) for n, r in expected.items()]


def _rename(name: str):
    return lambda node: node.with_changes(value=name)


@pytest.mark.parametrize(
    "edit",
    ["nested_name", "two_statements", "insert_top_level", "remove_top_level", "insert_nested"],
)
def test_statement_render_matches_whole_module(edit):
    state = FileState.parse(TEXT)
    edits = Edits()
    if edit in ("nested_name", "two_statements"):
        edits.transforms[id(_nodes(state, cst.Name, value="n")[-1])] = [_rename("count")]
    if edit == "two_statements":
        edits.transforms[id(_nodes(state, cst.Name, value="size")[0])] = [_rename("length")]
    if edit == "insert_top_level":
        edits.inserts[id(_nodes(state, cst.ClassDef)[0])] = [cst.parse_statement("X = 1\n")]
    if edit == "remove_top_level":
        edits.transforms[id(_nodes(state, cst.ClassDef)[0])] = [lambda node: cst.RemovalSentinel.REMOVE]
    if edit == "insert_nested":
        edits.inserts[id(_nodes(state, cst.SimpleStatementLine)[1])] = [
            cst.parse_statement("y = 2\n")
        ]
    assert state.layout is not None and len(state.layout.pieces) == len(state.module.body)
    whole = apply_edits(state.module, edits)
    assert apply_edits(state.module, edits, state) == whole
    assert whole != TEXT


def test_module_edits_and_missing_trailing_newline_take_the_whole_module_path():
    for text in (TEXT, TEXT.rstrip("\n")):
        state = FileState.parse(text)
        edits = Edits()
        edits.imports.append("sys")
        edits.transforms[id(_nodes(state, cst.Name, value="size")[0])] = [_rename("length")]
        assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits)
