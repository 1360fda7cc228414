"""The flake8 plugin, through the real ``flake8`` executable: same findings as ``dllint``,
flake8's own selection, noqa and per-file-ignores, and options from flake8's config files."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from dllint.flake8_plugin import Plugin
from tests.conftest import FIXTURES, ROOT

pytest.importorskip("flake8")

FORMAT = "--format=%(path)s|%(row)d|%(col)d|%(code)s"
CONCISE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>DL\d{3}) ", re.MULTILINE)  # dllint's concise lines
SHUFFLE_WITH_SAMPLER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=True, sampler=s)\n"
SYNCHRONOUS = textwrap.dedent(
    """\
    from torch.utils.data import DataLoader
    loader = DataLoader(ds, batch_size=32)
    for epoch in range(10):
        for batch in loader:
            pass
    """
)


def flake8(*args: str, cwd=None) -> set[tuple[str, int, int, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", FORMAT, *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert result.returncode in (0, 1), result.stderr
    assert "dllint: " not in result.stderr, result.stderr  # no internal errors
    rows = set()
    for line in result.stdout.splitlines():
        path, row, col, code = line.rsplit("|", 3)
        rows.add((path, int(row), int(col), code))
    return rows


def write(directory, name: str, text: str):
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_plugin_is_registered():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60)
    assert "dllint:" in result.stdout


def test_same_findings_as_dllint_on_every_fixture():
    # fixtures/project/ are projects, and fixtures/fix_project/ fixes that need one (a caller's
    # value is evidence only where the project is in view): their findings follow calls into the
    # other files, which flake8, handing a plugin one file at a time, does not show.
    files = sorted(
        str(p.relative_to(ROOT))
        for p in FIXTURES.glob("**/*.py")
        if p.parent.name != "probe" and p.relative_to(FIXTURES).parts[0] not in ("project", "fix_project")
    )
    assert len(files) > 20
    # --format concise: `path:line:column: CODE message`, all this compares (json would also
    # compute every fix's edits, two thirds of the run, for nothing read here).
    dllint = subprocess.run(
        [sys.executable, "-m", "dllint", "--no-cache", "--format", "concise", *files], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert dllint.returncode in (0, 1), dllint.stderr
    expected = {
        (m["path"], int(m["line"]), int(m["column"]), m["code"]) for m in CONCISE.finditer(dllint.stdout) if m["code"] != "DL000"
    }
    # flake8 reports unparsable files as E999 itself; dllint's DL000 has no flake8 counterpart.
    actual = flake8("--isolated", "--select", "DL", *files, cwd=ROOT)
    assert len(expected) > 20
    assert actual == expected


def test_columns_count_characters_on_non_ascii_lines(tmp_path):
    path = write(tmp_path, "accents.py", 'from torch.utils.data import DataLoader\nnom = "données"; DataLoader(ds, shuffle=True, sampler=s)\n')
    # `shuffle` is the 33rd character and the 34th byte: flake8, like dllint, counts characters.
    assert flake8("--isolated", "--select", "DL", str(path)) == {(str(path), 2, 33, "DL003")}


def test_off_by_default_rule_needs_its_code(tmp_path):
    path = str(write(tmp_path, "sync.py", SYNCHRONOUS))
    assert not {row for row in flake8("--isolated", "--select", "DL", path) if row[3] == "DL203"}
    assert not {row for row in flake8("--isolated", path) if row[3] == "DL203"}  # flake8's default: everything else
    assert {row[3] for row in flake8("--isolated", "--select", "DL203", path)} == {"DL203"}
    assert "DL203" in {row[3] for row in flake8("--isolated", "--extend-select", "DL203", path)}


def test_select_and_extend_select(tmp_path):
    path = str(write(tmp_path, "bad.py", SHUFFLE_WITH_SAMPLER))
    assert flake8("--isolated", "--select", "DL", path) == {(path, 2, 25, "DL003")}
    assert flake8("--isolated", "--select", "E", path) == set()
    write(tmp_path, "setup.cfg", "[flake8]\nselect = E\nextend-select = DL\n")
    assert {(p.lstrip("./"), code) for p, _, _, code in flake8(".", cwd=tmp_path)} == {("bad.py", "DL003")}


def test_noqa_and_per_file_ignores(tmp_path):
    write(tmp_path, "quiet.py", SHUFFLE_WITH_SAMPLER.replace("sampler=s)", "sampler=s)  # noqa: DL003"))
    write(tmp_path, "other_noqa.py", SHUFFLE_WITH_SAMPLER.replace("sampler=s)", "sampler=s)  # noqa: E501"))
    write(tmp_path, "generated.py", SHUFFLE_WITH_SAMPLER)
    write(tmp_path, "kept.py", SHUFFLE_WITH_SAMPLER)
    write(tmp_path, ".flake8", "[flake8]\nselect = DL\nper-file-ignores =\n    generated.py: DL\n")
    rows = {(path.lstrip("./"), code) for path, _, _, code in flake8(".", cwd=tmp_path)}
    assert rows == {("other_noqa.py", "DL003"), ("kept.py", "DL003")}


@pytest.mark.parametrize("config_name", ["setup.cfg", "tox.ini", ".flake8"])
def test_options_from_config_files(tmp_path, config_name):
    write(tmp_path, "train.py", "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4, persistent_workers=True)\n")
    write(tmp_path, "custom.py", "from mylib import FastLoader\nFastLoader(ds, shuffle=True, sampler=s)\n")
    assert flake8("--select", "DL", "train.py", "custom.py", cwd=tmp_path) == set()
    write(
        tmp_path,
        config_name,
        "[flake8]\ndllint-max-workers = 2\ndllint-extend-loader-classes = mylib.FastLoader, OtherLoader\n",
    )
    codes = {(path.lstrip("./"), code) for path, _, _, code in flake8("--select", "DL", "train.py", "custom.py", cwd=tmp_path)}
    assert codes == {("train.py", "DL202"), ("custom.py", "DL003")}


def test_options_on_the_command_line(tmp_path):
    path = str(write(tmp_path, "train.py", "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4, persistent_workers=True)\n"))
    assert {row[3] for row in flake8("--isolated", "--select", "DL", "--dllint-max-workers", "3", path)} == {"DL202"}


def test_file_without_loader_text_is_never_parsed(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("parsed a file the prefilter should have skipped")

    Plugin.linter = None
    plugin = Plugin(None, ["import os\n", "print(os.getcwd())\n"], "plain.py")
    monkeypatch.setattr("dllint.engine.Linter.lint", fail)
    assert list(plugin.run()) == []
