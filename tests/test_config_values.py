"""Config values reach the code (issue 15 item 4): ``num_workers=cfg.train_ds.num_workers``
resolves through the project's config files, like an argparse default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project_helpers import lint_in_project, write_tree
from dllint.config import Settings
from dllint.project import ProjectIndex

SETTINGS = Settings(select=("ALL",))

TRAIN_YAML = """\
train_ds:
  batch_size: 8
  num_workers: 0
  persistent_workers: true
"""
HYDRA_APP = """\
import hydra
from torch.utils.data import DataLoader


@hydra.main(config_path="conf", config_name="train", version_base=None)
def main(cfg):
    return DataLoader(ds, num_workers=cfg.train_ds.num_workers, persistent_workers=cfg.train_ds.persistent_workers)
"""


write = write_tree


def lint(root: Path, name: str, files: dict[str, str] | None = None):
    if files:
        write(root, files)
    return lint_in_project(ProjectIndex(root, SETTINGS), root / name, SETTINGS)


def codes(result) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in result.findings)


def test_hydra_config_names_the_file_and_key(tmp_path):
    result = lint(tmp_path, "train.py", {"conf/train.yaml": TRAIN_YAML, "train.py": HYDRA_APP})
    (finding,) = [f for f in result.findings if f.code == "DL001"]
    assert "(train_ds.persistent_workers: true from conf/train.yaml:4; train_ds.num_workers: 0 from conf/train.yaml:3)" in finding.message
    assert [(k.key, k.value, k.places) for k in finding.config_keys] == [
        ("train_ds.persistent_workers", "true", (("conf/train.yaml", 4),)),
        ("train_ds.num_workers", "0", (("conf/train.yaml", 3),)),
    ]
    assert finding.to_dict()["config_keys"][1] == {"key": "train_ds.num_workers", "value": "0", "places": [["conf/train.yaml", 3]]}
    assert str(tmp_path / "conf" / "train.yaml") in result.deps


def test_without_a_project_the_value_stays_unknown(tmp_path):
    from lint_helpers import lint_source

    write(tmp_path, {"conf/train.yaml": TRAIN_YAML})
    assert [f.code for f in lint_source(HYDRA_APP, SETTINGS, path=str(tmp_path / "train.py")) if f.code == "DL001"] == []


def test_hydra_defaults_list_and_interpolation(tmp_path):
    files = {
        "conf/config.yaml": "defaults:\n  - data: small\n  - _self_\nworkers: 0\n",
        "conf/data/small.yaml": "num_workers: ${workers}\nprefetch_factor: 4\n",
        "train.py": HYDRA_APP.replace('config_name="train"', 'config_name="config"')
        .replace("cfg.train_ds.num_workers", "cfg.data.num_workers")
        .replace("persistent_workers=cfg.train_ds.persistent_workers", "prefetch_factor=cfg.data.prefetch_factor"),
    }
    result = lint(tmp_path, "train.py", files)
    assert codes(result) == [(7, "DL002")]
    assert "data.num_workers: 0 from conf/data/small.yaml:1" in result.findings[0].message


@pytest.mark.parametrize(
    "load",
    [
        'cfg = OmegaConf.load("conf/train.yaml")',
        'cfg = OmegaConf.load(args.config)',
        'with open("conf/train.yaml") as f:\n    cfg = yaml.safe_load(f)',
        'cfg = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), "conf/train.yaml")))',
        'cfg = OmegaConf.load(Path(__file__).parent / "conf" / "train.yaml")',
    ],
)
def test_loaded_configs(tmp_path, load):
    script = (
        "import argparse, os\nfrom pathlib import Path\nimport yaml\nfrom omegaconf import OmegaConf\n"
        "from torch.utils.data import DataLoader\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--config', default='conf/train.yaml')\n"
        "args = parser.parse_args()\n"
        f"{load}\n"
        "train = cfg['train_ds']\n"
        "loader = DataLoader(ds, num_workers=train['num_workers'], persistent_workers=train['persistent_workers'])\n"
    )
    result = lint(tmp_path, "train.py", {"conf/train.yaml": TRAIN_YAML, "train.py": script})
    assert [f.code for f in result.findings if f.code == "DL001"] == ["DL001"]


@pytest.mark.parametrize(
    "change",
    ["cfg.train_ds.num_workers = 4", "cfg.update({'a': 1})", "OmegaConf.update(cfg, 'train_ds.num_workers', 4)", "cfg = None"],
)
def test_a_config_the_code_changes_is_not_read(tmp_path, change):
    script = (
        "from omegaconf import OmegaConf\nfrom torch.utils.data import DataLoader\n"
        "cfg = OmegaConf.load('conf/train.yaml')\n"
        f"{change}\n"
        "loader = DataLoader(ds, num_workers=cfg.train_ds.num_workers, persistent_workers=cfg.train_ds.persistent_workers)\n"
    )
    result = lint(tmp_path, "train.py", {"conf/train.yaml": TRAIN_YAML, "train.py": script})
    assert "DL001" not in [f.code for f in result.findings]


PROFILES_SCRIPT = """\
import sys
from omegaconf import OmegaConf
from torch.utils.data import DataLoader

cfg = OmegaConf.load(f"profiles/{sys.argv[1]}.yaml")
loader = DataLoader(ds, num_workers=cfg.loader.num_workers, persistent_workers=cfg.loader.persistent_workers)
"""


def test_profiles_are_each_read_and_known_only_when_they_agree(tmp_path):
    windows = "loader:\n  num_workers: 0\n  persistent_workers: true\n"
    files = {"profiles/windows.yaml": windows, "profiles/laptop.yaml": windows, "train.py": PROFILES_SCRIPT}
    result = lint(tmp_path, "train.py", files)
    (finding,) = [f for f in result.findings if f.code == "DL001"]
    assert "loader.num_workers: 0 from profiles/laptop.yaml:2 and profiles/windows.yaml:2" in finding.message
    write(tmp_path, {"profiles/linux.yaml": "loader:\n  num_workers: 8\n  persistent_workers: true\n"})
    assert "DL001" not in [f.code for f in lint(tmp_path, "train.py").findings]


def test_unknown_interpolation_and_yaml_text_stay_unknown(tmp_path):
    files = {
        "conf/train.yaml": "train_ds:\n  num_workers: ${oc.env:WORKERS}\n  persistent_workers: true\n",
        "train.py": HYDRA_APP,
    }
    assert "DL001" not in [f.code for f in lint(tmp_path, "train.py", files).findings]
    # yaml.safe_load does not interpolate: "${workers}" is a string, never 0
    script = (
        "import yaml\nfrom torch.utils.data import DataLoader\ncfg = yaml.safe_load(open('c.yaml'))\n"
        "loader = DataLoader(ds, num_workers=cfg['num_workers'], persistent_workers=cfg['persistent_workers'])\n"
    )
    files = {"c.yaml": "workers: 0\nnum_workers: ${workers}\npersistent_workers: true\n", "s.py": script}
    assert "DL001" not in [f.code for f in lint(tmp_path, "s.py", files).findings]


def test_mmengine_config_fromfile_with_base(tmp_path):
    files = {
        "configs/_base_/loader.py": "train_dataloader = dict(num_workers=0, persistent_workers=True, batch_size=2)\n",
        "configs/exp.py": "_base_ = ['./_base_/loader.py']\ntrain_dataloader = dict(batch_size=4)\n",
        "train.py": (
            "from mmengine.config import Config\nfrom torch.utils.data import DataLoader\n"
            "cfg = Config.fromfile('configs/exp.py')\n"
            "loader = DataLoader(ds, num_workers=cfg.train_dataloader.num_workers,\n"
            "                    persistent_workers=cfg.train_dataloader.persistent_workers)\n"
        ),
    }
    result = lint(tmp_path, "train.py", files)
    (finding,) = [f for f in result.findings if f.code == "DL001"]
    assert "train_dataloader.num_workers: 0 from configs/_base_/loader.py:1" in finding.message
    assert str(tmp_path / "configs" / "_base_" / "loader.py") in result.deps


def test_cache_lints_again_when_the_config_changes(tmp_path, relinted):
    from dllint.pipeline import RunOptions, run

    root = tmp_path / "project"
    write(root, {"pyproject.toml": "", "conf/train.yaml": TRAIN_YAML, "train.py": HYDRA_APP})
    options = RunOptions(jobs=1, cache_dir=str(tmp_path / "cache"))

    def check():
        outcome = run([str(root / "train.py")], SETTINGS, options)
        return [(f.code, f.config_keys) for o in outcome.files for f in o.findings if f.code == "DL001"]

    first = check()
    assert [code for code, _ in first] == ["DL001"]
    linted = relinted
    linted.clear()
    assert check() == first  # a hit: the config keys come back from the cache too
    assert linted == []
    (root / "conf" / "train.yaml").write_text(TRAIN_YAML.replace("num_workers: 0", "num_workers: 4"))
    assert check() == []
    assert linted == ["train.py"]


def test_crash_rules_name_the_config_key(tmp_path):
    """A DL1xx finding on a loader whose worker count comes from a config names where it is set."""
    files = {
        "conf/train.yaml": "train_ds:\n  num_workers: 4\n",
        "train.py": HYDRA_APP.replace(", persistent_workers=cfg.train_ds.persistent_workers", ", collate_fn=lambda b: b"),
    }
    (finding,) = [f for f in lint(tmp_path, "train.py", files).findings if f.code == "DL102"]
    assert finding.message.endswith("(train_ds.num_workers: 4 from conf/train.yaml:2)")
    assert json.loads(json.dumps(finding.to_dict()))["config_keys"][0]["key"] == "train_ds.num_workers"


def test_crash_rules_count_a_config_key_set_to_zero_as_may_start_workers(tmp_path):
    """Like a command-line option whose default is 0 (the rule catalog's "Worker counts from the command line", shared with the developers)."""
    files = {
        "conf/train.yaml": "train_ds:\n  num_workers: 0\n",
        "train.py": HYDRA_APP.replace(", persistent_workers=cfg.train_ds.persistent_workers", ", collate_fn=lambda b: b"),
    }
    (finding,) = [f for f in lint(tmp_path, "train.py", files).findings if f.code == "DL102"]
    assert "(when train_ds.num_workers > 0)" in finding.message
