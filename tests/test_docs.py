"""The rules page, the README's rule table and SARIF's links agree with the rules themselves."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from dllint.cli import main
from dllint.docs import COMMAND, HOME, PAGE, help_uri, render_rules_page
from dllint.rules import all_rules
from tests.conftest import ROOT

ROW = re.compile(r"^\| (DL\d{3}) \| ([^|]+?) \| ([^|]+?) \|$", re.MULTILINE)


def test_rules_page_is_up_to_date():
    page = ROOT / PAGE
    current = page.read_text(encoding="utf-8") if page.is_file() else ""
    assert current == render_rules_page(), f"{PAGE} is out of date with the rules: run `{COMMAND}` and commit it"


def test_rules_page_documents_every_rule_under_its_anchor():
    page = render_rules_page()
    for rule in all_rules():
        assert f"\n## {rule.code}\n" in page  # GitHub's anchor for this heading is #dl201
        assert f"[{rule.code}](#{rule.code.lower()})" in page
        for section in ("What it does", "Why is this bad?"):
            assert rule.doc_sections()[section].splitlines()[0] in page


def test_readme_rule_table_matches_dllint_rules():
    listed = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).output)
    expected = [
        (r["code"], r["name"] + ("" if r["default_enabled"] else " (off by default)"), r["fix_safety"]) for r in listed
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # the fix cell starts with the rule's fix safety; words after it explain ("sometimes (safe when ...)")
    found = [(code, name, fix.split()[0]) for code, name, fix in ROW.findall(readme)]
    rows = "\n".join(f"| {code} | {name} | {fix} |" for code, name, fix in expected)
    assert found == expected, f"README.md's rule table differs from `dllint rules`; its rows should read:\n{rows}"


def test_sarif_help_uri_points_at_the_rules_page(tmp_path):
    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nDataLoader([1], num_workers=2)\n")
    result = CliRunner().invoke(main, [str(tmp_path / "a.py"), "--format", "sarif", "--no-cache"])
    descriptors = json.loads(result.output)["runs"][0]["tool"]["driver"]["rules"]
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    assert [d["id"] for d in descriptors] == [r.code for r in all_rules()]
    for descriptor, rule in zip(descriptors, all_rules()):
        assert descriptor["helpUri"] == help_uri(rule) == f"{HOME}/blob/main/docs/rules.md#{rule.code.lower()}"
        anchor = descriptor["helpUri"].rsplit("#", 1)[1]
        assert f"\n## {anchor.upper()}\n" in page
