"""Messages quote the expression they are about, on one line, never the rest of its source line."""

from __future__ import annotations

import ast

from dllint.config import Settings
from lint_helpers import lint_source
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


# -- DL206 says what pinning does for the copies it saw (issue 25) ------------------------------
PIN = (
    "import torch\nfrom torch.utils.data import DataLoader\n"
    "loader = DataLoader(ds, batch_size=8{workers})\nfor x, y in loader:\n    x = x.to('cuda'{blocking})\n"
)


def test_dl206_non_blocking_copies_are_synchronous_from_pageable_memory():
    (finding,) = lint_source(PIN.format(workers="", blocking=", non_blocking=True"), Settings(select=("DL206",)))
    assert "non_blocking=True" in finding.message and "synchronous" in finding.message
    assert "overlap compute" in finding.message


def test_dl206_blocking_copies_with_workers_get_faster_not_asynchronous():
    (finding,) = lint_source(PIN.format(workers=", num_workers=4", blocking=""), Settings(select=("DL206",)))
    assert "asynchronously" not in finding.message and "stays blocking" in finding.message
    assert "pin thread" in finding.message


def test_dl206_blocking_copies_without_workers_are_left_to_the_probe():
    assert lint_source(PIN.format(workers="", blocking=""), Settings(select=("DL206",))) == []


def test_training_arguments_findings_name_the_trainer_and_its_setting():
    text = (
        "from transformers import Trainer, TrainingArguments\n"
        "args = TrainingArguments('out', dataloader_num_workers=4, dataloader_pin_memory=False)\n"
        "Trainer(model, args).train()\n"
    )
    findings = {f.code: f for f in lint_source(text, Settings(select=("DL201", "DL206")))}
    assert (findings["DL201"].line, findings["DL201"].column) == (2, 8)
    assert "Hugging Face Trainer" in findings["DL201"].message and "dataloader_persistent_workers=True" in findings["DL201"].message
    assert "dataloader_pin_memory=True" in findings["DL206"].message and (findings["DL206"].line, findings["DL206"].column) == (2, 8)


def test_dl305_names_deepspeed_as_the_setup():
    text = (
        "import deepspeed\nfrom torch.utils.data import DataLoader\n"
        "engine, _, _, _ = deepspeed.initialize(model=m)\nloader = DataLoader(ds, shuffle=True)\n"
    )
    (finding,) = lint_source(text, Settings(select=("DL305",)))
    assert "it uses deepspeed.initialize" in finding.message
