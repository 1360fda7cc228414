"""Config fixes set values and never delete keys (issue 24, points 1 and 5): a Hydra project is
fixed through the CLI, then its config is loaded with OmegaConf in struct mode and read by the
same key paths the code uses, and the loader is built by torch with what the code reads."""

from __future__ import annotations

import ast
import time

import pytest

from tests.project_helpers import write_tree
from tests.test_cli import run

CONFIG = """\
defaults:
  - _self_
train_loader:
  batch_size: 8
  num_workers: 0  # debugging on a laptop
  persistent_workers: true  # keep workers between epochs
  prefetch_factor: 4  # batches ahead per worker
"""
TRAIN = """\
import hydra
from torch.utils.data import DataLoader


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg):
    loader = DataLoader(
        list(range(32)),
        batch_size=cfg.train_loader.batch_size,
        num_workers=cfg.train_loader.num_workers,
        persistent_workers=cfg.train_loader.persistent_workers,
        prefetch_factor=cfg.train_loader.prefetch_factor,
    )
    for epoch in range(2):
        for batch in loader:
            pass


if __name__ == "__main__":
    main()
"""


def _loader_keywords(source: str) -> dict[str, ast.expr]:
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "DataLoader")
    return {k.arg: k.value for k in call.keywords if k.arg}


def test_fixed_hydra_config_loads_and_the_code_builds_its_loader(tmp_path):
    omegaconf = pytest.importorskip("omegaconf")
    torch_data = pytest.importorskip("torch.utils.data")
    write_tree(tmp_path, {"proj/conf/config.yaml": CONFIG, "proj/train.py": TRAIN})
    project = tmp_path / "proj"
    checked = run("--no-cache", ".", cwd=project)
    assert "conf/config.yaml:6:3: DL001 [*] persistent_workers: true needs num_workers > 0 (torch raises ValueError): set persistent_workers: false" in checked.output
    assert "conf/config.yaml:7:3: DL002 [*] prefetch_factor without workers:" in checked.output
    assert "set prefetch_factor: null or num_workers > 0" in checked.output
    run("--fix", "--no-cache", ".", cwd=project)
    text = (project / "conf/config.yaml").read_text()
    assert text == CONFIG.replace("persistent_workers: true", "persistent_workers: false").replace("prefetch_factor: 4", "prefetch_factor: null")
    cfg = omegaconf.OmegaConf.load(project / "conf/config.yaml")
    omegaconf.OmegaConf.set_struct(cfg, True)  # as Hydra hands it over: a missing key raises
    source = (project / "train.py").read_text()
    kwargs = {name: eval(compile(ast.Expression(expr), "train.py", "eval"), {"cfg": cfg}) for name, expr in _loader_keywords(source).items()}
    assert kwargs == {"batch_size": 8, "num_workers": 0, "persistent_workers": False, "prefetch_factor": None}
    loader = torch_data.DataLoader(list(range(32)), **kwargs)  # what torch refused before the fix
    assert sum(len(batch) for batch in loader) == 32
    fixed_source = source
    again = run("--fix", "--no-cache", ".", cwd=project)
    assert (project / "conf/config.yaml").read_text() == text and (project / "train.py").read_text() == fixed_source
    assert again.exit_code == 0 and "All checks passed!" in again.output, again.output


def test_mmengine_child_over_a_base_gets_the_value_in_the_child(tmp_path):
    base = "train_dataloader = dict(batch_size=2, num_workers=4, persistent_workers=True, dataset=dict(type='D'))\n"
    child = "_base_ = ['./base.py']\ntrain_dataloader = dict(num_workers=0)  # debugging\n"
    write_tree(tmp_path, {"configs/base.py": base, "configs/debug.py": child})
    checked = run("--no-cache", "configs/debug.py", cwd=tmp_path)
    assert "configs/debug.py:2:25: DL001 [*] persistent_workers=True needs num_workers > 0 (torch raises ValueError): set persistent_workers=False" in checked.output
    run("--fix", "--no-cache", "configs/debug.py", cwd=tmp_path)
    assert (tmp_path / "configs/debug.py").read_text() == (
        "_base_ = ['./base.py']\ntrain_dataloader = dict(num_workers=0, persistent_workers=False)  # debugging\n"
    )
    assert (tmp_path / "configs/base.py").read_text() == base  # the base is not the file being fixed
    assert "All checks passed" in run("--no-cache", "configs/debug.py", cwd=tmp_path).output


def test_yaml_messages_use_yaml_syntax_and_resolvers_stay_silent(tmp_path):
    write_tree(tmp_path, {
        "gpu.yaml": "trainer:\n  accelerator: gpu\ntrain_dataloader:\n  num_workers: 4\n  persistent_workers: true\n  pin_memory: false\n  _target_: torch.utils.data.DataLoader\n",
        "env.yaml": "train_dataloader:\n  num_workers: ${oc.env:NUM_WORKERS}\n  batch_size: 4\n",
        "env_default.yaml": "train_dataloader:\n  num_workers: ${oc.env:NUM_WORKERS,4}\n  batch_size: 4\n",
        "plain.yaml": "train_dataloader:\n  num_workers: 4\n  batch_size: 4\n",
        # the code hands each train_dataloader block to DataLoader whole: a key added there reaches it
        "train.py": "from torch.utils.data import DataLoader\n\ndef loader(ds, cfg):\n    return DataLoader(ds, **cfg.train_dataloader)\n",
    })
    output = run("--no-cache", ".", cwd=tmp_path).output
    assert "gpu.yaml:6:3: DL206 [-] batches are copied to CUDA from pageable memory: set pin_memory: true so the loader page-locks them (faster copies, which overlap compute with non_blocking=True)" in output
    assert "plain.yaml:1:1: DL201 [*] workers restart every epoch: add persistent_workers: true" in output
    assert "env.yaml" not in output and "env_default.yaml" not in output


def test_choosing_twenty_thousand_edits_is_linear():
    """One file with 20,000 loader blocks: each edit was checked against every edit chosen before
    it, and the text split into lines once per finding (fixing it took 380 s; now 28 s, most of
    it PyYAML). Here the choosing alone, which was quadratic: 200 M overlap checks."""
    from dllint.configs.edits import _lines, add_if_free
    from dllint.findings import ReplaceText

    edits = [ReplaceText((3 * i + 3, 23), (3 * i + 3, 27), "false") for i in range(20_000)]
    chosen: list[ReplaceText] = []
    start = time.perf_counter()
    assert all(add_if_free(chosen, edit) for edit in reversed(edits))
    assert not add_if_free(chosen, ReplaceText((3, 24), (3, 25), "x"))  # overlaps the first
    assert not add_if_free(chosen, ReplaceText((60_000, 23), (60_000, 23), "x"))  # same place as the last
    assert time.perf_counter() - start < 5  # quadratic: minutes
    assert chosen == edits
    text = "a: 1\n" * 1000
    assert _lines(text) is _lines(text)  # split once per text


def test_dl206_sees_the_accelerator_of_another_default(tmp_path):
    """`accelerator: gpu` in conf/trainer/gpu.yaml and the loader in conf/loader/default.yaml, both
    chosen by config.yaml's defaults list: reported at the defaults line that brings the loader in."""
    write_tree(tmp_path, {
        "conf/config.yaml": "defaults:\n  - trainer: gpu\n  - loader: default\n  - _self_\nseed: 1\n",
        "conf/trainer/gpu.yaml": "accelerator: gpu\ndevices: 1\n",
        "conf/trainer/cpu.yaml": "accelerator: cpu\n",
        "conf/loader/default.yaml": "_target_: torch.utils.data.DataLoader\nnum_workers: 4\npersistent_workers: true\npin_memory: false\n",
    })
    output = run("--no-cache", "conf", cwd=tmp_path).output
    assert output.splitlines()[0] == (
        "conf/config.yaml:3:5: DL206 batches are copied to CUDA from pageable memory: set pin_memory: true"
        " so the loader page-locks them (faster copies, which overlap compute with non_blocking=True) (pin_memory: false in loader/default.yaml:4)"
    )
    assert output.count("DL206") == 1  # the loader's own file does not know the trainer: silent
    (tmp_path / "conf/config.yaml").write_text("defaults:\n  - trainer: cpu\n  - loader: default\n")
    assert "DL206" not in run("--no-cache", "conf", cwd=tmp_path).output
