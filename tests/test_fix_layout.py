"""The fix pass's one code generation: the positions it resolves are LibCST's, and rendering only
the edited statements (top-level, or inside the bodies of others) gives the text a whole-module
transform gives."""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dllint.findings import Finding, Fix, SetArgument
from dllint.fixes import Edits, FileState, FixContext, apply_edits
from dllint.fixes.arguments import set_argument, set_reported_argument
from dllint.fixes.layout import parts_holding

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


NESTED = '''import torch


class Data(torch.utils.data.Dataset):
    """A class whose methods the fixes edit."""

    size = 3

    # a comment before a decorated method
    @property
    def loader(self):
        # the first statement's comment
        if self.size:
            for x in range(2): pass
            return DataLoader(self, num_workers=2)  # keep
        else:
            return None

    def other(self):  # a body indented by two, and one by three
      x = 1; y = f(x)
      try:
         z = f(y)
      except Exception:
         z = 0
      return z
    # a comment closing the class body


def train():
    with open("a") as handle:
        loader = DataLoader(handle,
                            num_workers=4)
    while True:
        break
'''


@pytest.mark.parametrize("text", [NESTED, TEXT, NESTED.replace("\n", "\r\n")], ids=["nested", "plain", "crlf"])
def test_every_name_renamed_alone_renders_as_in_the_whole_module(text):
    """Each name of each line, edited where the fixes find it (by its line): the statement it is
    positioned in, however deep, renders as a whole-module transform does."""
    for line in range(1, text.count("\n") + 1):
        state = FileState.parse(text)
        for name in _nodes(state, line, cst.Name):
            edits = Edits()
            edits.transforms[id(name)] = [_rename(name.value + "_2")]
            assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits)


def test_a_statement_inside_bodies_is_positioned_and_rendered_alone():
    state = FileState.parse(NESTED)
    line = next(i for i, source in enumerate(NESTED.splitlines(), 1) if "return DataLoader" in source)
    call = _nodes(state, line, cst.Call)[0]
    assert state.where.statement_of[id(call)] == (1, 2, 0, 1)  # class, method, if, return
    assert not state.where.complete and len(state.where.positions) < 40
    whole = _described(FileState.parse(NESTED).positions)
    alone = [(type(n).__name__, state.where.positions[n]) for n in state.nodes_on_line(line)]
    assert alone == [item for item in whole if item in alone]
    edits = Edits()
    edits.transforms[id(call)] = [lambda node: node.with_changes(args=[*node.args[:-1], node.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])]
    edits.inserts[id(_nodes(state, line, cst.SimpleStatementLine)[0])] = [cst.parse_statement("loader = None\n")]
    assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits)
    assert "            loader = None\n            return DataLoader(self, num_workers=2)  # keep\n" in apply_edits(state.module, edits, state)


@pytest.mark.parametrize("source", ["x = 1; y = f(x)", "z = f(y)", "return DataLoader(self, num_workers=2)  # keep", "size = 3"])
def test_removing_or_inserting_beside_a_nested_statement_renders_as_in_the_whole_module(source):
    line = next(i for i, text in enumerate(NESTED.splitlines(), 1) if text.strip() == source)
    for edit in ("remove", "insert"):
        state = FileState.parse(NESTED)
        statement = _nodes(state, line, cst.SimpleStatementLine)[0]
        edits = Edits()
        if edit == "remove":
            edits.transforms[id(statement)] = [lambda node: cst.RemovalSentinel.REMOVE]
        else:
            edits.inserts[id(statement)] = [cst.parse_statement("w = 2\n")]
        assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits)


def test_a_body_left_empty_takes_the_whole_module_path():
    """Removing the only statement of a body: LibCST's whole-module transform writes ``pass``."""
    text = "def f():\n    x = g()\n\ny = 1\n"
    state = FileState.parse(text)
    statement = _nodes(state, 2, cst.SimpleStatementLine)[0]
    edits = Edits()
    edits.transforms[id(statement)] = [lambda node: cst.RemovalSentinel.REMOVE]
    assert apply_edits(state.module, edits, state) == apply_edits(state.module, edits) == "def f():\n    pass\n\ny = 1\n"


def test_a_local_fix_parses_only_the_statement_holding_its_findings():
    """Positions are the file's, and the rendered file is what a parse of the whole file renders."""
    line = next(i for i, source in enumerate(NESTED.splitlines(), 1) if "return DataLoader" in source)
    part = FileState.parse(NESTED, local_to=[line])
    whole = FileState.parse(NESTED)
    assert part.text == "if 1:\n            return DataLoader(self, num_workers=2)  # keep\n" and part.header == "if 1:\n"
    assert NESTED == part.before + part.text[len(part.header) :] + part.after
    edits = {}
    for state in (part, whole):
        call = _nodes(state, line, cst.Call)[0]
        assert state.where[call] == whole.positions[_nodes(whole, line, cst.Call)[0]]
        edits[id(state)] = Edits(transforms={id(call): [lambda node: set_argument(node, "pin_memory", cst.Name("True"))]})
    expected = NESTED.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
    assert part.render(edits[id(part)]) == whole.render(edits[id(whole)]) == expected


def _parts(text: str, lines: list[int]) -> list[str]:
    return [header + text[start:end] for start, end, _, header in parts_holding(text, lines)]


@pytest.mark.parametrize(
    ("text", "lines", "parts"),
    [
        ("a = 1\n\n@d\ndef f():\n    g()\nb = 2\n", [5], ["if 1:\n    g()\n", "@d\ndef f():\n    g()\n"]),
        ("class A:\n    @d\n    def f(self):\n        g()\n", [3], ["if 1:\n    @d\n    def f(self):\n        g()\n", "class A:\n    @d\n    def f(self):\n        g()\n"]),
        ("a = 1\nb = f(1,\n  2); c = f(3)\nd = 4\n", [3], ["b = f(1,\n  2); c = f(3)\n"]),  # a line shared with another statement
        ("def f():\n    a = g(); b = h()\n", [2], ["def f():\n    a = g(); b = h()\n"]),
        ("if x: y = g()\n", [1], ["if x: y = g()\n"]),  # a statement after its header
        ("if x:\n    y = 1\nelif z(\n 1):\n    w = 2\n", [3], ["if x:\n    y = 1\nelif z(\n 1):\n    w = 2\n"]),  # an elif
        ("try:\n  pass\nexcept E:\n  a = f()\n", [4], ["if 1:\n  a = f()\n", "try:\n  pass\nexcept E:\n  a = f()\n"]),
        ("def f():\n    a = g()\n    b = h()\n", [2, 3], ["def f():\n    a = g()\n    b = h()\n"]),  # no one statement below
        ("a = f()\n# note\nb = g()\nc = 1\n", [1, 3], ["a = f()\n# note\nb = g()\n"]),  # and what lies between
        ("def f():\r\n  a = g()\r\n", [2], ["if 1:\r\n  a = g()\r\n", "def f():\r\n  a = g()\r\n"]),
        ("a = f()\n# note\n", [2], []),  # a line in no statement
        ("a = f(\n", [1], []),  # no parse
    ],
)
def test_parts_holding(text, lines, parts):
    assert _parts(text, lines) == parts
    for start, end, first_line, header in parts_holding(text, lines):
        assert first_line == text[:start].count("\n") + 1 - bool(header)


FIXTURE_FILES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES[::3], ids=lambda p: p.parent.name + "/" + p.name)
def test_an_argument_set_through_a_part_renders_as_through_the_whole_file(path):
    """On real-shaped code (every third fixture file, every call on an ASCII line): setting an
    argument from the statement parsed alone gives the file a whole-file parse gives."""
    with tokenize.open(path) as handle:  # its PEP 263 encoding
        text = handle.read()
    try:
        tree = ast.parse(text)
        whole = FileState.parse(text)
    except (SyntaxError, cst.ParserSyntaxError, cst.CSTValidationError):
        pytest.skip("a fixture of unparsable code")
    lines = text.splitlines()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and lines[n.lineno - 1].isascii()):
        finding = Finding(str(path), call.lineno, call.col_offset + 1, call.end_lineno, call.end_col_offset + 1, "DL201", "x", "m",
                          fix=Fix("safe", "m", SetArgument("persistent_workers", "True")))
        rendered = []
        for state in (FileState.parse(text, [call.lineno]), whole):
            ctx = FixContext(state)
            set_reported_argument(ctx, finding)
            rendered.append(state.render(ctx.edits))
        assert rendered[0] == rendered[1], f"line {call.lineno}"
