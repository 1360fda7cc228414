"""Config files: the readers' trees and positions, inheritance and interpolation, loader
blocks, the rules' config entry point, noqa, and fixes that keep the file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.configs.blocks import find_blocks
from dllint.configs.document import Unknown, lookup
from dllint.configs.inherit import resolve_document
from dllint.configs.read import read_config
from lint_helpers import fix_config_text, lint_config_text, lint_text
from dllint.configs.python_reader import read_python_config
from dllint.configs.yaml_reader import YamlError, read_yaml
from dllint.engine import Linter


def lint_yaml(text: str, path: str = "conf.yaml", **settings) -> list[tuple[int, int, str]]:
    linter = Linter(Settings(select=("ALL",), **settings))
    result = lint_config_text(path, textwrap.dedent(text), linter)
    assert not result.errors
    return [(f.line, f.column, f.code) for f in result.findings]


def blocks_of(text: str, path: str = "conf.yaml"):
    document = read_config(path, textwrap.dedent(text))
    return find_blocks(document, Settings())


# -- the YAML reader --------------------------------------------------------------------------
def test_yaml_positions_of_keys_and_values():
    document = read_yaml("c.yaml", "model:\n  train_ds:\n    num_workers: 0  # note\n    name: 'x'\n")
    entry = document.root.get("model").entries["train_ds"].value.entries["num_workers"]
    assert (entry.key_span.line, entry.key_span.column) == (3, 5)
    assert (entry.value.span.line, entry.value.span.column, entry.value.span.end_column) == (3, 18, 19)
    assert entry.value.value == 0


def test_yaml_scalars_are_read_as_yaml_means_them():
    root = read_yaml("c.yaml", "a: yes\nb: ~\nc: 0x10\nd: '0'\ne: 1.5\n").root
    assert [root.get(k).value for k in "abcde"] == [True, None, 16, "0", 1.5]


def test_yaml_merge_keys_and_aliases():
    root = read_yaml("c.yaml", "base: &b\n  num_workers: 0\n  batch_size: 1\nrun:\n  <<: *b\n  batch_size: 8\n").root
    run = root.get("run")
    assert run.get("num_workers").value == 0 and run.get("batch_size").value == 8
    assert run.entries["num_workers"].key_span.line == 2  # where the inherited key is written


def test_yaml_error_is_a_position():
    error = read_yaml("c.yaml", "a: [1, 2\nb: 3\n")
    assert isinstance(error, YamlError) and error.line >= 1 and "cannot parse YAML" in error.message


def test_unparsable_yaml_is_dl000():
    assert lint_yaml("a: [1, 2\nnum_workers: 3\n")[0][2] == "DL000"


# -- interpolation ----------------------------------------------------------------------------
def test_interpolation_absolute_relative_and_chained():
    document = read_config(
        "c.yaml",
        "workers: 4\nfirst: ${workers}\nsecond: ${first}\nblock:\n  mine: 2\n  sibling: ${.mine}\n  parent: ${..workers}\n",
    )
    root = document.root
    assert [lookup(root, [k]).value for k in ("first", "second")] == [4, 4]
    assert lookup(root, ["block", "sibling"]).value == 2
    assert lookup(root, ["block", "parent"]).value == 4


@pytest.mark.parametrize("value", ["${oc.env:WORKERS}", "${missing.key}", "w${workers}", "${workers_map}"])
def test_interpolation_that_cannot_be_resolved_is_unknown(value):
    document = read_config("c.yaml", f"workers: 4\nworkers_map: {{a: 1}}\nx: '{value}'\n")
    assert isinstance(lookup(document.root, ["x"]), Unknown)


# -- the Python dict-config reader -------------------------------------------------------------
def test_python_config_names_splats_and_updates():
    text = textwrap.dedent(
        """\
        workers = 2
        common = dict(pin_memory=True)
        train_dataloader = dict(batch_size=2, num_workers=workers, **common)
        train_dataloader.update(dict(persistent_workers=False))
        opaque = dict(num_workers=4, **unknown_name)
        """
    )
    root = read_python_config("cfg.py", text).root
    loader = root.get("train_dataloader")
    assert loader.get("num_workers").value == 2 and loader.get("pin_memory").value is True
    assert loader.get("persistent_workers").value is False
    assert not loader.open and root.get("opaque").open
    assert loader.entries["num_workers"].key_span.line == 3


def test_python_script_is_not_a_dict_config():
    text = "def build():\n    pass\ncfg = dict(num_workers=0, persistent_workers=True)\n"
    assert read_python_config("train.py", text) is None


def test_lazycall_target_and_attribute_assignments():
    text = "dataloader = OmegaConf.create()\ndataloader.train = L(build_detection_train_loader)(num_workers=4, total_batch_size=16)\ndataloader.train.num_workers = 0\n"
    root = read_python_config("cfg.py", text).root
    train = lookup(root, ["dataloader", "train"])
    assert train.target == "build_detection_train_loader"
    assert train.get("num_workers").value == 0 and train.entries["num_workers"].key_span.line == 3


# -- inheritance --------------------------------------------------------------------------------
def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def resolved_python(path):
    document = read_python_config(str(path), path.read_text())
    return resolve_document(document)


def test_mmengine_base_merges_key_by_key_and_delete_replaces(tmp_path):
    write(tmp_path, "_base_/data.py", "train_dataloader = dict(num_workers=2, persistent_workers=True, sampler=dict(type='DefaultSampler', shuffle=True))\nval_dataloader = dict(num_workers=2, persistent_workers=True)\n")
    child = write(tmp_path, "cfg/child.py", "_base_ = ['../_base_/data.py']\ntrain_dataloader = dict(num_workers=0, sampler=dict(shuffle=False))\nval_dataloader = dict(_delete_=True, num_workers=1, batch_size=1)\n")
    root = resolved_python(child).root
    train = root.get("train_dataloader")
    assert train.get("num_workers").value == 0 and train.get("persistent_workers").value is True
    assert train.get("sampler").get("type").value == "DefaultSampler" and train.get("sampler").get("shuffle").value is False
    val = root.get("val_dataloader")
    assert set(val.entries) == {"num_workers", "batch_size"}
    assert train.entries["persistent_workers"].path.endswith("data.py")  # reported in the base, not here


def test_unreadable_base_makes_absent_keys_unknown(tmp_path):
    child = write(tmp_path, "child.py", "_base_ = 'mmdet::_base_/x.py'\ntrain_dataloader = dict(num_workers=0, batch_size=2)\n")
    document = resolved_python(child)
    (block,) = find_blocks(document, Settings())
    assert block.value("persistent_workers").is_dynamic and block.num_workers.value == 0


def test_hydra_defaults_override_package_and_self(tmp_path):
    write(tmp_path, "conf/loader/a.yaml", "num_workers: 1\nbatch_size: 1\n")
    write(tmp_path, "conf/loader/b.yaml", "num_workers: 2\nbatch_size: 2\npersistent_workers: false\n")
    write(tmp_path, "conf/misc/global.yaml", "# @package _global_\ndevice: cuda\n")
    main = write(
        tmp_path,
        "conf/config.yaml",
        "defaults:\n  - loader: a\n  - override loader: b\n  - misc: global\n  - _self_\nloader:\n  batch_size: 64\n",
    )
    root = read_config(str(main), main.read_text()).root
    assert lookup(root, ["loader", "num_workers"]).value == 2
    assert lookup(root, ["loader", "batch_size"]).value == 64
    assert lookup(root, ["device"]).value == "cuda"


def test_hydra_unresolvable_default_opens_everything(tmp_path):
    main = write(tmp_path, "config.yaml", "defaults:\n  - loader: nowhere\ntrain_loader:\n  num_workers: 0\n  batch_size: 2\n")
    (block,) = find_blocks(read_config(str(main), main.read_text()), Settings())
    assert block.value("persistent_workers").is_dynamic


# -- loader blocks --------------------------------------------------------------------------------
def test_which_mappings_are_loader_blocks():
    blocks = blocks_of(
        """\
        model:
          train_ds: {num_workers: 2, batch_size: 4}
          validation_ds: {num_workers: 2, batch_size: 4}
          tokenizer: {num_workers: 2, vocab: 10}
        loader:
          _target_: torch.utils.data.DataLoader
        data:
          class_path: x.DataModule
          init_args: {num_workers: 2, batch_size: 4}
        """
    )
    names = {b.name: (b.is_training, b.explicit) for b in blocks}
    assert names == {
        "model.train_ds": (True, False),
        "model.validation_ds": (False, False),
        "loader": (False, True),
        "data.init_args": (False, False),
    }


@pytest.mark.parametrize("key", ["train", "train_ds", "train_dataloader", "training", "train_loader", "trainloader", "Train_Data"])
def test_training_names(key):
    (block,) = blocks_of(f"{key}:\n  num_workers: 2\n  batch_size: 4\n")
    assert block.is_training


@pytest.mark.parametrize("key", ["validation_ds", "val_dataloader", "test", "train_eval_loader", "predict", "trainer", "pretrained"])
def test_not_training_names(key):
    (block,) = blocks_of(f"{key}:\n  num_workers: 2\n  batch_size: 4\n")
    assert not block.is_training


# -- rules on configs -------------------------------------------------------------------------------
def test_training_block_without_persistent_workers():
    # The key is absent and no code in view hands the block to a DataLoader whole: adding it may
    # reach nothing (code that reads num_workers by name) or break the run (yacs): silent.
    # tests/test_config_links.py: where the project's code splats the block, it fires.
    assert lint_yaml("train_ds:\n  num_workers: 8\n  batch_size: 4\n") == []
    assert lint_yaml("train_ds:\n  num_workers: 8\n  batch_size: 4\n  persistent_workers: false\n") == [(1, 1, "DL201")]
    assert lint_yaml("train_ds:\n  num_workers: 0\n  batch_size: 4\n") == []
    assert lint_yaml("validation_ds:\n  num_workers: 8\n  batch_size: 4\n") == []


def test_max_workers_setting_applies():
    assert lint_yaml("val:\n  num_workers: 12\n  batch_size: 4\n", max_workers=16) == []
    assert lint_yaml("val:\n  num_workers: 12\n  batch_size: 4\n", max_workers=8) == [(2, 3, "DL202")]


def test_pin_memory_only_where_the_config_says_cuda():
    text = "trainer:\n  accelerator: {acc}\nval_ds:\n  num_workers: 2\n  batch_size: 4\n  pin_memory: false\n"
    assert lint_yaml(text.format(acc="gpu")) == [(6, 3, "DL206")]
    assert lint_yaml(text.format(acc="cpu")) == []


def test_noqa_in_yaml_comments_and_file_level():
    text = "loader:\n  num_workers: 0\n  persistent_workers: true  # noqa: DL001\n"
    assert lint_yaml(text) == []
    assert lint_yaml("# dllint: noqa\n" + text.replace("  # noqa: DL001", "")) == []
    assert lint_yaml(text.replace("DL001", "DL002")) == [(3, 3, "DL001")]


def test_selection_applies_to_configs():
    linter = Linter(Settings(select=("DL2",)))
    result = lint_config_text("c.yaml", "loader:\n  num_workers: 0\n  persistent_workers: true\n", linter)
    assert result.findings == []


def test_yaml_prefilter_skips_files_without_loader_keys():
    from dllint.per_file import lint as lint_bytes

    linter = Linter(Settings())
    assert lint_bytes(linter, "c.yaml", b"name: x\nlr: 0.1\n").skipped
    assert not lint_bytes(linter, "c.yaml", b"loader:\n  num_workers: 0\n  persistent_workers: true\n").skipped


def test_non_utf8_yaml_is_dl000():
    from dllint.per_file import lint as lint_bytes

    result = lint_bytes(Linter(Settings()), "c.yaml", b"loader:\n  num_workers: \xff\n")
    assert [f.code for f in result.findings] == ["DL000"]


# -- fixes ------------------------------------------------------------------------------------------
FIX_BEFORE = """\
# comments, order, quoting and indentation stay as written
model:
    train_ds:
        'batch_size': 8          # quoted key
        num_workers: 0
        persistent_workers: true # kept: the code reads it
        prefetch_factor: 4
        sampler: {type: x}
        shuffle: yes
    train_dataloader:
        batch_size: 8
        num_workers: 4   # workers
"""
FIX_AFTER = """\
# comments, order, quoting and indentation stay as written
model:
    train_ds:
        'batch_size': 8          # quoted key
        num_workers: 0
        persistent_workers: false # kept: the code reads it
        prefetch_factor: null
        sampler: {type: x}
        shuffle: yes
    train_dataloader:
        batch_size: 8
        num_workers: 4   # workers
"""


def test_yaml_fix_keeps_the_file_and_is_idempotent():
    linter = Linter(Settings(select=("ALL",)))
    result = fix_config_text("c.yaml", FIX_BEFORE, linter)
    assert result.text == FIX_AFTER
    # train_dataloader keeps its text: no code in view is known to read a persistent_workers added there
    assert sorted(f.code for f in result.fixed) == ["DL001", "DL002"]
    assert result.remaining == []
    again = fix_config_text("c.yaml", result.text, linter)
    assert again.text == FIX_AFTER and not again.fixed


def test_explicit_false_is_changed_only_with_unsafe_fixes():
    text = "train:\n  num_workers: 4\n  batch_size: 2\n  persistent_workers: false  # why\n"
    linter = Linter(Settings(select=("ALL",)))
    assert fix_config_text("c.yaml", text, linter).text == text
    assert fix_config_text("c.yaml", text, linter, unsafe=True).text == text.replace("false  # why", "true  # why")


def test_flow_mappings_and_sequence_items_get_their_value_set():
    """A value edit needs only the scalar's span: a flow mapping or a sequence item is fixed too
    (deleting its entry was not possible there)."""
    linter = Linter(Settings(select=("ALL",)))
    for text in ("loader: {num_workers: 0, persistent_workers: true}\n", "loaders:\n  - persistent_workers: true\n    num_workers: 0\n"):
        result = fix_config_text("c.yaml", text, linter)
        assert result.text == text.replace("persistent_workers: true", "persistent_workers: false") and not result.remaining
    below_key = "loader:\n  num_workers: 0\n  persistent_workers:\n    true  # why\n"
    assert fix_config_text("c.yaml", below_key, linter).text == below_key.replace("true", "false")


def test_python_config_fix_goes_through_the_call(tmp_path):
    from dllint.fixer import fix_text

    text = "train_dataloader = dict(\n    batch_size=2,\n    num_workers=0,\n    persistent_workers=True,  # kept\n)\n"
    result = fix_text("cfg.py", text, Linter(Settings(select=("ALL",))))
    assert result.text == text.replace("persistent_workers=True", "persistent_workers=False")  # set, never deleted


FIX_CASES = sorted(p.parent for p in (Path(__file__).resolve().parent.parent / "fixtures" / "configs" / "fix").glob("*/before.yaml"))


@pytest.mark.parametrize("case", FIX_CASES, ids=lambda p: p.name)
def test_yaml_fix_fixture(case):
    """``before.yaml`` fixed (unsafe fixes included) equals ``after.yaml`` byte for byte, re-lints
    without fixable findings, and a second fix changes nothing. A case with Python code beside it
    is fixed with that code in view (as a project: the code may hand a block on whole)."""
    from dllint.project import ProjectIndex

    linter = Linter(Settings(select=("ALL",)))
    project = ProjectIndex(case, linter.settings).view(str(case / "before.yaml")) if any(case.glob("*.py")) else None
    before = (case / "before.yaml").read_text()
    result = fix_config_text(str(case / "before.yaml"), before, linter, unsafe=True, project=project)
    assert result.fixed and not result.failed
    assert result.text == (case / "after.yaml").read_text()
    again = fix_config_text(str(case / "before.yaml"), result.text, linter, unsafe=True, project=project)
    assert again.text == result.text and not again.fixed


def test_training_block_handed_to_another_class_keeps_its_default():
    # SAM 2's TorchTrainMixedDataset builds its own loaders and takes no persistent_workers.
    text = "train:\n  _target_: training.dataset.MixedDataset\n  num_workers: 8\n  batch_size: 2\n"
    assert lint_yaml(text) == []
    assert lint_yaml(text.replace("training.dataset.MixedDataset", "torch.utils.data.DataLoader")) == [(1, 1, "DL201")]


def test_yaml_findings_round_trip_through_the_cache():
    from dllint.cache import decode_finding, encode_finding

    linter = Linter(Settings(select=("ALL",)))
    (finding,) = lint_config_text("c.yaml", "loader:\n  num_workers: 0\n  persistent_workers: true\n", linter).findings
    back = decode_finding("c.yaml", encode_finding(finding))
    assert back.fix is not None and finding.fix is not None and type(back.fix.edit).__name__ == "NotKept"  # never the edit
    back.fix = finding.fix
    assert back == finding


# -- the command line: every output format points at the YAML key -----------------------------------
WINDOWS_PROFILE = "train_ds:\n  batch_size: 8\n  num_workers: 0\n  persistent_workers: true\n"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_every_format_points_at_the_yaml_key(tmp_path, fmt):
    import json

    from click.testing import CliRunner

    from dllint.cli import main

    path = tmp_path / "conf" / "train.yaml"
    path.parent.mkdir()
    path.write_text(WINDOWS_PROFILE)
    result = CliRunner().invoke(main, [str(path), "--format", fmt, "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    if fmt == "text":
        assert f"{path}:4:3: DL001 " in result.output
    elif fmt == "json":
        (finding,) = json.loads(result.output)
        assert (finding["path"], finding["line"], finding["column"], finding["code"]) == (str(path), 4, 3, "DL001")
    elif fmt == "sarif":
        (found,) = json.loads(result.output)["runs"][0]["results"]
        location = found["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith("conf/train.yaml")
        assert (location["region"]["startLine"], location["region"]["startColumn"]) == (4, 3)
    else:
        assert result.output.startswith(f"::error file={path},line=4,col=3,")


def test_cli_fix_and_diff_on_yaml(tmp_path):
    from click.testing import CliRunner

    from dllint.cli import main

    path = tmp_path / "train.yaml"
    path.write_text(WINDOWS_PROFILE)
    diff = CliRunner().invoke(main, [str(path), "--diff", "--no-cache"], catch_exceptions=False)
    assert "-  persistent_workers: true\n+  persistent_workers: false" in diff.output and path.read_text() == WINDOWS_PROFILE
    fixed = CliRunner().invoke(main, [str(path), "--fix", "--no-cache"], catch_exceptions=False)
    assert fixed.exit_code == 0, fixed.output
    assert path.read_text() == "train_ds:\n  batch_size: 8\n  num_workers: 0\n  persistent_workers: false\n"


def test_engine_config_seam_runs_the_rules_check_config():
    from dllint.inputs import Input, load

    linter = Linter(Settings())
    loaded = load("c.yaml", b"loader:\n  num_workers: 0\n  persistent_workers: true\n")
    assert isinstance(loaded, Input) and loaded.kind == "config"
    assert [(f.line, f.column, f.code) for f in linter.lint(loaded).findings] == [(3, 3, "DL001")]
    assert linter.lint(Input("c.yaml", "config", "x: 1\n", document=object())).findings == []


def test_a_config_that_inherits_is_linted_again_when_its_base_changes(tmp_path):
    from click.testing import CliRunner

    from dllint.cli import main

    base = write(tmp_path, "_base_/data.py", "train_dataloader = dict(num_workers=2, persistent_workers=True)\n")
    child = write(tmp_path, "cfg/child.py", "_base_ = ['../_base_/data.py']\ntrain_dataloader = dict(num_workers=0)\n")
    cache = tmp_path / "cache"

    def codes():
        result = CliRunner().invoke(main, [str(child), "--cache-dir", str(cache), "--format", "json"], catch_exceptions=False)
        import json

        return [f["code"] for f in json.loads(result.output)]

    assert codes() == ["DL001"]
    base.write_text("train_dataloader = dict(num_workers=2, persistent_workers=False)\n")
    assert codes() == []


def test_directories_include_yaml_configs(tmp_path):
    from click.testing import CliRunner

    from dllint.cli import main

    write(tmp_path, "conf/train.yaml", WINDOWS_PROFILE)
    write(tmp_path, "conf/other.yml", "name: x\n")
    write(tmp_path, "configs/debug.py", "train_dataloader = dict(num_workers=0, persistent_workers=True)\n")
    result = CliRunner().invoke(main, [str(tmp_path), "--no-cache"], catch_exceptions=False)
    assert f"{tmp_path / 'conf' / 'train.yaml'}:4:3: DL001" in result.output
    assert f"{tmp_path / 'configs' / 'debug.py'}:1:40: DL001" in result.output


def test_a_flat_script_with_loader_calls_is_not_a_dict_config():
    from lint_helpers import lint_source

    source = "from torch.utils.data import DataLoader\nopts = dict(num_workers=0, persistent_workers=True)\nloader = DataLoader(ds, num_workers=opts['num_workers'])\n"
    assert lint_source(source, Settings(select=("ALL",))) == []
    config_only = "opts = dict(num_workers=0, persistent_workers=True)\n"
    assert [f.code for f in lint_source(config_only, Settings(select=("ALL",)))] == ["DL001"]


def test_mmengine_new_style_read_base_imports(tmp_path):
    write(tmp_path, "_base_/data.py", "train_dataloader = dict(num_workers=2, persistent_workers=True, batch_size=2)\n")
    child = write(
        tmp_path,
        "cfg/child.py",
        "from mmengine.config import read_base\n\nwith read_base():\n    from .._base_.data import *\n\n"
        "train_dataloader.update(num_workers=0)\n",
    )
    linter = Linter(Settings(select=("ALL",)))
    assert [(f.line, f.code) for f in lint_text(linter, str(child), child.read_text()).findings] == [(6, "DL001")]


def test_every_yaml_document_of_a_file_is_read():
    text = "name: a\n---\nloader:\n  num_workers: 0\n  persistent_workers: true\n"
    assert lint_yaml(text) == [(5, 3, "DL001")]


def test_mmengine_child_finding_names_the_base_file_that_sets_the_key(tmp_path):
    """Issue 35: the child's finding says which `_base_` file writes the inherited key, and the
    line, as `_base_` names the file; the fix still edits the child's own dict."""
    import shutil

    from click.testing import CliRunner

    from dllint.cli import main

    from tests.conftest import ROOT

    shutil.copytree(ROOT / "fixtures/configs/mmengine/_base_", tmp_path / "_base_")
    (tmp_path / "det").mkdir()
    child = tmp_path / "det/child.py"
    child.write_text("_base_ = ['../_base_/datasets/coco_detection.py']\n\ntrain_dataloader = dict(\n    batch_size=1,\n    num_workers=0)\n")
    base_lines = (tmp_path / "_base_/datasets/coco_detection.py").read_text().splitlines()
    line = next(n for n, text in enumerate(base_lines, 1) if "persistent_workers=True" in text)
    output = CliRunner().invoke(main, [str(child), "--no-cache"]).output
    assert f"{child}:5:5: DL001 " in output  # the inheriting dict's num_workers=0, in the child
    assert f"(persistent_workers is set in ../_base_/datasets/coco_detection.py:{line})" in output
    CliRunner().invoke(main, [str(child), "--no-cache", "--fix"])
    assert child.read_text().endswith("    num_workers=0,\n    persistent_workers=False)\n")
