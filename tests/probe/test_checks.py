"""The other probe checks, each on a small script written for the test."""

from __future__ import annotations

import json

import pytest
from probe_helpers import fast_settings, finding, line_of, write_script

from dllint.probe import run_probe

pytestmark = pytest.mark.probe

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
    assert all(row["samples_per_s"] > 0 and row["peak_mb"] > 0 for row in sweep.values())
    assert probe["measurements"]["recommended"] in (0, 1, 2)
    text = report.render_text()
    assert "num_workers sweep" in text and "<- recommended" in text and "samples/s" in text


def test_shared_rng_is_confirmed_and_a_reseeding_worker_init_fn_is_not(tmp_path):
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
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2):
                pass
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2,
                                    worker_init_fn=reseed):
                pass
    """)
    shared, reseeded = (finding("DL304", script, line_of(script, text)) for text in ("num_workers=2):", "worker_init_fn=reseed"))
    report = run_probe(str(script), [], [shared, reseeded], timeout=30, progress=False, settings=fast_settings())
    by_loader = {loader.id: [r for r in loader.results if r.code == "DL304"] for loader in report.loaders}
    assert by_loader[1][0].verdict == "confirmed" and "identical draws" in by_loader[1][0].evidence
    assert by_loader[2][0].verdict == "not confirmed"
    assert shared.probe["verdict"] == "confirmed"
    assert reseeded.probe["verdict"] == "not confirmed"


def test_missing_set_epoch_is_confirmed_and_a_set_epoch_call_is_not(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(16.0))
        forgotten = DistributedSampler(data, num_replicas=1, rank=0)
        remembered = DistributedSampler(data, num_replicas=1, rank=0)
        forgotten_loader = DataLoader(data, batch_size=4, sampler=forgotten)
        remembered_loader = DataLoader(data, batch_size=4, sampler=remembered)
        for epoch in range(3):
            remembered.set_epoch(epoch)
            for batch in forgotten_loader:
                pass
            for batch in remembered_loader:
                pass
    """)
    findings = [finding("DL301", script, line_of(script, text)) for text in ("forgotten_loader = ", "remembered_loader = ")]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=fast_settings())
    assert findings[0].probe["verdict"] == "confirmed"
    assert "same order" in findings[0].probe["evidence"]
    assert findings[1].probe["verdict"] == "not confirmed"


def test_factory_target_and_json_report(tmp_path, monkeypatch, assert_no_leftovers):
    module = write_script(tmp_path, """
        def make_loader():
            return DataLoader(Opens(), batch_size=4, num_workers=2)
    """, name="loaders_for_probe.py", opens=True)
    monkeypatch.chdir(tmp_path)
    findings = [finding("DL201", module, line_of(module, "return DataLoader"))]
    report_path = tmp_path / "probe.json"
    report = run_probe("loaders_for_probe:make_loader", [], findings, timeout=30, progress=False,
                       report_path=str(report_path), settings=fast_settings())
    # shown whole when it fails: the script's outcome and its stderr (a worker's traceback)
    assert findings[0].probe["verdict"] == "confirmed", "\n".join([report.script_outcome, *report.stderr_tail])
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
