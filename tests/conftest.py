from __future__ import annotations

import re
from pathlib import Path

import pytest

from dllint.config import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<items>DL\d{3}:\d+(?:\s*,\s*DL\d{3}:\d+)*)")


def expected_findings(text: str) -> set[tuple[int, int, str]]:
    """(line, column, code) for each ``# expect: CODE:COL`` marker."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for item in match.group("items").split(","):
                code, column = item.strip().split(":")
                found.add((number, int(column), code))
    return found


@pytest.fixture
def all_rules_settings() -> Settings:
    return Settings(select=("ALL",))


@pytest.fixture(scope="session", autouse=True)
def checkout_stays_clean():
    """Tests never write into the checkout: a cache there means a test ran dllint without --no-cache."""
    cache = ROOT / ".dllint_cache"
    existed = cache.exists()
    yield
    assert existed or not cache.exists(), f"a test wrote {cache}"


@pytest.fixture
def relinted(monkeypatch) -> list[str]:
    """The names of the files each later run lints afresh (not served from the cache); clear it
    between runs."""
    from dllint import per_file, runner

    linted: list[str] = []
    original = per_file.lint

    def spy(linter, path, data, project=None, live=None):
        linted.append(Path(path).name)
        return original(linter, path, data, project, live)

    monkeypatch.setattr(per_file, "lint", spy)  # a fix's re-lint
    monkeypatch.setattr(runner, "lint", spy)  # a check
    return linted
