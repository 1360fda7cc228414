"""The settings block in the framework's own terms, under the real frameworks.

The real ``transformers.Trainer`` (its loader built by the Trainer and rebuilt by accelerate) and
the real ``@hydra.main`` reading a YAML config that a factory in another module turns into a
``DataLoader``. The placement logic is tested on small scripts in ``test_blocks.py``; these runs
show that what the frameworks really do (where the loader is built, what its call site is, where
each value comes from) still gives a block a user can paste.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from probe_helpers import line_of, quick_settings

from dllint.probe.blocks import CALL, CONFIG, TRAINING_ARGS, Place

HF_SCRIPT = """\
    import time

    import torch
    from torch.utils.data import Dataset
    from transformers import Trainer, TrainingArguments


    class Slow(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, index):
            time.sleep(0.002)
            return {"x": torch.tensor([float(index)]), "labels": torch.tensor([1.0])}


    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x, labels=None):
            out = self.layer(x)
            return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


    if __name__ == "__main__":
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, num_train_epochs=3,
                                 dataloader_num_workers=1, report_to="none", save_strategy="no",
                                 logging_strategy="no", use_cpu=True, disable_tqdm=True)
        trainer = Trainer(model=Tiny(), args=args, train_dataset=Slow())
        trainer.train()
    """

HYDRA_FACTORY = """\
    import time

    import torch
    from torch.utils.data import DataLoader, Dataset


    class Slow(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, index):
            time.sleep(0.002)
            return torch.tensor([float(index)])


    def make_loader(cfg):
        return DataLoader(Slow(), batch_size=cfg.batch_size, num_workers=cfg.num_workers)
    """

HYDRA_TRAIN = """\
    import time

    import hydra

    from pkg.data import make_loader


    @hydra.main(config_path="conf", config_name="config", version_base=None)
    def main(cfg):
        loader = make_loader(cfg.data)
        for epoch in range(3):
            for batch in loader:
                time.sleep(0.002)


    if __name__ == "__main__":
        main()
    """


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def probe(path):
    from dllint.probe import run_probe

    settings = quick_settings(epoch_batches=8, sweep_limit=2, measurement_seconds=10)
    return run_probe(str(path), [], [], timeout=120, progress=False, settings=settings)


@pytest.mark.probe
def test_the_real_hf_trainers_block_is_in_training_arguments_names(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    script = write(tmp_path / "train.py", HF_SCRIPT)
    monkeypatch.chdir(tmp_path)
    report = probe(script)
    [loader] = report.loaders
    text = report.render_text()
    # the loader is built inside the Trainer (and rebuilt by accelerate): the user's line is train()
    assert loader.call_site == f"train.py:{line_of(script, 'trainer.train()')}", text
    assert loader.recommendation is not None, text
    arguments = f"train.py:{line_of(script, 'args = TrainingArguments(')}"
    assert {place.kind for place in loader.terms.places.values()} == {TRAINING_ARGS}, text
    assert loader.terms.places["num_workers"] == Place(TRAINING_ARGS, "dataloader_num_workers", arguments,
                                                       "TrainingArguments(...)")
    assert f"    in the TrainingArguments call at {arguments} (paste into the call):" in text
    assert f"      dataloader_num_workers={loader.recommendation.settings['num_workers']},  # sets num_workers; " in text
    assert "\n      num_workers=" not in text  # never the DataLoader's own name: the Trainer builds the call
    saved = json.loads(report.to_json())["loaders"][0]["block"]["places"]
    assert saved["pin_memory"] == {"kind": "training_args", "name": "dataloader_pin_memory", "where": arguments,
                                   "owner": "TrainingArguments(...)"}
    assert saved["persistent_workers"]["name"] == "dataloader_persistent_workers"


@pytest.mark.probe
def test_real_hydra_through_a_factory_is_placed_at_the_yaml_key(tmp_path, monkeypatch):
    pytest.importorskip("hydra")
    write(tmp_path / "conf" / "config.yaml", "data:\n  batch_size: 4\n  num_workers: 1\n")
    write(tmp_path / "pkg" / "__init__.py", "")
    factory = write(tmp_path / "pkg" / "data.py", HYDRA_FACTORY)
    script = write(tmp_path / "train.py", HYDRA_TRAIN)
    monkeypatch.chdir(tmp_path)
    report = probe(script)
    [loader] = report.loaders
    text = report.render_text()
    assert loader.recommendation is not None, text
    call = f"pkg/data.py:{line_of(factory, 'return DataLoader')}"
    assert loader.call_site == call, text
    # num_workers is read from cfg: its key in the YAML file; what the call does not set goes into the call
    assert loader.terms.places["num_workers"] == Place(CONFIG, "data.num_workers", "conf/config.yaml:3", "conf/config.yaml")
    assert loader.terms.places["pin_memory"].kind == CALL
    assert "    in conf/config.yaml (change each key where it is written):" in text, text
    workers = loader.recommendation.settings["num_workers"]
    assert f"      data.num_workers: {workers}  # conf/config.yaml:3; sweep: " in text
    assert f"    in the DataLoader call at {call} (paste into the call):" in text
