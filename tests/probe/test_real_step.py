"""The script's real training step in bounded epochs: its data wait, its endings, and the proven recommendation.

Each module-scoped fixture runs one small script under the probe once (real
torch workers), and several tests read its report.
"""

from __future__ import annotations

import json

import pytest
from probe_helpers import (
    checks_settings,
    fast_settings,
    finding,
    line_of,
    quick_settings,
    write_script,
)

from dllint.probe import run_probe

pytestmark = pytest.mark.probe

EPOCH_BATCHES = 8  # fewer than the probe's default: each run stays short
REPLAYED = 2  # of them replayed from memory from epoch 2 on (a quarter)


def settings(**overrides):
    return fast_settings(epoch_batches=EPOCH_BATCHES, **overrides)


def probe(path, findings=(), **overrides):
    return run_probe(str(path), [], list(findings), timeout=60, progress=False, settings=settings(**overrides))


def quick_probe(path, findings=(), **overrides):
    """:func:`probe` with the least evidence and no decision runs (:func:`probe_helpers.checks_settings`),
    for a test about something other than the block and the sweep (its endings, its epochs)."""
    return run_probe(str(path), [], list(findings), timeout=60, progress=False,
                     settings=checks_settings(epoch_batches=EPOCH_BATCHES, **overrides))


def accepts(settings: dict) -> None:
    """torch builds a DataLoader with the recommended block (it raises otherwise)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    DataLoader(TensorDataset(torch.zeros(4, 1)), **settings)


# -- a script that logs the last loss after each epoch -------------------------------------------------

LOSS_SCRIPT = """
    def main():
        loader = DataLoader(Opens(), batch_size=1, num_workers=2)
        model = torch.nn.Linear(1, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(3):
            for x in loader:
                loss = model(x).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                time.sleep(0.01)  # the step costs more than the data: no sweep is forced
            print(epoch, loss.item(), len(loader))

    if __name__ == "__main__":
        main()
"""


@pytest.fixture(scope="module")
def loss_run(tmp_path_factory):
    script = write_script(tmp_path_factory.mktemp("loss"), LOSS_SCRIPT, opens=True)
    dl201 = finding("DL201", script, line_of(script, "loader = DataLoader"))
    return script, dl201, probe(script, [dl201])


class TestLossRun:
    """One probe of a script that logs its loss after each epoch (a class: one unit under --dist loadscope)."""

    def test_a_script_that_prints_the_loss_after_each_epoch_gets_dl201_confirmed(self, loss_run):
        script, dl201, report = loss_run
        assert dl201.probe["verdict"] == "confirmed", dl201.probe
        assert report.script_outcome == "the script ran to its end", report.script_outcome
        (loader,) = report.loaders
        # three epochs, each bounded; from epoch 2 on the last quarter replays epoch 1's batches from memory (the step alone)
        assert loader.step["batches"] == [EPOCH_BATCHES] * 3 and loader.step["replayed_batches"] == 2 * REPLAYED
        # each epoch's first batch (worker start) apart, and the replayed ones
        assert loader.step["steps"] == 3 * (EPOCH_BATCHES - 1) - 2 * REPLAYED

    def test_the_recommendation_keeps_the_workers_and_adds_persistence_measured_before_and_after(self, loss_run):
        _, _, report = loss_run
        recommendation = report.loaders[0].recommendation
        assert recommendation is not None
        assert recommendation.settings["num_workers"] > 0  # measured by the sweep every multi-worker loader gets
        assert recommendation.effects["num_workers"].startswith("sweep: ")
        assert recommendation.settings["persistent_workers"] is True
        assert "epoch start" in recommendation.effects["persistent_workers"]
        accepts(recommendation.settings)
        # Measured, not estimated: runs with the script's settings and with the block's, interleaved (no replay in them).
        before, after = recommendation.before, recommendation.after
        assert before["steps"] == after["steps"] == 3 * (EPOCH_BATCHES - 1)
        assert {"data_wait_fraction", "step_s", "peak_pss_mb"} <= set(before) & set(after)
        assert before != after
        assert report.rerun and report.rerun["status"] == "completed" and report.rerun["runs"] >= 4
        text = report.render_text()
        assert "persistent_workers=True,  # epoch start" in text and "before -> after" in text
        assert "data wait: " in text


# -- known load and step costs --------------------------------------------------------------------

COSTS = """
    class Costly(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, index):
            time.sleep({load})
            return torch.tensor([float(index)])

    if __name__ == "__main__":
        loader = DataLoader(Costly(), batch_size={batch})
        for epoch in range(2):
            for batch in loader:
                time.sleep({step})
"""


@pytest.fixture(scope="module")
def input_bound(tmp_path_factory):
    # 50 ms of storage a batch: a loaded machine's wake-up delays (a few ms a sleep) stay small beside it, so the
    # decision run's gain from workers (about half the epoch) clears its spread (at 20 ms it did not, once in CI)
    script = write_script(tmp_path_factory.mktemp("input"), COSTS.format(load=0.05, batch=1, step=0.005))
    return script, probe(script, sweep_limit=2)


@pytest.fixture(scope="module")
def step_bound(tmp_path_factory):
    script = write_script(tmp_path_factory.mktemp("step"), COSTS.format(load=0.01, batch=1, step=0.04))
    return script, probe(script)


def near(measured: float, truth: float) -> bool:
    return abs(measured - truth) <= 0.3 * truth


class TestKnownCosts:
    """Known load and step costs, input-bound and step-bound (a class: one unit under --dist loadscope)."""

    def test_the_data_wait_of_an_input_bound_step_is_within_30_percent(self, input_bound):
        _, report = input_bound
        step = report.loaders[0].step
        assert near(step["data_wait_s"], 0.050), step
        assert near(step["step_s"], 0.055), step
        assert step["data_wait_fraction"] > 0.5

    def test_the_data_wait_of_a_step_bound_step_is_within_30_percent(self, step_bound):
        _, report = step_bound
        step = report.loaders[0].step
        assert near(step["data_wait_s"], 0.010), step
        assert near(step["step_s"], 0.050), step
        assert step["data_wait_fraction"] < 0.5
        assert [f for f in report.findings if f.code == "DL203"] == []  # no runtime DL203 here
        assert report.loaders[0].recommendation is None  # single-process and not waiting: nothing to recommend

    def test_an_input_bound_single_process_loader_is_a_runtime_dl203_with_a_proven_block(self, input_bound):
        script, report = input_bound
        (dl203,) = [f for f in report.findings if f.code == "DL203"]
        assert dl203.source == "runtime" and dl203.line == line_of(script, "loader = DataLoader")
        assert dl203.probe["verdict"] == "confirmed"
        assert "data wait: " in dl203.probe["evidence"] and "num_workers=0" in dl203.probe["evidence"]
        recommendation = report.loaders[0].recommendation
        assert recommendation.settings["num_workers"] > 0, recommendation  # sleeping workers overlap on 2 cores
        accepts(recommendation.settings)
        assert recommendation.after["data_wait_fraction"] < recommendation.before["data_wait_fraction"]
        text = report.render_text()
        assert "data wait: " in text and "steps" in text


# -- in-memory tensors: workers cost more than they save -------------------------------------------------

IN_MEMORY = """
    if __name__ == "__main__":
        data = TensorDataset(torch.randn(2048, 8))
        loader = DataLoader(data, batch_size=16, num_workers=2, persistent_workers=True, prefetch_factor=4)
        for epoch in range(3):
            for (batch,) in loader:
                batch.sum()
"""


@pytest.fixture(scope="module")
def in_memory(tmp_path_factory):
    script = write_script(tmp_path_factory.mktemp("memory"), IN_MEMORY)
    dl202 = finding("DL202", script, line_of(script, "loader = DataLoader"))
    return probe(script, [dl202], sweep_limit=2, min_pairs=1, most_pairs=1)  # the block's settings are the subject


def test_in_memory_tensors_get_zero_workers_without_persistent_workers(in_memory):
    recommendation = in_memory.loaders[0].recommendation
    assert recommendation.settings["num_workers"] == 0, recommendation
    assert "persistent_workers" not in recommendation.settings and "prefetch_factor" not in recommendation.settings
    assert set(recommendation.dropped) == {"persistent_workers", "prefetch_factor"}
    accepts(recommendation.settings)
    assert recommendation.after["steps"] > 0 and recommendation.after != recommendation.before
    assert "# remove persistent_workers, prefetch_factor" in in_memory.render_text()
    loader = json.loads(in_memory.to_json())["loaders"][0]  # what --probe-report writes
    assert {"steps", "data_wait_s", "step_s", "data_wait_fraction"} <= set(loader["step"])
    assert {"data_wait_fraction", "step_s", "peak_pss_mb"} <= set(loader["recommendation"]["before"])
    assert loader["recommendation"]["settings"] == {"num_workers": 0, "pin_memory": False}


# -- honest endings ---------------------------------------------------------------------------------------


def test_a_crash_in_epoch_2_is_the_scripts(tmp_path):
    script = write_script(tmp_path, """
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=4)
        for epoch in range(3):
            for (batch,) in loader:
                if epoch == 1:
                    print(1 / 0)
    """)
    report = quick_probe(script)
    line = line_of(script, "print(1 / 0)")
    assert report.script_outcome.startswith("the script raised ZeroDivisionError: division by zero at "), report.script_outcome
    assert report.script_outcome.endswith(f"train.py:{line}, in loader 1's epoch 2 (batch 1)"), report.script_outcome
    assert "probe" not in report.script_outcome


def test_next_past_the_bound_is_blamed_on_the_probe_and_an_emptied_epoch_too(tmp_path):
    stepper = write_script(tmp_path, """
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=2)
        batches = iter(loader)
        for step in range(20):
            next(batches)
    """, name="steps.py")
    report = quick_probe(stepper)
    assert report.script_outcome.startswith("the script raised StopIteration"), report.script_outcome
    assert f"caused by the probe, which ends each epoch of loader 1 after {EPOCH_BATCHES} of its 32 batches" in report.script_outcome
    averages = write_script(tmp_path, """
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=4)
        for epoch in range(6):
            total, count = 0.0, 0
            for (batch,) in loader:
                total, count = total + batch.sum().item(), count + 1
            print(total / count)
    """, name="averages.py")
    report = quick_probe(averages)
    assert report.script_outcome.startswith("stopped once every loader had run 3 epochs: the probe then emptied "
                                            "loader 1's epoch 4, and the script raised ZeroDivisionError"), report.script_outcome
    assert "caused by the emptied epoch" in report.script_outcome


def test_a_worker_that_dies_in_a_later_epoch_is_reported_as_such(tmp_path):
    script = write_script(tmp_path, """
        import signal

        class Dies(Dataset):
            epoch = 0

            def __len__(self):
                return 16

            def __getitem__(self, index):
                if self.epoch == 1:
                    os.kill(os.getpid(), signal.SIGKILL)
                return torch.tensor([1.0])

        if __name__ == "__main__":
            data = Dies()
            loader = DataLoader(data, batch_size=4, num_workers=1)
            for epoch in range(3):
                data.epoch = epoch
                for batch in loader:
                    pass
    """)
    report = quick_probe(script)
    assert "exited unexpectedly" in report.script_outcome and "in loader 1's epoch 2" in report.script_outcome
    (failure,) = report.loaders[0].failures
    assert failure["epoch"] == 2 and failure["worker_died"]
    assert "a worker died" in report.render_text()
    assert report.findings == []  # killed by a signal: no rule's crash (tests/probe/test_later_epoch_crashes.py)


def test_dl001_masked_by_dl002_on_the_same_call_says_so(tmp_path):
    script = write_script(tmp_path, """
        loader = DataLoader(TensorDataset(torch.arange(8.0)), num_workers=0, prefetch_factor=2, persistent_workers=True)
    """)
    line = line_of(script, "loader = DataLoader")
    dl001, dl002 = finding("DL001", script, line), finding("DL002", script, line)
    quick_probe(script, [dl001, dl002])
    assert dl002.probe["verdict"] == "confirmed"
    assert dl001.probe["verdict"] == "not reached"
    assert dl001.probe["evidence"].startswith("masked: torch raised another error first on this call (ValueError: prefetch_factor")


# -- frameworks ------------------------------------------------------------------------------------------

LIGHTNING = """
    import pytorch_lightning as pl

    class Data(pl.LightningDataModule):
        def train_dataloader(self):
            return DataLoader(Opens(), batch_size=1, num_workers=2)  # 16 batches: the probe runs 8

        def val_dataloader(self):
            return DataLoader(Opens(), batch_size=4, num_workers=2)

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch, batch_index):
            time.sleep(0.005)
            return self.layer(batch).sum()

        def validation_step(self, batch, batch_index):
            time.sleep(0.005)
            self.log("val", self.layer(batch).sum())

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if __name__ == "__main__":
        # No checkpoint callback: moving its temporary file into place is the guard's to allow (issue 22, item 3).
        trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, enable_progress_bar=False,
                             enable_model_summary=False, enable_checkpointing=False)
        trainer.fit(Model(), datamodule=Data())
        trainer.save_checkpoint("final.ckpt")
"""


class TestLightning:
    """A Lightning DataModule's loaders (a class: one unit under --dist loadscope)."""

    def test_a_lightning_datamodules_train_and_val_loaders_are_both_confirmed(self, tmp_path, monkeypatch):
        pytest.importorskip("pytorch_lightning")
        script = write_script(tmp_path, LIGHTNING, opens=True)
        monkeypatch.chdir(tmp_path)
        train = finding("DL201", script, line_of(script, "batch_size=1"))
        val_line = line_of(script, "return DataLoader(Opens(), batch_size=4")
        val = finding("DL201", script, val_line)
        report = run_probe(str(script), [], [train, val], timeout=90, progress=False,
                           settings=quick_settings(epoch_batches=EPOCH_BATCHES, stop_after_idle_iterations=2,
                                                   sweep_limit=2))  # the requested 2 workers stay in the sweep
        assert train.probe["verdict"] == "confirmed", (train.probe, report.render_text())
        assert val.probe["verdict"] == "confirmed", (val.probe, report.render_text())
        steps = {loader.call_site.rsplit(":", 1)[1]: loader.step for loader in report.loaders}
        # Lightning's epochs, bounded through len(); from the second on, their tails replay the first's batches
        assert steps[str(train.line)]["batches"] == [EPOCH_BATCHES] * 3
        assert steps[str(train.line)]["replayed_batches"] == 2 * REPLAYED
        # The sanity check (2 batches), then validation after each bounded epoch: Lightning saw its last batch.
        assert steps[str(val_line)]["batches"] == [2, 4, 4] and steps[str(val_line)]["replayed_batches"] == 2
        assert [path.name for path in tmp_path.iterdir()] == ["train.py"]  # no lightning_logs/, no final.ckpt
        assert "final.ckpt" in report.script_outcome and "nothing written" in report.script_outcome
