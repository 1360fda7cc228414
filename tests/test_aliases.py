"""Every rule recognises the loader however it is imported: through a module alias, a name
alias, and the full ``torch.utils.data.dataloader.DataLoader`` path."""

from __future__ import annotations

import re

import pytest

from dllint.config import Settings
from lint_helpers import lint_source
from dllint.rules import all_rules

IMPORT = re.compile(r"^from torch\.utils\.data import (?P<names>[^\n]*)$", re.M)
STYLES = {
    "module alias": ("import torch.utils.data as tud", "tud.DataLoader("),
    "name alias": ("from torch.utils.data import DataLoader as DL", "DL("),
    "full path": ("import torch.utils.data.dataloader", "torch.utils.data.dataloader.DataLoader("),
}


def aliased(example: str, style: str) -> str | None:
    """The example with its DataLoader import rewritten; None if it does not import DataLoader so."""
    match = IMPORT.search(example)
    if match is None:
        return None
    names = [n.strip() for n in match.group("names").split(",")]
    if "DataLoader" not in names or "(" in match.group("names"):
        return None
    new_import, call = STYLES[style]
    rest = [n for n in names if n != "DataLoader"]
    imports = new_import + (f"\nfrom torch.utils.data import {', '.join(rest)}" if rest else "")
    body = re.sub(r"(?<![\w.])DataLoader\(", call, example[match.end():])
    return example[: match.start()] + imports + body


CASES = [
    (rule, style, aliased(example, style))
    for rule in all_rules()
    for example in rule.invalid[:1]
    for style in STYLES
    if aliased(example, style) is not None and "DataLoader(" in example and not example.startswith("# %%")
]


@pytest.mark.parametrize("rule, style, source", CASES, ids=[f"{r.code}-{s}" for r, s, _ in CASES])
def test_rule_fires_through_import_aliases(rule, style, source):
    assert rule.code in [f.code for f in lint_source(source, Settings(select=("ALL",)))], source


def test_most_rules_are_covered():
    covered = {rule.code for rule, _, _ in CASES}
    loader_rules = {r.code for r in all_rules() if "DataLoader(" in r.invalid[0] and not r.invalid[0].startswith("# %%")}
    assert len(covered) >= 20 and loader_rules == covered, loader_rules ^ covered


LOOKALIKE = "class DataLoader:  # merely named like torch's\n    def __init__(self, *args, **kwargs):\n        pass\n"


@pytest.mark.parametrize("rule", sorted({r for r, _, _ in CASES} - {r for r in all_rules() if r.code in ("DL000", "DL104")}, key=lambda r: r.code), ids=lambda r: r.code)
def test_a_class_merely_named_dataloader_is_not_a_loader(rule):
    example = rule.invalid[0]
    match = IMPORT.search(example)
    names = [n.strip() for n in match.group("names").split(",") if n.strip() != "DataLoader"]
    imports = f"from torch.utils.data import {', '.join(names)}\n" if names else ""
    source = example[: match.start()] + imports + LOOKALIKE + example[match.end():]
    assert rule.code not in [f.code for f in lint_source(source, Settings(select=("ALL",)))], source
