"""Measurement helpers shared by the checks: timing batches, memory, worker stderr."""

from __future__ import annotations

import copy
import io
import os
import pickle
import re
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dllint.probe.internals import current_iterator, shutdown_iterator


def describe_error(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0]}" if message else type(error).__name__


close_iterator = shutdown_iterator


class _SharingPickler(pickle.Pickler):
    """Pickles a dataset with its arrays and tensors left out: they are shared, not copied."""

    def __init__(self, file: io.BytesIO, shared: list[Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj: Any) -> int | None:
        if type(obj).__module__.split(".", 1)[0] in ("torch", "numpy") and hasattr(obj, "shape"):
            self.shared.append(obj)
            return len(self.shared) - 1
        return None


class _SharingUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, shared: list[Any]) -> None:
        super().__init__(file)
        self.shared = shared

    def persistent_load(self, pid: Any) -> Any:
        return self.shared[pid]


def own_copy(dataset: Any) -> Any:
    """A copy of the script's dataset for a variant the probe builds, so that nothing a variant
    does (a handle opened lazily in the main process by a 0-worker variant, a file offset moved)
    shows up in the script's own dataset.

    A deep copy whose arrays and tensors are shared (their data is read, not changed, and a big
    in-memory dataset must not be doubled); where the dataset cannot be pickled (a lambda, an open
    handle), ``copy.deepcopy``, then a shallow copy (its attributes set anew stay the copy's); the
    dataset itself only where none of these works.
    """
    shared: list[Any] = []
    buffer = io.BytesIO()
    try:
        _SharingPickler(buffer, shared).dump(dataset)
        buffer.seek(0)
        return _SharingUnpickler(buffer, shared).load()
    except Exception:  # anything pickling raises: try the next way
        pass
    for way in (copy.deepcopy, copy.copy):
        try:
            return way(dataset)
        except Exception:  # an object that refuses to be copied: try the next way
            continue
    return dataset


def count_samples(batch: Any) -> int:
    """Samples in one batch: the leading dimension of its first tensor-like leaf."""
    leaf = batch
    while isinstance(leaf, (list, tuple, dict)) and len(leaf) > 0:
        leaf = next(iter(leaf.values())) if isinstance(leaf, dict) else leaf[0]
    shape = getattr(leaf, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if isinstance(batch, (list, tuple)):
        return len(batch)
    return 1


def batch_bytes(batch: Any) -> int:
    """Bytes of the tensors and arrays in a batch (nested lists, tuples and dicts)."""
    if isinstance(batch, dict):
        return sum(batch_bytes(value) for value in batch.values())
    if isinstance(batch, (list, tuple)):
        return sum(batch_bytes(value) for value in batch)
    nbytes = getattr(batch, "nbytes", None)
    return nbytes if isinstance(nbytes, int) else 0


def loader_alone_seconds(loader: Any, batches: int | None, epochs: int) -> float:
    """Mean seconds of ``epochs`` epochs, drawn and dropped (worker start included): each to its
    end, or at most ``batches`` batches of a stream."""
    times = []
    for _ in range(epochs):
        started = time.perf_counter()
        iterator = iter(loader)
        try:
            for _ in iterator if batches is None else zip(range(batches), iterator):
                pass
        finally:
            if not getattr(loader, "persistent_workers", False):
                close_iterator(iterator)
        times.append(time.perf_counter() - started)
    if getattr(loader, "persistent_workers", False):
        close_iterator(current_iterator(loader))
    return statistics.fmean(times)


def epoch_timing(loader: Any, epoch_batches: int) -> tuple[float, float | None]:
    """Time from ``iter(loader)`` to its first batch, and the time per batch of the rest of the
    epoch (at most ``epoch_batches`` more; None where there were none).

    The epoch runs to its end: for persistent workers the next epoch's start
    must not include draining batches the previous, abandoned epoch had in
    flight. Non-persistent workers are stopped after.
    """
    started = time.perf_counter()
    iterator = iter(loader)
    next(iterator)
    latency = time.perf_counter() - started
    rest_started, rest = time.perf_counter(), 0
    for _ in zip(range(epoch_batches), iterator):
        rest += 1
    per_batch = (time.perf_counter() - rest_started) / rest if rest else None
    if not getattr(loader, "persistent_workers", False):
        close_iterator(iterator)
    return latency, per_batch


def epoch_start_seconds(loader: Any, epoch_batches: int) -> float:
    """Time from ``iter(loader)`` to its first batch; then the epoch runs to its end (:func:`epoch_timing`)."""
    return epoch_timing(loader, epoch_batches)[0]


def epoch_start_latencies(loader: Any, epochs: int, epoch_batches: int) -> list[float]:
    """First-batch latency of each of ``epochs`` epochs of the same loader object."""
    try:
        return [epoch_start_seconds(loader, epoch_batches) for _ in range(epochs)]
    finally:
        close_iterator(current_iterator(loader))


def process_memory(process: Any) -> int:  # a psutil.Process
    """A process's proportional set size (shared pages split among their sharers); RSS where PSS is unknown.

    Forked workers share the parent's pages copy-on-write: summing their RSS
    counts those pages once per worker (many times the real footprint).
    """
    try:
        return int(getattr(process.memory_full_info(), "pss"))
    except (AttributeError, OSError):
        return int(process.memory_info().rss)


def process_tree_memory() -> int:
    """Bytes of this process plus all its descendants (the workers), PSS where the system reports it."""
    import psutil

    me = psutil.Process()
    total = 0
    for process in [me, *me.children(recursive=True)]:
        try:
            total += process_memory(process)
        except psutil.Error:  # a worker that exited between listing and reading
            pass
    return total


class PeakMemory:
    """Samples the process tree's memory in a thread; ``peak`` is the highest seen."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, process_tree_memory())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self.peak = process_tree_memory()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, process_tree_memory())


@dataclass
class Steady:
    """How a steady-state throughput measurement is taken."""

    warmup_batches: int  # batches skipped after the first: the prefetch queue filled during start-up
    window_batches: int  # at least this many batches per window
    window_seconds: float  # and at least this long
    windows: int  # repeated; the spread between windows is the noise


def steady_throughput(loader: Any, steady: Steady) -> dict[str, Any]:
    """Samples/s in the steady state: after start-up and the prefetched batches, in repeated windows.

    The first batches after start-up come from the prefetch queue the workers
    filled while the main process waited; counting them overstates what many
    workers deliver. The result has the median window rate, the spread
    (highest minus lowest window, relative to the median), start-up time and
    peak memory (PSS of main plus workers).
    """
    with PeakMemory() as memory:
        started = time.perf_counter()
        iterator = iter(loader)
        rates: list[float] = []
        try:
            next(iterator)
            startup = time.perf_counter() - started
            for _ in range(steady.warmup_batches):
                next(iterator)
            for _ in range(steady.windows):
                window_started, samples, batches = time.perf_counter(), 0, 0
                while batches < steady.window_batches or time.perf_counter() - window_started < steady.window_seconds:
                    samples += count_samples(next(iterator))
                    batches += 1
                rates.append(samples / (time.perf_counter() - window_started))
        except StopIteration:
            if not rates:
                raise ValueError("the loader ran out of batches before a steady state") from None
        finally:
            close_iterator(iterator)
    median = statistics.median(rates)
    return {
        "startup_s": startup,
        "samples_per_s": median,
        "spread": (max(rates) - min(rates)) / median if median else 0.0,
        "windows": [round(rate, 1) for rate in rates],
        "peak_mb": memory.peak / 2**20,
    }


def stderr_mark(stderr_path: str | None) -> int | None:
    """Where the harness's stderr file ends now (None without one): :func:`stderr_since` reads on from here."""
    return os.path.getsize(stderr_path) if stderr_path and os.path.exists(stderr_path) else None


def stderr_since(stderr_path: str | None, mark: int | None) -> list[str]:
    """The lines written to the harness's stderr file after ``mark`` (none without a file or mark)."""
    if mark is None or not stderr_path:
        return []
    sys.stderr.flush()
    with open(stderr_path, encoding="utf-8", errors="replace") as stream:
        stream.seek(mark)
        return stream.read().splitlines()


@contextmanager
def worker_stderr(stderr_path: str | None) -> Iterator[list[str]]:
    """Collect what workers print to stderr while the block runs.

    Workers inherit the harness's stderr, which the runner points at a file;
    an error raised inside a spawn worker (bootstrapping, unpickling) is only
    visible there. The list is filled when the block exits.
    """
    lines: list[str] = []
    start = stderr_mark(stderr_path)
    try:
        yield lines
    finally:
        if start is not None:
            time.sleep(0.05)  # let a dying worker's traceback reach the file
            lines.extend(stderr_since(stderr_path, start))


@contextmanager
def default_start_method(method: str) -> Iterator[None]:
    """Make ``method`` the process-wide default for the block.

    A spawn worker copies the parent's default, and the script it re-imports
    starts its own loaders with it: measuring "under spawn" means the machine's
    default is spawn, not only this loader's context.
    """
    import multiprocessing

    previous = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method(method, force=True)
    try:
        yield
    finally:
        multiprocessing.set_start_method(previous, force=True)


_EXCEPTION_LINE = re.compile(r"^\s*[\w.]+(Error|Exception|Warning)\b:?")


def error_block(lines: list[str], needle: str) -> str | None:
    """The exception line a worker printed, joined with its continuation lines up to ``needle``."""
    for end in range(len(lines) - 1, -1, -1):
        if needle not in lines[end]:
            continue
        for start in range(end, -1, -1):
            if _EXCEPTION_LINE.match(lines[start]):
                return " ".join(line.strip() for line in lines[start : end + 1] if line.strip())
        return lines[end].strip()
    return None


def last_error_line(lines: list[str], *needles: str) -> str | None:
    """The last traceback line that names an exception, preferring ones with a needle."""
    for needle in needles:
        for line in reversed(lines):
            if needle in line:
                return line.strip()
    for line in reversed(lines):
        head = line.split(":", 1)[0].strip()
        if head.endswith(("Error", "Exception")) and not line.startswith(" "):
            return line.strip()
    return None
