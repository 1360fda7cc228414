"""Probe test configuration: the ``probe`` marker and the leftover-process fixture."""

from __future__ import annotations

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
