"""The settings block in the user's own terms: where each recommended setting is written.

The first tests read small scripts statically (``blocks.place_settings``); the ``probe``-marked
ones run real scripts under the probe (real workers): a Lightning DataModule, a loader built
inside the loop (DL204), a torchrun job and a factory target. The real HF Trainer and the real
``@hydra.main`` through a factory are in ``test_real_frameworks.py``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from types import SimpleNamespace

import pytest
from probe_helpers import checks_settings, finding, line_of, quick_settings, write_script

from dllint.probe.blocks import (CALL, CONFIG, DATAMODULE, Place, for_a_rebuilt_loader, in_loop_saving,
                                 place_settings, render_settings)
from dllint.probe.recommend import Recommendation

BLOCK = {"num_workers": 2, "persistent_workers": True, "prefetch_factor": 2, "pin_memory": False}
EFFECTS = {"num_workers": "sweep: 2 workers: 800.0 samples/s"}


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def summary(path, text: str, **values) -> dict:
    return {"path": str(path), "line": line_of(path, text), **values}


# -- read statically -----------------------------------------------------------------------------

HYDRA_CONFIG = """\
    data:
      batch_size: 8
      num_workers: 4
      persistent_workers: false
    val:
      num_workers: 4
    """

FACTORY = """\
    from torch.utils.data import DataLoader

    def make_loader(cfg, dataset):
        return DataLoader(dataset, batch_size=cfg.batch_size, num_workers=cfg.num_workers,
                          persistent_workers=cfg.persistent_workers)
    """

HYDRA_MAIN = """\
    import hydra
    from pkg.data import make_loader

    @hydra.main(config_path="conf", config_name="config", version_base=None)
    def main(cfg):
        loader = make_loader(cfg.data, list(range(64)))
        for epoch in range(3):
            for batch in loader:
                pass

    main()
    """


def hydra_project(tmp_path):
    write(tmp_path / "conf" / "config.yaml", HYDRA_CONFIG)
    write(tmp_path / "pkg" / "__init__.py", "")
    factory = write(tmp_path / "pkg" / "data.py", FACTORY)
    return write(tmp_path / "train.py", HYDRA_MAIN), factory


def test_a_factory_in_another_module_reading_hydras_config_is_placed_at_the_yaml_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script, factory = hydra_project(tmp_path)
    terms = place_settings(summary(factory, "return DataLoader", num_workers=4, persistent_workers=False),
                           BLOCK, str(script), None)
    # the caller passes cfg.data: data.num_workers, not val.num_workers (which has the same value)
    assert terms.places["num_workers"] == Place(CONFIG, "data.num_workers", "conf/config.yaml:3", "conf/config.yaml")
    assert terms.places["persistent_workers"] == Place(CONFIG, "data.persistent_workers", "conf/config.yaml:4", "conf/config.yaml")
    assert terms.places["pin_memory"] == Place(CALL, "pin_memory", "pkg/data.py:4")  # not written anywhere: the call
    text = render_settings(BLOCK, EFFECTS, (), terms, "pkg/data.py:4")
    assert text == [
        "  recommended settings for the DataLoader at pkg/data.py:4, each where its value is written:",
        "    in conf/config.yaml (change each key where it is written):",
        "      data.num_workers: 2  # conf/config.yaml:3; sweep: 2 workers: 800.0 samples/s",
        "      data.persistent_workers: true  # conf/config.yaml:4; ",
        "    in the DataLoader call at pkg/data.py:4 (paste into the call):",
        "      prefetch_factor=2,  # ",
        "      pin_memory=False,  # ",
    ]


def test_without_a_caller_the_key_is_the_only_one_of_the_runtime_value(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script, factory = hydra_project(tmp_path)
    script.write_text(script.read_text().replace("make_loader(cfg.data, ", "build(cfg, "))  # the factory is not called by name
    terms = place_settings(summary(factory, "return DataLoader", num_workers=4, persistent_workers=False),
                           BLOCK, str(script), None)
    assert terms.places["persistent_workers"].name == "data.persistent_workers"  # the only persistent_workers key
    assert terms.places["num_workers"].kind == CALL  # data.num_workers and val.num_workers are both 4: no guess


def test_a_training_arguments_call_takes_the_block_under_its_own_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = write(tmp_path / "train.py", """\
        from transformers import Trainer, TrainingArguments

        args = TrainingArguments(output_dir="out", per_device_train_batch_size=8,
                                 dataloader_num_workers=4)
        trainer = Trainer(model=None, args=args, train_dataset=None)
        trainer.train()
        """)
    settings = {**BLOCK, "multiprocessing_context": "spawn"}
    terms = place_settings(summary(script, "trainer.train()"), settings, str(script), None)
    assert {name: place.name for name, place in terms.places.items()} == {
        "num_workers": "dataloader_num_workers", "persistent_workers": "dataloader_persistent_workers",
        "prefetch_factor": "dataloader_prefetch_factor", "pin_memory": "dataloader_pin_memory"}
    assert {place.where for place in terms.places.values()} == {"train.py:3"}
    text = render_settings(settings, EFFECTS, (), terms, "train.py:6")
    assert "    in the TrainingArguments call at train.py:3 (paste into the call):" in text
    assert "      dataloader_num_workers=2,  # sets num_workers; sweep: 2 workers: 800.0 samples/s" in text
    assert "    not settable there: multiprocessing_context='spawn' (TrainingArguments has no option for it)" in text
    assert text[0] == "  recommended settings for the DataLoader the Trainer builds at train.py:6, in TrainingArguments' names:"


def test_a_datamodule_attribute_is_placed_at_the_argument_that_sets_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = write(tmp_path / "train.py", """\
        import pytorch_lightning as pl
        from torch.utils.data import DataLoader

        class Data(pl.LightningDataModule):
            def __init__(self, workers=4, pin=False):
                super().__init__()
                self.num_workers = workers
                self.pin = pin
                self.keep = False

            def train_dataloader(self):
                return DataLoader(list(range(64)), num_workers=self.num_workers, pin_memory=self.pin,
                                  persistent_workers=self.keep)

        data = Data(workers=4)
        """)
    terms = place_settings(summary(script, "return DataLoader"), BLOCK, str(script), None)
    assert terms.places["num_workers"] == Place(DATAMODULE, "workers", "train.py:15", "Data(...)")
    assert terms.places["pin_memory"] == Place(DATAMODULE, "pin", "train.py:15", "Data(...)")
    assert terms.places["persistent_workers"] == Place(DATAMODULE, "self.keep", "train.py:9", "Data")  # a literal in __init__
    text = render_settings(BLOCK, EFFECTS, (), terms, "train.py:12")
    assert "    in Data(...) at train.py:15:" in text
    assert "      workers=2,  # sets num_workers; sweep: 2 workers: 800.0 samples/s" in text
    assert "      self.keep = True  # " in text


def test_a_datamodule_holding_the_config_is_placed_at_the_yaml_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "conf" / "config.yaml", HYDRA_CONFIG)
    script = write(tmp_path / "train.py", """\
        import hydra
        import pytorch_lightning as pl
        from torch.utils.data import DataLoader

        class Data(pl.LightningDataModule):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg
                self.keep = cfg.persistent_workers

            def train_dataloader(self):
                return DataLoader(list(range(64)), num_workers=self.cfg.num_workers, persistent_workers=self.keep)

        @hydra.main(config_path="conf", config_name="config", version_base=None)
        def main(cfg):
            data = Data(cfg.data)
        """)
    terms = place_settings(summary(script, "return DataLoader", num_workers=4, persistent_workers=False),
                           BLOCK, str(script), None)
    # self.keep is set from cfg.persistent_workers, and Data(cfg.data) says which part of the config cfg is
    assert terms.places["persistent_workers"] == Place(CONFIG, "data.persistent_workers", "conf/config.yaml:4", "conf/config.yaml")
    # self.cfg.num_workers: data.num_workers and val.num_workers are both 4 -> no guess
    assert terms.places["num_workers"].kind == CALL
    write(tmp_path / "conf" / "config.yaml", HYDRA_CONFIG.replace("num_workers: 4\n    \n", "").replace("val:\n      num_workers: 4\n", ""))
    terms = place_settings(summary(script, "return DataLoader", num_workers=4), BLOCK, str(script), None)
    assert terms.places["num_workers"] == Place(CONFIG, "data.num_workers", "conf/config.yaml:3", "conf/config.yaml")


def test_a_loader_built_in_the_loop_is_told_to_move_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = write(tmp_path / "train.py", """\
        from torch.utils.data import DataLoader

        for epoch in range(3):
            loader = DataLoader(list(range(64)), num_workers=2)
            for batch in loader:
                pass
        """)
    terms = place_settings(summary(script, "DataLoader(list"), BLOCK, str(script), None)
    assert terms.build_once is None  # only DL204's confirmed result says so (a loader per fold is rebuilt on purpose)
    measured = place_settings(summary(script, "DataLoader(list"), BLOCK, str(script), "confirmed: saves 0.3 s per epoch")
    recommendation = for_a_rebuilt_loader(Recommendation(BLOCK, {"persistent_workers": "epoch start 0.3 s -> 0.0 s"}),
                                          {"num_workers": 2, "persistent_workers": False, "pin_memory": False})
    assert "persistent_workers" not in recommendation.settings and not recommendation.changed  # nothing else to change
    text = render_settings(recommendation.settings, recommendation.effects, (), measured, "train.py:4")
    assert text == [
        "  build this DataLoader once, before the loop: the script builds it again each time round "
        "(confirmed: saves 0.3 s per epoch); no setting on the call can save what a new loader costs each time",
        "  recommended settings for the DataLoader at train.py:4 (paste into the call):",
        "      num_workers=2,  # ",
        "      prefetch_factor=2,  # ",
        "      pin_memory=False,  # ",
        "      # persistent_workers: left as it is on a loader built again each time round (epoch start 0.3 s -> 0.0 s); "
        "once it is built before the loop, it keeps its workers across epochs",
    ]
    confirmed = SimpleNamespace(code="DL204", verdict="confirmed", evidence="the script built this loader 3 times")
    assert in_loop_saving([confirmed]) == "confirmed: the script built this loader 3 times"
    assert in_loop_saving([SimpleNamespace(code="DL204", verdict="not reached", evidence="the loader was built once")]) is None


# -- real runs -----------------------------------------------------------------------------------

def probe(path, findings=(), decide=True, **kwargs):
    """The least evidence; ``decide=False``: no decision runs either (where the block is written is the subject)."""
    from dllint.probe import run_probe

    settings = (quick_settings if decide else checks_settings)(epoch_batches=8, sweep_limit=2, measurement_seconds=10)
    return run_probe(str(path), [], list(findings), timeout=90, progress=False, settings=settings, **kwargs)


LIGHTNING = """
    import pytorch_lightning as pl

    class Data(pl.LightningDataModule):
        def __init__(self, workers=1):
            super().__init__()
            self.workers = workers

        def train_dataloader(self):
            return DataLoader(Opens(), batch_size=1, num_workers=self.workers)

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch, batch_index):
            time.sleep(0.005)
            return self.layer(batch).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if __name__ == "__main__":
        trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, enable_progress_bar=False,
                             enable_model_summary=False, enable_checkpointing=False, logger=False)
        trainer.fit(Model(), datamodule=Data(workers=1))
"""


@pytest.mark.probe
def test_lightning_block_is_in_the_datamodules_arguments(tmp_path, monkeypatch):
    pytest.importorskip("pytorch_lightning")
    script = write_script(tmp_path, LIGHTNING, opens=True)
    monkeypatch.chdir(tmp_path)
    report = probe(script, decide=False)  # each decision run starts Lightning again
    [loader] = [loader for loader in report.loaders if loader.recommendation is not None]
    construction = line_of(script, "datamodule=Data(workers=1)")
    assert loader.terms.places["num_workers"] == Place(DATAMODULE, "workers", f"train.py:{construction}", "Data(...)")
    text = report.render_text()
    assert f"    in Data(...) at train.py:{construction}:" in text, text
    assert f"      workers={loader.recommendation.settings['num_workers']},  # sets num_workers; " in text


@pytest.mark.probe
def test_dl204s_block_says_build_it_once_with_the_measured_saving(tmp_path, monkeypatch):
    script = write_script(tmp_path, """
        for epoch in range(3):
            loader = DataLoader(Opens(), batch_size=2, num_workers=2)
            for batch in loader:
                time.sleep(0.002)
    """, opens=True)
    monkeypatch.chdir(tmp_path)
    dl204 = finding("DL204", script, line_of(script, "loader = DataLoader"))
    report = probe(script, [dl204])
    [loader] = report.loaders
    assert loader.recommendation is not None, report.render_text()
    [result] = [result for result in loader.results if result.code == "DL204"]
    assert loader.terms.build_once == f"{result.verdict}: {result.evidence}"
    text = report.render_text()
    assert ("  build this DataLoader once, before the loop: the script builds it again each time round "
            f"({result.verdict}: {result.evidence})") in text, text
    assert result.verdict == "confirmed" and "the script built this loader 3 times" in result.evidence
    # not persistent_workers=True on the call rebuilt in the loop (which cannot help), nor in the re-run
    assert "persistent_workers" not in loader.recommendation.settings
    assert "      # persistent_workers: left as it is on a loader built again each time round" in text
    assert dl204.probe["verdict"] == "confirmed"  # the block does not make DL204 moot


@pytest.mark.probe
@pytest.mark.distributed
def test_torchrun_gives_each_ranks_data_wait_and_block(tmp_path, monkeypatch):
    script = write_script(tmp_path, """
        import torch.distributed as dist

        class Slow(Dataset):
            def __len__(self):
                return 64

            def __getitem__(self, index):
                time.sleep(0.002)
                return torch.tensor([float(index)])

        dist.init_process_group("gloo")
        dataset = Slow()
        loader = DataLoader(dataset, batch_size=4, num_workers=1, sampler=DistributedSampler(dataset))
        for epoch in range(3):
            loader.sampler.set_epoch(epoch)
            for batch in loader:
                time.sleep(0.002)
        dist.destroy_process_group()
    """)
    monkeypatch.chdir(tmp_path)
    report = probe(script, launcher=f"{sys.executable} -m torch.distributed.run --standalone --nproc-per-node 2")
    [loader] = report.loaders
    assert set(loader.rank_steps) == {0, 1}, report.render_text()
    assert all(step["steps"] > 0 and 0 <= step["data_wait_fraction"] <= 1 for step in loader.rank_steps.values())
    assert loader.step in loader.rank_steps.values()  # the rank that waits most
    assert loader.recommendation is not None and set(loader.rank_recommendations) == {0, 1}
    assert loader.recommendation.after == {"not_run": "the probe does not re-run a distributed job; apply the settings and probe again"}
    text = report.render_text()
    assert "  rank 0: data wait: " in text and "  rank 1: data wait: " in text
    waits_most = max(loader.rank_steps, key=lambda rank: loader.rank_steps[rank]["data_wait_fraction"])
    assert f"rank {waits_most}, the rank that waits most)" in text
    assert "recommended settings for the DataLoader at train.py:" in text
    saved = json.loads(report.to_json())["loaders"][0]
    assert saved["step"] and saved["recommendation"] is not None and set(saved["ranks"]) == {"0", "1"}


@pytest.mark.probe
def test_a_factory_targets_block_has_no_data_wait(tmp_path, monkeypatch):
    module = write_script(tmp_path, """
        def make_loader():
            return DataLoader(TensorDataset(torch.zeros(256, 4)), batch_size=4, num_workers=2)
    """, name="loaders_for_blocks.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = probe("loaders_for_blocks:make_loader", [finding("DL202", module, line_of(module, "return DataLoader"))])
    text = report.render_text()
    [loader] = report.loaders
    assert "no data wait to measure" in text, text
    # the sweep over in-memory tensors changes the count: the block is re-run, and its before/after has no data wait
    assert loader.recommendation is not None and loader.recommendation.changed, text
    assert "epoch_s" in loader.recommendation.before and "epoch_s" in loader.recommendation.after, text
    assert not {"data_wait_fraction", "data_wait_s", "step_s"} & {*loader.recommendation.before, *loader.recommendation.after}
    after_the_step = text.split("no data wait to measure", 1)[1]
    assert "before -> after" in after_the_step and "data wait" not in after_the_step, text


def test_a_notebooks_block_is_placed_in_its_cells(tmp_path, monkeypatch):
    from dllint.probe.notebook_target import NotebookPositions

    monkeypatch.chdir(tmp_path)
    cells = [["from torch.utils.data import DataLoader\n"],
             ["%matplotlib inline\n", "for epoch in range(3):\n", "    loader = DataLoader(list(range(64)), num_workers=2)\n"]]
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": [],
                                               "execution_count": None} for source in cells],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    positions = NotebookPositions.of(str(notebook))
    line = positions.module_line(2, 3)
    terms = place_settings({"path": str(notebook), "line": line}, BLOCK, str(notebook), None)
    assert terms.places["num_workers"].where == f"nb.ipynb:{line}"  # the joined cells' line
    loader = SimpleNamespace(summary={"path": str(notebook), "line": line}, call_site=f"nb.ipynb:{line}", terms=terms)
    positions.restore(SimpleNamespace(findings=[], loaders=[loader]), [], [])
    assert loader.call_site == "nb.ipynb:cell 2:3"
    assert {place.where for place in loader.terms.places.values()} == {"nb.ipynb:cell 2:3"}


def test_saved_hyperparameters_are_the_init_arguments_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = write(tmp_path / "train.py", """\
        import pytorch_lightning as pl
        from torch.utils.data import DataLoader

        class Data(pl.LightningDataModule):
            def __init__(self, num_workers=4):
                super().__init__()
                self.save_hyperparameters()

            def train_dataloader(self):
                return DataLoader(list(range(64)), num_workers=self.hparams.num_workers)
        """)
    terms = place_settings(summary(script, "return DataLoader"), {"num_workers": 2}, str(script), None)
    # never constructed in this file: the __init__ that takes it
    assert terms.places["num_workers"] == Place(DATAMODULE, "num_workers", "train.py:5", "Data.__init__")


def test_a_confirmed_finding_says_where_its_setting_is_written():
    from dllint.probe.blocks import Terms, name_place

    terms = Terms({"num_workers": Place(CONFIG, "data.num_workers", "conf/config.yaml:3", "conf/config.yaml"),
                   "pin_memory": Place(CALL, "pin_memory", "pkg/data.py:4")})
    dl202 = {"verdict": "confirmed", "evidence": "2 workers: 100 samples/s; 0 workers reach 400"}
    name_place(dl202, "DL202", terms)
    assert dl202["evidence"] == "2 workers: 100 samples/s; 0 workers reach 400; change data.num_workers in conf/config.yaml:3"
    assert dl202["change"] == ["data.num_workers in conf/config.yaml:3"]
    unchanged = [({"verdict": "not confirmed", "evidence": "e"}, "DL202"),  # nothing to change
                 ({"verdict": "confirmed", "evidence": "e"}, "DL206"),  # written in the call: the finding is there
                 ({"verdict": "confirmed", "evidence": "e", "change": ["x in y:1"]}, "DL202")]  # static config keys said it
    for probe, code in unchanged:
        before = dict(probe)
        name_place(probe, code, terms)
        assert probe == before
