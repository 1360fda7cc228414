"""Fix fixtures: ``fixtures/fix/DLNNN/<case>/before.py`` fixed by rule DLNNN alone must equal
``after.py`` byte for byte; the result re-lints clean for that rule; a second fix changes nothing.

Regenerate an ``after.py`` (then review it!) with ``DLLINT_WRITE_FIXTURES=1 pytest tests/test_fix_fixtures.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.fixer import fix_text
from lint_helpers import fix_bytes, lint_python_bytes
from dllint.rules import rule_by_code

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "fix"
CASES = sorted(p.parent for p in ROOT.glob("DL*/*/before.py"))


def _linter(code: str) -> Linter:
    return Linter(Settings(), rules=[rule_by_code(code)])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_fix_fixture(case: Path) -> None:
    code = case.parent.name
    linter = _linter(code)
    before = (case / "before.py").read_bytes()
    assert any(f.code == code for f in lint_python_bytes(linter, str(case), before).findings), "before.py must fire"
    result, encoding = fix_bytes(str(case / "before.py"), before, linter, unsafe=True)
    fixed = result.text.encode(encoding)
    after_path = case / "after.py"
    if os.environ.get("DLLINT_WRITE_FIXTURES"):
        after_path.write_bytes(fixed)
    assert not result.failed, result.failed
    assert fixed == after_path.read_bytes()
    assert not [f for f in result.remaining if f.code == code], "the fixed file must re-lint clean"
    again = fix_text(str(case), result.text, linter, unsafe=True)
    assert again.text == result.text and not again.fixed, "a second fix must change nothing"
