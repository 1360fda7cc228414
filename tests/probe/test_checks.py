"""The other probe checks, each on a small script written for the test."""

from __future__ import annotations

import json

import pytest
from probe_helpers import checks_settings, fast_settings, finding, line_of, pooled_dataset, quick_settings, write_script

from dllint.probe import run_probe

pytestmark = pytest.mark.probe


def test_shuffle_with_sampler_is_confirmed_by_torchs_error(tmp_path, assert_no_leftovers):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(8.0))
        loader = DataLoader(data, shuffle=True,
                            sampler=range(8))
        for batch in loader:
            pass
    """)
    findings = [finding("DL003", script, line_of(script, "sampler=range(8)"))]  # an argument inside the call
    report = run_probe(str(script), [], findings, timeout=30, progress=False)
    assert findings[0].probe["verdict"] == "confirmed"
    assert "mutually exclusive with shuffle" in findings[0].probe["evidence"]
    assert "ValueError" in report.script_outcome
    assert_no_leftovers(report)


@pytest.mark.serial  # a sweep measures throughput: another test's processes on the same cores skew it
def test_worker_sweep_recommends_a_count_and_draws_a_chart(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(256.0))
        loader = DataLoader(data, batch_size=8, num_workers=4)
        for batch in loader:
            pass
    """)
    findings = [finding("DL202", script, line_of(script, "num_workers=4"))]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=fast_settings(sweep_limit=2))
    probe = findings[0].probe
    assert probe["verdict"] in ("confirmed", "not confirmed")
    sweep = probe["measurements"]["sweep"]
    assert set(sweep) == {"0", "1", "2"}
    assert all(row["samples_per_s"] > 0 and row["peak_mb"] > 0 for row in sweep.values())
    assert probe["measurements"]["recommended"] in (0, 1, 2)
    text = report.render_text()
    assert "num_workers sweep" in text and "<- recommended" in text and "samples/s" in text


def test_shared_rng_is_confirmed_and_a_reseeding_worker_init_fn_is_not(tmp_path):
    script = write_script(tmp_path, """
        class Augmented(Dataset):
            def __init__(self):
                self.rng = random.Random(0)

            def __len__(self):
                return 8

            def __getitem__(self, index):
                return torch.tensor([self.rng.random()])


        def reseed(worker_id):
            info = torch.utils.data.get_worker_info()
            info.dataset.rng.seed(info.seed)


        if __name__ == "__main__":
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2):
                pass
            for batch in DataLoader(Augmented(), batch_size=2, num_workers=2,
                                    worker_init_fn=reseed):
                pass
    """)
    shared, reseeded = (finding("DL304", script, line_of(script, text)) for text in ("num_workers=2):", "worker_init_fn=reseed"))
    report = run_probe(str(script), [], [shared, reseeded], timeout=30, progress=False, settings=checks_settings())
    by_loader = {loader.id: [r for r in loader.results if r.code == "DL304"] for loader in report.loaders}
    assert by_loader[1][0].verdict == "confirmed" and "identical draws" in by_loader[1][0].evidence
    assert by_loader[2][0].verdict == "not confirmed"
    assert shared.probe["verdict"] == "confirmed"
    assert reseeded.probe["verdict"] == "not confirmed"


def test_missing_set_epoch_is_confirmed_and_a_set_epoch_call_is_not(tmp_path):
    script = write_script(tmp_path, """
        data = TensorDataset(torch.arange(16.0))
        forgotten = DistributedSampler(data, num_replicas=1, rank=0)
        remembered = DistributedSampler(data, num_replicas=1, rank=0)
        forgotten_loader = DataLoader(data, batch_size=4, sampler=forgotten)
        remembered_loader = DataLoader(data, batch_size=4, sampler=remembered)
        for epoch in range(3):
            remembered.set_epoch(epoch)
            for batch in forgotten_loader:
                pass
            for batch in remembered_loader:
                pass
    """)
    findings = [finding("DL301", script, line_of(script, text)) for text in ("forgotten_loader = ", "remembered_loader = ")]
    run_probe(str(script), [], findings, timeout=30, progress=False, settings=quick_settings())
    assert findings[0].probe["verdict"] == "confirmed"
    assert "same order" in findings[0].probe["evidence"]
    assert findings[1].probe["verdict"] == "not confirmed"


def test_factory_target_and_json_report(tmp_path, monkeypatch, assert_no_leftovers):
    module = write_script(tmp_path, """
        def make_loader():
            return DataLoader(Opens(), batch_size=4, num_workers=2)
    """, name="loaders_for_probe.py", opens=True)
    monkeypatch.chdir(tmp_path)
    findings = [finding("DL201", module, line_of(module, "return DataLoader"))]
    report_path = tmp_path / "probe.json"
    # no decision runs: the subject is the factory target and the saved report, not the block's decision
    # (a decision pair timed under a loaded parallel run once read "keep yours" and took DL201 back)
    report = run_probe("loaders_for_probe:make_loader", [], findings, timeout=30, progress=False,
                       report_path=str(report_path), settings=checks_settings())
    # shown whole when it fails: the script's outcome and its stderr (a worker's traceback)
    assert findings[0].probe["verdict"] == "confirmed", "\n".join([report.script_outcome, *report.stderr_tail])
    saved = json.loads(report_path.read_text())
    assert saved["findings"][0]["probe"]["verdict"] == "confirmed"
    assert saved["loaders"][0]["summary"]["num_workers"] == 2
    assert json.loads(report.to_json()) == saved
    assert_no_leftovers(report)


def test_a_factory_that_returns_something_else_is_reported(tmp_path, monkeypatch):
    (tmp_path / "not_a_loader.py").write_text("def make():\n    return [1, 2, 3]\n")
    monkeypatch.chdir(tmp_path)
    report = run_probe("not_a_loader:make", [], [], timeout=30, progress=False)
    assert "returned list, not a DataLoader" in report.script_outcome


# -- savings, noise and the sweep's decision, on synthetic timings (no workers) ------------------
class Recording:
    """The slice of ProbeContext the checks use, recording what they report."""

    def __init__(self, main_globals=None):
        self.results, self.tables = [], []
        self.stderr_path = None
        self.main_globals = main_globals or {}

    def requested(self, site, codes):
        return True

    def result(self, site, code, verdict, evidence, measurements=None, anchors=None):
        self.results.append((code, verdict, evidence, measurements or {}))

    def table(self, site, table):
        self.tables.append(table)

    def emit(self, event):
        self.results.append(("event", event.get("text"), "", {}))


def fake_site(**fields):
    import types

    defaults = {"num_workers": 2, "arguments": {"batch_size": 32}, "first_batch": None, "loader": None,
                "start_method": lambda: "fork", "state": {}}
    return types.SimpleNamespace(**{**defaults, **fields})


def test_epochs_come_from_the_scripts_arguments_or_its_globals():
    import argparse

    from dllint.probe.checks.gains import script_epochs

    assert script_epochs(["--lr", "0.1", "--epochs", "7"], {}) == 7
    assert script_epochs(["--num-epochs=4"], {}) == 4
    assert script_epochs([], {"args": argparse.Namespace(max_epochs=5)}) == 5
    assert script_epochs([], {"EPOCHS": 3}) == 3
    assert script_epochs(["--epochs"], {"EPOCHS": True, "args": 12}) is None  # no value, a bool, not a Namespace


def test_a_saving_says_seconds_per_epoch_and_over_the_run_and_has_a_floor():
    from dllint.probe.checks.gains import RunLength, Saving

    restart = Saving(0.44, RunLength(100, 4), epoch_s=3.0, paid_epochs_skip_first=True)
    assert restart.material and restart.over_run_s == pytest.approx(1.32)
    assert restart.describe() == "saves 440 ms per epoch, 1.3 s over 4 epochs"
    assert not Saving(0.004, RunLength(100, None), epoch_s=0.1).material  # under 5 ms per epoch
    assert not Saving(0.02, RunLength(100, None), epoch_s=10.0).material  # under 1% of a 10 s epoch
    tiny = Saving.from_batch(10e-6, RunLength(2000, None), batch_s=1e-4)  # 20 ms per epoch, yet 10 µs a batch
    assert not tiny.material and tiny.short() == "saves 10 µs per batch"
    assert tiny.describe() == "saves 10 µs per batch, 20 ms per epoch"
    assert Saving.from_batch(10e-6, RunLength(None, None)).describe() == "saves 10 µs per batch"
    assert Saving.from_batch(5e-3, RunLength(None, None)).material  # per batch only: 5 ms clears 50 µs


def test_a_comparison_is_inconclusive_when_the_spread_exceeds_the_gain():
    from dllint.probe.checks.gains import compare
    from dllint.probe.results import inconclusive, verdict_rank

    clear = compare([100.0, 90.0, 110.0], [150.0, 140.0, 160.0])  # +50% every round
    assert clear.decided and clear.beyond_noise
    noisy = compare([100.0, 100.0, 100.0], [135.0, 100.0, 111.0])  # gain 11%, spread 32% (0.35 of a median ratio of 1.11)
    assert not noisy.decided and not noisy.beyond_noise
    assert inconclusive(noisy.spread, noisy.gain) == "inconclusive (spread 32% > gain 11%)"
    assert verdict_rank("confirmed") > verdict_rank("not confirmed (saves 10 µs per batch)") > verdict_rank(
        "inconclusive (spread 35% > gain 11%)") > verdict_rank("skipped (no CUDA)") > verdict_rank("not reached")


def test_the_sweep_never_recommends_more_workers_than_cores_within_the_noise():
    from dllint.probe.checks.sweep import decide

    rounds = {0: [300.0, 320.0, 310.0], 1: [500.0, 480.0, 520.0], 2: [900.0, 1000.0, 950.0],
              4: [1000.0, 1300.0, 900.0]}  # 4 workers: median +5% over 2, spread ~40%
    assert decide(rounds, cores=2, requested=4).recommended == 2
    rounds[4] = [1500.0, 1650.0, 1580.0]  # +60% every round: beyond the noise
    assert decide(rounds, cores=2, requested=4).recommended == 4
    # in-memory tensors: workers cost more than they save, beyond the noise: 0, from any start
    tensors = {0: [7000.0, 6900.0, 7100.0], 1: [1100.0, 1000.0, 1200.0], 2: [1400.0, 1300.0, 1350.0]}
    assert decide(tensors, cores=2, requested=16).recommended == 0
    # noise the evidence cannot see through: the start stays, run after run
    noisy = {0: [900.0, 1500.0, 1000.0], 1: [1200.0, 900.0, 1400.0], 2: [1000.0, 1300.0, 1250.0]}
    assert decide(noisy, cores=2, requested=32).recommended == 2
    assert decide(noisy, cores=2, requested=0).recommended == 0


def test_sweep_sentences_match_their_numbers():
    from dllint.probe.checks.gains import RunLength
    from dllint.probe.checks.sweep import _judge_no_workers, _judge_too_many, decide

    # 32 workers measured 11% more than 16 on 16 cores, within a 32% spread: prefer 16 and say why
    rounds = {16: [10000.0, 10000.0, 10000.0], 32: [13500.0, 10000.0, 11100.0]}
    rows = {16: {"peak_mb": 900.0}, 32: {"peak_mb": 1500.0}}
    decision = decide(rounds, cores=16)
    verdict, evidence, comparison, _ = _judge_too_many(fake_site(), decision, 32, rows, RunLength(100, 3))
    assert decision.recommended == 16 and verdict == "confirmed"
    assert "+11% over 16 workers' 10000.0, within the noise (spread 32%)" in evidence and evidence.count("use 16") == 1
    assert "16 fewer processes; 600 MB less" in evidence
    # the same gain within the cores is no reason to prefer fewer: inconclusive
    rounds = {8: [10000.0, 10000.0, 10000.0], 16: [13500.0, 10000.0, 11100.0]}
    verdict, _, _, _ = _judge_too_many(fake_site(), decide(rounds, cores=32, requested=16), 16, {}, RunLength(100, 3))
    assert verdict in ("not confirmed", "inconclusive (spread 32% > gain 11%)")
    # DL203: workers clearly faster, with the data time saved per epoch and over the run
    rounds = {0: [100.0, 110.0, 105.0], 2: [400.0, 380.0, 420.0]}
    verdict, evidence, _, saving = _judge_no_workers(fake_site(), decide(rounds, cores=2, requested=0), 0, {},
                                                     RunLength(100, 3))
    assert verdict == "confirmed" and "per epoch" in evidence and saving.over_run_s == pytest.approx(3 * saving.per_epoch_s)
    noisy = {0: [100.0, 100.0, 100.0], 2: [160.0, 95.0, 111.0]}
    verdict, _, _, _ = _judge_no_workers(fake_site(), decide(noisy, cores=2, requested=0), 0, {}, RunLength(100, 3))
    assert verdict.startswith("inconclusive (spread 59% > gain 11%)")


# -- GPU checks with CUDA mocked --------------------------------------------------------------
def fake_cuda(available=True):
    import types

    return types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: available, init=lambda: None))


def test_dl105_is_confirmed_by_the_scripts_own_fork_crash_with_a_short_verdict():
    import types

    from dllint.probe.checks import cuda

    error = "RuntimeError: Caught RuntimeError in DataLoader worker process 0. Original: RuntimeError: Cannot " \
            "re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"
    ctx = Recording()
    cuda.on_first_iteration(fake_site(first_batch=types.SimpleNamespace(error=error)), ctx, torch=fake_cuda())
    [(code, verdict, evidence, measurements)] = ctx.results
    assert (code, verdict) == ("DL105", "confirmed") and "Cannot re-initialize CUDA" in evidence
    assert measurements["triggered_by"] == "script"
    other = Recording()  # another first-batch failure: short verdict, the error in the evidence
    cuda.on_first_iteration(fake_site(first_batch=types.SimpleNamespace(error="ValueError: bad")), other, fake_cuda())
    assert {(code, verdict, evidence) for code, verdict, evidence, _ in other.results} == {
        ("DL105", "skipped (the first batch failed)", "ValueError: bad"),
        ("DL206", "skipped (the first batch failed)", "ValueError: bad")}


def test_dl105_never_forces_fork_on_a_spawn_loader(monkeypatch):
    from dllint.probe.checks import cuda

    ctx = Recording()
    monkeypatch.setattr(cuda, "_pinned_vs_pageable", lambda site, ctx, torch: None)
    cuda.on_first_iteration(fake_site(start_method=lambda: "spawn"), ctx, torch=fake_cuda())
    [(code, verdict, evidence, _)] = ctx.results
    assert (code, verdict) == ("DL105", "not confirmed") and "spawn" in evidence and "CUDA context per worker" in evidence


def test_dl105_is_skipped_where_the_platform_cannot_fork(monkeypatch):
    """Windows has no fork: the check says so rather than failing (simulated on Linux)."""
    import multiprocessing

    from dllint.probe.checks import cuda

    ctx = Recording()
    monkeypatch.setattr(cuda, "_pinned_vs_pageable", lambda site, ctx, torch: None)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    cuda.on_first_iteration(fake_site(start_method=lambda: "fork"), ctx, torch=fake_cuda())
    [(code, verdict, evidence, _)] = ctx.results
    assert (code, verdict) == ("DL105", "skipped (no fork on this platform)") and "(Windows)" in evidence


def test_dl206_is_confirmed_only_on_a_material_saving():
    from dllint.probe.checks.cuda import pinning_verdict
    from dllint.probe.checks.gains import RunLength

    verdict, evidence, measurements = pinning_verdict(0.03e-3, 0.02e-3, 0.1e-3, RunLength(40, 3))  # 32x16 batches
    assert verdict == "not confirmed (saves 10 µs per batch)"
    assert "pageable 0.03 ms, pinned 0.02 ms" in evidence and measurements["saving_material"] is False
    verdict, evidence, measurements = pinning_verdict(5.95e-3, 0.73e-3, 0.02, RunLength(200, 3))  # 64x3x224x224
    assert verdict == "confirmed" and "saves 5.2 ms per batch, 1.0 s per epoch, 3.1 s over 3 epochs" in evidence
    assert measurements["saving_per_epoch_s"] == pytest.approx(200 * 5.22e-3)


def test_cuda_memory_per_worker_is_read_only_with_cuda(monkeypatch):
    from dllint.probe.checks import memory

    assert memory.cuda_memory_by_pid(fake_cuda(available=False)) is None
    monkeypatch.setattr(memory, "_nvidia_smi_memory", lambda: {11: 500 * memory.MB})
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # no NVML: nvidia-smi answers
    assert memory.cuda_memory_by_pid(fake_cuda()) == {11: 500 * memory.MB}
    table = memory.memory_table(2, {"kind": "pss", "main_mb": 300.0, "per_worker_mb": 40.0, "total_mb": 380.0,
                                    "cuda_mb_per_worker": [500.0, 498.0]})
    assert table.columns[-1] == "CUDA MB per worker" and table.rows == [[300, 40, 380, "500 498"]]


def test_a_one_rank_job_says_a_cross_rank_check_needs_two_ranks(monkeypatch):
    from dllint.probe.checks import rank_shards

    monkeypatch.setattr(rank_shards.ranks, "current_rank", lambda: 0)
    monkeypatch.setattr(rank_shards.ranks, "current_rank_dir", lambda: "/nonexistent")
    monkeypatch.setenv("WORLD_SIZE", "1")
    ctx = Recording()
    rank_shards.on_first_iteration(fake_site(), ctx)
    [(code, verdict, _, _)] = ctx.results
    assert (code, verdict) == ("DL305", "skipped (a cross-rank check needs two ranks: run with --nproc-per-node 2)")


def test_a_long_verdict_moves_its_reason_into_the_wrapped_evidence():
    from dllint.probe.report import EVIDENCE_WIDTH, LoaderReport, ProbeReport
    from dllint.probe.results import Result

    loader = LoaderReport(1, "train.py:10", {"loader_class": "DataLoader"})
    reason = "the first batch failed: RuntimeError: " + "x " * 150
    loader.results = [Result("DL206", f"skipped ({reason.strip()})", "cuda did not run", loader=1)]
    text = ProbeReport("train.py", "completed", "ran", [], [loader], 1.0).render_text()
    row = next(line for line in text.splitlines() if "DL206" in line)
    assert row.split()[:2] == ["DL206", "skipped"] and len(row) < EVIDENCE_WIDTH + 30
    assert "cuda did not run" in text


# -- real workers: one script, shared by the assertions below --------------------------------------
# Its workers open their data in 0.4 s (Opens' 0.1 s did not always clear the spread of three xdist
# workers on two cores: "inconclusive (spread 83% > gain 70%)" once in a loaded run).
CPU_BOUND = pooled_dataset() + """

class OpensSlowly(Opens):
    def __getitem__(self, index):
        if not self.opened:
            time.sleep(0.3)
        return super().__getitem__(index)


if __name__ == "__main__":
    torch.set_num_threads(1)
    restarts = DataLoader(OpensSlowly(), batch_size=4, num_workers=2)
    pooled = DataLoader(Pooled(), batch_size=16, num_workers=4)
    for epoch in range(int(sys.argv[2])):
        for batch in restarts:
            pass
    for batch in pooled:
        break
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """DL201 on a loader restarting 2 workers, DL202 on a CPU-bound loader asking 4 workers of 2 cores."""
    directory = tmp_path_factory.mktemp("measured")
    script = write_script(directory, CPU_BOUND, opens=True)
    findings = [finding("DL201", script, line_of(script, "restarts = DataLoader")),
                finding("DL202", script, line_of(script, "pooled = DataLoader"))]
    report = run_probe(str(script), ["--epochs", "3"], findings, timeout=120, progress=False,
                       settings=fast_settings(cores=2, sweep_limit=4, epochs=2))
    return report, {f.code: f for f in findings}


class TestMeasured:
    """One probe of two real loaders, read by each test (a class: one unit under --dist loadscope)."""

    def test_persistence_gives_the_saving_per_epoch_and_over_the_scripts_epochs(self, measured):
        report, findings = measured
        probe = findings["DL201"].probe
        assert probe["verdict"] == "confirmed", (probe, report.script_outcome)
        measurements = probe["measurements"]
        assert measurements["epochs"] == 3 and measurements["batches_per_epoch"] == 4
        assert measurements["saving_per_epoch_s"] > 0.2  # each worker's 0.4 s open, paid again every epoch
        assert measurements["saving_over_run_s"] == pytest.approx(2 * measurements["saving_per_epoch_s"])
        assert measurements["comparison"]["rounds"] >= 1 and len(measurements["load_average"]) == 2
        assert "over 3 epochs" in probe["evidence"] and "fork_stall_s" in measurements  # old keys kept

    def test_every_multi_worker_loader_gets_its_memory_measured(self, measured):
        report, _ = measured
        tables = {loader.id: [table for table in loader.tables if table.title.startswith("memory")] for loader in report.loaders}
        assert all(len(found) == 1 for found in tables.values()), tables
        [row] = tables[1][0].rows
        main, per_worker, total = row
        assert main > 0 and per_worker > 0 and total >= main + per_worker
        assert "memory (PSS) of main + 2 workers" in report.render_text()
        assert findings_memory(report) is not None

    def test_the_sweep_never_recommends_beyond_the_usable_cores_unless_beyond_noise(self, measured):
        from dllint.probe.checks.sweep import decide

        _, findings = measured
        probe = findings["DL202"].probe
        measurements = probe["measurements"]
        rounds = {int(count): row.get("windows", []) for count, row in measurements["sweep"].items()}
        decision = decide(rounds, cores=2, requested=4)
        assert measurements["recommended"] == decision.recommended and measurements["rounds"] >= 3
        if decision.recommended > 2:  # only when it beat the best count within the cores beyond the noise
            assert decision.comparison(decision.best_within, decision.recommended).beyond_noise
        verdict = probe["verdict"]
        assert verdict in ("confirmed", "not confirmed") or verdict.startswith("inconclusive (spread ")
        assert f"use {decision.recommended}" in probe["evidence"] or verdict != "confirmed"
        assert set(measurements["sweep"]) == {"0", "1", "2", "4"} and len(measurements["load_average"]) == 2


def findings_memory(report):
    return next((r.measurements.get("memory") for loader in report.loaders for r in loader.results
                 if r.code == "DL202"), None)


def test_dl105_is_confirmed_when_the_scripts_first_batch_dies_of_it(tmp_path):
    """The crash torch raises in a forked worker, raised here by hand (this machine may have no CUDA):
    the script's own first batch is the evidence, and the verdict column stays short."""
    script = write_script(tmp_path, """
        class OnGpu(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, index):
                raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                                   "multiprocessing, you must use the 'spawn' start method")


        if __name__ == "__main__":
            for batch in DataLoader(OnGpu(), batch_size=2, num_workers=2):
                pass
    """)
    findings = [finding("DL105", script, line_of(script, "raise RuntimeError"))]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=checks_settings())
    probe = findings[0].probe
    assert probe["verdict"] == "confirmed" and probe["measurements"]["triggered_by"] == "script"
    assert "the script's first batch failed in a forked worker" in probe["evidence"]
    row = next(line for line in report.render_text().splitlines() if line.startswith("  DL105"))
    assert row.split()[1] == "confirmed" and len(row) < 140


@pytest.mark.distributed
def test_one_rank_says_the_cross_rank_check_needs_two(tmp_path):
    from probe_helpers import FIXTURES

    script = FIXTURES.parent / "distributed" / "ddp_no_sampler.py"
    findings = [finding("DL305", script, 10)]
    # the least evidence: the one rank's sweep is not the subject
    run_probe(str(script), [], findings, timeout=60, progress=False, nproc_per_node=1, settings=checks_settings())
    assert findings[0].probe["verdict"] == "skipped (a cross-rank check needs two ranks: run with --nproc-per-node 2)"
