"""The other probe checks, each on a small script written for the test."""

from __future__ import annotations

import json
import textwrap

import pytest

from dllint.probe import run_probe
from tests.probe.conftest import fast_settings, finding

pytestmark = pytest.mark.probe

HEADER = """\
import random
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset
from torch.utils.data.distributed import DistributedSampler
"""


def write_script(tmp_path, body: str, name: str = "train.py"):
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def line_of(path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_shuffle_with_sampler_is_confirmed_by_torchs_error(tmp_path, assert_no_leftovers):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(8.0))
        loader = DataLoader(data, shuffle=True,
                            sampler=range(8))
        for batch in loader:
            pass
    """)
    findings = [finding("DL003", script, line_of(script, "sampler=range(8)"))]  # an argument inside the call
    report = run_probe(str(script), [], findings, timeout=30, progress=False)
    assert findings[0].probe["verdict"] == "confirmed"
    assert "mutually exclusive with shuffle" in findings[0].probe["evidence"]
    assert "ValueError" in report.script_outcome
    assert_no_leftovers(report)


def test_worker_sweep_recommends_a_count_and_draws_a_chart(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(256.0))
        loader = DataLoader(data, batch_size=8, num_workers=4)
        for batch in loader:
            pass
    """)
    findings = [finding("DL202", script, line_of(script, "num_workers=4"))]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=fast_settings(sweep_limit=2))
    probe = findings[0].probe
    assert probe["verdict"] in ("confirmed", "not confirmed")
    sweep = probe["measurements"]["sweep"]
    assert set(sweep) == {"0", "1", "2"}
    assert all(row["samples_per_s"] > 0 and row["peak_rss_mb"] > 0 for row in sweep.values())
    assert probe["measurements"]["recommended"] in (0, 1, 2)
    text = report.render_text()
    assert "num_workers sweep" in text and "<- recommended" in text and "samples/s" in text


def test_shared_rng_gives_identical_draws_in_two_workers(tmp_path):
    script = write_script(tmp_path, """
        class Augmented(Dataset):
            def __init__(self):
                self.rng = random.Random(0)

            def __len__(self):
                return 8

            def __getitem__(self, index):
                return torch.tensor([self.rng.random()])


        if __name__ == "__main__":
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2):
                pass
    """)
    findings = [finding("DL304", script, line_of(script, "self.rng = "))]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=fast_settings())
    probe = findings[0].probe
    assert probe["verdict"] == "confirmed", probe
    assert "identical draws" in probe["evidence"]


def test_rng_reseeded_by_worker_init_fn_is_not_confirmed(tmp_path):
    script = write_script(tmp_path, """
        class Augmented(Dataset):
            def __init__(self):
                self.rng = random.Random(0)

            def __len__(self):
                return 8

            def __getitem__(self, index):
                return torch.tensor([self.rng.random()])


        def reseed(worker_id):
            info = torch.utils.data.get_worker_info()
            info.dataset.rng.seed(info.seed)


        if __name__ == "__main__":
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2, worker_init_fn=reseed):
                pass
    """)
    findings = [finding("DL304", script, line_of(script, "self.rng = "))]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=fast_settings())
    assert findings[0].probe["verdict"] == "not confirmed"


def test_missing_set_epoch_repeats_the_order(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(16.0))
        sampler = DistributedSampler(data, num_replicas=1, rank=0)
        loader = DataLoader(data, batch_size=4, sampler=sampler)
        for epoch in range(3):
            for batch in loader:
                pass
    """)
    findings = [finding("DL301", script, line_of(script, "DistributedSampler(data"))]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=fast_settings())
    assert findings[0].probe["verdict"] == "confirmed"
    assert "same order" in findings[0].probe["evidence"]


def test_set_epoch_called_is_not_confirmed(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(16.0))
        sampler = DistributedSampler(data, num_replicas=1, rank=0)
        loader = DataLoader(data, batch_size=4, sampler=sampler)
        for epoch in range(3):
            sampler.set_epoch(epoch)
            for batch in loader:
                pass
    """)
    findings = [finding("DL301", script, line_of(script, "DistributedSampler(data"))]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=fast_settings())
    assert findings[0].probe["verdict"] == "not confirmed"


def test_factory_target_and_json_report(tmp_path, monkeypatch, assert_no_leftovers):
    module = write_script(tmp_path, """
        def make_loader():
            data = TensorDataset(torch.arange(32.0))
            return DataLoader(data, batch_size=4, num_workers=2)
    """, name="loaders_for_probe.py")
    monkeypatch.chdir(tmp_path)
    findings = [finding("DL201", module, line_of(module, "return DataLoader"))]
    report_path = tmp_path / "probe.json"
    report = run_probe("loaders_for_probe:make_loader", [], findings, timeout=30, progress=False,
                       report_path=str(report_path), settings=fast_settings())
    assert findings[0].probe["verdict"] == "confirmed"
    saved = json.loads(report_path.read_text())
    assert saved["findings"][0]["probe"]["verdict"] == "confirmed"
    assert saved["loaders"][0]["summary"]["num_workers"] == 2
    assert json.loads(report.to_json()) == saved
    assert_no_leftovers(report)


def test_a_factory_that_returns_something_else_is_reported(tmp_path, monkeypatch):
    (tmp_path / "not_a_loader.py").write_text("def make():\n    return [1, 2, 3]\n")
    monkeypatch.chdir(tmp_path)
    report = run_probe("not_a_loader:make", [], [], timeout=30, progress=False)
    assert "returned list, not a DataLoader" in report.script_outcome
