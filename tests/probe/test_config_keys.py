"""A confirmed finding whose values came from a config file names the key to change (issue 15 item 5)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dllint.findings import ConfigKey, Finding
from dllint.probe.pairing import attach_verdicts
from dllint.probe.results import CONFIRMED, Anchor, Result

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "probe"
KEYS = (
    ConfigKey("train.persistent_workers", "true", (("conf/train.yaml", 3),)),
    ConfigKey("train.num_workers", "0", (("conf/train.yaml", 2),)),
)


def test_confirmed_verdict_names_the_config_key(tmp_path):
    script = str(tmp_path / "train.py")
    finding = Finding(script, 11, 87, 11, 131, "DL001", "", "DL001", config_keys=KEYS)
    plain = Finding(script, 11, 87, 11, 131, "DL001", "", "DL001")
    result = Result("DL001", CONFIRMED, "DataLoader() raised ValueError", anchors=[Anchor(str(Path(script).resolve()), 11, 11)])
    attach_verdicts([finding, plain], [result], "not reached")
    assert finding.probe["change"] == ["train.persistent_workers in conf/train.yaml:3", "train.num_workers in conf/train.yaml:2"]
    assert finding.probe["evidence"] == (
        "DataLoader() raised ValueError; change train.persistent_workers in conf/train.yaml:3 (or train.num_workers in conf/train.yaml:2)"
    )
    assert "change" not in plain.probe and plain.probe["evidence"] == "DataLoader() raised ValueError"


@pytest.mark.probe
def test_probe_report_names_the_key(tmp_path):
    pytest.importorskip("torch")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("config_values.py", "config_values.yaml"):
        shutil.copy(FIXTURES / name, project / name)
    (project / "pyproject.toml").write_text("")
    proc = subprocess.run(
        [sys.executable, "-m", "dllint", "--probe", str(project / "config_values.py"), "--format", "json", "--probe-timeout", "60"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    (dl001,) = [f for f in json.loads(proc.stdout) if f["code"] == "DL001"]
    assert dl001["probe"]["verdict"] == "confirmed"
    assert dl001["probe"]["change"][0] == "train.persistent_workers in config_values.yaml:3"
    assert "change train.persistent_workers in config_values.yaml:3" in dl001["probe"]["evidence"]
    assert dl001["config_keys"][1] == {"key": "train.num_workers", "value": "0", "places": [["config_values.yaml", 2]]}
