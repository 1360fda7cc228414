"""The probe on every rank: real 2-rank CPU jobs (gloo on loopback) under the real torchrun, kept tiny.

Deselect with ``-m 'not distributed'`` (each run starts torchrun and two interpreters with torch: seconds).
"""

from __future__ import annotations

import functools
import os
import pathlib
import sys

import psutil
import pytest

from dllint.config import Settings as LintSettings
from dllint.engine import Linter
from lint_helpers import lint_file
from dllint.probe.context import Settings
from dllint.probe.jobs import HangWatch, job_outcome, launch_spec, launcher_command
from dllint.probe.launched import rank_place
from dllint.probe.ranks import cross_rank_events

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "probe"))
from probe_helpers import live_children, live_processes_in_group, require_torch  # noqa: E402

require_torch()
pytestmark = pytest.mark.distributed

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "distributed"
TIMEOUT = 90


def probe(name: str, nproc: int | None = 2, launcher: str | None = None, report_path: str | None = None):
    from dllint.probe import run_probe

    path = SCRIPTS / name
    findings = lint_file(str(path), Linter(LintSettings(select=("ALL",)))).findings
    # the least evidence (two sweep rounds: tests/probe/probe_helpers.py's LEAST_EVIDENCE): the sweep is
    # test_each_rank_sweeps_within_its_share_of_the_cores_and_the_ranks_agree_on_one_block's subject
    settings = Settings(batches=2, epochs=2, start_methods=("script",), sweep_limit=1, measurement_seconds=20,
                        sweep_rounds=2, sweep_most_rounds=2)
    return run_probe(str(path), [], findings, timeout=TIMEOUT, progress=False, settings=settings,
                     nproc_per_node=None if launcher else nproc, launcher=launcher, report_path=report_path)


def by_code(report, code):
    return [f for f in report.findings if f.code == code]


def assert_nothing_left(report) -> None:
    assert report.process_group is not None
    assert live_processes_in_group(report.process_group) == []
    assert live_children() == []  # the xdist worker's template (tests/conftest.py) left out


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
    assert report.launcher == "python -m torch.distributed.run --standalone --nproc-per-node=2"  # the real torchrun
    assert [(r["rank"], r["local_rank"], r["node"]) for r in report.ranks] == [(0, 0, 0), (1, 1, 0)]
    assert_nothing_left(report)


def test_fixed_twin_gets_neither_and_a_stale_sampler_is_confirmed_on_every_rank():
    launcher = f"{sys.executable} -m torch.distributed.run --standalone --nproc-per-node 2"
    report = probe("ddp_fixed.py", launcher=launcher)  # --launcher, as a user writes it
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


def test_a_crashing_rank_ends_the_job_as_the_launcher_ends_it():
    report = probe("rank_crashes.py")
    assert "rank 1: RuntimeError: rank 1 lost its data at " in report.script_outcome
    # torchrun stops rank 0, or gloo notices the lost peer first and rank 0 reports that error itself.
    assert "rank 0: " in report.script_outcome
    assert "the launcher exited with status 1 (torch.distributed.elastic.multiprocessing.errors.ChildFailedError)" in report.script_outcome
    assert report.duration_s < TIMEOUT / 2
    assert_nothing_left(report)


def test_a_hanging_rank_is_killed_after_the_others_end():
    report = probe("rank_hangs.py")
    assert "rank 1: still running" in report.script_outcome and "killed" in report.script_outcome
    assert "rank 0: the script ran to its end" in report.script_outcome
    assert report.duration_s < TIMEOUT / 2
    assert_nothing_left(report)


PER_RANK_WORKERS = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Pooled(Dataset):
    \"\"\"About a millisecond of CPU a sample: the ranks' workers compete for the node's cores.\"\"\"

    def __len__(self):
        return 512

    def __getitem__(self, index):
        image = torch.rand(3, 32, 32)
        for _ in range(3):
            image = torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)
        return image


def main():
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    dataset = Pooled()
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), num_workers=2)
    model = torch.nn.Conv2d(3, 1, 3)
    for epoch in range(2):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def test_each_rank_sweeps_within_its_share_of_the_cores_and_the_ranks_agree_on_one_block(tmp_path):
    """Two ranks of two CPU-bound workers each on the node: every rank sweeps num_workers within its
    share of the node's cores (DL207: workers per rank times ranks within the cores), and the ranks'
    blocks are one, with a measured num_workers."""
    from dllint.probe import run_probe

    path = tmp_path / "ddp_workers.py"
    path.write_text(PER_RANK_WORKERS)
    settings = Settings(batches=2, epochs=2, start_methods=("script",), measurement_seconds=20, epoch_batches=8)
    report = run_probe(str(path), [], [], timeout=TIMEOUT, progress=False, settings=settings, nproc_per_node=2)
    node_cores = len(os.sched_getaffinity(0))
    [loader] = report.loaders
    assert loader.call_site.endswith("[ranks 0, 1]"), loader.call_site
    sweeps = [result for result in loader.results if "sweep" in result.measurements]
    assert {result.measurements["rank"] for result in sweeps} == {0, 1}, report.render_text()
    share = max(1, node_cores // 2)
    for result in sweeps:
        measured = result.measurements
        assert measured["usable_cores"] == share and measured["node_cores"] == node_cores, measured
        assert measured["ranks_on_node"] == 2 and measured["recommended"] <= share, measured
    assert len({result.measurements["recommended"] for result in sweeps}) == 1  # the ranks agree
    recommendation = loader.recommendation
    assert recommendation is not None and recommendation.effects["num_workers"].startswith("sweep: ")
    assert recommendation.settings["num_workers"] * 2 <= node_cores  # within the node's cores, all ranks together
    assert recommendation.settings["pin_memory"] is False  # no accelerator here
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


def test_workers_are_counted_per_node(tmp_path):
    for rank, node in ((0, 0), (1, 0), (2, 1), (3, 1)):
        _draws(tmp_path, rank, kind="map", indices=[rank], num_workers=3 if node == 0 else 1, node=node)
    dl207 = [e for e in cross_rank_events(str(tmp_path)) if e["code"] == "DL207"]
    assert [(e["measurements"]["node"], e["verdict"]) for e in dl207] == [(0, "confirmed"), (1, "not confirmed")]
    assert dl207[0]["evidence"] == "2 ranks on node 0 start 3 + 3 = 6 worker processes, more than the 4 usable cores"


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


def test_a_rank_that_died_without_reporting_is_an_error(tmp_path):
    (tmp_path / "rank0.end.json").write_text('{"rank": 0, "how": "stopped", "detail": "stopped", "done": true}')
    (tmp_path / "rank1.end.json").write_text('{"rank": 1}')  # began its ending, never finished it
    outcome = job_outcome(str(tmp_path), -9, {}, ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError"])
    assert outcome["how"] == "error"
    assert outcome["detail"] == ("rank 1: died without reporting; rank 0: stopped; the launcher exited with status -9 "
                                 "(torch.distributed.elastic.multiprocessing.errors.ChildFailedError)")
    assert job_outcome(str(tmp_path / "none"), 2, {}, ["usage: torchrun"])["detail"] == (
        "the launcher exited with status 2 before any rank ran the script; it said: usage: torchrun")


def test_a_rank_stopped_before_it_wrote_its_ending_is_still_told(tmp_path):
    """Rank 1 failed; the launcher stopped rank 0 (in a barrier) before it could report: rank 0
    started (its heartbeat), so the ending names it."""
    (tmp_path / "rank1.end.json").write_text(
        '{"rank": 1, "how": "error", "detail": "RuntimeError: rank 1 lost its data", "done": true}')
    (tmp_path / "rank0.alive").write_text("rank_info")
    (tmp_path / "rank1.alive").write_text("script_end")
    outcome = job_outcome(str(tmp_path), 1, {}, [])
    assert outcome["detail"] == "rank 0: died without reporting; rank 1: RuntimeError: rank 1 lost its data; the launcher exited with status 1"
    assert outcome["ranks"] == 2


def test_a_rank_is_hung_only_when_silent_past_the_grace(tmp_path):
    import time

    from dllint.probe.ranks import HANG_GRACE_SECONDS, heartbeat_path

    (tmp_path / "rank0.end.json").write_text('{"rank": 0, "how": "finished", "detail": "ran", "done": true}')
    beat = pathlib.Path(heartbeat_path(str(tmp_path), 1))
    beat.write_text("result")
    watch = HangWatch(str(tmp_path), 30.0)
    assert not watch.check()  # rank 0 just ended, rank 1 just did something
    watch.first_end = (0, time.monotonic() - 2 * HANG_GRACE_SECONDS)
    past = time.time() - 2 * HANG_GRACE_SECONDS
    os.utime(beat, (past, past))
    assert watch.check() and list(watch.hung) == [1]
    watch.hung.clear()
    beat.write_text("progress")
    os.utime(beat, (past, past))
    assert not watch.check()  # inside a measurement: its limit counts too


def test_launcher_commands_and_rank_places():
    assert launcher_command(None, 2) == [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2"]
    assert launcher_command("accelerate launch --num_processes 2", None) == ["accelerate", "launch", "--num_processes", "2"]
    assert launcher_command(None, None) is None
    # srun execs a program: this interpreter goes before the script, unless the command names one
    assert launcher_command("srun -n 2", None) == ["srun", "-n", "2", sys.executable]
    assert launcher_command("/usr/bin/srun -n 2 --mpi=none", None)[-1] == sys.executable
    assert launcher_command("srun -n 2 python3.11 -u", None) == ["srun", "-n", "2", "python3.11", "-u"]
    assert launcher_command("srun -n 2 /opt/venv/bin/python", None) == ["srun", "-n", "2", "/opt/venv/bin/python"]
    from dllint.probe.errors import ProbeError

    for bad in (("torchrun", 2), ("", None), ("torchrun 'unclosed", None)):
        with pytest.raises(ProbeError):
            launcher_command(*bad)
    with pytest.raises(ProbeError, match="MODULE:FUNCTION"):
        launch_spec({"mode": "factory"}, "torchrun", None)
    torchrun = {"RANK": "3", "LOCAL_RANK": "1", "GROUP_RANK": "1", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2"}
    assert rank_place(torchrun) == (3, 1, 1, 4, 2)
    deepspeed = {"RANK": "3", "LOCAL_RANK": "1", "CROSS_RANK": "1", "WORLD_SIZE": "4", "LOCAL_SIZE": "2", "CROSS_SIZE": "2"}
    assert rank_place(deepspeed) == (3, 1, 1, 4, 2)  # deepspeed.launcher.launch on node 1 of 2
    assert rank_place({**deepspeed, **torchrun, "GROUP_RANK": "0"}) == (3, 1, 0, 4, 2)  # torchrun's own names first
    slurm = {"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NODEID": "2", "SLURM_NTASKS": "6", "SLURM_STEP_TASKS_PER_NODE": "2(x3)"}
    assert rank_place(slurm) == (5, 1, 2, 6, 2)
    uneven = {**slurm, "SLURM_PROCID": "6", "SLURM_LOCALID": "0", "SLURM_NODEID": "3", "SLURM_NTASKS": "7",
              "SLURM_STEP_TASKS_PER_NODE": "2(x3),1"}  # srun -n 7 over 4 nodes
    assert rank_place(uneven) == (6, 0, 3, 7, 1)
    assert rank_place({**uneven, "SLURM_NODEID": "1"}) == (6, 0, 1, 7, 2)
    assert rank_place({**uneven, "SLURM_STEP_TASKS_PER_NODE": "2(x"}) == (6, 0, 3, 7, 7)  # unreadable: the world
    assert rank_place({"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "2"}) == (1, 1, 0, 2, 2)
    assert rank_place({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}) == (1, 1, 0, 2, 2)
    assert rank_place({"PATH": "/bin"}) is None


def test_two_nodes_simulated_on_one_machine_node_zero_reports_both_ranks(tmp_path):
    """Two dllint processes, one per node, each running torchrun with one rank; one rendezvous on loopback."""
    import json
    import socket
    import subprocess

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    launcher = f"{sys.executable} -m torch.distributed.run --nnodes 2 --nproc-per-node 1 --rdzv-endpoint 127.0.0.1:{port}"
    script = SCRIPTS / "ddp_no_sampler.py"
    nodes = [
        subprocess.Popen(
            [sys.executable, "-m", "dllint", "--probe", str(script), "--launcher", f"{launcher} --node-rank {node}",
             "--probe-timeout", str(TIMEOUT), "--format", "json", "--probe-report", str(tmp_path / f"node{node}.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
        )
        for node in (1, 0)
    ]
    for node in nodes:
        node.wait(timeout=3 * TIMEOUT)
    zero, one = (json.loads((tmp_path / f"node{n}.json").read_text()) for n in (0, 1))
    assert [(r["rank"], r["node"]) for r in zero["ranks"]] == [(0, 0), (1, 1)]
    [loader] = zero["loaders"]
    assert loader["call_site"].endswith("ddp_no_sampler.py:10 [ranks 0, 1]")
    [dl305] = [f for f in zero["findings"] if f["code"] == "DL305"]
    assert dl305["probe"]["verdict"] == "confirmed" and dl305["probe"]["measurements"]["ranks"] == 2
    assert zero["notes"] == ["every rank (2) reported here, from nodes 0, 1"]
    assert [(r["rank"], r["node"]) for r in one["ranks"]] == [(1, 1)]
    assert one["notes"] == ["this node ran ranks 1 of 2; the report of every rank is made on the node that runs global rank 0"]
    assert live_children() == []


def test_two_children_of_the_same_rank_keep_their_loaders_apart(tmp_path):
    import json

    from dllint.probe.ranks import RankEvents, merge_rank_loaders
    from dllint.probe.report import LoaderReport

    events = tmp_path / "events.jsonl"
    events.touch()  # the runner makes it; ranks only append
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


def test_accelerate_launch_runs_the_ranks_and_confirms_dl305():
    pytest.importorskip("accelerate")
    launcher = (f"{sys.executable} -m accelerate.commands.launch --multi_gpu --num_processes 2 --num_machines 1 "
                "--mixed_precision no --dynamo_backend no")
    report = probe("ddp_no_sampler.py", launcher=launcher)
    [finding] = by_code(report, "DL305")
    assert finding.probe["verdict"] == "confirmed"
    assert report.launcher.startswith("python -m accelerate.commands.launch --multi_gpu")
    assert [r["rank"] for r in report.ranks] == [0, 1]
    assert_nothing_left(report)


def test_deepspeed_launcher_runs_two_cpu_ranks_and_confirms_dl305(monkeypatch):
    """DeepSpeed's own launcher (0.19.8), its CPU accelerator, 2 local ranks on gloo."""
    import socket

    pytest.importorskip("deepspeed", reason="deepspeed is not installed (pip install deepspeed==0.19.8)")
    monkeypatch.setenv("DS_ACCELERATOR", "cpu")  # the same ranks on a machine with GPUs
    with socket.socket() as free:  # not its default 29500, which another job may hold
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    report = probe("ddp_no_sampler.py", launcher=f"{sys.executable} -m deepspeed.launcher.runner --num_gpus 2 --master_port {port}")
    [finding] = by_code(report, "DL305")
    assert finding.probe["verdict"] == "confirmed"
    assert finding.probe["measurements"]["samples_per_rank"] == [64, 64]
    assert report.script_outcome.startswith("every rank (2):")
    assert report.launcher == f"python -m deepspeed.launcher.runner --num_gpus 2 --master_port {port}"
    assert [(r["rank"], r["local_rank"], r["node"]) for r in report.ranks] == [(0, 0, 0), (1, 1, 0)]
    assert_nothing_left(report)


def test_a_launcher_that_fails_to_start_says_so(tmp_path):
    report = probe("ddp_no_sampler.py", launcher=f"{sys.executable} -m torch.distributed.run --no-such-option")
    assert report.could_not_run and report.ranks == []
    assert report.script_outcome.startswith("the launcher exited with status 2 before any rank ran the script")
    assert report.hint.startswith("the launcher ended before any rank ran the script")
    assert_nothing_left(report)


@functools.lru_cache(maxsize=1)  # asked once: a controller that is down costs the 5 s once
def _slurm_answers() -> str | None:
    """Why SLURM cannot run a job here (no srun, no controller, no idle node), or None when it can."""
    import shutil
    import subprocess

    if shutil.which("srun") is None or shutil.which("sinfo") is None:
        return "no SLURM here: srun is not on PATH (benchmarks/slurm_local.sh sets up a single-node one)"
    try:
        states = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=5).stdout.split()
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 5 s (no SLURM controller running?)"
    except OSError as error:
        return f"sinfo could not run: {error}"
    return None if "idle" in states or "mix" in states else f"no idle SLURM node (sinfo says {states or 'nothing'})"


def _ranks_left(script: str) -> list[int]:
    """The ranks slurmd started (not dllint's children) that still run the script."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if script in (process.info["cmdline"] or []) and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process.pid)
    return found


@pytest.mark.parametrize(("name", "line"), [("srun_no_sampler.py", 17), ("srun_fixed.py", 13)])
def test_srun_launcher_runs_two_ranks_and_confirms_dl305(monkeypatch, name, line):
    """SLURM's srun (2 tasks of the local allocation, gloo on loopback): the script joins its group
    from SLURM_PROCID / SLURM_NTASKS; DL305 confirmed without a DistributedSampler, not with one."""
    import socket

    reason = _slurm_answers()
    if reason:
        pytest.skip(reason)
    with socket.socket() as free:  # srun passes the environment on to its tasks
        free.bind(("127.0.0.1", 0))
        monkeypatch.setenv("MASTER_PORT", str(free.getsockname()[1]))
    report = probe(name, launcher="srun -n 2")
    assert report.script_outcome.startswith("every rank (2): the script ran to its end"), report.script_outcome
    assert report.launcher == "srun -n 2 python"  # this interpreter, put before the script
    assert [(r["rank"], r["local_rank"], r["node"], r["world"]) for r in report.ranks] == [(0, 0, 0, 2), (1, 1, 0, 2)]
    [loader] = report.loaders
    assert loader.call_site.endswith(f"{name}:{line} [ranks 0, 1]")
    shards = [r for r in loader.results if r.code == "DL305"]
    if name == "srun_no_sampler.py":
        [finding] = by_code(report, "DL305")
        assert finding.source == "static" and finding.line == line and finding.probe["verdict"] == "confirmed"
        assert finding.probe["measurements"]["samples_per_rank"] == [64, 64]
        assert finding.probe["measurements"]["shared"] == 64
    else:
        assert by_code(report, "DL305") == [] and by_code(report, "DL301") == []
        assert shards and all(r.verdict == "not confirmed" and r.measurements["shared"] == 0 for r in shards)
    assert_nothing_left(report)
    assert _ranks_left(str(SCRIPTS / name)) == []


def test_a_hanging_srun_task_is_killed_and_its_job_ends():
    """The tasks are slurmd's children, not dllint's: srun is asked to end its step (SIGTERM) before
    the rest is killed, so no task and no job is left holding the node."""
    import subprocess

    reason = _slurm_answers()
    if reason:
        pytest.skip(reason)
    def jobs() -> set[str]:
        return set(subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=10).stdout.split())

    before = jobs()
    report = probe("srun_rank_hangs.py", launcher="srun -n 2")
    assert "rank 1: still running" in report.script_outcome and "killed" in report.script_outcome
    assert "rank 0: the script ran to its end" in report.script_outcome
    assert report.duration_s < TIMEOUT / 2
    assert_nothing_left(report)
    assert _ranks_left(str(SCRIPTS / "srun_rank_hangs.py")) == []
    assert jobs() - before == set()  # the job srun made has ended: the node is free for the next
