"""``dllint --fix/--diff/--fix-only/--unsafe-fixes``: what is written, what is printed, exit codes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from click.testing import CliRunner

import dllint.fixes.arguments as arguments
from dllint.cli import main

SAFE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0, persistent_workers=True)\n"
SAFE_FIXED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0)\n"
SCRIPT = (
    "from torch.utils.data import DataLoader\n\n"
    "loader = DataLoader(ds, num_workers=2, persistent_workers=True, collate_fn=lambda b: b)\n"
    "for batch in loader:\n    pass\n"
)


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, ["--no-cache", *args], input=input)


def write(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_fix_writes_safe_fixes_and_reports(tmp_path: Path) -> None:
    path = write(tmp_path, SAFE)
    result = run("--fix", str(path))
    assert path.read_text() == SAFE_FIXED
    assert "Found 1 problem (1 fixed, 0 remaining)." in result.output
    assert result.exit_code == 0


def test_check_marks_fixable_findings(tmp_path: Path) -> None:
    result = run(str(write(tmp_path, SCRIPT)))
    assert "DL102 [*]" in result.output and "DL101 [-]" in result.output
    assert "[-] 1 more fixable with `--fix --unsafe-fixes`" in result.output  # `--unsafe-fixes` alone fixes nothing


def test_unsafe_fixes_are_held_back_without_the_flag(tmp_path: Path) -> None:
    path = write(tmp_path, SCRIPT)
    result = run("--fix", str(path))
    assert "if __name__" not in path.read_text() and "def collate" in path.read_text()
    assert "1 remaining" in result.output and "--fix --unsafe-fixes" in result.output
    assert result.exit_code == 1


def test_main_guard_and_hoisted_lambda_compose(tmp_path: Path) -> None:
    path = write(tmp_path, SCRIPT)
    result = run("--fix", "--unsafe-fixes", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_text() == (
        "from torch.utils.data import DataLoader\n\n\n"
        "def collate(b):\n    return b\n\n\n"
        'if __name__ == "__main__":\n'
        "    loader = DataLoader(ds, num_workers=2, persistent_workers=True, collate_fn=collate)\n"
        "    for batch in loader:\n        pass\n"
    )
    assert run("--fix", "--unsafe-fixes", str(path)).exit_code == 0  # idempotent: nothing left


def test_diff_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, SAFE)
    result = run("--diff", str(path))
    assert result.exit_code == 1
    assert "-loader = DataLoader(ds, num_workers=0, persistent_workers=True)" in result.stdout
    assert "+loader = DataLoader(ds, num_workers=0)" in result.stdout
    assert path.read_text() == SAFE
    clean = write(tmp_path, SAFE_FIXED, "clean.py")
    assert run("--diff", str(clean)).exit_code == 0


def test_fix_only_exits_zero_when_all_fixes_applied(tmp_path: Path) -> None:
    path = write(tmp_path, SCRIPT)
    result = run("--fix-only", str(path))  # DL101 (unsafe) remains, but that is not a failure
    assert result.exit_code == 0 and "DL101" not in result.output


def test_select_limits_which_rules_fix(tmp_path: Path) -> None:
    path = write(tmp_path, SCRIPT)
    run("--fix", "--unsafe-fixes", "--select", "DL101", str(path))
    text = path.read_text()
    assert "if __name__" in text and "lambda b: b" in text


def test_stdin_prints_fixed_source(tmp_path: Path) -> None:
    result = run("--fix", "-", input=SAFE.encode())
    assert result.stdout == SAFE_FIXED
    assert "1 fixed" in result.stderr


def test_write_is_atomic_and_keeps_permissions(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, SAFE)
    os.chmod(path, 0o751)
    inode = path.stat().st_ino
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (replaced.append((a, b)), real_replace(a, b))[1])
    run("--fix", str(path))
    assert path.read_text() == SAFE_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert replaced and Path(replaced[0][0]).parent == tmp_path and path.stat().st_ino != inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]  # no temporary left behind


def test_crlf_and_encoding_survive(tmp_path: Path) -> None:
    path = tmp_path / "t.py"
    path.write_bytes(SAFE.replace("\n", "\r\n").replace("ds,", "données,").encode("latin-1").replace(b"from", b"# -*- coding: latin-1 -*-\r\nfrom", 1))
    run("--fix", str(path))
    assert path.read_bytes() == SAFE_FIXED.replace("\n", "\r\n").replace("ds,", "données,").encode("latin-1").replace(b"from", b"# -*- coding: latin-1 -*-\r\nfrom", 1)


def test_unparsable_file_is_untouched(tmp_path: Path) -> None:
    text = SAFE + "def broken(:\n"
    path = write(tmp_path, text)
    mtime = path.stat().st_mtime_ns
    result = run("--fix", str(path))
    assert path.read_text() == text and path.stat().st_mtime_ns == mtime
    assert "DL000" in result.output and result.exit_code == 1


def test_fix_producing_invalid_code_is_dropped(tmp_path: Path, monkeypatch) -> None:
    def broken(ctx, call, arg, names):
        ctx.replace(call, lambda updated: updated.with_changes(func=arguments.cst.Name("class")))

    monkeypatch.setattr(arguments, "remove_arguments", broken)  # `loader = class(ds, ...)`
    path = write(tmp_path, SAFE)
    result = run("--fix", str(path))
    assert path.read_text() == SAFE
    assert "fix not applied" in result.stderr and "does not parse" in result.stderr
    assert "0 fixed" not in result.output or "1 remaining" in result.output
    assert run("--fix-only", str(path)).exit_code == 1
