"""Probe test configuration: the ``probe`` marker and the leftover-process fixture."""

from __future__ import annotations

import time

import psutil
import pytest
from probe_helpers import live_children, live_processes_in_group


def pytest_configure(config):
    config.addinivalue_line("markers", "probe: runs real DataLoader worker processes (seconds each)")


@pytest.fixture
def assert_no_leftovers():
    def check(report) -> None:
        assert report.process_group is not None
        assert live_processes_in_group(report.process_group) == []
        assert live_children() == []

    return check


@pytest.fixture(autouse=True)
def no_process_outlives_its_test():
    """A process a test leaves behind (a DataLoader worker of a probed script) fails that test,
    and is ended, so that the leftover checks of the tests run after it in the same xdist worker
    do not fail instead of it."""
    yield
    deadline = time.monotonic() + 10
    left = live_children()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = live_children()
    if left:
        names = [_describe(p) for p in left]
        for process in left:
            try:
                process.kill()
            except psutil.Error:
                pass
        pytest.fail(f"processes left running after the test: {names}")


def _describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {process.name()}"
    except psutil.Error:
        return str(process.pid)
