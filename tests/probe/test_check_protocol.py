"""The harness asks the checks for hooks and capabilities, never for rule codes."""

from __future__ import annotations

import pathlib

import pytest

from dllint.probe.checks import Capability, all_checks, capable, check_for, hook, persistence, sweep, with_capability


def test_the_sweep_is_found_by_its_capability_and_hooks_by_name():
    assert with_capability(Capability.SWEEPS_WORKERS) is sweep
    assert capable(sweep, Capability.SWEEPS_WORKERS) and not capable(persistence, Capability.SWEEPS_WORKERS)
    assert hook(persistence, "on_later_iteration") is persistence.on_later_iteration
    assert hook(sweep, "on_later_iteration") is None  # the sweep has no later hook: the harness skips it
    with pytest.raises(ValueError, match="no probe hook 'on_epoch'"):
        hook(sweep, "on_epoch")
    assert check_for("DL201") is persistence and all(isinstance(check.ALWAYS, bool) for check in all_checks())


def test_the_harness_names_no_rule_code_to_choose_a_check():
    import dllint.probe.harness as harness

    source = pathlib.Path(harness.__file__).read_text()
    assert "SWEEPS_WORKERS\"" not in source and "getattr(check" not in source and "hasattr(check" not in source
