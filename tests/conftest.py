from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
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
    screened by the prefilter, linted if it passes), each once; clear it between runs. Counted
    where the runner takes a file on (``runner.screen``, ``runner.process``), not at the lint
    call: a file the prefilter settles is never handed to ``lint``, yet it was not served from
    the cache."""
    from dllint import runner

    linted: list[str] = []

    def spy_on(original):
        def spy(path, *args, **kwargs):
            if Path(path).name not in linted:
                linted.append(Path(path).name)
            return original(path, *args, **kwargs)

        return spy

    monkeypatch.setattr(runner, "screen", spy_on(runner.screen))
    monkeypatch.setattr(runner, "process", spy_on(runner.process))
    return linted


# -- probe runs forked from a template (dllint/probe/template.py) ----------------------------------------------
# Each probe run starts a harness that imports torch (about a CPU-second); a template per xdist worker, with torch
# imported, forks them instead. Tests of what a new interpreter is there for (escape, trust, robustness, the CLI,
# process cleanup) carry the ``popen_harness`` mark and get one.
POPEN_HARNESS = "popen_harness"
VOLATILE = ("PYTEST_CURRENT_TEST",)  # pytest changes it at each test; Python does not read it at start-up


class TemplateForWorker:
    """This worker's template, started for the first test that forks its harness, and started anew if a test
    changed this process's environment for good (a run whose environment differs from the template's would
    start a new interpreter). It lives on through the tests that do not fork (starting it costs an import of
    torch: once per worker, not once per module), where no variable points at it: their runs start new
    interpreters, and their checks of this process's children leave it out (probe_helpers.live_children).
    Stopped at the session's end."""

    def __init__(self) -> None:
        self.template = None
        self.directory: str | None = None
        self.environment: dict[str, str] = {}

    def ensure(self):
        from dllint.probe.template import start_template  # imports the harness: only where probes run

        if self.template is None or self.template.process.poll() is not None or self.environment != _environment():
            self.stop()
            self.directory = tempfile.mkdtemp(prefix="dllint-template-")  # short: a socket path has 108 bytes
            self.environment = _environment()
            self.template = start_template(self.directory, VOLATILE)
        return self.template

    def stop(self) -> None:
        if self.template is not None:
            self.template.stop()
            self.template = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def _environment() -> dict[str, str]:
    from dllint.probe.launch import TEMPLATE_ENV

    return {key: value for key, value in os.environ.items() if key not in (TEMPLATE_ENV, *VOLATILE)}


TEMPLATE = TemplateForWorker()


def forks_harness(item: pytest.Item) -> bool:
    """A probe test (tests/probe) whose module runs the probe in this process, without the popen_harness mark."""
    if item.path.parent.name != "probe" or item.get_closest_marker(POPEN_HARNESS) is not None:
        return False
    from dllint.probe.launch import can_fork

    return can_fork() and "run_probe" in _source(item.path)


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: half as many workers again as usable cores (3 on 2). The probe tests spend a
    third of their time waiting (timed sleeps in loaders, workers starting, deadlines), so a third
    worker runs while two wait: on 2 cores the parallel run took 5:53 with 2 workers, 4:48 with 3,
    at 143% and 170% of the CPU. The timing tests that need the cores to themselves are ``serial``."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores * 3 // 2)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{POPEN_HARNESS}: probe runs start their harness as a new interpreter")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    """Before any fixture (a module's shared probe run included): probe runs of a test that forks its harness
    fork it from the worker's template (TemplateForWorker); any other test's runs start new interpreters."""
    if forks_harness(item):
        from dllint.probe.launch import TEMPLATE_ENV

        os.environ[TEMPLATE_ENV] = TEMPLATE.ensure().socket_path
    yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield
    if forks_harness(item):
        from dllint.probe.launch import TEMPLATE_ENV

        os.environ.pop(TEMPLATE_ENV, None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    TEMPLATE.stop()
