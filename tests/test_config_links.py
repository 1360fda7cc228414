"""A YAML block's DL201 adds ``persistent_workers: true`` only where the project's code hands
the block to a DataLoader whole (issue 32, shape B1; ``fixtures/fix_project/b1_*``).

Code that reads the keys one by one (yacs ``config.train.dataloader.num_workers``, a dict read
``cfg["train"]["loader"]["num_workers"]``) never reads a key added to the YAML, and yacs'
``merge_from_file`` rejects one its defaults lack: there the code site reports it, with its fix.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import FIXTURES, expected_findings
from tests.project_helpers import write_tree

CASES = FIXTURES / "fix_project"
DL201_YAML = "DL201 [*] workers restart every epoch: add persistent_workers: true"
DL201_CODE = "DL201 [*] workers restart every epoch: add persistent_workers=True"


def _dllint(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllint", "--select", "ALL", "--format", "json", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _findings(root, *args: str) -> list[dict]:
    import json

    result = _dllint("--no-cache", *args, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _markers(root) -> set[tuple[str, int, int, str]]:
    return {
        (str(path.relative_to(root)), line, column, code)
        for path in sorted(root.rglob("*"))
        if path.suffix in (".py", ".yaml")
        for line, column, code in expected_findings(path.read_text())
    }


def _concise(root) -> list[str]:
    result = subprocess.run([sys.executable, "-m", "dllint", "--no-cache", "--select", "ALL", "--format", "concise", "."],
                            cwd=root, capture_output=True, text=True, timeout=120)
    return result.stdout.splitlines()


def _copy(name: str, tmp_path):
    root = tmp_path / name
    shutil.copytree(CASES / name, root)
    return root


# -- fires: the code splats the block ---------------------------------------------------------
def test_splatted_block_fires_at_the_block_and_its_fix_adds_the_key(tmp_path):
    root = _copy("b1_splatted_loader", tmp_path) / "before"
    found = _findings(root)
    assert {(f["path"], f["line"], f["column"], f["code"]) for f in found} == _markers(root)
    assert _concise(root)[0] == f"conf.yaml:4:3: {DL201_YAML}"
    (finding,) = found
    assert finding["fix"]["applicability"] == "safe" and finding["fix"]["message"] == "Add `persistent_workers: true`"
    _dllint("--no-cache", "--fix", ".", cwd=root)
    after = (CASES / "b1_splatted_loader" / "after" / "conf.yaml").read_text()
    assert (root / "conf.yaml").read_text() == after
    assert (root / "train.py").read_text() == (CASES / "b1_splatted_loader" / "before" / "train.py").read_text()
    assert _findings(root) == []  # re-lints clean
    _dllint("--no-cache", "--fix", ".", cwd=root)
    assert (root / "conf.yaml").read_text() == after  # a second fix changes nothing


# -- silent: the code reads the keys one by one -----------------------------------------------
def test_yacs_reads_keys_one_by_one_the_code_site_reports_it(tmp_path):
    """B1's minimal form: DL201 at the DataLoader call (its fix adds the argument there), none
    in the YAML, whose fix would add a key yacs rejects; DL206 on the YAML's ``pin_memory:
    False`` stays (the code reads that key)."""
    root = _copy("b1_yacs_reads_keys", tmp_path)
    found = _findings(root)
    assert {(f["path"], f["line"], f["column"], f["code"]) for f in found} == _markers(root)
    assert _concise(root) == [
        "configs/run.yaml:6:5: DL206 [-] batches are copied to CUDA from pageable memory: set pin_memory: true so the loader "
        "page-locks them (faster copies, which overlap compute with non_blocking=True)",
        f"train.py:11:14: {DL201_CODE}",
        "[*] 1 fixable with `--fix`.",
        "[-] 1 more fixable with `--fix --unsafe-fixes` (unsafe: check the result).",
        "Found 2 problems in 2 files.",
    ]
    (code_site,) = [f for f in found if f["code"] == "DL201"]
    assert code_site["fix"]["applicability"] == "safe" and code_site["fix"]["message"] == "Add `persistent_workers=config.train.dataloader.num_workers > 0`"


def test_a_dict_read_key_by_key_the_code_site_reports_it(tmp_path):
    root = _copy("b1_dict_read_by_key", tmp_path)
    found = _findings(root)
    assert {(f["path"], f["line"], f["column"], f["code"]) for f in found} == _markers(root)
    assert _concise(root)[0] == f"train.py:10:14: {DL201_CODE} (train.loader.num_workers: 2 from conf.yaml:5)"


def test_what_counts_as_handing_a_block_on_whole(tmp_path):
    """``**`` of the block's keys (the last keys of the path suffice: a function handed
    ``cfg.train`` splats ``cfg.loader``), through ``dict(...)``; not a bare name, another block,
    another call than DataLoader's, or a key the splat only starts with."""
    yaml = "train:\n  loader:\n    num_workers: 2\n    batch_size: 8\n"
    cases = {
        "DataLoader(ds, **cfg.train.loader)": True,
        "DataLoader(ds, **cfg['train']['loader'])": True,
        "torch.utils.data.DataLoader(ds, **dict(cfg.loader))": True,
        "DataLoader(ds, **opts)": False,  # a name: which block is not said
        "DataLoader(ds, **cfg.val.loader)": False,
        "build_loader(ds, **cfg.train.loader)": False,  # a function that may take no persistent_workers
        "DataLoader(ds, **cfg.train.loader.extra)": False,
        "DataLoader(ds, num_workers=cfg.train.loader.num_workers)  # **cfg.train.loader": False,
    }
    for number, (call, fires) in enumerate(cases.items()):
        root = tmp_path / f"case{number}"
        write_tree(root, {"conf.yaml": yaml, "train.py": f"import torch\nfrom torch.utils.data import DataLoader\n\ndef f(ds, cfg, opts):\n    return {call}\n"})
        yaml_findings = [f for f in _findings(root) if f["path"] == "conf.yaml"]
        assert [(f["line"], f["column"], f["code"]) for f in yaml_findings] == ([(2, 3, "DL201")] if fires else []), call


def test_a_cached_yaml_finding_follows_the_code_that_links_it(tmp_path):
    """The config's findings depend on the code files asked: the cache lints it again when the
    splat goes away or appears."""
    write_tree(tmp_path, {
        "conf.yaml": "train:\n  loader:\n    num_workers: 2\n    batch_size: 8\n",
        "train.py": "from torch.utils.data import DataLoader\n\ndef f(ds, cfg):\n    return DataLoader(ds, **cfg.train.loader)\n",
    })
    cache = ["--cache-dir", str(tmp_path / "c")]

    def yaml_codes() -> list[str]:
        import json

        result = _dllint(*cache, ".", cwd=tmp_path)
        return [f["code"] for f in json.loads(result.stdout) if f["path"] == "conf.yaml"]

    assert yaml_codes() == ["DL201"]
    assert yaml_codes() == ["DL201"]  # from the cache
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\n\ndef f(ds, cfg):\n    return DataLoader(ds, num_workers=cfg.train.loader.num_workers)\n")
    assert yaml_codes() == []
    (tmp_path / "other.py").write_text("from torch.utils.data import DataLoader\n\ndef g(ds, cfg):\n    return DataLoader(ds, **cfg.loader)\n")
    assert yaml_codes() == ["DL201"]  # a new file that splats it
