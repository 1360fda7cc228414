"""Every rule module keeps the shape the others follow."""

from __future__ import annotations

import pytest

from dllint.rules import all_rules


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_check_is_annotated_with_file_facts(rule):
    assert rule.check.__annotations__.get("facts") == "FileFacts"
