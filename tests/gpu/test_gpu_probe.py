"""The probe's GPU checks on a real GPU (skipped without CUDA, see conftest.py).

DL105: a forked worker that touches CUDA after the main process initialised it fails with the
exact DL105 crash, and the probe confirms it whoever triggers it first (the verdict stays short),
also in a later epoch whose re-forked workers fail, with no static finding (a runtime finding).
DL206: pinning a 64x3x224x224 float batch saves milliseconds per copy (confirmed); a 32x16 batch
saves microseconds (not confirmed). DL105 is not reported statically for a spawn loader.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dllint.engine import Linter

from lint_helpers import lint_file
from dllint.config import Settings
from dllint.findings import Finding
from dllint.probe import run_probe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "probe"))
from probe_helpers import fast_settings  # noqa: E402

pytestmark = pytest.mark.gpu


def lint(path: Path) -> list[Finding]:
    return lint_file(str(path), Linter(Settings())).findings


def write(directory: Path, body: str) -> Path:
    path = directory / "train.py"
    path.write_text(textwrap.dedent(body))
    return path


FORK_CRASH = """
import torch
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        return torch.zeros(3).cuda()


if __name__ == "__main__":
    torch.zeros(1).cuda()  # the main process initialises CUDA, as training does
    loader = DataLoader(OnGpu(), batch_size=4, num_workers=2, multiprocessing_context="fork")
    for batch in loader:
        pass
"""


def test_dl105_fork_crash_is_confirmed_with_a_short_verdict(tmp_path):
    script = write(tmp_path, FORK_CRASH)
    findings = [finding for finding in lint(script) if finding.code == "DL105"]
    assert findings, "the static rule fires on a fork loader"
    report = run_probe(str(script), [], findings, timeout=120, progress=False, settings=fast_settings())
    assert findings[0].probe["verdict"] == "confirmed", findings[0].probe
    assert "Cannot re-initialize CUDA in forked subprocess" in findings[0].probe["evidence"]
    row = next(line for line in report.render_text().splitlines() if line.strip().startswith("DL105"))
    assert row.split()[1] == "confirmed"


LATER_EPOCH = """
import torch
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        return (torch.full((3,), float(index)).cuda() * 2).cpu()  # CUDA work in the worker, a CPU tensor back


if __name__ == "__main__":
    loader = DataLoader(OnGpu(), batch_size=4, num_workers=2)
    for epoch in range(2):
        for batch in loader:
            pass
        model = torch.nn.Linear(3, 1).cuda()  # the main process initialises CUDA after epoch 1
"""


def test_a_fork_crash_in_a_later_epoch_is_a_runtime_dl105_at_the_loader(tmp_path):
    """Epoch 1's workers were forked before CUDA existed in the main process; epoch 2's re-forked
    workers cannot re-initialise it. No static finding is passed: the crash alone is the evidence."""
    script = write(tmp_path, LATER_EPOCH)
    report = run_probe(str(script), [], [], timeout=120, progress=False, settings=fast_settings())
    (dl105,) = [finding for finding in report.findings if finding.code == "DL105"]
    loader_line = next(number for number, line in enumerate(script.read_text().splitlines(), 1)
                       if "loader = DataLoader" in line)
    assert (dl105.source, dl105.line, dl105.probe["verdict"]) == ("runtime", loader_line, "confirmed"), dl105
    assert dl105.probe["evidence"].startswith("epoch 2 failed at batch 1: ")
    assert "Cannot re-initialize CUDA in forked subprocess" in dl105.probe["evidence"]
    assert report.loaders[0].recommendation.settings["multiprocessing_context"] == "spawn"


def test_dl105_is_silent_statically_for_a_spawn_loader(tmp_path):
    script = write(tmp_path, FORK_CRASH.replace('multiprocessing_context="fork"', 'multiprocessing_context="spawn"'))
    assert [finding for finding in lint(script) if finding.code == "DL105"] == []


PINNING = """
import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    loader = DataLoader(TensorDataset(torch.rand({samples}, {shape})), batch_size={batch}, num_workers=2)
    for epoch in range(2):
        for (batch,) in loader:
            batch = batch.to("cuda", non_blocking=True)
"""


@pytest.mark.parametrize(("shape", "batch", "samples", "expected"), [
    ("3, 224, 224", 64, 640, "confirmed"),
    ("16", 32, 3200, "not confirmed"),  # "(saves 10 µs per batch)", or nothing saved at all
])
def test_dl206_is_confirmed_only_on_a_material_saving(tmp_path, shape, batch, samples, expected):
    script = write(tmp_path, PINNING.format(shape=shape, batch=batch, samples=samples))
    findings = [finding for finding in lint(script) if finding.code == "DL206"]
    assert findings, "the static rule fires: non_blocking copies from pageable memory"
    run_probe(str(script), [], findings, timeout=120, progress=False, settings=fast_settings())
    probe = findings[0].probe
    assert probe["verdict"].startswith(expected), probe
    assert probe["measurements"]["pageable_s"] > 0 and probe["measurements"]["batches_per_epoch"] == samples // batch
