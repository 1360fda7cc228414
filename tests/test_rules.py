"""Every rule's examples are tests, and its docs are complete (they are what `explain` prints)."""

from __future__ import annotations

import ast
import re

import pytest

from dllint.config import Settings
from lint_helpers import lint_source
from dllint.rules import DOC_SECTIONS, all_rules

RULES = all_rules()
ALL = Settings(select=("ALL",))


def codes(source: str) -> list[str]:
    if source.startswith("# %%\n"):  # a notebook in the percent format (DL106's examples)
        from dllint.engine import Linter
        from dllint.inputs.notebook import notebook_from_percent
        from dllint.per_file import lint as lint_bytes

        return [f.code for f in lint_bytes(Linter(ALL), "example.ipynb", notebook_from_percent(source)).findings]
    return [f.code for f in lint_source(source, ALL)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_invalid_examples_fire(rule):
    assert rule.invalid, f"{rule.code} has no INVALID example"
    for example in rule.invalid:
        assert rule.code in codes(example), f"{rule.code} did not fire on:\n{example}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_valid_examples_stay_silent(rule):
    assert rule.valid, f"{rule.code} has no VALID example"
    for example in rule.valid:
        assert rule.code not in codes(example), f"{rule.code} fired on:\n{example}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_docs_have_every_section(rule):
    sections = rule.doc_sections()
    assert list(sections) == list(DOC_SECTIONS), f"{rule.code} doc sections: {list(sections)}"
    assert all(sections.values()), f"{rule.code} has an empty doc section"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_doc_snippets_parse(rule):
    for snippet in re.findall(r"```python\n(.*?)```", rule.docs(), re.S):
        if rule.code != "DL000":  # DL000's example is a syntax error on purpose
            ast.parse(snippet)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_metadata(rule):
    assert re.fullmatch(r"DL\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.fix_safety in ("safe", "unsafe", "sometimes", "none")
    assert rule.code.lower() in rule.__module__, "one rule per module, named after its code"


def test_codes_are_unique_and_catalogued():
    assert len({r.code for r in RULES}) == len(RULES)
    assert {"DL000", "DL001", "DL002", "DL003", "DL004", "DL005", "DL006", "DL101", "DL102", "DL103", "DL201", "DL202"} <= {
        r.code for r in RULES
    }
