"""Fixed lines keep to the project's line length (issue 24, point 8): ruff's, else black's, else 88."""

from __future__ import annotations

from pathlib import Path

import pytest

from dllint.config import project_line_length
from tests.project_helpers import write_tree
from tests.test_cli import run

SCRIPT = """\
from torch.utils.data import DataLoader


def train(dataset, model, args):
    loader = DataLoader(dataset, batch_size=64, num_workers=args.nw)
    for epoch in range(args.epochs):
        for batch in loader:
            model(batch)
"""
ONE_LINE = "    loader = DataLoader(dataset, batch_size=64, num_workers=args.nw, persistent_workers=args.nw > 0)\n"  # 97
HUGGED = "    loader = DataLoader(\n        dataset, batch_size=64, num_workers=args.nw, persistent_workers=args.nw > 0\n    )\n"
PER_LINE = (
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        num_workers=args.nw,\n"
    "        persistent_workers=args.nw > 0,\n    )\n"
)


def test_line_length_comes_from_ruff_then_black_then_88(tmp_path):
    write_tree(tmp_path, {"a/b/c.py": "", "a/pyproject.toml": "[tool.black]\nline-length = 100\n"})
    assert project_line_length(str(tmp_path / "a/b/c.py")) == 100
    (tmp_path / "a/pyproject.toml").write_text("[tool.black]\nline-length = 100\n[tool.ruff]\nline-length = 110\n")
    assert project_line_length(str(tmp_path / "a/b")) == 110
    (tmp_path / "a/b/ruff.toml").write_text("line-length = 120\n")
    assert project_line_length(str(tmp_path / "a/b/c.py")) == 120
    (tmp_path / "a/b/.ruff.toml").write_text("line-length = 99\n")
    assert project_line_length(str(tmp_path / "a/b/x.py")) == 99
    write_tree(tmp_path, {"plain/c.py": "", "plain/pyproject.toml": "[tool.dllint]\n", "broken/pyproject.toml": "[tool.ruff\n"})
    assert project_line_length(str(tmp_path / "plain/c.py")) == 88
    assert project_line_length(str(tmp_path / "broken/c.py")) == 88  # an unreadable file is no setting


def test_fix_wraps_the_way_the_call_is_laid_out(tmp_path):
    for line_length, expected in ((100, ONE_LINE), (88, HUGGED), (60, PER_LINE)):
        project = tmp_path / str(line_length)
        write_tree(project, {"train.py": SCRIPT, "pyproject.toml": f"[tool.ruff]\nline-length = {line_length}\n"})
        run("--fix", "--no-cache", "train.py", cwd=project)
        fixed = (project / "train.py").read_text()
        assert fixed == SCRIPT.replace("    loader = DataLoader(dataset, batch_size=64, num_workers=args.nw)\n", expected), fixed
        assert all(len(line) <= max(line_length, 88) for line in fixed.splitlines())
        again = run("--fix", "--no-cache", "train.py", cwd=project)
        assert "All checks passed!" in again.output and (project / "train.py").read_text() == fixed


# -- calls already on several lines (issue 35): their layout kept, their lines within the length ----
HEAD = "from torch.utils.data import DataLoader\n\n\ndef train(dataset, model, args):\n"
LOOP = "    for epoch in range(args.epochs):\n        for batch in loader:\n            model(batch)\n"
SPLIT_PER_LINE_COMMA = (
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        num_workers=4,\n    )\n",
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        num_workers=4,\n"
    "        persistent_workers=True,\n    )\n",
)
SPLIT_PER_LINE = (
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        num_workers=4\n    )\n",
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        num_workers=4,\n"
    "        persistent_workers=True\n    )\n",
)
SPLIT_ALIGNED = (
    "    loader = DataLoader(dataset,\n                        batch_size=64,\n                        num_workers=4)\n",
    "    loader = DataLoader(dataset,\n                        batch_size=64,\n                        num_workers=4,\n"
    "                        persistent_workers=True)\n",
)
# black's layout: the arguments on one line below `(`, 72 characters; the fix made it 96.
SPLIT_HUGGED = (
    "    loader = DataLoader(\n        dataset, batch_size=64, shuffle=True, num_workers=4, drop_last=True\n    )\n",
    "    loader = DataLoader(\n        dataset,\n        batch_size=64,\n        shuffle=True,\n        num_workers=4,\n"
    "        drop_last=True,\n        persistent_workers=True,\n    )\n",
)
# Two arguments to a line, aligned with the parenthesis: the new one on a line of its own.
SPLIT_PAIRS = (
    "    loader = DataLoader(dataset, batch_size=64,\n                        shuffle=True, num_workers=4, drop_last=True)\n",
    "    loader = DataLoader(dataset, batch_size=64,\n                        shuffle=True, num_workers=4, drop_last=True,\n"
    "                        persistent_workers=True)\n",
)


def _formatted_by_ruff(path) -> bool:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ruff", "format", "--check", "--quiet", str(path)], capture_output=True, timeout=60)
    return done.returncode == 0


def _flake8_long_lines(paths, line_length: int) -> dict[str, str]:
    """flake8's long-line and indentation findings, by file name."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=E501,E1,W291", f"--max-line-length={line_length}", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    found = {Path(path).name: "" for path in paths}
    for line in done.stdout.splitlines(keepends=True):
        found[Path(line.split(":", 1)[0]).name] += line
    return found


SPLIT_CALLS = {
    "per-line-comma": SPLIT_PER_LINE_COMMA, "per-line": SPLIT_PER_LINE, "aligned": SPLIT_ALIGNED, "hugged": SPLIT_HUGGED, "pairs": SPLIT_PAIRS,
}


@pytest.fixture(scope="module")
def long_lines(tmp_path_factory) -> dict[str, str]:
    """flake8's findings on each case's input (``<case>-before.py``) and on the text its fix must
    give (``<case>-after.py``): one flake8 run for them all, as each run starts flake8 and its
    plugins, dllint's among them (0.3 CPU-s). A test reads the latter once its fixed file is
    that text."""
    folder = tmp_path_factory.mktemp("split_calls")
    for name, (before, after) in SPLIT_CALLS.items():
        (folder / f"{name}-before.py").write_text(HEAD + before + LOOP)
        (folder / f"{name}-after.py").write_text(HEAD + after + LOOP)
    return _flake8_long_lines(sorted(folder.glob("*.py")), 79)


@pytest.mark.parametrize("name", SPLIT_CALLS)
def test_a_split_call_keeps_its_layout_and_the_line_length(tmp_path, name, long_lines):
    before, after = SPLIT_CALLS[name]
    write_tree(tmp_path, {"train.py": HEAD + before + LOOP, "pyproject.toml": "[tool.ruff]\nline-length = 79\n"})
    path = tmp_path / "train.py"
    formatted = _formatted_by_ruff(path)
    assert long_lines[f"{name}-before.py"] == ""
    run("--fix", "--no-cache", "train.py", cwd=tmp_path)
    assert path.read_text() == HEAD + after + LOOP
    assert long_lines[f"{name}-after.py"] == ""  # flake8 on this very text
    assert _formatted_by_ruff(path) == formatted  # ruff format's layout kept where the input had it
    again = run("--fix", "--no-cache", "train.py", cwd=tmp_path)
    assert "All checks passed!" in again.output and path.read_text() == HEAD + after + LOOP
