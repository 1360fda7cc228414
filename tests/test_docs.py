"""The rules page, the rule table of docs/rules-and-fixes.md and SARIF's links agree with the
rules themselves; the README's first screen runs as shown, and every link of the README and
docs/ resolves."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

from click.testing import CliRunner

from dllint.cli import main
from dllint.configs.lint import config_rules
from dllint.docs import CATALOG, COMMAND, HOME, PAGE, help_uri, render_catalog, render_rules_page
from dllint.rules import all_rules
from tests.conftest import ROOT

ROW = re.compile(r"^\| (DL\d{3}) \| ([^|]+?) \| ([^|]+?) \|$", re.MULTILINE)


def test_rules_page_is_up_to_date():
    page = ROOT / PAGE
    current = page.read_text(encoding="utf-8") if page.is_file() else ""
    assert current == render_rules_page(), f"{PAGE} is out of date with the rules: run `{COMMAND}` and commit it"


def test_the_rule_catalog_is_up_to_date_and_names_each_rule_its_module_and_default():
    path = ROOT / CATALOG
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    assert current == render_catalog(), f"{CATALOG} is out of date with the rules: run `{COMMAND}` and commit it"
    from dllint.rules.catalog import CATALOG as ENTRIES

    assert [(e.code, f"dllint.rules.{e.module}", e.default_enabled) for e in ENTRIES] == [
        (r.code, r.__module__, r.default_enabled) for r in all_rules()
    ]
    for entry, rule in zip(ENTRIES, all_rules()):  # what the prefilter reads, as the engine's rules have it
        assert (entry.triggers, entry.literal_triggers, entry.needs_one_of, entry.needs_class_base) == (
            rule.triggers, rule.literal_triggers, rule.needs_one_of, rule.needs_class_base
        )
        assert entry.checks_config == bool(config_rules([rule()])), rule.code
    assert [e.code for e in ENTRIES if e.checks_config] and [e.code for e in ENTRIES if not e.checks_config]
    assert ("DL203", False) in [(e.code, e.default_enabled) for e in ENTRIES]  # an opt-in rule is listed as one


def test_rules_page_documents_every_rule_under_its_anchor():
    page = render_rules_page()
    for rule in all_rules():
        assert f"\n## {rule.code}\n" in page  # GitHub's anchor for this heading is #dl201
        assert f"[{rule.code}](#{rule.code.lower()})" in page
        for section in ("What it does", "Why is this bad?"):
            assert rule.doc_sections()[section].splitlines()[0] in page


def test_rule_table_matches_dllint_rules():
    listed = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).output)
    expected = [
        (r["code"], r["name"] + ("" if r["default_enabled"] else " (off by default)"), r["fix_safety"]) for r in listed
    ]
    readme = (ROOT / "docs/rules-and-fixes.md").read_text(encoding="utf-8")  # moved from the README
    # the fix cell starts with the rule's fix safety; words after it explain ("sometimes (safe when ...)")
    found = [(code, name, fix.split()[0]) for code, name, fix in ROW.findall(readme)]
    rows = "\n".join(f"| {code} | {name} | {fix} |" for code, name, fix in expected)
    assert found == expected, f"docs/rules-and-fixes.md's rule table differs from `dllint rules`; its rows should read:\n{rows}"


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


README = ROOT / "README.md"
CONSOLE = re.compile(r"```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.DOTALL)
SHELL = re.compile(r"```sh\n(?P<command>[^\n]+)\n```")
LINK = re.compile(r"\]\((?!https?:|#|mailto:)(?P<target>[^)#]+)(?:#[^)]*)?\)")


def first_screen() -> str:
    """The README up to its reference list: what a newcomer reads first."""
    text = README.read_text(encoding="utf-8")
    return text[: text.index("## Reference")]


def test_readme_is_short_and_its_first_screen_has_the_set_up_next_steps_and_output():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    screen = first_screen()
    assert [m.group("command") for m in SHELL.finditer(screen)] == [
        "pip install . && dllint fixtures/",
        'pip install torch==2.13.0 && pip install -e ".[test,probe]" && python -m pytest -n auto --dist loadscope -m "not serial" && python -m pytest -m serial',
    ]
    steps = re.findall(r"^\d\. \*\*", screen[screen.index("## Next steps") :], re.MULTILINE)
    assert len(steps) == 3


def test_readme_set_up_commands_name_what_exists():
    """The install lines name extras pyproject.toml has; `dllint fixtures/` runs and exits 1, as said."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"test", "probe"} <= set(extras)
    assert "exits 1" in first_screen()
    result = subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", "fixtures/"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 1 and result.stdout.rstrip().splitlines()[-1].startswith("Found ")


def test_readme_console_output_is_what_dllint_prints():
    blocks = list(CONSOLE.finditer(first_screen()))
    assert blocks
    for block in blocks:
        command = shlex.split(block.group("command"))
        assert command[0] == "dllint"
        result = subprocess.run(
            [sys.executable, "-m", "dllint", "--no-cache", *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert result.stdout == block.group("output"), f"README shows `{block.group('command')}` printing something else"


def test_every_relative_link_of_the_readme_and_docs_resolves():
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for match in LINK.finditer(page.read_text(encoding="utf-8")):
            target = (page.parent / match.group("target")).resolve()
            assert target.exists(), f"{page.relative_to(ROOT)} links to {match.group('target')}, which does not exist"


def test_the_readme_links_every_reference_page():
    text = README.read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in text, f"README does not link docs/{page.name}"
