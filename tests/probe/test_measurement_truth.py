"""The probe's numbers are the script's, not the probe's (issue 33): real torch workers, small runs.

A stream without ``__len__`` is bounded and reported (and a crashed probe never exits 0); the
probe's variants never touch the script's dataset object; the sweep's noise is relative.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from probe_helpers import fast_settings, finding, line_of, quick_settings, write_script

from dllint.probe import run_probe
from dllint.probe.verdicts import Judgment, Verdict

pytestmark = pytest.mark.probe


def probe(path, findings=(), **overrides):
    """The least evidence (:func:`quick_settings`): these tests are about the numbers the probe reads,
    not the block's decision; a test whose subject is the sweep passes the sweep's own rounds back."""
    settings = quick_settings(epoch_batches=overrides.pop("epoch_batches", 8), **overrides)
    return run_probe(str(path), [], list(findings), timeout=90, progress=False, settings=settings)


def sweep_probe(path, findings=(), **overrides):
    """:func:`probe` with the sweep's default rounds (its subject) and the decision's default pairs: a
    decision that cannot tell the block from the script's settings takes back the DL202 these assert."""
    settings = fast_settings(epoch_batches=overrides.pop("epoch_batches", 8), **overrides)
    return run_probe(str(path), [], list(findings), timeout=90, progress=False, settings=settings)


# -- a long stream without __len__ ------------------------------------------------------------------

STREAM = """
    from torch.utils.data import IterableDataset, get_worker_info

    class LogStream(IterableDataset):
        \"\"\"A log read line by line: no __len__; 64 batches of 4, 2 ms a line, each worker its share.\"\"\"

        def __iter__(self):
            info = get_worker_info()
            first, step = (info.id, info.num_workers) if info else (0, 1)
            for index in range(first, 256, step):
                time.sleep(0.002)
                yield torch.full((4,), float(index))

    if __name__ == "__main__":
        loader = DataLoader(LogStream(), batch_size=4, num_workers=2)
        model = torch.nn.Linear(4, 1)
        for epoch in range(2):
            for batch in loader:
                model(batch).sum().backward()
"""


def test_a_stream_without_len_is_bounded_measured_and_gets_its_verdicts_and_block(tmp_path):
    script = write_script(tmp_path, STREAM)
    at = line_of(script, "loader = DataLoader")
    dl201, dl202 = finding("DL201", script, at), finding("DL202", script, at)
    report = probe(script, [dl201, dl202], epoch_batches=32, sweep_limit=2)
    assert report.status == "completed" and report.script_outcome == "the script ran to its end", report.script_outcome
    (loader,) = report.loaders
    assert loader.step["batches"] == [32, 32] and loader.step["cut"]  # 64 batches a pass: bounded at 32
    assert loader.step["replayed_batches"] == 8 and "input_bound_fraction" in loader.step  # epoch 2's last quarter
    measured = (Verdict.CONFIRMED, Verdict.NOT_CONFIRMED, Verdict.INCONCLUSIVE)  # an inconclusive one says why
    assert Judgment.parse(dl201.probe["verdict"]).verdict in measured, dl201.probe
    assert "epoch start" in dl201.probe["evidence"]
    assert dl202.probe["verdict"] != "skipped", dl202.probe
    sweep = next(table for table in loader.tables if table.title.startswith("num_workers sweep"))
    assert all(row[1] != "failed" for row in sweep.rows), sweep.rows  # the sweep draws from the stream again
    assert loader.recommendation is not None and "num_workers" in loader.recommendation.settings


def test_a_probe_that_dies_never_exits_0(tmp_path):
    """A harness that dies (here: SIGKILL to itself after the first batch) is a crash, exit 2."""
    script = write_script(tmp_path, """
        import signal
        if __name__ == "__main__":
            loader = DataLoader(TensorDataset(torch.arange(32.0)), batch_size=4)
            for batch in loader:
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-m", "dllint", "--probe", str(script), "--probe-timeout", "60"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "died before reporting" in proc.stdout, proc.stdout
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)


# -- a dataset that opens its file lazily (dllint's own DL104 fix) -------------------------------------

LAZY = """
    import struct

    RECORD = struct.Struct("17f")  # 68 bytes a record

    class Records(Dataset):
        def __init__(self, path):
            self.path, self.handle = path, None  # opened in each worker, on first use

        def __len__(self):
            return 256

        def __getitem__(self, index):
            if self.handle is None:
                self.handle = open(self.path, "rb")
            self.handle.seek(index * RECORD.size)
            return torch.tensor(RECORD.unpack(self.handle.read(RECORD.size)))

    if __name__ == "__main__":
        path = os.path.join(os.environ.get("TMPDIR", "."), "records.bin")
        with open(path, "wb") as out:
            for index in range(256):
                out.write(RECORD.pack(*([float(index)] * 17)))
        loader = DataLoader(Records(path), batch_size=8, num_workers=2, persistent_workers=True)
        for epoch in range(2):
            for batch in loader:
                batch.sum()
"""


def test_a_lazily_opened_handle_stays_out_of_the_scripts_dataset(tmp_path):
    """The sweep's 0-worker variant runs __getitem__ in the main process: on the script's own
    dataset it left a handle there, and DL303 was confirmed on the probe's doing."""
    script = write_script(tmp_path, LAZY)
    at = line_of(script, "loader = DataLoader")
    dl303, dl202 = finding("DL303", script, at), finding("DL202", script, at)
    # no decision runs (probe_helpers.checks_settings): DL303's check and the sweep's rows are the subject
    report = probe(script, [dl303, dl202], sweep_limit=2, most_pairs=0)
    assert dl303.probe["verdict"] == "not confirmed", dl303.probe
    assert "changed no dataset attribute" in dl303.probe["evidence"]
    sweep = next(table for table in report.loaders[0].tables if table.title.startswith("num_workers sweep"))
    assert [row[0] for row in sweep.rows] == [0, 1, 2] and all(row[1] != "failed" for row in sweep.rows), sweep.rows


class LazyWithLambda:
    def __init__(self):
        self.data, self.handle, self.transform = [1.0, 2.0], None, lambda x: x  # a lambda: no pickle


class Plain:
    def __init__(self, data):
        self.data, self.handle = data, None


def test_own_copy_shares_tensors_and_isolates_attributes():
    import torch

    from dllint.probe.measure import own_copy

    for dataset in (LazyWithLambda(), Plain(torch.zeros(4))):
        copy = own_copy(dataset)
        copy.handle = "opened"
        assert dataset.handle is None and copy is not dataset
    plain = Plain(torch.zeros(4))
    assert own_copy(plain).data is plain.data  # the data is shared, not doubled


# -- the sweep's noise, its counts and its words ----------------------------------------------------


def test_the_spread_is_relative_so_a_sixfold_gap_is_beyond_its_noise():
    from dllint.probe.checks.gains import compare
    from dllint.probe.checks.sweep import decide

    two, zero = [62964.0, 63000.0, 70000.0], [736678.0, 384300.0, 343000.0]  # per round: 11.7x, 6.1x, 4.9x
    comparison = compare(two, zero)
    assert comparison.spread == pytest.approx((11.7 - 4.9) / 6.1, rel=0.02)  # 111%, not 680%
    assert comparison.decided and comparison.beyond_noise
    assert decide({0: zero, 1: [200000.0] * 3, 2: two}, cores=2, requested=2).recommended == 0
    small = compare([100.0, 100.0, 100.0], [135.0, 100.0, 111.0])  # ratios near 1: as before
    assert small.spread == pytest.approx(0.35 / 1.11, rel=0.01) and not small.decided


def test_a_loader_waiting_on_io_is_swept_beyond_the_cores():
    from dllint.probe.checks.sweep import worker_counts

    assert worker_counts(requested=2, cores=2) == [0, 1, 2]
    assert worker_counts(requested=2, cores=2, io_bound=True) == [0, 1, 2, 4, 8]
    assert worker_counts(requested=2, cores=2, limit=4, io_bound=True) == [0, 1, 2, 4]


def sweep_verdict(rates: dict[int, list[float]], requested: int, batch_size: int = 16):
    import types

    from dllint.probe.checks.gains import RunLength
    from dllint.probe.checks.sweep import _judge_too_many, decide

    site = types.SimpleNamespace(arguments={"batch_size": batch_size})
    rows = {count: {"peak_mb": 100.0} for count in rates}
    return _judge_too_many(site, decide(rates, cores=2, requested=requested), requested, rows, RunLength(None, None))


def test_the_best_measured_is_said_only_of_the_best_and_the_floor_applies_to_dl202():
    verdict, evidence, *_ = sweep_verdict({0: [100.0] * 3, 1: [190.0, 200.0, 210.0], 2: [180.0, 260.0, 230.0]}, 1)
    # the rounds could not tell 2 from 1: inconclusive, never "the best measured"
    assert verdict == "inconclusive (spread 32% > gain 15%)", verdict
    assert "the best measured" not in evidence and "not beaten beyond the noise" in evidence
    verdict, evidence, *_ = sweep_verdict({0: [100.0] * 3, 1: [200.0, 200.0, 200.0], 2: [205.0, 200.0, 206.0]}, 1)
    assert verdict == "not confirmed" and "not beaten beyond the noise" in evidence  # within 5%: decided
    verdict, evidence, *_ = sweep_verdict({0: [100.0] * 3, 1: [200.0] * 3, 2: [150.0] * 3}, 1)
    assert "the best measured" in evidence
    verdict, evidence, *_ = sweep_verdict({0: [100.0] * 3, 1: [200.0] * 3, 2: [400.0] * 3}, 1)
    assert verdict == "not confirmed" and "more workers do better: 2" in evidence
    # 4 workers at 600,000 samples/s of batch 16: 27 µs a batch, nothing a worker count can save
    verdict, evidence, *_ = sweep_verdict({0: [700000.0] * 3, 2: [650000.0] * 3, 4: [600000.0] * 3}, 4)
    assert verdict == "not confirmed (a batch loads in 27 µs)", evidence
    verdict, *_ = sweep_verdict({0: [7000.0] * 3, 2: [6500.0] * 3, 4: [600.0] * 3}, 4)
    assert verdict == "confirmed"


SLEEPS = """
    class Remote(Dataset):
        \"\"\"Each sample a 4 ms wait on storage: workers overlap their waits, beyond the cores.\"\"\"

        def __len__(self):
            return 4096

        def __getitem__(self, index):
            time.sleep(0.004)
            return torch.tensor([float(index)])

    if __name__ == "__main__":
        loader = DataLoader(Remote(), batch_size=4, num_workers=2)
        for epoch in range(2):
            for batch in loader:
                batch.sum()
"""


class TestSweptCounts:
    """The sweep's counts on real loaders: beyond the cores, and under (a class: one unit under --dist loadscope)."""

    def test_a_sleep_bound_loader_is_recommended_more_workers_than_cores(self, tmp_path):
        script = write_script(tmp_path, SLEEPS)
        dl202 = finding("DL202", script, line_of(script, "loader = DataLoader"))
        report = sweep_probe(script, [dl202], cores=2, sweep_limit=8, epoch_batches=4, epochs=1)
        measurements = dl202.probe["measurements"]
        assert measurements["io_bound"] and sorted(map(int, measurements["sweep"])) == [0, 1, 2, 4, 8], measurements
        rates = {int(count): row["samples_per_s"] for count, row in measurements["sweep"].items()}
        assert rates[8] > 1.5 * rates[2], rates  # 8 sleeping workers on 2 cores: about 4x
        assert measurements["recommended"] > 2, measurements
        assert dl202.probe["verdict"].startswith("not confirmed") and "more workers do better" in dl202.probe["evidence"]
        assert report.loaders[0].recommendation.settings["num_workers"] == measurements["recommended"]

    def test_the_gap_of_in_memory_tensors_over_workers_is_confirmed(self, tmp_path):
        script = write_script(tmp_path, IN_MEMORY)
        dl202 = finding("DL202", script, line_of(script, "loader = DataLoader"))
        sweep_probe(script, [dl202], cores=2, sweep_limit=2, epochs=1)
        measurements = dl202.probe["measurements"]
        rates = {int(count): row["samples_per_s"] for count, row in measurements["sweep"].items()}
        assert rates[0] > 1.3 * rates[2], rates  # loading in the main process: no queue, no pickling
        assert measurements["recommended"] == 0 and dl202.probe["verdict"] == "confirmed", dl202.probe


IN_MEMORY = """
    if __name__ == "__main__":
        data = TensorDataset(torch.randn(4096, 8))
        loader = DataLoader(data, batch_size=64, num_workers=2)
        for epoch in range(2):
            for (batch,) in loader:
                batch.sum()
"""


STORED = """
    if __name__ == "__main__":
        data = TensorDataset(torch.randn(4096, 8))
        loader = DataLoader(data, batch_size=64, num_workers=4, persistent_workers=True, pin_memory=True)
        model = torch.nn.Linear(8, 1)
        for epoch in range(2):
            for (batch,) in loader:
                model(batch).sum().backward()
"""


def test_an_in_memory_loader_gets_a_measured_zero_workers_block_in_3_of_3_runs(tmp_path):
    """No finding asks for it: the loader's workers earn it a sweep, so the block's num_workers is
    measured, not the script's; pinning goes on a machine without an accelerator."""
    script = write_script(tmp_path, STORED)
    blocks = []
    for _ in range(3):
        # one decision pair: the block's settings are the subject, not its before/after
        report = sweep_probe(script, cores=2, sweep_limit=4, epoch_batches=16, min_pairs=1, most_pairs=1)
        (loader,) = report.loaders
        recommendation = loader.recommendation
        assert recommendation is not None and recommendation.effects["num_workers"].startswith("sweep: "), recommendation
        blocks.append((recommendation.settings, recommendation.dropped))
    settings, dropped = blocks[0]
    assert settings["num_workers"] == 0 and "persistent_workers" not in settings and "persistent_workers" in dropped
    assert settings["pin_memory"] is False  # this machine has no accelerator
    assert blocks == [blocks[0]] * 3, blocks
    text = report.render_text()
    assert "num_workers=0,  # sweep: 0 workers: " in text and "pin_memory=False,  # no accelerator" in text
    assert " 0 workers | " in text and "100% of the best" in text  # a bar per sweep point


def test_each_sweep_point_is_one_bar_with_its_rate_and_share_of_the_best():
    from dllint.probe.checks.sweep import render_chart

    rows = {0: {"samples_per_s": 400.0, "spread": 0.02, "peak_mb": 80.0},
            2: {"samples_per_s": 100.0, "spread": 0.0, "peak_mb": 120.0}, 4: {"error": "RuntimeError: boom"}}
    zero, two, four = render_chart(rows, recommended=0)
    assert zero.startswith("  0 workers | " + "#" * 30) and "400.0 samples/s" in zero and "100% of the best" in zero
    assert zero.endswith("<- recommended")
    assert two.startswith("  2 workers | " + "#" * 8 + " ") and "100.0 samples/s" in two and " 25% of the best" in two
    assert four == "  4 workers | failed: RuntimeError: boom"


# -- three measurements, one question ----------------------------------------------------------------

CONTENDED = """
    class Augment(Dataset):
        \"\"\"About 3 ms of CPU a sample (decoding, augmentation).\"\"\"

        def __len__(self):
            return 8 * 16

        def __getitem__(self, index):
            end = time.process_time() + 0.003
            while time.process_time() < end:
                pass
            return torch.full((16,), float(index))

    if __name__ == "__main__":
        torch.set_num_threads(1)
        # batches of 8: 24 ms of CPU each, still some 100 times the step's (8 batches of 32 cost 4 times as much)
        loader = DataLoader(Augment(), batch_size=8, num_workers=8, persistent_workers=True)
        model = torch.nn.Linear(16, 2)
        for epoch in range(2):  # two epochs: the step alone is replayed in epoch 2's tail
            for batch in loader:
                model(batch).sum().backward()
"""


class TestThreeMeasurements:
    """The step's CPU contention named from real workers (a class: one unit under --dist loadscope)."""

    def test_eight_cpu_bound_workers_on_two_cores_are_input_bound_and_the_contention_is_named(self, tmp_path):
        """The wait between batches said 7% here under load: the step, starved of CPU by eight workers, looked slow."""
        script = write_script(tmp_path, CONTENDED)
        # the sweep is not the subject (0-2 workers), nor the decision (no decision runs: each re-ran the 8 workers)
        report = probe(script, epoch_batches=16, cores=2, sweep_limit=2, most_pairs=0)
        step = report.loaders[0].step
        assert step["batches"] == [16, 16] and step["replayed_batches"] == 4, step  # epoch 2's last quarter
        assert step["epoch_s"] > 0 and 0 < step["step_alone_s"] < step["epoch_s"] / 4, step
        assert step["input_bound_fraction"] > 0.8, step
        # Eight CPU-bound workers keep the two cores busy: the contention is named, however loaded the machine.
        assert step["bound"] == "contention" and step["contended_by"] == "workers", str(step)
        assert step["workers_busy_cores"] >= 0.25, step  # they took the CPU
        text = report.render_text()
        assert f"input-bound share {step['input_bound_fraction'] * 100:.0f}% (contention: the workers take the step's CPU" in text

    def test_an_outside_cpu_hog_is_never_blamed_on_sleeping_workers(self, tmp_path):
        """Two busy loops outside the probe take the cores: the machine's other load is measured as such, the
        workers' share as theirs (about nothing), and a contention is never said to be the workers'."""
        script = write_script(tmp_path, SLEEPING_WORKERS)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            report = probe(script, epoch_batches=16, cores=2, sweep_limit=2)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        step = report.loaders[0].step
        assert step["workers_busy_cores"] < 0.25, step
        assert step["other_busy_cores"] > 0.8, step  # the hogs' share of the two cores (and other load)
        if step["bound"] == "contention":
            assert step["contended_by"] == "other processes", step
            assert "contention: other processes take the step's CPU, not the loader's workers" in report.render_text()
        assert "the workers take the step's CPU" not in report.render_text()


SLEEPING_WORKERS = """
    class Remote(Dataset):
        \"\"\"Each sample a 3 ms wait on storage: the workers sleep, they take no CPU.\"\"\"

        def __len__(self):
            return 8 * 16

        def __getitem__(self, index):
            time.sleep(0.003)
            return torch.full((16,), float(index))

    if __name__ == "__main__":
        loader = DataLoader(Remote(), batch_size=8, num_workers=2)
        model = torch.nn.Linear(16, 2)
        for epoch in range(2):
            for batch in loader:
                model(batch).sum().backward()
"""


def epoch(number, waits, bodies, replayed=0, worker_cpu=None):
    from dllint.probe.steps import EpochRecord

    return EpochRecord(number, 0.0, waits, bodies, seconds=sum(waits) + sum(bodies), replayed=replayed,
                       worker_cpu_s=worker_cpu)


def test_a_step_bound_loop_is_named_so():
    from dllint.probe.steps import StepClock

    clock = StepClock(cores=2)
    clock.epochs = [epoch(1, [0.001] * 4, [0.010] * 4), epoch(2, [0.001] * 3, [0.010] * 3, replayed=1)]
    clock.replays = [epoch(2, [0.0], [0.010])]
    clock.loader_alone_s = 0.004
    step = clock.summary()
    assert step["epoch_s"] == pytest.approx(0.044) and step["epochs_s"] == [0.044, 0.044]  # epoch 2 at its full length
    assert step["input_bound_fraction"] == pytest.approx(1 - 0.010 / 0.011) and step["bound"] == "step"
    assert step["step_alone_s"] == pytest.approx(0.040) and step["loader_alone_s"] == 0.004
    assert step["batches"] == [4, 4] and step["replayed_batches"] == 1


def test_contention_is_named_from_busy_cores_or_a_slower_step_and_one_preemption_moves_neither():
    from dllint.probe.steps import StepClock

    busy = StepClock(cores=2, workers=2)  # the workers kept 1.8 cores busy; the step's own pace unchanged
    busy.epochs = [epoch(1, [0.02] * 4, [0.001] * 4, worker_cpu=0.151), epoch(2, [0.02] * 3, [0.001] * 3, 1, 0.113)]
    busy.replays = [epoch(2, [0.0] * 4, [0.001, 0.001, 0.001, 0.009])]  # one replayed step preempted: the median holds
    step = busy.summary()
    assert step["bound"] == "contention" and step["workers_busy_cores"] == pytest.approx(1.8, rel=0.01), step
    assert step["contended_by"] == "workers"
    assert step["step_slowdown"] == pytest.approx(1.0, abs=0.3)
    idle = StepClock(cores=2)  # sleeping workers, a step as fast as alone: input
    idle.epochs = [epoch(1, [0.02] * 4, [0.001] * 4, worker_cpu=0.01)]
    idle.replays = [epoch(2, [0.0] * 2, [0.001, 0.001])]
    assert idle.summary()["bound"] == "input"
    slowed = StepClock(cores=2, workers=2)  # the step 2.5 times as slow beside the workers: 30% of each batch's time
    slowed.epochs = [epoch(1, [0.01] * 4, [0.010] * 4, worker_cpu=0.01)]
    slowed.replays = [epoch(2, [0.0] * 2, [0.004, 0.004])]
    assert slowed.summary()["bound"] == "contention"
    # the workers took 0.1 of a core: the slower step is the other processes' doing (1.5 cores)
    assert slowed.summary()["contended_by"] == "other processes"
    slowed.epochs[0].other_cpu_s = 0.12
    other = slowed.summary()
    assert other["other_busy_cores"] == pytest.approx(1.5) and other["workers_busy_cores"] == pytest.approx(0.125)
    words = __import__("dllint.probe.steps", fromlist=["x"]).three_measurements_text(other)
    assert ("(contention: other processes take the step's CPU, not the loader's workers (the workers keep 0.1 of "
            "the 2 usable cores busy; other processes 1.5 cores; the step runs 2.5x slower than alone))") in words
    unread = StepClock(cores=2, workers=0)  # no workers at all: a slower step is never theirs
    unread.epochs, unread.replays = slowed.epochs, slowed.replays
    assert unread.summary()["contended_by"] == "other processes"
    tiny = StepClock(cores=2)  # a 1 ms step twice as slow: 5% of a batch's time, not what bounds the run
    tiny.epochs = [epoch(1, [0.02] * 4, [0.002] * 4, worker_cpu=0.01)]
    tiny.replays = [epoch(2, [0.0] * 2, [0.001, 0.001])]
    assert tiny.summary()["bound"] == "input"
    text = __import__("dllint.probe.steps", fromlist=["x"]).three_measurements_text(step)
    assert "they keep 1.8 of the 2 usable cores busy" in text


def test_a_tiny_models_step_is_a_step_and_a_loop_that_only_draws_is_not():
    from dllint.probe.steps import waits_on_data

    loading = {"steps": 30, "data_wait_fraction": 0.95, "data_wait_s": 0.010}
    assert waits_on_data({**loading, "step_s": 0.0104})  # forward, backward, step of a tiny model: 0.4 ms
    assert not waits_on_data({**loading, "step_s": 0.01002})  # a body of 20 µs: a loop that only draws
