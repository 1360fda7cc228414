"""``it = iter(loader)`` renewed on ``StopIteration`` is a new pass each time (the rule
catalog's "Endless iteration", issue 32): DL201 fires, and real torch workers show why: without
persistent workers every renewal runs in new worker processes; with DL201's fix, the same ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from click.testing import CliRunner

from dllint.cli import main

SCRIPT = textwrap.dedent(
    """\
    import os

    from torch.utils.data import DataLoader, Dataset


    class Pids(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return os.getpid()


    def main():
        loader = DataLoader(Pids(), batch_size=2, num_workers=2)
        it = iter(loader)
        passes = [set()]
        for step in range(6):
            try:
                batch = next(it)
            except StopIteration:
                it = iter(loader)
                batch = next(it)
                passes.append(set())
            passes[-1].update(batch.tolist())
        print(len(passes), len(set.union(*passes)))


    if __name__ == "__main__":
        main()
    """
)


def run_script(path) -> str:
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_iterator_renewed_on_stop_iteration_restarts_the_workers_and_dl201_fixes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    assert run_script(path) == "3 6"  # three passes, each in two new worker processes
    result = CliRunner().invoke(main, ["--no-cache", "--select", "DL201", "--fix", "train.py"])
    assert "Found 1 problem (1 fixed, 0 remaining)." in result.output
    assert "loader = DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)\n" in path.read_text()
    assert run_script(path) == "3 2"  # the same two workers serve every pass
