"""Pure parts of the real-step probe: step timing (CUDA mocked), the recommendation's policy, the endings."""

from __future__ import annotations

import types

import pytest

from dllint.probe import steps
from dllint.probe.context import Settings
from dllint.probe.endings import describe_outcome
from dllint.probe.recommend import (
    Decision,
    Recommendation,
    accepted_by_torch,
    agree,
    decide,
    failed,
    recommend,
    reconcile,
    render_recommendation,
    settled,
)
from dllint.probe.results import Result
from dllint.probe.verdicts import BlockVerdict, Judgment, Verdict


class FakeClock:
    """perf_counter stand-in: each read advances by the next scripted interval."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_timed_epoch_splits_each_step_into_wait_and_body_and_synchronizes_cuda_first(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(steps.time, "perf_counter", clock)
    events = []

    def sync():
        events.append(("sync", clock.now))
        clock.now += 0.010  # GPU work still queued by the body: counted as body, not as wait

    def batches():
        for _ in range(3):
            clock.now += 0.030  # the wait for a batch
            yield "batch"

    step_clock = steps.StepClock()
    record = step_clock.start()
    ended = []
    epoch = steps.TimedEpoch(batches(), record, step_clock, sync=sync, bound=None, last=3,
                             on_end=ended.append, on_error=lambda *_: None)
    for _ in epoch:
        clock.now += 0.005  # the loop body on the CPU
    assert len(events) == 4  # before every next(), the last one included
    assert record.waits == pytest.approx([0.03] * 3)
    assert record.bodies == pytest.approx([0.015] * 3)
    summary = step_clock.summary()
    assert summary["steps"] == 2  # the first batch of the epoch is apart
    assert summary["data_wait_s"] == pytest.approx(0.03) and summary["step_s"] == pytest.approx(0.045)
    assert summary["data_wait_fraction"] == pytest.approx(2 / 3)
    assert ended == [record] and not record.cut


def test_memory_is_sampled_after_the_last_batch_so_no_wait_is_shortened_and_no_time_is_lost(monkeypatch):
    """While a sample reads smaps, workers refill their queue: taken mid-epoch it made the waits after it
    short. After the last batch no wait follows; its time is out of the body and the epoch time."""
    clock = FakeClock()
    monkeypatch.setattr(steps.time, "perf_counter", clock)
    sampled_after = []

    def sample(self):
        sampled_after.append(len(record.waits))
        clock.now += 0.050

    monkeypatch.setattr(steps.StepClock, "sample_memory", sample)

    def batches(count):
        for _ in range(count):
            clock.now += 0.010
            yield "batch"

    step_clock = steps.StepClock()
    for last, count in ((6, 6), (None, 5)):  # a known length; a stream whose length is not known ahead
        record = step_clock.start()
        epoch = steps.TimedEpoch(batches(count), record, step_clock, sync=None, bound=None, last=last,
                                 on_end=lambda _: None, on_error=lambda *_: None)
        for _ in epoch:
            clock.now += 0.002
        assert record.bodies == pytest.approx([0.002] * count) and record.waits == pytest.approx([0.01] * count)
        assert record.seconds == pytest.approx(count * 0.012)
    assert sampled_after == [6, 5]


def test_the_cuda_synchronizer_is_used_only_once_the_script_initialised_cuda():
    def fake(initialized):
        cuda = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: initialized,
                                     synchronize=lambda: None)
        return types.SimpleNamespace(cuda=cuda)

    assert steps.cuda_synchronizer(fake(True)) is not None
    assert steps.cuda_synchronizer(fake(False)) is None
    no_cuda = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    assert steps.cuda_synchronizer(no_cuda) is None


def test_a_cut_epoch_ends_with_the_probes_bound_and_a_bounded_order_keeps_its_sampler():
    record = steps.StepClock().start()
    bound = steps.EpochBound(1, 2, 10)
    epoch = steps.TimedEpoch(iter([1, 2]), record, steps.StepClock(), sync=None, bound=bound, last=2,
                             on_end=lambda _: None, on_error=lambda *_: None)
    assert list(epoch) == [1, 2] and record.cut
    with pytest.raises(steps.EpochBound):
        next(epoch)
    order = steps.BoundedOrder(types.SimpleNamespace(__iter__=None), 3)
    order.order = range(10)
    assert list(order) == [0, 1, 2] and len(order) == 3


def test_the_bound_is_found_behind_the_error_a_generator_makes_of_it():
    from dllint.probe.harness import epoch_bound_in

    def generator():
        yield next(iter_bound())

    def iter_bound():
        raise steps.EpochBound(1, 16, 63)
        yield  # pragma: no cover

    with pytest.raises(RuntimeError) as caught:
        list(generator())
    assert epoch_bound_in(caught.value).full == 63
    assert epoch_bound_in(ValueError("no")) is None


def test_overrides_apply_to_positional_and_keyword_arguments_as_torch_accepts_them():
    from torch.utils.data import DataLoader

    from dllint.probe.harness import override_arguments

    args, kwargs = override_arguments(DataLoader.__init__, object(), (range(8), 4, True),
                                      {"num_workers": 2, "persistent_workers": True, "prefetch_factor": 4},
                                      {"num_workers": 0})
    loader = DataLoader(*args, **kwargs)
    assert (loader.num_workers, loader.batch_size, loader.persistent_workers, loader.prefetch_factor) == (0, 4, False, None)


# -- the recommendation's policy -----------------------------------------------------------------

SUMMARY = {"num_workers": 2, "persistent_workers": False, "prefetch_factor": None, "pin_memory": False,
           "start_method": "fork", "multiprocessing_context": None}
STEP = {"steps": 30, "epochs": 3, "data_wait_fraction": 0.2, "data_wait_s": 0.002, "step_s": 0.01}


def sweep_result(best: int) -> Result:
    rows = {"0": {"samples_per_s": 900.0}, "1": {"samples_per_s": 500.0}, "2": {"samples_per_s": 600.0}}
    return Result("DL202", "confirmed", "", {"recommended": best, "sweep": rows})


def persistence_result(stall: float, kept: float) -> Result:
    return Result("DL201", "confirmed", "", {"fork_stall_s": stall, "fork_persistent_s": kept})


def test_zero_workers_recommended_means_no_worker_options_and_dl201_moot():
    summary = {**SUMMARY, "persistent_workers": True, "prefetch_factor": 4}
    recommendation = recommend(summary, [sweep_result(0), persistence_result(0.2, 0.01)], STEP)
    assert recommendation.settings == {"num_workers": 0, "pin_memory": False}
    assert recommendation.dropped == ("persistent_workers", "prefetch_factor") and recommendation.changed
    assert accepted_by_torch(recommendation.settings)
    probe = {"verdict": "confirmed", "evidence": "epoch start 0.20 s -> 0.01 s"}
    reconcile(probe, "DL201", recommendation)
    assert probe["verdict"] == "not confirmed"
    assert probe["evidence"].startswith("moot: the recommended settings use num_workers=0")
    before = {"step_s": 0.01, "data_wait_s": 0.006, "data_wait_fraction": 0.6}
    after = {"step_s": 0.005, "data_wait_s": 0.001, "data_wait_fraction": 0.2}
    decision = decide([0.40, 0.42], [0.20, 0.21], batches=16)
    text = "\n".join(render_recommendation(recommendation.measured(before, after, decision), "train.py:9"))
    assert "num_workers=0,  # sweep: 0 workers: 900.0 samples/s; 2 workers: 600.0 samples/s" in text
    assert "persistent_workers" not in text.split("# remove")[0]
    assert "step         10.0 ms -> 5.0 ms" in text and "2 run(s) each, interleaved; medians" in text
    assert text.endswith("better: each epoch 410 ms -> 205 ms (saves 13 ms per batch, 205 ms per epoch; spread 0%, 2 interleaved pairs of runs)")


# -- one decision per loader, from whole epochs -------------------------------------------------


def test_whole_epochs_decide_better_keep_yours_or_inconclusive():
    better = decide([1.0, 1.1, 1.0], [0.5, 0.52, 0.5], batches=16)
    assert better.verdict.value == "better" and better.rounds == 3
    assert better.saving_per_epoch_s == pytest.approx(0.5) and better.saving_per_batch_s == pytest.approx(0.5 / 16)
    slower = decide([1.0, 1.0], [1.3, 1.32], batches=16)
    assert slower.verdict.value == "keep yours" and "31% slower with these settings" in slower.reason
    same = decide([1.0, 1.01], [0.99, 1.0], batches=16)
    assert same.verdict.value == "keep yours" and "+1%, within the 5% noise floor" in same.reason
    noisy = decide([1.0, 2.0], [0.8, 2.4], batches=16)  # pairs at 1.25x and 0.83x: the spread hides it
    assert noisy.verdict.value == "inconclusive" and "spread" in noisy.reason
    # beyond the noise, but under the floor of 50 µs per batch: nothing to act on
    tiny = decide([0.001, 0.001], [0.0008, 0.0008], batches=16)
    assert tiny.verdict.value == "keep yours" and "too little to act on" in tiny.reason
    assert decide([], [], batches=16).verdict is BlockVerdict.INCONCLUSIVE
    # one pair has no spread; a failed run needs no second; nothing timed after two pairs is timed by none
    least = Settings().min_pairs
    assert least == 2
    assert not settled(Decision(BlockVerdict.BETTER, "", (1.0,), (0.5,), 1.0, 0.0), 1, least) and settled(better, 3, least)
    assert not settled(noisy, 2, least) and settled(failed("boom"), 1, least)
    assert failed("boom").verdict is BlockVerdict.KEEP_YOURS
    assert not settled(decide([], [], batches=16), 1, least) and settled(decide([], [], batches=16), 2, least)
    # the tests' smallest settings: one pair decides what it can
    assert settled(Decision(BlockVerdict.BETTER, "", (1.0,), (0.5,), 1.0, 0.0), 1, min_pairs=1)


def test_a_block_that_is_not_better_takes_back_every_confirmed_saving_on_its_loader():
    keep = decide([1.0, 1.0], [1.3, 1.32], batches=16)
    probe = {"verdict": "confirmed", "evidence": "epoch start 0.20 s -> 0.01 s, saves 190 ms per epoch"}
    assert agree(probe, "DL201", keep)
    assert probe["verdict"] == "not confirmed (the recommended settings are not better: keep yours)"
    assert probe["evidence"].startswith("the recommended settings, whole epochs: each epoch 1.0 s -> 1.3 s")
    assert probe["measurements"]["decision"]["verdict"] == "keep yours"
    noisy = decide([1.0, 2.0], [0.8, 2.4], batches=16)
    probe = {"verdict": "confirmed", "evidence": "sweep"}
    assert agree(probe, "DL202", noisy) and probe["verdict"].startswith("inconclusive (spread ")
    untouched = {"verdict": "confirmed", "evidence": "a lambda"}
    assert not agree(untouched, "DL102", keep) and untouched["verdict"] == "confirmed"  # no saving claimed
    better = decide([1.0, 1.1], [0.5, 0.52], batches=16)
    probe = {"verdict": "confirmed", "evidence": "saves 0.5 s per epoch"}
    assert not agree(probe, "DL201", better) and probe["verdict"] == "confirmed"
    assert "; the recommended settings, whole epochs: each epoch" in probe["evidence"]


def test_the_json_says_the_blocks_verdict_with_its_saving_and_spread():
    recommendation = Recommendation({"persistent_workers": True}, {}, ())
    decided = recommendation.measured({"epoch_s": 1.0}, {"epoch_s": 0.5}, decide([1.0, 1.0], [0.5, 0.5], batches=8))
    data = decided.to_dict()
    assert data["verdict"] == "better"
    assert data["decision"]["saving_per_epoch_s"] == pytest.approx(0.5) and data["decision"]["spread"] == 0.0
    assert data["decision"]["before_epoch_s"] == [1.0, 1.0] and data["decision"]["rounds"] == 2


def test_workers_kept_get_persistence_only_for_a_measured_saving():
    kept = recommend(SUMMARY, [sweep_result(2), persistence_result(0.2, 0.01)], STEP)
    assert kept.settings["persistent_workers"] is True and kept.settings["prefetch_factor"] == 2
    assert kept.effects["persistent_workers"] == "epoch start 0.200 s -> 0.010 s under fork"
    noise = recommend(SUMMARY, [sweep_result(2), persistence_result(0.015, 0.01)], STEP)
    assert noise.settings["persistent_workers"] is False and not noise.changed
    stale = recommend(SUMMARY, [persistence_result(0.2, 0.01), Result("DL303", "confirmed", "")], STEP)
    assert stale.settings["persistent_workers"] is False
    probe = {"verdict": "confirmed", "evidence": "measured"}
    reconcile(probe, "DL201", stale)
    assert probe["verdict"] == "not confirmed" and "stale" in probe["evidence"]


def test_more_workers_than_the_script_measured_get_persistence_from_the_sweeps_start_cost():
    # measured at the script's 1 worker: 15 ms an epoch, below the floor; the block's 8 take 90 ms to start
    summary = {**SUMMARY, "num_workers": 1}
    rows = {"1": {"samples_per_s": 460.0, "startup_s": 0.03}, "8": {"samples_per_s": 3400.0, "startup_s": 0.09}}
    sweep = Result("DL202", "confirmed", "", {"recommended": 8, "sweep": rows})
    more = recommend(summary, [sweep, persistence_result(0.025, 0.01)], STEP)
    assert more.settings["num_workers"] == 8 and more.settings["persistent_workers"] is True
    assert more.effects["persistent_workers"] == ("epoch start 0.025 s -> 0.010 s under fork with 1 workers; "
                                                  "8 workers take 0.090 s to start (sweep): start them once")
    # iterated once: nothing to start again, whatever the count
    once = recommend(summary, [sweep, persistence_result(0.025, 0.01)], {**STEP, "epochs": 1})
    assert once.settings["persistent_workers"] is False
    # the block's count starts as cheaply: no saving to claim
    cheap = {"1": rows["1"], "8": {"samples_per_s": 3400.0, "startup_s": 0.02}}
    same = recommend(summary, [Result("DL202", "confirmed", "", {"recommended": 8, "sweep": cheap}),
                               persistence_result(0.025, 0.01)], STEP)
    assert same.settings["persistent_workers"] is False
    assert same.effects["persistent_workers"].endswith(": no measurable saving")


def test_only_measured_or_waiting_loaders_get_a_block():
    assert recommend({**SUMMARY, "num_workers": 0}, [], STEP) is None  # single-process, not waiting
    waiting = recommend({**SUMMARY, "num_workers": 0}, [], {**STEP, "data_wait_fraction": 0.8})
    assert waiting is not None and waiting.settings == {"num_workers": 0, "pin_memory": False} and not waiting.changed
    assert recommend({**SUMMARY, "num_workers": 0}, [], {**STEP, "data_wait_fraction": 0.8, "no_step": True}) is None
    # DataLoader's own overhead per batch (tens of microseconds) is no data wait workers could cut.
    assert recommend({**SUMMARY, "num_workers": 0}, [], {**STEP, "data_wait_fraction": 0.9, "data_wait_s": 5e-5}) is None
    # A loop that only draws batches has no step to wait: 100% of nothing.
    assert recommend({**SUMMARY, "num_workers": 0}, [], {**STEP, "data_wait_fraction": 0.99, "data_wait_s": 0.01, "step_s": 0.0101}) is None


def test_torch_accepts_every_block_the_policy_can_make():
    from torch.utils.data import DataLoader

    cases = [recommend(SUMMARY, results, STEP) for results in
             ([], [sweep_result(0)], [sweep_result(2)], [sweep_result(1), persistence_result(1.0, 0.0)],
              [Result("DL105", "confirmed", ""), sweep_result(2)])]
    for recommendation in cases:
        assert accepted_by_torch(recommendation.settings)
        DataLoader(range(4), **recommendation.settings)


# -- endings -------------------------------------------------------------------------------------

def test_endings_name_who_caused_them():
    error = {"how": "error", "detail": "KeyError: 'x'", "location": "train.py:9", "type": "KeyError",
             "where": {"loader": 1, "epoch": 2, "in_epoch": True, "batch": 3}, "cut": {}}
    assert describe_outcome(error, True) == "the script raised KeyError: 'x' at train.py:9, in loader 1's epoch 2 (batch 3)"
    counted = {**error, "type": "IndexError", "detail": "IndexError: list index out of range", "cut": {1: [16, 63]}}
    assert describe_outcome(counted, True).endswith(
        "(the probe ran 16 of its 63 batches per epoch of loader 1: if the script counts on all of them, that is why)")
    assert describe_outcome({**error, "where": None}, False) == "the script raised KeyError: 'x' at train.py:9 before building a DataLoader"
    stopped = {"how": "stopped", "detail": "stopped once every loader it built was probed",
               "emptied": {"loader": 1, "epoch": 4, "cap": 3}}
    assert describe_outcome(stopped, True).startswith("stopped once every loader it built had run its epochs")


def test_a_recommendation_round_trips_to_json():
    recommendation = Recommendation({"num_workers": 0}, {"num_workers": "sweep"}, ("persistent_workers",))
    measured = recommendation.measured({"step_s": 0.1, "other": 1}, {"error": "crashed"})
    assert measured.to_dict() == {"settings": {"num_workers": 0}, "effects": {"num_workers": "sweep"},
                                  "dropped": ["persistent_workers"], "changed": True,
                                  "before": {"step_s": 0.1}, "after": {"error": "crashed"},
                                  "verdict": None, "decision": None}


def test_the_pinned_torch_has_what_the_bound_and_worker_deaths_read():
    import inspect

    from torch.utils.data import DataLoader
    from torch.utils.data import dataloader as dataloader_module

    from dllint.probe.internals import WORKER_DIED, worker_died

    assert isinstance(DataLoader.__dict__["_index_sampler"], property)  # bound_index_sampler replaces it
    source = inspect.getsource(dataloader_module._MultiProcessingDataLoaderIter._try_get_data)
    assert "DataLoader worker (pid(s)" in source and WORKER_DIED[1] in source
    assert worker_died(RuntimeError("DataLoader worker (pid(s) 123) exited unexpectedly"))
    assert worker_died(RuntimeError("DataLoader worker (pid 123) is killed by signal: Killed. "))
    assert not worker_died(RuntimeError("Caught KeyError in DataLoader worker process 0."))


# -- verdicts as values ---------------------------------------------------------------------------


def test_a_verdict_string_reads_back_as_its_kind_and_reason_and_writes_the_same():
    for text, verdict, reason in [("confirmed", Verdict.CONFIRMED, ""),
                                  ("not confirmed (saves 10 µs per batch)", Verdict.NOT_CONFIRMED, "saves 10 µs per batch"),
                                  ("inconclusive (spread 35% > gain 11%)", Verdict.INCONCLUSIVE, "spread 35% > gain 11%"),
                                  ("skipped (no runtime check for DL101)", Verdict.SKIPPED, "no runtime check for DL101"),
                                  ("not reached", Verdict.NOT_REACHED, "")]:
        judgment = Judgment.parse(text)
        assert (judgment.verdict, judgment.reason) == (verdict, reason) and str(judgment) == text
    assert Judgment.parse("confirmedly").verdict is Verdict.NOT_REACHED  # a prefix is no verdict
    ranks = [Judgment.parse(text).verdict.rank for text in ("confirmed", "not confirmed (x)", "inconclusive (x)",
                                                             "skipped (x)", "not reached")]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == 5


# -- the runs that decide: A B A B, then the verdicts agree -------------------------------------------


def _report(epoch_s: float | None, runtime_dl203: bool = False):
    from dllint.findings import Finding
    from dllint.probe.report import LoaderReport, ProbeReport

    summary = {**SUMMARY, "num_workers": 0, "path": "/t/train.py", "line": 9, "end_line": 9}
    step = {**STEP, "batches": [16, 16, 16], "data_wait_fraction": 0.8, "data_wait_s": 0.008}
    if epoch_s is not None:
        step["epoch_s"] = epoch_s
    loader = LoaderReport(1, "train.py:9", summary, step=step)
    findings = []
    if runtime_dl203:
        result = Result("DL203", "confirmed", "data wait: 80% of each step", {"advisory": False})
        loader.results.append(Result("DL202", "confirmed", "sweep", {"recommended": 2, "sweep": {
            "0": {"samples_per_s": 100.0}, "2": {"samples_per_s": 300.0}}}))
        loader.results.append(result)
        findings.append(Finding("/t/train.py", 9, 1, 9, 1, "DL203", "", "DL203 seen at run time", source="runtime",
                                probe=result.probe_dict()))
    return ProbeReport("train.py", "completed", "the script ran to its end", findings, [loader], 1.0)


def test_the_script_and_the_block_run_in_turn_and_a_block_that_is_not_better_drops_the_runtime_finding():
    from dllint.probe.runner import prove_recommendations

    report = _report(1.0, runtime_dl203=True)
    calls = []

    def rerun(extra):
        calls.append("B" if extra.get("overrides") else "A")
        return _report(1.0 if calls[-1] == "A" else 1.3)  # the block's epochs are 30% slower

    prove_recommendations(report, rerun)
    recommendation = report.loaders[0].recommendation
    assert calls == ["A", "B", "A", "B"]  # two pairs decide it: the spread is nil
    assert recommendation.settings["num_workers"] == 2 and recommendation.decision.verdict is BlockVerdict.KEEP_YOURS
    assert recommendation.before["epoch_s"] == 1.0 and recommendation.after["epoch_s"] == 1.3
    assert report.findings == []  # the runtime DL203 is taken back, so it is no finding
    assert [r.verdict for r in report.loaders[0].results] == [
        "not confirmed (the recommended settings are not better: keep yours)"] * 2
    assert report.rerun["runs"] == 4


def test_runs_that_time_no_whole_epoch_stop_after_two_pairs():
    from dllint.probe.runner import prove_recommendations

    report = _report(1.0, runtime_dl203=True)
    calls = []

    def rerun(extra):
        calls.append(extra)
        return _report(None)

    prove_recommendations(report, rerun)
    assert len(calls) == 4 and report.loaders[0].recommendation.decision.verdict is BlockVerdict.INCONCLUSIVE


def test_the_settings_bound_the_pairs():
    """``most_pairs`` stops a decision the noise still hides; ``min_pairs`` holds off one it would settle."""
    from dllint.probe.runner import prove_recommendations

    for least, most, expected in ((1, 1, 2), (3, 4, 6)):
        report = _report(1.0, runtime_dl203=True)
        calls = []

        def rerun(extra):
            calls.append(extra)
            return _report(None)  # no whole epoch timed: settled from min_pairs on

        prove_recommendations(report, rerun, settings=Settings(min_pairs=least, most_pairs=most))
        assert len(calls) == expected and report.rerun["runs"] == expected


def test_no_pairs_leave_the_block_unmeasured_and_the_checks_verdicts_standing():
    """``most_pairs`` 0 (the tests' checks_settings): no run, as for a distributed job; the block is
    still placed and its before is the script's own step."""
    from dllint.probe.runner import prove_recommendations

    report = _report(1.0, runtime_dl203=True)
    prove_recommendations(report, lambda extra: pytest.fail(f"re-ran the script: {extra}"),
                          settings=Settings(most_pairs=0))
    recommendation = report.loaders[0].recommendation
    assert recommendation.settings["num_workers"] == 2 and recommendation.decision is None
    assert recommendation.before["epoch_s"] == 1.0
    assert recommendation.after == {"not_run": "no decision runs (most_pairs is 0)"}
    assert report.rerun is None and [f.code for f in report.findings] == ["DL203"]
    assert [r.verdict for r in report.loaders[0].results] == ["confirmed", "confirmed"]


def test_a_loader_the_script_leaves_after_a_batch_keeps_its_verdicts():
    """No whole epoch to time with either setting: no evidence either way, and no run failed."""
    from dllint.probe.runner import prove_recommendations

    report = _report(1.0, runtime_dl203=True)
    report.loaders[0].step.pop("epoch_s")

    def rerun(extra):
        run = _report(None)
        run.loaders[0].step = {"steps": 0, "epochs": 1, "batches": [1]}
        return run

    prove_recommendations(report, rerun)
    recommendation = report.loaders[0].recommendation
    assert recommendation.decision.verdict is BlockVerdict.INCONCLUSIVE and recommendation.decision.gain is None
    assert recommendation.after == {"not_run": "no whole epoch of this loader was timed with both settings"}
    assert [finding.probe["verdict"] for finding in report.findings] == ["confirmed"]
    assert "  no before -> after: no whole epoch" in "\n".join(render_recommendation(recommendation, "train.py:9"))


def test_a_waiting_step_without_a_block_says_which_floor_kept_it_out():
    from dllint.probe.report import LoaderReport, _render_loader

    waiting = {**STEP, "data_wait_fraction": 0.64, "data_wait_s": 0.0008, "step_s": 0.0013}
    assert steps.short_waits(waiting) == ("each wait (0.8 ms) is under 1 ms, about what handing a batch over from a "
                                          "worker costs: workers would not shorten it")
    drawing = {**STEP, "data_wait_fraction": 0.99, "data_wait_s": 0.002, "step_s": 0.00201}
    assert steps.short_waits(drawing).startswith("the loop body takes under 0.2 ms")
    assert steps.short_waits({**STEP, "data_wait_fraction": 0.3}) is None  # not waiting: nothing to explain
    assert steps.short_waits({**STEP, "data_wait_fraction": 0.8, "data_wait_s": 0.008}) is None  # it earns a block
    summary = {**SUMMARY, "num_workers": 0}
    assert recommend(summary, [], waiting) is None
    text = "\n".join(_render_loader(LoaderReport(1, "train.py:9", summary, step=waiting)))
    assert text.endswith("  no settings block: the step waits on its data, but each wait (0.8 ms) is under 1 ms, about "
                         "what handing a batch over from a worker costs: workers would not shorten it")
