"""The probe on every rank: real 2-rank CPU jobs (gloo on loopback), kept tiny.

Deselect with ``-m 'not distributed'`` (each run starts two interpreters with torch: seconds).
"""

from __future__ import annotations

import os
import pathlib

import psutil
import pytest

from dllint.config import Settings as LintSettings
from dllint.engine import Linter, lint_file
from dllint.probe.context import Settings
from dllint.probe.launch import combined_outcome
from dllint.probe.ranks import cross_rank_events

pytest.importorskip("torch")
pytestmark = pytest.mark.distributed

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "distributed"
TIMEOUT = 90


def probe(name: str, nproc: int | None = 2):
    from dllint.probe import run_probe

    path = SCRIPTS / name
    findings = lint_file(str(path), Linter(LintSettings(select=("ALL",)))).findings
    settings = Settings(batches=2, epochs=2, start_methods=("script",), sweep_limit=1, measurement_seconds=20)
    return run_probe(str(path), [], findings, timeout=TIMEOUT, progress=False, settings=settings, nproc_per_node=nproc)


def by_code(report, code):
    return [f for f in report.findings if f.code == code]


def assert_nothing_left(report) -> None:
    assert report.process_group is not None
    group = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == report.process_group and process.info["status"] != psutil.STATUS_ZOMBIE:
                group.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    assert group == []
    assert [c for c in psutil.Process().children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE] == []


def test_ddp_without_sampler_is_found_and_confirmed_by_the_overlap():
    report = probe("ddp_no_sampler.py")
    [finding] = by_code(report, "DL305")
    assert finding.source == "static" and finding.line == 10
    assert finding.probe["verdict"] == "confirmed"
    measured = {key: value for key, value in finding.probe["measurements"].items() if key != "loader"}  # + the loader measured
    assert measured == {"ranks": 2, "samples_per_rank": [64, 64], "distinct": 64, "shared": 64}
    [loader] = report.loaders  # one entry per loader site, every rank's results in it
    assert loader.call_site.endswith("ddp_no_sampler.py:10 [ranks 0, 1]")
    assert report.script_outcome.startswith("every rank (2):")
    assert_nothing_left(report)


def test_fixed_twin_gets_neither_and_a_stale_sampler_is_confirmed_on_every_rank():
    report = probe("ddp_fixed.py")
    assert by_code(report, "DL305") == []
    [stale] = by_code(report, "DL301")
    assert stale.line == 21 and stale.probe["verdict"] == "confirmed"
    assert [loader.call_site.rsplit(":", 1)[-1] for loader in report.loaders] == [
        "16 [ranks 0, 1]", "21 [ranks 0, 1]", "25 [ranks 0, 1]"]
    dl301 = [r for loader in report.loaders for r in loader.results if r.code == "DL301"]
    assert {r.measurements["rank"] for r in dl301 if r.verdict == "confirmed"} == {0, 1}
    assert all(r.anchors[0].first_line == 21 for r in dl301 if r.verdict == "confirmed")
    shards = [r for loader in report.loaders for r in loader.results if r.code == "DL305"]
    assert shards and all(r.verdict == "not confirmed" for r in shards)
    assert {r.measurements["shared"] for r in shards} == {0}
    [stream] = by_code(report, "DL302")  # no static finding (no workers): seen at run time, across ranks
    assert stream.source == "runtime" and stream.line == 25 and "not split by rank" in stream.message
    assert_nothing_left(report)


def test_loaders_in_mp_spawn_children_are_reached():
    report = probe("spawn_no_sampler.py", nproc=None)
    [finding] = by_code(report, "DL305")
    assert finding.probe["verdict"] == "confirmed", finding.probe
    assert [loader.call_site.rsplit("[", 1)[-1] for loader in report.loaders] == ["ranks 0, 1]"]
    assert_nothing_left(report)


def test_loaders_in_mp_process_children_are_reached_but_not_compared_as_ranks():
    report = probe("processes.py", nproc=None)
    assert [loader.call_site.rsplit("[", 1)[-1] for loader in report.loaders] == ["ranks 0, 1]"]
    assert report.findings == []  # two plain processes reading the same list is no DL305
    assert_nothing_left(report)


def test_a_crashing_rank_ends_the_job_with_its_error_and_the_waiting_rank_is_killed():
    report = probe("rank_crashes.py")
    assert "rank 1: RuntimeError: rank 1 lost its data" in report.script_outcome
    # Rank 0 is killed, or gloo notices the lost peer first and rank 0 reports that error itself.
    assert "rank 0: killed when rank 1 failed" in report.script_outcome or "rank 0: RuntimeError" in report.script_outcome
    assert report.duration_s < TIMEOUT / 2
    assert_nothing_left(report)


def test_a_hanging_rank_is_killed_after_the_others_end():
    report = probe("rank_hangs.py")
    assert "rank 1: still running" in report.script_outcome and "killed" in report.script_outcome
    assert "rank 0: the script ran to its end" in report.script_outcome
    assert report.duration_s < TIMEOUT / 2
    assert_nothing_left(report)


# -- the comparison and the ending, without processes ---------------------------------------------
def _draws(tmp_path, rank, **record):
    import json

    base = {"rank": rank, "site": "/x/train.py:10", "anchor": {"path": "/x/train.py", "first_line": 10, "last_line": 10},
            "loader": 1, "num_workers": 0, "cores": 4, "distributed": True}
    (tmp_path / f"draws-abc.rank{rank}.json").write_text(json.dumps({**base, **record}))


def test_distributed_sampler_padding_is_not_an_overlap(tmp_path):
    # 5 samples on 2 ranks: DistributedSampler pads rank 1 with one repeated sample.
    _draws(tmp_path, 0, kind="map", indices=[0, 2, 4])
    _draws(tmp_path, 1, kind="map", indices=[1, 3, 0])
    [event] = cross_rank_events(str(tmp_path))
    assert event["code"] == "DL305" and event["verdict"] == "not confirmed" and event["loader"] == 1001


def test_workers_over_all_ranks_against_the_cores(tmp_path):
    _draws(tmp_path, 0, kind="map", indices=[0, 1], num_workers=3)
    _draws(tmp_path, 1, kind="map", indices=[2, 3], num_workers=3)
    events = {e["code"]: e for e in cross_rank_events(str(tmp_path))}
    assert events["DL207"]["verdict"] == "confirmed"
    assert events["DL207"]["evidence"] == "2 ranks start 3 + 3 = 6 worker processes, more than the 4 usable cores"
    assert events["DL305"]["verdict"] == "not confirmed"


def test_a_stream_every_rank_replays_confirms_dl302(tmp_path):
    _draws(tmp_path, 0, kind="iterable", samples=["a", "b"])
    _draws(tmp_path, 1, kind="iterable", samples=["a", "b"])
    [event] = cross_rank_events(str(tmp_path))
    assert event["code"] == "DL302" and event["verdict"] == "confirmed"
    _draws(tmp_path, 1, kind="iterable", samples=["c", "d"])
    assert cross_rank_events(str(tmp_path)) == []


def test_processes_outside_a_process_group_are_not_compared_for_dl305(tmp_path):
    _draws(tmp_path, 0, kind="map", indices=[0, 1], distributed=False)
    _draws(tmp_path, 1, kind="map", indices=[0, 1], distributed=False)
    assert cross_rank_events(str(tmp_path)) == []


def test_a_rank_that_died_without_reporting_is_an_error():
    outcome = combined_outcome({0: {"rank": 0, "how": "stopped", "detail": "stopped", "done": True}}, [0, -9], {})
    assert outcome["how"] == "error"
    assert outcome["detail"] == "rank 1: died without reporting (exit code -9); rank 0: stopped"


def test_a_rank_is_hung_only_when_silent_past_the_grace(tmp_path):
    import time

    from dllint.probe.launch import _hung
    from dllint.probe.ranks import HANG_GRACE_SECONDS, heartbeat_path

    ended = time.monotonic() - 2 * HANG_GRACE_SECONDS
    beat = heartbeat_path(str(tmp_path), 1)
    assert _hung(str(tmp_path), 1, ended, 30.0)  # never reported anything since
    pathlib.Path(beat).write_text("result")
    assert not _hung(str(tmp_path), 1, ended, 30.0)  # just did something
    past = time.time() - 2 * HANG_GRACE_SECONDS
    os.utime(beat, (past, past))
    assert _hung(str(tmp_path), 1, ended, 30.0)
    pathlib.Path(beat).write_text("progress")
    os.utime(beat, (past, past))
    assert not _hung(str(tmp_path), 1, ended, 30.0)  # inside a measurement: its limit counts too


def test_two_children_of_the_same_rank_keep_their_loaders_apart(tmp_path):
    import json

    from dllint.probe.ranks import RankEvents, merge_rank_loaders
    from dllint.probe.report import LoaderReport

    events = tmp_path / "events.jsonl"
    for slot in (0, 2):  # rank 0 of a first and of a second spawn call
        stream = RankEvents(str(events), str(tmp_path), 0, slot)
        stream.write(json.dumps({"event": "loader", "id": 1, "call_site": "train.py:5"}) + "\n")
        stream.write(json.dumps({"event": "result", "loader": 1, "code": "DL301", "evidence": "same order"}) + "\n")
        stream.write(json.dumps({"event": "script_end", "how": "finished", "detail": "ran"}) + "\n")
        stream.close()
    written = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["id"] for e in written if e["event"] == "loader"] == [1001, 3001]
    assert [e["loader"] for e in written if e["event"] == "result"] == [1001, 3001]
    assert {e["evidence"] for e in written if e["event"] == "result"} == {"rank 0: same order"}
    assert all(e["event"] != "script_end" for e in written)  # a rank's ending goes to its own file
    [merged] = merge_rank_loaders([LoaderReport(e["id"], e["call_site"], {}) for e in written if e["event"] == "loader"])
    assert merged.call_site == "train.py:5 [ranks 0, 0]"
