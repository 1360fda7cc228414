"""A probe you can trust: it touches nothing, leaves nothing running, confirms only what it measured.

Each test runs a small script with real DataLoaders and real worker processes.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import psutil
import pytest
from probe_helpers import checks_settings, fast_settings, finding, line_of, pooled_dataset, quick_settings, write_script

from dllint.probe import run_probe

# popen_harness: what a new interpreter does (escape, trust, robustness, cleanup, startup) is the subject here
pytestmark = [pytest.mark.probe, pytest.mark.popen_harness]


def processes_with(token: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(token in part for part in process.info["cmdline"] or []):
                found.append(process)
        except psutil.Error:
            continue
    return found


# -- 1. the user's files are never changed ----------------------------------------------------------


def test_checkpoint_and_metrics_are_byte_identical_after_the_probe(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    checkpoint, metrics = project / "model.pth", project / "metrics.txt"
    checkpoint.write_bytes(b"trained weights \x00\x01")
    metrics.write_text("epoch 1: loss 0.1\n")
    (project / "old.ckpt").write_text("keep me")
    script = write_script(project, """
        import subprocess
        assert os.environ["WANDB_MODE"] == "disabled"  # trackers are switched off
        subprocess.run([sys.executable, "-c", "open('child.txt', 'w').write('x')"], check=True)  # guarded there too
        os.makedirs("runs/exp1", exist_ok=True)
        log = open("runs/exp1/train.log", "w")
        data = TensorDataset(torch.arange(32.0))
        loader = DataLoader(data, batch_size=4, num_workers=2)
        model = torch.nn.Linear(1, 1)
        for epoch in range(2):
            for batch in loader:
                pass
            log.write(f"epoch {epoch}\\n")
        torch.save(model.state_dict(), "model.pth")
        with open("metrics.txt", "a") as stream:
            stream.write("epoch 2: loss 9.9\\n")
        assert open("metrics.txt").read().endswith("9.9\\n")  # the script reads back what it wrote
        os.remove("old.ckpt")
    """)
    before = {path: path.read_bytes() for path in project.iterdir()}
    monkeypatch.chdir(project)
    report = run_probe(str(script), [], [], timeout=30, progress=False, settings=quick_settings())
    assert {path: path.read_bytes() for path in project.iterdir()} == before  # nothing changed, nothing new
    assert report.script_outcome == "stopped at os.remove('old.ckpt') after loader 1's epoch 2; nothing written"
    text = report.render_text()
    assert "torch.save('model.pth') after loader 1's epoch 2" in text
    assert "open('metrics.txt', 'a') after loader 1's epoch 2" in text
    assert "os.mkdir('runs') before any loader was iterated" in text
    assert "open('child.txt', 'w')" in text
    assert report.loaders and report.loaders[0].first_batch_s is not None


# -- 2. nothing left running ----------------------------------------------------------------------


def test_a_setsid_grandchild_that_ignores_sigterm_is_gone_after_the_run(tmp_path, assert_no_leftovers):
    token = f"dllint-test-{uuid.uuid4().hex}"
    sleeper = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    script = write_script(tmp_path, f"""
        import subprocess
        # A helper in its own session, and a double-forked daemon whose parent exits at once.
        subprocess.Popen([sys.executable, "-c", {sleeper!r}, "{token}"], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", {sleeper!r}, "{token}"])
            os._exit(0)
        data = TensorDataset(torch.arange(16.0))
        for batch in DataLoader(data, batch_size=4, num_workers=2):
            pass
    """)
    report = run_probe(str(script), [], [], timeout=30, progress=False, settings=quick_settings())
    assert report.loaders, report.render_text()
    assert processes_with(token) == []
    assert report.leftover_processes == []
    assert_no_leftovers(report)


DAEMON_SCRIPT = """
    import subprocess, time
    SLEEPER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    if os.fork() == 0:  # a double-forked daemon in its own session, deaf to SIGTERM
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEPER, "TOKEN"])
        os._exit(0)

    class Slow(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            time.sleep(60)
            return index

    for batch in DataLoader(Slow(), num_workers=2):
        pass
"""


def dllint_at_first_batch(tmp_path, token: str) -> tuple[subprocess.Popen, pathlib.Path]:
    """dllint probing DAEMON_SCRIPT, its daemon started, its loader waiting for a first batch that never comes."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = write_script(tmp_path, DAEMON_SCRIPT.replace("TOKEN", token))
    environment = {**os.environ, "TMPDIR": str(temp)}
    dllint = subprocess.Popen([sys.executable, "-m", "dllint", "--probe", str(script), "--probe-timeout", "60"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=tmp_path)
    progress = []
    for line in dllint.stderr:  # progress lines arrive while it runs
        progress.append(line)
        if "first batch" in line:
            break
    assert any(line.startswith("probe: loader 1 at ") for line in progress), progress
    deadline = time.monotonic() + 10
    while not processes_with(token) and time.monotonic() < deadline:  # its double fork and exec take a moment
        time.sleep(0.1)
    assert processes_with(token), "the daemon should be running"
    return dllint, temp


def assert_all_gone(token: str, temp: pathlib.Path, patience: float) -> None:
    deadline = time.monotonic() + patience
    while (processes_with(token) or processes_with(str(temp)) or list(temp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_with(token) == []
    assert processes_with(str(temp)) == []  # the harness and its workers: their command lines name the temp dir
    assert list(temp.iterdir()) == []  # the probe's directory removed


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_to_dllint_mid_probe_leaves_no_process_and_no_temporary_directory(tmp_path, signum, status):
    token = f"dllint-test-{uuid.uuid4().hex}"
    dllint, temp = dllint_at_first_batch(tmp_path, token)
    dllint.send_signal(signum)
    assert dllint.wait(timeout=20) == status
    assert_all_gone(token, temp, patience=1)


def test_sigkill_to_dllint_leaves_no_process_and_no_temporary_directory(tmp_path):
    token = f"dllint-test-{uuid.uuid4().hex}"
    dllint, temp = dllint_at_first_batch(tmp_path, token)
    dllint.kill()  # SIGKILL: no handler runs; the watchdog cleans up
    dllint.wait(timeout=10)
    assert_all_gone(token, temp, patience=15)


def test_without_a_subreaper_a_double_forked_daemon_is_still_killed(tmp_path, monkeypatch, assert_no_leftovers):
    from dllint.probe import processes

    monkeypatch.setattr(processes, "PLATFORM", processes.Platform(False, False, True, True, True))  # as on macOS
    token = f"dllint-test-{uuid.uuid4().hex}"
    script = write_script(tmp_path, DAEMON_SCRIPT.replace("TOKEN", token).replace("time.sleep(60)", "pass"))
    report = run_probe(str(script), [], [], timeout=30, progress=False, settings=quick_settings())
    assert report.loaders, report.render_text()
    assert processes_with(token) == []
    assert_no_leftovers(report)


def test_a_script_attacking_the_probe_is_stopped_each_time_and_the_timeout_holds(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "victim.txt").write_text("keep me")
    script = write_script(project, """
        import signal, tempfile
        from dllint.probe.guard import WriteStopped
        own = os.path.dirname(os.path.dirname(tempfile.gettempdir()))  # the probe's directory
        events = os.path.join(own, "events.jsonl")
        attacks = [
            lambda: os.remove(events),
            lambda: os.symlink(os.path.abspath("victim.txt"), events),
            lambda: os.rename(__file__, events),
            lambda: os.kill(os.getppid(), signal.SIGSTOP),  # would freeze dllint's clock
        ]
        for attack in attacks:
            try:
                attack()
            except WriteStopped:
                pass
        data = TensorDataset(torch.arange(8.0))
        for batch in DataLoader(data, batch_size=4, num_workers=2):
            pass
        while True:  # runs until --probe-timeout
            time.sleep(0.1)
    """)
    monkeypatch.chdir(project)
    started = time.monotonic()
    report = run_probe(str(script), [], [], timeout=5, progress=False, settings=quick_settings())
    assert report.status == "timeout"
    assert time.monotonic() - started - (report.startup_s or 0) < 20
    stopped = [write["action"] for write in report.writes if write["handled"] == "stopped"]
    assert stopped == ["os.remove", "os.symlink", "os.rename/os.replace", "os.kill"]
    assert (project / "victim.txt").read_text() == "keep me"
    assert report.loaders  # the events file stayed the probe's


# -- 3. a verdict only from its own evidence, on its own loader ----------------------------------------


def test_the_recommended_reseeding_is_not_confirmed_as_dl304(tmp_path):
    script = write_script(tmp_path, """
        import numpy as np

        class Augmented(Dataset):
            def __init__(self):
                self.rng = np.random.default_rng(0)

            def __len__(self):
                return 8

            def __getitem__(self, index):
                return torch.tensor([self.rng.random()])


        def reseed(worker_id):
            info = torch.utils.data.get_worker_info()
            info.dataset.rng = np.random.default_rng(info.seed % 2**32)


        if __name__ == "__main__":
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2, worker_init_fn=reseed):
                pass
    """)
    reseeded = finding("DL304", script, line_of(script, "worker_init_fn=reseed"))
    run_probe(str(script), [], [reseeded], timeout=30, progress=False, settings=checks_settings())
    assert reseeded.probe["verdict"] == "not confirmed", reseeded.probe
    assert "different draws" in reseeded.probe["evidence"]


def test_one_epoch_does_not_confirm_dl201(tmp_path):
    script = write_script(tmp_path, """
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=3)
        epochs = parser.parse_args().epochs
        if __name__ == "__main__":
            loader = DataLoader(Opens(), batch_size=4, num_workers=2)
            for epoch in range(epochs):
                for batch in loader:
                    pass
    """, opens=True)
    dl201 = finding("DL201", script, line_of(script, "loader = DataLoader"))
    report = run_probe(str(script), ["--epochs", "1"], [dl201], timeout=30, progress=False, settings=checks_settings())
    assert dl201.probe["verdict"] == "not reached"
    assert dl201.probe["evidence"].startswith("the loader was iterated once")
    assert "epoch start" in dl201.probe["evidence"]  # what was measured is still shown
    assert not report.loaders[0].iterated_again


def test_each_unpicklable_attribute_gets_its_own_error(tmp_path):
    script = write_script(tmp_path, """
        import threading

        class Holder(Dataset):
            def __init__(self):
                self.handle = open(__file__)
                self.size = 8
                self.lock = threading.Lock()

            def __len__(self):
                return self.size

            def __getitem__(self, index):
                return index

        if __name__ == "__main__":
            for batch in DataLoader(Holder(), num_workers=2, multiprocessing_context="fork"):
                pass
    """)
    handle, size, lock = (finding("DL104", script, line_of(script, text)) for text in ("self.handle =", "self.size =", "self.lock ="))
    run_probe(str(script), [], [handle, size, lock], timeout=30, progress=False, settings=checks_settings())
    assert handle.probe["verdict"] == "confirmed" and "TextIOWrapper" in handle.probe["evidence"]
    assert lock.probe["verdict"] == "confirmed" and "lock" in lock.probe["evidence"]
    assert "TextIOWrapper" not in lock.probe["evidence"]
    assert size.probe["verdict"] == "not confirmed"


# -- 4. call sites are the user's code ---------------------------------------------------------------------

FRAMEWORK = '''
"""A stand-in for Lightning: the user's loader is rebuilt with the framework's sampler (its other
settings kept, as Lightning keeps them), then iterated."""
from torch.utils.data import DataLoader, SequentialSampler


class Trainer:
    def fit(self, datamodule, epochs=3):  # 2 restarts saved, not 1: the decision's margin under load
        loader = datamodule.train_dataloader()
        loader = DataLoader(loader.dataset, batch_size=loader.batch_size, num_workers=loader.num_workers,
                            persistent_workers=loader.persistent_workers, sampler=SequentialSampler(loader.dataset))
        for epoch in range(epochs):
            for batch in loader:
                pass
'''


def test_a_datamodules_train_loader_rebuilt_by_a_framework_is_reached_and_measured(tmp_path, monkeypatch):
    site_packages = tmp_path / "venv" / "lib" / "site-packages"
    (site_packages / "framework").mkdir(parents=True)
    (site_packages / "framework" / "__init__.py").write_text(FRAMEWORK)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site_packages), os.environ.get("PYTHONPATH")])))
    script = write_script(tmp_path, """
        from framework import Trainer

        class DataModule:
            def train_dataloader(self):
                return DataLoader(Opens(), batch_size=4, num_workers=2)

        if __name__ == "__main__":
            Trainer().fit(DataModule())
    """, opens=True)
    dl201 = finding("DL201", script, line_of(script, "return DataLoader"))
    report = run_probe(str(script), [], [dl201], timeout=30, progress=False, settings=quick_settings())
    (loader,) = report.loaders
    assert loader.call_site.endswith(f"train.py:{line_of(script, 'return DataLoader')}")
    assert loader.first_batch_s is not None
    assert any("rebuilt by framework" in note for note in loader.notes)
    assert dl201.probe["verdict"] == "confirmed", dl201.probe
    assert loader.recommendation.decision.verdict.value == "better"  # the block reaches the rebuilt loader


# A Lightning DataModule's train and val loaders, and what its logger and checkpoint write:
# tests/probe/test_real_step.py::test_a_lightning_datamodules_train_and_val_loaders_are_both_confirmed.


def test_a_loader_built_in_an_unhooked_child_process_is_reported_as_such(tmp_path):
    # multiprocessing children are probed as ranks (tests/test_distributed_probe.py); a Python
    # program the script runs itself is not hooked, and its loader is reported, not lost.
    script = write_script(tmp_path, """
        import subprocess

        CHILD = "import torch; from torch.utils.data import DataLoader; DataLoader(range(4))"
        if __name__ == "__main__":
            subprocess.run([sys.executable, "-c", CHILD], check=True)
    """)
    report = run_probe(str(script), [], [], timeout=60, progress=False, settings=quick_settings())
    assert report.could_not_run  # the script's own process built nothing the probe could measure
    assert any("in a child process" in note for note in report.notes), report.notes
    assert "no DataLoader was built in the script's own process" in report.render_text()


# -- 5. numbers you can act on ----------------------------------------------------------------------


@pytest.mark.serial  # a sweep measures throughput: another test's processes on the same cores skew it
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_the_sweep_on_two_cores_never_recommends_more_than_two_workers(tmp_path):
    script = write_script(tmp_path, pooled_dataset("Busy", 10_000) + textwrap.dedent("""
        if __name__ == "__main__":
            torch.set_num_threads(1)
            for batch in DataLoader(Busy(), batch_size=8, num_workers=4):
                pass
    """))
    dl202 = finding("DL202", script, line_of(script, "num_workers=4"))
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, sorted(allowed)[:2])  # the harness and its workers inherit two cores
    try:
        run_probe(str(script), [], [dl202], timeout=60, progress=False, settings=fast_settings(sweep_limit=4))
    finally:
        os.sched_setaffinity(0, allowed)
    measurements = dl202.probe["measurements"]
    assert measurements.get("usable_cores") == 2, str(dl202.probe)  # a str is shown whole, a dict cut short
    assert set(measurements["sweep"]) == {"0", "1", "2", "4"}
    assert measurements["recommended"] <= 2, measurements
    assert all("spread" in row for row in measurements["sweep"].values())


# -- 6. honest endings ------------------------------------------------------------------------------


def test_a_script_that_needs_arguments_shows_its_usage_and_exits_2(tmp_path):
    script = write_script(tmp_path, """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--data", required=True)
        parser.parse_args()
    """)
    proc = subprocess.run([sys.executable, "-m", "dllint", "--probe", str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "the following arguments are required: --data" in proc.stdout
    assert "hint: if the script needs arguments, pass the script's arguments after --" in proc.stdout
    assert "All checks passed" not in proc.stdout


def test_a_script_that_uses_its_loss_after_the_loop_runs_to_its_end(tmp_path):
    script = write_script(tmp_path, """
        def train():
            loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4)
            for batch in loader:
                loss = batch[0].sum()
            print(loss.item())

        train()
    """)
    report = run_probe(str(script), [], [], timeout=30, progress=False, settings=quick_settings())
    assert report.script_outcome == "the script ran to its end"  # the loop ran on real batches: loss exists
    assert report.loaders[0].step["batches"] == [2]
    assert not report.could_not_run
