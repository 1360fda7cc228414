"""Every fixture file fires exactly where its ``# expect: CODE:COL`` markers say.

A fixture in ``fixtures/DLNNN/`` is checked for DLNNN and for every code its
markers name: those must fire on the marked lines and columns and nowhere else.
A folder under ``fixtures/project/`` is a small project linted as one (the project index
follows calls between its files): the codes its markers name, in any of its files, must
fire exactly where marked in every file.
A config fixture in ``fixtures/configs/`` (YAML, whose comments carry the same markers, or
a Python dict config) is checked for every code.
"""

from __future__ import annotations

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.per_file import lint as lint_bytes
from lint_helpers import lint_python_bytes
from tests.conftest import FIXTURES, expected_findings

CASES = sorted(p for p in FIXTURES.glob("DL[0-9][0-9][0-9]/*.py"))
CONFIG_CASES = sorted(
    p for p in (FIXTURES / "configs").rglob("*") if p.suffix in (".py", ".yaml", ".yml") and "fix" not in p.parts
)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path):
    data = path.read_bytes()
    text = data.decode("utf-8", "replace")
    expected = expected_findings(text)
    codes = {path.parent.name} | {code for _, _, code in expected}
    result = lint_python_bytes(Linter(Settings(select=("ALL",))), str(path), data)
    assert not result.errors
    actual = {(f.line, f.column, f.code) for f in result.findings if f.code in codes}
    assert actual == expected


@pytest.mark.parametrize("path", CONFIG_CASES, ids=lambda p: str(p.relative_to(FIXTURES / "configs")))
def test_config_fixture(path):
    data = path.read_bytes()
    result = lint_bytes(Linter(Settings(select=("ALL",))), str(path), data)  # through the input adapters
    assert not result.errors
    assert {(f.line, f.column, f.code) for f in result.findings} == expected_findings(data.decode("utf-8"))


def test_every_rule_has_fixtures():
    from dllint.rules import all_rules

    missing = [r.code for r in all_rules() if not any((FIXTURES / r.code).glob("*.py")) and not any((FIXTURES / r.code).glob("*.ipynb"))]
    assert not missing, f"rules without fixtures: {missing}"


# -- projects: a folder under fixtures/project/ is linted as one project -----------------
PROJECTS = sorted(p for p in (FIXTURES / "project").iterdir() if p.is_dir()) if (FIXTURES / "project").is_dir() else []


def lint_project(root):
    """Lint every .py file of ``root`` as one project: {path: FileResult}."""
    from dllint.per_file import lint as lint_bytes
    from dllint.project import ProjectIndex

    settings = Settings(select=("ALL",))
    index = ProjectIndex(root, settings)
    linter = Linter(settings)
    results = {}
    for path in sorted(root.rglob("*.py")):
        results[path] = lint_bytes(linter, str(path), path.read_bytes(), index.view(str(path)))
    return results


def project_findings(root, code: str) -> set[tuple]:
    """``code``'s findings over the project at ``root``, as (relative path, line, column, message,
    (fix applicability, fix message) or None): the whole finding the shape tests compare."""
    return {
        (str(path.relative_to(root)), f.line, f.column, f.message, None if f.fix is None else (f.fix.applicability, f.fix.message))
        for path, result in lint_project(root).items()
        for f in result.findings
        if f.code == code
    }


@pytest.mark.parametrize("root", PROJECTS, ids=lambda p: p.name)
def test_project_fixture(root):
    results = lint_project(root)
    expected = {path: expected_findings(path.read_text()) for path in results}
    codes = {code for found in expected.values() for _, _, code in found}
    assert codes, f"{root.name}: no # expect: markers"
    for path, result in results.items():
        assert not result.errors, result.errors
        actual = {(f.line, f.column, f.code) for f in result.findings if f.code in codes}
        assert actual == expected[path], path.relative_to(root)
