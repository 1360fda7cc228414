"""``--probe-trace``: a Chrome trace of the probe's run that the format's schema accepts.

The schema below is written from the Trace Event Format's documentation (the "JSON Object Format":
``traceEvents`` with ``displayTimeUnit`` and ``otherData``; complete events ``"ph": "X"`` with
``ts`` and ``dur`` in microseconds; metadata events ``"ph": "M"`` named ``process_name``,
``thread_name``, ``process_sort_index``, ``thread_sort_index`` with their ``args``), not from
dllint's code.
"""

from __future__ import annotations

import json
import time

import pytest
from probe_helpers import require_torch

require_torch()
jsonschema = pytest.importorskip("jsonschema")

PHASES = ["B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "V", "v", "R", "c", "(", ")"]
CHROME_TRACE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"$ref": "#/$defs/event"}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
    "$defs": {
        "event": {
            "type": "object",
            "required": ["name", "ph", "pid", "tid"],
            "properties": {
                "name": {"type": "string"},
                "cat": {"type": "string"},
                "ph": {"enum": PHASES},
                "ts": {"type": "number"},
                "tts": {"type": "number"},
                "dur": {"type": "number", "minimum": 0},
                "pid": {"type": "integer"},
                "tid": {"type": "integer"},
                "args": {"type": "object"},
            },
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}},
                 "then": {"required": ["ts", "dur"]}},
                {"if": {"properties": {"ph": {"const": "M"}}},
                 "then": {"required": ["args"],
                          "properties": {"name": {"enum": ["process_name", "process_labels", "process_sort_index",
                                                           "thread_name", "thread_sort_index"]}},
                          "oneOf": [
                              {"properties": {"name": {"enum": ["process_name", "thread_name"]},
                                              "args": {"required": ["name"], "properties": {"name": {"type": "string"}}}}},
                              {"properties": {"name": {"const": "process_labels"},
                                              "args": {"required": ["labels"]}}},
                              {"properties": {"name": {"enum": ["process_sort_index", "thread_sort_index"]},
                                              "args": {"required": ["sort_index"],
                                                       "properties": {"sort_index": {"type": "integer"}}}}},
                          ]},
                 "else": {"required": ["ts"]}},
            ],
        },
    },
}

TWO_LOADERS = """
class Slow(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        time.sleep(0.002)
        return torch.tensor([float(index)])


if __name__ == "__main__":
    train = DataLoader(Slow(), batch_size=4, num_workers=2)
    val = DataLoader(Slow(), batch_size=4)
    model = torch.nn.Linear(1, 1)
    for epoch in range(3):
        for batch in train:
            model(batch).sum().backward()
        for batch in val:
            model(batch)
"""


def run_command(tmp_path, monkeypatch, capsys, body: str, **options):
    """``dllint --probe train.py --probe-trace ...`` in this process, with the probe tests' small budgets."""
    from functools import partial

    import dllint.probe.runner as runner
    from dllint.config import load_settings
    from dllint.engine import Linter
    from dllint.probe.command import ProbeOptions, run_probe_command
    from probe_helpers import quick_settings, write_script

    write_script(tmp_path, body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "run_probe", partial(runner.run_probe, settings=quick_settings(epoch_batches=8)))
    code = run_probe_command("train.py", [], Linter(load_settings(None, str(tmp_path))), "text",
                             ProbeOptions(timeout=90, **options))
    return code, capsys.readouterr()


def slices(trace: dict, pid: int, tid: int | None = None, cat: str | None = None) -> list[dict]:
    return [event for event in trace["traceEvents"] if event["ph"] == "X" and event["pid"] == pid
            and (tid is None or event["tid"] == tid) and (cat is None or event["cat"] == cat)]


def names(trace: dict, kind: str) -> dict[tuple[int, int], str]:
    return {(event["pid"], event["tid"]): event["args"]["name"] for event in trace["traceEvents"]
            if event["ph"] == "M" and event["name"] == kind}


@pytest.mark.probe
def test_a_real_run_gives_a_chrome_trace_with_a_track_per_loader(tmp_path, monkeypatch, capsys):
    before = time.monotonic()
    code, out = run_command(tmp_path, monkeypatch, capsys, TWO_LOADERS, trace_path=str(tmp_path / "trace.json"))
    after = time.monotonic()
    assert code in (0, 1), out.err
    trace = json.loads((tmp_path / "trace.json").read_text())
    jsonschema.validate(trace, CHROME_TRACE_SCHEMA)

    processes = names(trace, "process_name")
    first_run = {pid: name for (pid, _), name in processes.items() if "decision run" not in name}
    from probe_helpers import line_of

    lines = [line_of(tmp_path / "train.py", text) for text in ("train = DataLoader", "val = DataLoader")]
    assert sorted(first_run.values()) == [f"loader 1 at train.py:{lines[0]}", f"loader 2 at train.py:{lines[1]}"]
    train, val = sorted(first_run)
    tracks = names(trace, "thread_name")
    assert tracks[(train, 1)].startswith("main process") and tracks[(val, 1)].startswith("main process")
    # Two workers of the train loader on their own tracks; the single-process val loader has none.
    assert {tid for (pid, tid), name in tracks.items() if pid == train and name.startswith("DataLoader worker")} == {10, 11}
    assert not any(pid == val and name.startswith("DataLoader worker") for (pid, _), name in tracks.items())

    # Per loader, per epoch: the epoch with its waits and steps inside it; from epoch 2 on the epoch's last
    # quarter (2 of 8 batches) is epoch 1's batches replayed from memory, a slice of its own: the step alone.
    for pid in (train, val):
        epochs = [event for event in slices(trace, pid, 1, "epoch") if event["name"].startswith("epoch")]
        real = [event for event in epochs if "replayed from memory" not in event["name"]]
        replays = [event for event in epochs if "replayed from memory" in event["name"]]
        assert [event["args"]["epoch"] for event in real] == [1, 2, 3]
        assert [event["args"]["epoch"] for event in replays] == [2, 3]
        for epoch, drawn in zip(real, (8, 6, 6)):
            inside = [event for event in slices(trace, pid, 1) if event["args"].get("epoch") == epoch["args"]["epoch"]
                      and epoch["ts"] <= event["ts"] and event["ts"] + event["dur"] <= epoch["ts"] + epoch["dur"] + 1]
            waits = [event for event in inside if event["cat"] == "data_wait"]
            steps = [event for event in inside if event["cat"] == "step"]
            assert len(waits) == len(steps) == drawn, (epoch, len(waits), len(steps))
    # The workers loaded the 20 batches the loader drew (8, then 6 and 6: the replayed tails draw none), 4 samples each.
    batches = slices(trace, train, cat="worker_batch")
    assert len(batches) == 20 and {event["args"]["samples"] for event in batches} == {4}
    assert {event["args"]["epoch"] for event in batches} == {1, 2, 3}
    assert sum(event["dur"] for event in batches) / 20 >= 4 * 2000  # 4 samples of 2 ms each, in µs

    # Every event lies inside the run's time span, as this test's own clock saw it.
    origin = trace["otherData"]["origin_monotonic_s"]
    timed = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    assert before <= origin and all(origin + (event["ts"] + event["dur"]) / 1e6 <= after for event in timed)
    assert all(event["ts"] >= 0 for event in timed)


@pytest.mark.probe
def test_an_unwritable_trace_path_is_one_line_and_the_report_is_still_written(tmp_path, monkeypatch, capsys):
    body = """
    class Small(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, index):
            return torch.tensor([float(index)])


    if __name__ == "__main__":
        for epoch in range(2):
            for batch in DataLoader(Small(), batch_size=4):
                pass
    """
    report = tmp_path / "probe.json"
    code, out = run_command(tmp_path, monkeypatch, capsys, body, report_path=str(report),
                            trace_path=str(tmp_path / "missing" / "trace.json"))
    assert code == 2
    assert out.err.strip().splitlines()[-1] == (
        f"dllint: error: cannot write the probe trace {tmp_path / 'missing' / 'trace.json'}: No such file or directory")
    assert "Traceback" not in out.err
    assert "loader 1 at train.py:" in out.out  # the text report is out
    assert json.loads(report.read_text())["loaders"][0]["step"]["steps"] > 0
    assert not (tmp_path / "missing").exists()


def test_the_picture_nests_each_epoch_and_reads_no_bad_marks():
    """Hand-made events: waits and steps inside their epoch; a mark that is not three numbers is dropped."""
    from dllint.probe.trace import ProbeTrace

    events = [
        {"event": "start", "pid": 1, "t": 10.0},
        {"event": "loader", "id": 1, "call_site": "train.py:5", "t": 10.1},
        {"event": "progress", "loader": 1, "step": "first batch", "t": 10.2},
        {"event": "first_batch", "loader": 1, "seconds": 0.1, "t": 10.3},
        {"event": "trace_epoch", "loader": 1, "epoch": 1, "started": 11.0, "ended": 11.5, "replay": False,
         "marks": [[11.1, 11.2, 11.2], ["x", 1, 2], [11.3, 11.4, 11.4]], "t": 11.5},
        {"event": "trace_batch", "loader": 1, "worker": 0, "pid": 99, "start": 11.05, "end": 11.15, "samples": 4},
        {"event": "trace_batch", "loader": 7, "worker": 0, "pid": 99, "start": 11.05, "end": 11.15, "samples": 4},
    ]
    trace = ProbeTrace()
    trace.add_run(events)
    picture = trace.to_json()
    jsonschema.validate(picture, CHROME_TRACE_SCHEMA)
    main = slices(picture, 1, 1)
    assert [(event["name"], event["ts"], event["dur"]) for event in main] == [
        ("epoch 1", 1_000_000.0, 500_000.0),
        ("iter() (starts workers)", 1_000_000.0, 100_000.0),
        ("data wait", 1_100_000.0, 100_000.0), ("step", 1_200_000.0, 100_000.0),
        ("data wait", 1_300_000.0, 100_000.0), ("step", 1_400_000.0, 100_000.0),
    ]
    assert [(event["name"], event["ts"], event["dur"]) for event in slices(picture, 1, 2)] == [
        ("first batch", 200_000.0, 100_000.0)]  # until the harness's next event
    assert [(event["tid"], event["args"]["epoch"], event["args"]["os_pid"]) for event in slices(picture, 1, cat="worker_batch")] == [
        (10, 1, 99)]  # loader 7 is no loader of this run: no slice


# -- under a launcher: torchrun, 2 ranks, gloo on CPU ---------------------------------------------------

TWO_RANKS = """
import torch.distributed as dist


class Slow(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        time.sleep(0.002)
        return torch.tensor([float(index)])


if __name__ == "__main__":
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    data = Slow()
    loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data), num_workers=2)
    model = torch.nn.Linear(1, 1)
    for epoch in range(2):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).sum().backward()
    dist.destroy_process_group()
"""


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """One ``dllint --probe train.py --nproc-per-node 2 --probe-trace ... --probe-report ...`` run (real torchrun)."""
    import contextlib
    import io
    from functools import partial

    import dllint.probe.runner as runner
    from dllint.config import load_settings
    from dllint.engine import Linter
    from dllint.probe.command import ProbeOptions, run_probe_command
    from probe_helpers import quick_settings, write_script

    directory = tmp_path_factory.mktemp("ranks")
    write_script(directory, TWO_RANKS)
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()) as out:
        patch.chdir(directory)
        patch.setattr(runner, "run_probe", partial(runner.run_probe, settings=quick_settings(epoch_batches=8, epochs=2)))
        code = run_probe_command("train.py", [], Linter(load_settings(None, str(directory))), "text", ProbeOptions(
            timeout=120, nproc_per_node=2, trace_path=str(directory / "trace.json"),
            report_path=str(directory / "probe.json")))
    return (code, out.getvalue(), json.loads((directory / "probe.json").read_text()),
            json.loads((directory / "trace.json").read_text()))


@pytest.mark.probe
@pytest.mark.distributed
def test_two_ranks_each_get_their_step_and_block_and_the_job_is_not_rerun(two_ranks):
    code, text, report, _ = two_ranks
    assert code in (0, 1), text
    (loader,) = report["loaders"]
    assert sorted(loader["ranks"]) == ["0", "1"], loader.keys()
    for rank in ("0", "1"):
        step = loader["ranks"][rank]["step"]
        assert step["steps"] > 0 and step["batches"] == [8, 8], step  # 2 epochs of 8 batches on each rank
        assert step["replayed_batches"] == 2 and "input_bound_fraction" in step, step  # epoch 2's last quarter
        own = loader["ranks"][rank]["recommendation"]
        assert own is not None and "num_workers" in own["settings"], own
    recommendation = loader["recommendation"]
    assert recommendation["after"] == {"not_run": "the probe does not re-run a distributed job; apply the settings "
                                                  "and probe again"}
    assert recommendation["verdict"] is None and recommendation["decision"] is None
    assert "rank 0: data wait: " in text and "rank 1: data wait: " in text


@pytest.mark.probe
@pytest.mark.distributed
def test_two_ranks_trace_is_a_chrome_trace_with_each_ranks_loader_and_workers(two_ranks):
    _, text, _, trace = two_ranks
    jsonschema.validate(trace, CHROME_TRACE_SCHEMA)
    processes = names(trace, "process_name")
    by_rank = {name.rsplit("[", 1)[-1].rstrip("]"): pid for (pid, _), name in processes.items()}
    assert sorted(by_rank) == ["rank 0", "rank 1"], processes  # each rank's loader a process of its own
    assert all(name.split(" [")[0].endswith("at train.py:25") for name in processes.values()), processes
    tracks = names(trace, "thread_name")
    for pid in by_rank.values():
        assert tracks[(pid, 1)].startswith("main process")
        assert {tid for (owner, tid), name in tracks.items() if owner == pid and name.startswith("DataLoader worker")} \
            == {10, 11}
        epochs = [event for event in slices(trace, pid, 1, "epoch") if event["name"].startswith("epoch")]
        assert [(event["args"]["epoch"], "replayed from memory" in event["name"]) for event in epochs] == [
            (1, False), (2, False), (2, True)], epochs
        # each rank's workers loaded the batches its loader drew: 8, then 6 (the replayed tail draws none)
        assert len(slices(trace, pid, cat="worker_batch")) == 14
