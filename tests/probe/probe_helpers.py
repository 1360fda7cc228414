"""Helpers for the probe tests: hand-made findings, small budgets, leftover-process checks.

Imported by name (``from probe_helpers import ...``): pytest puts this
directory on sys.path, as tests/ has no __init__.py.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import textwrap

import psutil
import pytest

from dllint.findings import Finding
from dllint.probe.context import Settings

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "probe"

HEADER = """\
import os
import random
import sys
import time
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset
from torch.utils.data.distributed import DistributedSampler
"""

# A dataset each of whose workers pays 0.1 s to open its data, once, as real datasets do: workers
# restarted every epoch cost that much again, well clear of a loaded machine's noise (a bare fork
# of two workers can cost under the probe's 20 ms floor). Each sample then waits 3 ms on storage:
# workers pay off, so the sweep every multi-worker loader gets keeps them in its block.
OPENS = """
class Opens(Dataset):
    def __init__(self):
        self.opened = False

    def __len__(self):
        return 16

    def __getitem__(self, index):
        if not self.opened:
            time.sleep(0.1)
            self.opened = True
        time.sleep(0.003)
        return torch.tensor([float(index)])

"""


def pooled_dataset(name: str = "Pooled", length: int = 4096) -> str:
    """Source of a dataset whose samples each cost about a millisecond of CPU (three pooling
    passes over a small image), like decoding plus augmentation: workers pay off on it."""
    return f"""
class {name}(Dataset):
    def __len__(self):
        return {length}

    def __getitem__(self, index):
        image = torch.rand(3, 32, 32)
        for _ in range(3):
            image = torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)
        return image

"""


def write_script(directory: pathlib.Path, body: str, name: str = "train.py", opens: bool = False) -> pathlib.Path:
    """A script of ``HEADER``, the ``Opens`` dataset if asked, then ``body`` (dedented)."""
    path = directory / name
    path.write_text(HEADER + (OPENS if opens else "") + textwrap.dedent(body))
    return path


def line_of(path: pathlib.Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def finding(code: str, path, line: int) -> Finding:
    """A static finding as the engine would report it; only code, path and line matter to the probe."""
    return Finding(str(path), line, 1, line, 1, code, "", f"{code} (hand-made for the test)")


def fast_settings(**overrides) -> Settings:
    """Small budgets: the persistence experiment under the script's own start method only."""
    settings = Settings(batches=4, epochs=3, start_methods=("script",), sweep_limit=4, measurement_seconds=20)
    for name, value in overrides.items():
        setattr(settings, name, value)
    return settings


# The least evidence the probe can decide on: one pair of decision runs; two sweep rounds (one has no
# spread, and a count would move on noise alone), over the same counts (fewer change the block: a sweep
# of 0 and 1 workers can make a confirmed DL201 moot). The defaults (Settings) stay where the decision
# or the sweep is the subject.
LEAST_EVIDENCE = {"min_pairs": 1, "most_pairs": 1, "sweep_rounds": 2, "sweep_most_rounds": 2}


def quick_settings(**overrides) -> Settings:
    """:func:`fast_settings` with the least evidence (:data:`LEAST_EVIDENCE`): for a test whose subject
    is neither the block's decision nor the num_workers sweep (each decision pair re-runs the script
    twice; each sweep round times every count)."""
    return fast_settings(**{**LEAST_EVIDENCE, **overrides})


def require_torch() -> None:
    """Skip the calling module where torch is not installed, without importing it: every xdist worker
    collects every module, and an import of torch there costs each worker a few CPU-seconds that a module
    whose probed scripts import torch in processes of their own never uses."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch", allow_module_level=True)


def checks_settings(**overrides) -> Settings:
    """:func:`quick_settings` with no decision runs (``most_pairs=0``): the block stays unmeasured and each
    verdict is its check's own. For a test whose subject is a check of a code the decision never changes
    (not a saving of ``dllint.probe.recommend.SAVING_CODES``), or a verdict other than confirmed: a decision
    pair runs the whole script twice more, and the decision itself is tests/probe/test_decision.py's."""
    return quick_settings(**{"most_pairs": 0, **overrides})


def live_processes_in_group(pgid: int) -> list[psutil.Process]:
    alive = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return alive


def live_children() -> list[psutil.Process]:
    """This process's live descendants, but for the worker's template (tests/conftest.py), which lives on
    between tests (what it forked is counted: a harness left running is the test's)."""
    me = psutil.Process()
    running = []
    for child in me.children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and not _is_template(child, me):
                running.append(child)
        except psutil.Error:
            continue  # ended meanwhile
    return running


def _is_template(process: psutil.Process, me: psutil.Process) -> bool:
    return process.ppid() == me.pid and process.cmdline()[1:3] == ["-m", "dllint.probe.template"]
