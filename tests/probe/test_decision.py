"""One decision per loader from whole epochs: the block's before/after and its verdict, and the findings
that agree with it (real torch workers; each fixture probes a small script, several tests read it)."""

from __future__ import annotations

import json

import pytest
from probe_helpers import fast_settings, finding, line_of, write_script

from dllint.probe import run_probe

pytestmark = pytest.mark.probe

EPOCH_BATCHES = 8

# Each worker pays {open} s to open its data, once per start: restarted every epoch, that much again;
# each sample then waits 4 ms on storage, so the sweep keeps workers in the block.
STARTS = """
    class Starts(Dataset):
        def __init__(self):
            self.opened = False

        def __len__(self):
            return 64

        def __getitem__(self, index):
            if not self.opened:
                time.sleep({open})
                self.opened = True
            time.sleep(0.004)  # each sample waits on storage: workers pay off (the sweep keeps them)
            return torch.tensor([float(index)])

    if __name__ == "__main__":
        loader = DataLoader(Starts(), batch_size=1, num_workers=2)
        for epoch in range({epochs}):
            for batch in loader:
                time.sleep({step})
"""


def probe(script, code: str):
    dl201 = finding(code, script, line_of(script, "loader = DataLoader"))
    # a sweep of 0 to 2 workers: sleeping workers win it clearly, so the block's count is settled (the
    # decision is this module's subject, not the sweep; a 4-worker count it could not tell from 2 made it unsettled)
    report = run_probe(str(script), [], [dl201], timeout=60, progress=False,
                       settings=fast_settings(epoch_batches=EPOCH_BATCHES, sweep_limit=2))
    return dl201, report


@pytest.fixture(scope="module")
def costly_starts(tmp_path_factory):
    """Three probes of a script whose workers cost 0.3 s to start, restarted every epoch."""
    script = write_script(tmp_path_factory.mktemp("starts"), STARTS.format(open=0.3, step=0.005, epochs=3))
    return [probe(script, "DL201") for _ in range(3)]


class TestCostlyStarts:
    """Workers that cost 0.3 s to start, probed three times (a class is one unit under --dist loadscope: its
    fixture runs once, on one worker, while the module's other tests run on another)."""

    def test_a_persistent_block_on_costly_starts_is_better_and_dl201_agrees_3_of_3(self, costly_starts):
        for dl201, report in costly_starts:
            recommendation = report.loaders[0].recommendation
            assert recommendation.settings["persistent_workers"] is True, recommendation
            decision = recommendation.decision
            assert decision.verdict.value == "better", decision
            assert recommendation.before["epoch_s"] > recommendation.after["epoch_s"], recommendation
            assert decision.rounds >= 2 and decision.saving_per_epoch_s > 0.1, decision
            # DL201 confirmed, and it quotes the same whole epochs
            assert dl201.probe["verdict"] == "confirmed", dl201.probe
            assert "the recommended settings, whole epochs: each epoch" in dl201.probe["evidence"]
            assert dl201.probe["measurements"]["decision"] == decision.to_dict()
            assert report.rerun["runs"] == 2 * decision.rounds

    def test_the_json_says_better_with_the_saving_and_the_spread(self, costly_starts):
        _, report = costly_starts[0]
        (loader,) = json.loads(report.to_json())["loaders"]
        assert loader["recommendation"]["verdict"] == "better"
        decision = loader["recommendation"]["decision"]
        assert decision["saving_per_epoch_s"] > 0.1 and decision["spread"] is not None
        assert len(decision["before_epoch_s"]) == len(decision["after_epoch_s"]) == decision["rounds"]
        assert "  better: each epoch " in report.render_text()


@pytest.fixture(scope="module")
def cheap_starts(tmp_path_factory):
    """Workers that cost 10 ms to open under a step of 8 x 0.75 s, two epochs: persistence saves the workers'
    start and join once (the first epoch starts them either way), some 50-150 ms over two 6 s epochs, and
    up to 0.5 s on a loaded machine (4 s epochs read 5.5% there): within the 5% noise floor."""
    script = write_script(tmp_path_factory.mktemp("cheap"), STARTS.format(open=0.01, step=0.75, epochs=2))
    return probe(script, "DL201")


def test_a_block_that_is_not_better_says_keep_yours_and_takes_back_dl201(cheap_starts):
    dl201, report = cheap_starts
    recommendation = report.loaders[0].recommendation
    assert recommendation.settings["persistent_workers"] is True, recommendation  # what the check measured apart
    assert recommendation.decision.verdict.value == "keep yours", recommendation.decision
    assert dl201.probe["verdict"].startswith("not confirmed (the recommended settings are not better"), dl201.probe
    loader = report.loaders[0]
    assert not [result for result in loader.results if result.verdict == "confirmed" and result.code == "DL201"]
    assert json.loads(report.to_json())["loaders"][0]["recommendation"]["verdict"] == "keep yours"
    assert "  keep yours: each epoch " in report.render_text()


# -- the block's num_workers: one answer run after run, or inconclusive ----------------------------------


def test_a_count_the_rounds_cannot_clearly_tell_from_the_recommended_one_is_its_rival():
    from dllint.probe.checks.sweep import decide

    # 8 CPU-bound workers asked on 2 cores: 0 workers 12% ahead of 2 with a 9% spread: beyond the noise, but
    # not clearly (run to run: 2, 0, 2): the rival is named
    near = decide({0: [112.0, 118.0, 109.0], 1: [60.0] * 3, 2: [100.0, 100.0, 100.0], 8: [70.0] * 3},
                  cores=2, requested=8)
    assert near.recommended == 0 and near.rival == 2, near
    # 0 as fast, measured within 5%: the smaller count, settled
    stays = decide({0: [101.0, 99.0, 102.0], 2: [100.0] * 3}, cores=2, requested=2)
    assert stays.recommended == 0 and stays.rival is None, stays
    far = decide({0: [300.0, 280.0, 320.0], 2: [100.0] * 3}, cores=2, requested=2)  # threefold: settled
    assert far.recommended == 0 and far.rival is None, far


def test_an_unsettled_count_makes_a_faster_block_inconclusive_and_says_why():
    from dllint.probe.recommend import BETTER, INCONCLUSIVE, Recommendation, decide, recommend
    from dllint.probe.results import Result

    sweep = {"sweep": {"0": {"samples_per_s": 112.0}, "2": {"samples_per_s": 100.0}, "8": {"samples_per_s": 70.0}},
             "recommended": 0, "accelerator": False, "unsettled": {"count": 2, "gain": -0.11, "spread": 0.09}}
    results = [Result("DL202", "confirmed", "", sweep, [], 1)]
    block = recommend({"num_workers": 8}, results, {"epochs": 2, "steps": 20})
    assert isinstance(block, Recommendation) and block.settings["num_workers"] == 0
    assert block.unsettled == ("the sweep could not tell 0 from 2 workers clearly (-11%, spread 9%): "
                               "another run may recommend 2")
    assert block.effects["num_workers"].endswith(f"({block.unsettled})")
    faster = decide([1.0, 1.02], [0.5, 0.51], batches=16)
    assert faster.verdict is BETTER
    measured = block.measured({"epoch_s": 1.0}, {"epoch_s": 0.5}, faster)
    assert measured.decision is not None and measured.decision.verdict is INCONCLUSIVE
    assert measured.decision.reason.endswith(f"; but {block.unsettled}")
    assert measured.to_dict()["verdict"] == "inconclusive" and measured.to_dict()["unsettled"] == block.unsettled
    settled = Recommendation({"num_workers": 0}, {}).measured({"epoch_s": 1.0}, {"epoch_s": 0.5}, faster)
    assert settled.decision is faster  # a settled count keeps the whole epochs' verdict


def test_an_unsettled_count_leaves_a_persistence_saving_confirmed_and_the_count_inconclusive():
    from dllint.probe.recommend import Recommendation, agree, decide

    unsettled = Recommendation({"num_workers": 2}, {}, unsettled="another run may recommend 4").measured(
        {"epoch_s": 1.0}, {"epoch_s": 0.3}, decide([1.0, 1.02], [0.3, 0.31], batches=16)).decision
    assert unsettled is not None and unsettled.unsettled
    persistence = {"verdict": "confirmed", "evidence": "epoch start 0.13 s -> 0.01 s"}
    assert not agree(persistence, "DL201", unsettled)  # the block is faster beyond the noise: the saving holds
    assert persistence["verdict"] == "confirmed" and "the recommended settings, whole epochs: each epoch" in persistence["evidence"]
    count = {"verdict": "confirmed", "evidence": "sweep: 2 workers"}
    assert agree(count, "DL202", unsettled)
    assert count["verdict"] == "inconclusive (the sweep's best num_workers is not settled)"  # not "spread 4% > gain 231%"
