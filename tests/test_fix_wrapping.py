"""Fixed lines keep to the project's line length (issue 24, point 8): ruff's, else black's, else 88."""

from __future__ import annotations

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
