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


SERIAL_MARK = "mark.serial"  # how a test module marks a test serial (checked below on every whole collection)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m serial`` alone (the README's second run) only the modules that mark a test serial are
    imported: the other modules select nothing, and importing them took most of that run's collection."""
    if config.getoption("markexpr") != "serial" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return SERIAL_MARK not in collection_path.read_text(encoding="utf-8") or None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A serial test whose module does not spell ``mark.serial`` would be lost by the hook above."""
    for item in items:
        if item.get_closest_marker("serial") is not None and SERIAL_MARK not in item.path.read_text(encoding="utf-8"):
            raise pytest.UsageError(f"{item.nodeid}: mark it serial with pytest.{SERIAL_MARK}, or -m serial skips it")


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
    """The names of the files each later run looks at afresh (not served from the cache: read,
    screened by the prefilter, linted if it passes); clear it between runs. Counted where the
    runner takes a file on (``runner.process``), not at the lint call: a file the prefilter
    settles is never handed to ``lint``, yet it was not served from the cache."""
    from dllint import runner

    linted: list[str] = []
    original = runner.process

    def spy(path, *args, **kwargs):
        linted.append(Path(path).name)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(runner, "process", spy)
    return linted
