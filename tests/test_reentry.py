"""A loader iterated again inside its own pass (issue 32): DL201 offers no fix there, DL306
fires once persistent workers are on, and both are checked against real torch workers: the
script as dllint leaves it ends; with persistent workers added by hand its epoch never does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from dllint.cli import main

# Four batches per epoch; every other step draws two batches from the same loader. The script
# stops itself after 40 training steps (10 epochs' worth) and says so: a bounded "never ends".
SCRIPT = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Squares(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return torch.tensor([float(i * i)])


    def evaluate(loader):
        for i, batch in enumerate(loader):
            if i == 1:
                break


    def main():
        loader = DataLoader(Squares(), batch_size=2, num_workers=2)
        steps = 0
        for epoch in range(2):
            for step, batch in enumerate(loader):
                steps += 1
                if steps > 40:
                    print("EPOCH NEVER ENDS")
                    return
                if steps % 2 == 1:
                    evaluate(loader)
        print(f"done after {steps} steps")


    if __name__ == "__main__":
        main()
    """
)


def run_cli(*args: str):
    return CliRunner().invoke(main, ["--no-cache", *args])


def run_script(path: Path) -> str:
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_dl201_offers_no_fix_where_the_loader_is_iterated_inside_its_own_pass_and_the_script_still_ends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    result = run_cli("--fix", "--unsafe-fixes", "--select", "DL201,DL306", "train.py")
    assert path.read_text() == SCRIPT  # nothing to fix, safe or unsafe
    assert "train.py:20:14: DL201 workers restart every epoch; no fix: the loader is iterated again (line 14, through the call at line 29) " \
        "inside its own pass: with persistent workers that would reset the outer pass at line 23; give the inner pass a loader of its own" in result.output
    assert "fixable" not in result.output
    assert run_script(path) == "done after 8 steps\n"


def test_with_persistent_workers_dl306_fires_at_the_inner_pass_and_the_epoch_never_ends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.replace("num_workers=2)", "num_workers=2, persistent_workers=True)"))
    result = run_cli("--select", "DL201,DL306", "train.py")
    assert result.output.splitlines()[0] == (
        "train.py:14:21: DL306 the loader is iterated again (line 14, through the call at line 29) inside its own pass: "
        "with persistent workers that resets the outer pass at line 23; give the inner pass a loader of its own"
    )
    assert "DL201" not in result.output
    assert run_script(path) == "EPOCH NEVER ENDS\n"  # what DL201's fix would have done here
