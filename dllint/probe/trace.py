"""``--probe-trace trace.json``: the probe's run as a Chrome trace (Perfetto, chrome://tracing).

The file is in the Chrome trace event format's JSON object form, the one PyTorch's profiler
writes: ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``. Each loader is a
process (``pid``) named by its call site; its tracks (``tid``) are the script's main process (each
epoch a slice, inside it each data wait and each step), the probe's own measurements on that loader,
and one track per DataLoader worker (each batch the worker loaded). Every slice is a complete
event (``"ph": "X"``, ``ts`` and ``dur`` in microseconds); ``"ph": "M"`` metadata events name
the processes and tracks. The re-run with the recommended settings has processes of its own.

Two sides:

- in the harness (child process): :func:`traced_workers` hands a multi-worker loader's workers a
  ``worker_init_fn`` (:class:`TracedWorkerInit`, the script's own still called) that times each
  batch a worker loads and appends it to the events file (``trace_batch``); :func:`epoch_event`
  turns an epoch's marks (:attr:`dllint.probe.steps.EpochRecord.marks`) into a ``trace_epoch``
  event. Both only under ``Settings.trace``: one small file append per worker batch is the cost.
- in dllint (parent): :class:`ProbeTrace` collects each run's events and writes the file.

Times: the harness and its workers read ``time.perf_counter`` and convert it to
``time.monotonic`` (the clock of every event's ``t``), so the main process, the workers and the
probe's measurements share one time line; ``otherData.origin_monotonic_s`` is the monotonic time of
``ts`` 0 (the first run's start).
"""

from __future__ import annotations

import bisect
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# perf_counter -> monotonic in this process (the same clock on Linux and macOS: an offset of ~0).
_OFFSET = time.monotonic() - time.perf_counter()

MICROSECONDS = 1_000_000

# The probe's own time between a batch's arrival and the loop body (a memory sample, a batch kept for the
# replay) is drawn from this long; shorter, it is a few microseconds of bookkeeping on every batch.
BOOKKEEPING_SHOWN_S = 0.0001

# Tracks of a loader's process (``tid``); worker N is WORKER_TRACK + N.
MAIN_TRACK, PROBE_TRACK, WORKER_TRACK = 1, 2, 10


def monotonic(perf: float) -> float:
    """A ``time.perf_counter`` reading of this process on ``time.monotonic``'s scale."""
    return perf + _OFFSET


# -- in the harness and its workers --------------------------------------------------------------
class TracedWorkerInit:
    """A worker's ``worker_init_fn``: times each batch this worker loads, then calls the script's own.

    Picklable (spawn workers import this module); the timing is installed in the worker's own
    process, on torch's dataset fetchers, once.
    """

    def __init__(self, loader: int, init_fn: Callable[[int], Any] | None) -> None:
        self.loader = loader
        self.init_fn = init_fn

    def __call__(self, worker_id: int) -> None:
        _time_fetches(self.loader, worker_id)
        if self.init_fn is not None:
            self.init_fn(worker_id)


_timed = False


def _time_fetches(loader: int, worker: int) -> None:
    """Wrap torch's fetchers in this worker process: each ``fetch(index)`` becomes a ``trace_batch`` event."""
    global _timed
    if _timed:
        return
    try:
        from torch.utils.data._utils import fetch
    except ImportError:  # a torch without these internals: workers untimed, the rest of the trace stands
        return
    _timed = True
    report = _event_writer()
    pid = os.getpid()
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        fetcher = getattr(fetch, name, None)
        if fetcher is not None:
            fetcher.fetch = _timed_fetch(fetcher.fetch, report, {"loader": loader, "worker": worker, "pid": pid})


def _timed_fetch(original: Callable[..., Any], report: Callable[[dict[str, Any]], None],
                 who: dict[str, Any]) -> Callable[..., Any]:
    def fetch(self: Any, index: Any) -> Any:
        started = time.perf_counter()
        data = original(self, index)  # a stream's end (StopIteration) or an error is no batch
        ended = time.perf_counter()
        samples = len(index) if isinstance(index, (list, tuple)) else 1
        report({"event": "trace_batch", **who, "start": monotonic(started), "end": monotonic(ended),
                "samples": samples})
        return data

    return fetch


def _event_writer() -> Callable[[dict[str, Any]], None]:
    """Appends to the probe's events file (the one named when this process started)."""
    from dllint.probe.guard import EVENTS_ENV, EventFile, trusted_values

    path = trusted_values().get(EVENTS_ENV) or os.environ.get(EVENTS_ENV)
    stream = EventFile(path) if path else None

    def write(event: dict[str, Any]) -> None:
        if stream is not None:
            stream.write(json.dumps(event) + "\n")

    return write


@contextmanager
def traced_workers(loader: Any, loader_id: int, enabled: bool) -> Iterator[None]:
    """While the script's ``iter(loader)`` starts its workers: their ``worker_init_fn`` times their
    batches. The loader's own attribute is put back at once (the iterator keeps its copy), so the
    script never sees the probe's."""
    if not enabled or not getattr(loader, "num_workers", 0):
        yield
        return
    own = loader.worker_init_fn
    loader.worker_init_fn = TracedWorkerInit(loader_id, own)
    try:
        yield
    finally:
        loader.worker_init_fn = own


def epoch_event(loader: int, record: Any, replay: bool = False) -> dict[str, Any]:
    """A ``trace_epoch`` event of an :class:`~dllint.probe.steps.EpochRecord`, on the monotonic clock."""
    last = record.marks[-1][2] if record.marks else record.started
    ended = record.ended if record.ended is not None else last
    return {"event": "trace_epoch", "loader": loader, "epoch": record.number, "replay": replay,
            "started": monotonic(record.started), "ended": monotonic(max(ended, last)),
            "marks": [[monotonic(mark) for mark in marks] for marks in record.marks],
            "failed": record.failed, "cut": record.cut}


def _numbers(value: Any, count: int) -> bool:
    return (isinstance(value, list) and len(value) == count
            and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value))


# -- in dllint: the file --------------------------------------------------------------------------
@dataclass
class _Run:
    label: str  # "" for the probe's run, else what the run was (the re-run with the recommended settings)
    events: list[dict[str, Any]]


@dataclass
class _Tracks:
    """The processes (one per loader) and tracks named so far, and their metadata events."""

    metadata: list[dict[str, Any]] = field(default_factory=list)
    named: set[tuple[int, int]] = field(default_factory=set)
    next_pid: int = 1

    def process(self, name: str) -> int:
        pid = self.next_pid
        self.next_pid += 1
        self.metadata += [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}},
                          {"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": pid}}]
        return pid

    def track(self, pid: int, tid: int, name: str) -> None:
        if (pid, tid) in self.named:
            return
        self.named.add((pid, tid))
        self.metadata += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}},
                          {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}}]


class ProbeTrace:
    """Each run's events, then the Chrome trace of them all (:meth:`to_json`, :meth:`write`)."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []

    def add_run(self, events: list[dict[str, Any]], label: str = "") -> None:
        self.runs.append(_Run(label, list(events)))

    def origin(self) -> float:
        """The monotonic time of ts 0: the first event of the first run."""
        times = [event["t"] for event in self.runs[0].events if isinstance(event.get("t"), (int, float))] if self.runs else []
        return min(times) if times else 0.0

    def to_json(self) -> dict[str, Any]:
        tracks = _Tracks()
        origin = self.origin()
        slices: list[dict[str, Any]] = []
        for run in self.runs:
            slices += _RunPicture(run, tracks, origin).slices()
        return {"traceEvents": tracks.metadata + slices, "displayTimeUnit": "ms",
                "otherData": {"producer": "dllint --probe", "origin_monotonic_s": origin,
                              "runs": [run.label or "the probe's run" for run in self.runs]}}

    def write(self, path: str) -> None:
        """Write the file; raises OSError as ``open`` does."""
        text = json.dumps(self.to_json())
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(text)


class _RunPicture:
    """One run's loaders as processes: epochs with their waits and steps, workers' batches, measurements."""

    def __init__(self, run: _Run, tracks: _Tracks, origin: float) -> None:
        self.run, self.tracks, self.origin = run, tracks, origin
        self.pids: dict[int, int] = {}  # loader id -> pid
        self.epochs: dict[int, list[dict[str, Any]]] = {}  # loader id -> its trace_epoch events

    def slices(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        suffix = f" ({self.run.label})" if self.run.label else ""
        for event in self.run.events:
            if event.get("event") == "loader" and isinstance(event.get("id"), int):
                self.pids[event["id"]] = self.tracks.process(f"loader {event['id']} at {event.get('call_site')}{suffix}")
            elif event.get("event") == "trace_epoch" and event.get("loader") in self.pids:
                self.epochs.setdefault(event["loader"], []).append(event)
                found += self.epoch(event)
        found += self.measurements()
        found += [item for event in self.run.events if event.get("event") == "trace_batch"
                  for item in self.worker_batch(event)]
        return found

    def slice(self, name: str, category: str, pid: int, tid: int, start: float, end: float,
              args: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"name": name, "cat": category, "ph": "X", "pid": pid, "tid": tid,
                "ts": round((start - self.origin) * MICROSECONDS, 3),
                "dur": round(max(0.0, end - start) * MICROSECONDS, 3), "args": args or {}}

    def epoch(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The epoch's slice on the main track, and inside it: starting the iterator, each wait, each step."""
        pid, number = self.pids[event["loader"]], event["epoch"]
        self.tracks.track(pid, MAIN_TRACK, "main process: epochs, data waits, steps")
        marks = [mark for mark in event["marks"] if _numbers(mark, 3)]  # the events file is read, not trusted
        started, ended = event["started"], event["ended"]
        replay = event.get("replay", False)
        name = f"epoch {number}" + (" (epoch 1's batches replayed from memory: the step alone)" if replay else "")
        found = [self.slice(name, "epoch", pid, MAIN_TRACK, started, ended,
                            {"epoch": number, "batches": len(marks), "seconds": round(ended - started, 6),
                             "replay": replay, "cut": event.get("cut"), "failed": event.get("failed")})]
        if marks and marks[0][0] > started:
            found.append(self.slice("iter() (starts workers)" if not replay else "iter()", "epoch", pid, MAIN_TRACK,
                                    started, marks[0][0], {"epoch": number}))
        for index, (requested, got, resumed) in enumerate(marks):
            batch = {"epoch": number, "batch": index + 1}
            found.append(self.slice("replayed batch" if replay else "data wait", "data_wait", pid, MAIN_TRACK,
                                    requested, got, batch))
            if resumed - got >= BOOKKEEPING_SHOWN_S:
                found.append(self.slice("the probe's bookkeeping (memory sample, batch kept for the replay)", "probe",
                                        pid, MAIN_TRACK, got, resumed, batch))
            after = marks[index + 1][0] if index + 1 < len(marks) else ended
            found.append(self.slice("step", "step", pid, MAIN_TRACK, resumed, max(resumed, after), batch))
        return found

    def measurements(self) -> list[dict[str, Any]]:
        """Each measurement the probe ran on a loader: from its progress event until the harness's next
        event or the start of an epoch of the script (measurements run one at a time, in the harness)."""
        boundaries = sorted([event["t"] for event in self.run.events if isinstance(event.get("t"), (int, float))]
                            + [epoch["started"] for epochs in self.epochs.values() for epoch in epochs])
        found = []
        for event in self.run.events:
            if event.get("event") != "progress" or event.get("loader") not in self.pids or "t" not in event:
                continue
            pid = self.pids[event["loader"]]
            self.tracks.track(pid, PROBE_TRACK, "the probe's measurements (variants of this loader)")
            end = boundaries[bisect.bisect_right(boundaries, event["t"])] if boundaries[-1] > event["t"] else event["t"]
            found.append(self.slice(str(event.get("step")), "probe", pid, PROBE_TRACK, event["t"], end))
        return found

    def worker_batch(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        pid = self.pids.get(event.get("loader"))  # type: ignore[arg-type]
        worker = event.get("worker")
        if pid is None or not isinstance(worker, int):
            return []
        self.tracks.track(pid, WORKER_TRACK + worker, f"DataLoader worker {worker}")
        start, end = event["start"], event["end"]
        epoch = next((found["epoch"] for found in self.epochs.get(event["loader"], ())
                      if found["started"] <= end <= found["ended"]), None)
        return [self.slice("batch", "worker_batch", pid, WORKER_TRACK + worker, start, end,
                           {"epoch": epoch, "worker": worker, "os_pid": event.get("pid"),
                            "samples": event.get("samples")})]
