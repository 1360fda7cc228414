"""The fixer on texts: what it refuses, what it reports, what it leaves alone."""

from __future__ import annotations

import pytest

import dllint.fixer as fixer
from dllint.config import Settings
from dllint.engine import Linter
from dllint.fixer import fix_text
from dllint.rules import rule_by_code


def linter(*codes: str) -> Linter:
    return Linter(Settings(), rules=[rule_by_code(code) for code in codes])


EPOCHS = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=2)\nfor epoch in range(3):\n"


def test_code_libcst_rejects_keeps_its_findings_and_loses_its_fixes():
    text = EPOCHS + "    for* batch in loader:\n        pass\n"  # ast accepts it, LibCST does not (CSTValidationError)
    result = fix_text("t.py", text, linter("DL201"))
    assert result.text == text and not result.fixed
    ((finding, reason),) = result.failed
    assert finding.code == "DL201" and "LibCST cannot parse" in reason and "CSTValidationError" in reason
    assert [f.code for f in result.remaining] == ["DL201"]


@pytest.mark.parametrize("error", [RecursionError("deep"), ValueError("odd"), SyntaxError("libcst parser")])
def test_any_libcst_failure_while_parsing_drops_the_fixes(monkeypatch, error):
    def refuse(text):
        raise error

    monkeypatch.setattr(fixer.FileState, "parse", staticmethod(refuse))
    text = EPOCHS + "    for batch in loader:\n        pass\n"
    result = fix_text("t.py", text, linter("DL201"))
    assert result.text == text and len(result.failed) == 1 and type(error).__name__ in result.failed[0][1]
