"""Messages quote the expression they are about, on one line, never the rest of its source line."""

from __future__ import annotations

import ast

from dllint.config import Settings
from dllint.engine import lint_source
from dllint.facts import FileFacts
from dllint.rules import quote

CURRICULUM = (
    "from torch.utils.data import DataLoader, Dataset\n\n\nclass Curriculum(Dataset):\n"
    "    def set_level(self, level):\n        self.level = level\n\n\n"
    "ds = Curriculum()\nloader = DataLoader(ds, num_workers=2, persistent_workers=True)\n"
    "for epoch in range(10):\n    {mutation}\n    for b in loader:\n        pass\n"
)


def test_dl303_quotes_the_mutation_without_its_trailing_comment():
    text = CURRICULUM.format(mutation="ds.set_level(epoch)  # harder every epoch")
    (finding,) = lint_source(text, Settings(select=("DL303",)))
    assert "`ds.set_level(epoch)` (line 12)" in finding.message and "#" not in finding.message


def test_dl303_quotes_a_multiline_mutation_on_one_line():
    text = CURRICULUM.format(mutation="ds.set_level(\n        epoch,\n    )")
    (finding,) = lint_source(text, Settings(select=("DL303",)))
    assert "`ds.set_level(epoch)`" in finding.message


def test_quote_shortens_long_expressions():
    source = "x = call(" + ", ".join(f"argument_{i}" for i in range(20)) + ")  # note\n"
    facts = FileFacts("t.py", source, ast.parse(source), Settings())
    quoted = quote(facts, facts.tree.body[0].value)
    assert len(quoted) == 60 and quoted.endswith("...") and "#" not in quoted


EPOCHS = (
    "import argparse\nfrom torch.utils.data import DataLoader\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--persist', type=int, default=0)\n"
    "args = parser.parse_args()\n"
    "loader = DataLoader(ds, num_workers=2{persistent})\n"
    "for epoch in range(10):\n    for b in loader:\n        pass\n"
)


def test_dl201_owns_up_to_an_explicit_false_and_quotes_it():
    (explicit,) = lint_source(EPOCHS.format(persistent=", persistent_workers=args.persist"), Settings(select=("DL201",)))
    assert explicit.message.startswith("`persistent_workers=args.persist` restarts the workers every epoch")
    assert "add persistent_workers" not in explicit.message
    (absent,) = lint_source(EPOCHS.format(persistent=""), Settings(select=("DL201",)))
    assert absent.message == "workers restart every epoch: add persistent_workers=True"
