"""The script's real training step, in bounded epochs, and its data wait (child process only).

The harness bounds every epoch of a loader the script built to at most K
batches by bounding the order its index sampler hands out
(:class:`BoundedOrder`): workers get exactly K tasks, the epoch ends the way a
full one does (persistent workers stay, nothing is left in flight), and
``len(loader)`` says K, so frameworks that plan their epoch from it
(Lightning's validation at the last batch) see the epoch they get.

:class:`TimedEpoch` wraps the script's iterator for one epoch and times each
``next()``: the time blocked there is the data wait; the time between one
batch arriving and the next ``next()`` is the loop body (forward, backward,
optimizer step, logging). When the script uses CUDA, the clock is read after
``torch.cuda.synchronize()`` so that GPU work queued by the body counts as
step time, not as the next wait. The first batch of each epoch includes
starting the workers: it is kept apart from the per-step means.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# A step that waits on its data more than this share of the time is input-bound...
INPUT_BOUND = 0.5
# ...when each wait is long enough for workers to help (below this it is DataLoader's own per-batch
# overhead)...
MATERIAL_WAIT_S = 0.001
# ...and the loop body is a step at all (a loop that only draws batches waits all the time: its body takes
# microseconds; a tiny model's forward, backward and optimizer step take 0.3 ms and up on a CPU: at 1 ms,
# such a script, 88% of its time loading in the main process, got no block).
MATERIAL_STEP_S = 0.0002
# A step this many times slower in the real epoch than alone (medians of the loop bodies) is starved of CPU
# by the workers...
CONTENDED = 1.5
# (where that costs at least this share of each batch's time)...
MATERIAL_SLOWDOWN = 0.1
# ...as it is where the workers kept at least this share of the usable cores busy through the real epochs.
BUSY_CORES = 0.5
# Contention is the workers' doing only where they took at least this many cores through the real epochs
# (CPU seconds over wall seconds); a step slowed beside workers that took less was slowed by other processes.
WORKERS_TOOK_CORES = 0.25
# Loading that keeps at least this share of a core busy (drawn in the main process) is CPU-bound: as
# many such workers as cores fill them, however loaded the machine (its load lowers what they get).
CPU_BOUND_LOADING = 0.25
# From epoch 2 on, this share of each epoch's batches (at least one) is epoch 1's again, replayed from memory.
REPLAYED_SHARE = 0.25
# Fewest steps (first batches of epochs excluded) a data wait needs to count as evidence.
FEWEST_STEPS = 3

# The replay of epoch 1's batches (the step alone) keeps at most this many bytes of them.
KEPT_BYTES = 256 * 2**20

# Memory is sampled once an epoch, after its last batch arrived: a sample reads every process's smaps, tens
# of milliseconds per process on a loaded machine, while the workers go on filling their queue. Taken
# earlier, it would shorten the waits that follow; after the last batch no wait follows (the next
# ``next()`` only ends the epoch), and the workers are still alive. Its time is kept out of the loop
# body and the epoch time. An epoch of unknown length is sampled when it ends.


class EpochBound(StopIteration):
    """The end of an epoch the probe cut short: the loader has more batches than the bound.

    A StopIteration, so that ``for`` loops end as at any epoch's end; its type
    tells a script's own ``next()`` past the bound (an error the probe caused)
    from the script's own mistakes.
    """

    def __init__(self, loader: int, bound: int, full: int | None) -> None:
        super().__init__(f"loader {loader}: the probe ends each epoch after {bound} batches")
        self.loader, self.bound, self.full = loader, bound, full


class BoundedOrder:
    """The first ``limit`` items of an index sampler's order, each epoch (its ``set_epoch`` still applies).

    ``drawn``, where given, says how many of them an epoch starting now draws from the loader: an epoch
    whose tail is replayed from memory draws fewer than ``len()`` says. It is asked when each epoch's
    order starts (a persistent loader's iterator keeps one order for all its epochs).
    """

    def __init__(self, order: Any, limit: int, drawn: Callable[[], int | None] | None = None) -> None:
        self.order = order
        self.limit = limit
        self.drawn = drawn

    def __iter__(self) -> Iterator[Any]:
        fewer = self.drawn() if self.drawn is not None else None
        return itertools.islice(iter(self.order), self.limit if fewer is None else min(fewer, self.limit))

    def __len__(self) -> int:
        return min(self.limit, len(self.order))

    def __getattr__(self, name: str) -> Any:  # a sampler's own attributes (set_epoch, epoch, ...)
        return getattr(self.order, name)


@dataclass
class EpochRecord:
    """One epoch of the script's loop over one loader (or the part of it replayed from memory)."""

    number: int
    started: float  # perf_counter at iter(loader): the epoch time includes starting workers
    waits: list[float] = field(default_factory=list)  # per batch: time blocked in next()
    bodies: list[float] = field(default_factory=list)  # per batch: loop body until the next next()
    seconds: float | None = None  # iter() to the end of the epoch, less memory sampling; None without a batch
    sampling: float = 0.0  # seconds spent sampling memory inside the epoch
    # per batch, perf_counter at: next() called, the batch back, the loop body resumed (after a memory sample):
    # the trace's picture of the epoch (:mod:`dllint.probe.trace`)
    marks: list[tuple[float, float, float]] = field(default_factory=list)
    ended: float | None = None  # perf_counter at the epoch's end (the next() that found no batch)
    cut: bool = False  # ended by the probe's bound, not by the loader running out
    failed: bool = False  # next() raised: the epoch ended there
    replayed: int = 0  # batches of this epoch replayed from memory after the loader's
    worker_cpu_s: float | None = None  # CPU seconds the loader's workers used in this epoch
    # the machine's busy CPU seconds (all processes) and the main process's, at the epoch's start...
    cpu_at_start: tuple[float, float] | None = None
    other_cpu_s: float | None = None  # ...and what other processes than the probed ones used until its last batch

    def full_seconds(self) -> float | None:
        """The epoch's time at its full length: where its tail was replayed from memory, the loader's
        batches after the first (its wait includes worker start) at their mean pace, for the batches
        it did not draw."""
        if self.seconds is None or not self.waits:
            return None
        drawn = len(self.waits)
        if not self.replayed:
            return self.seconds
        first = self.waits[0] + (self.bodies[0] if self.bodies else 0.0)
        pace = (self.seconds - first) / (drawn - 1) if drawn > 1 else first
        return self.seconds + pace * self.replayed


def replayed_count(batches: int) -> int:
    """How many of an epoch's ``batches`` are replayed from memory (from epoch 2 on): :data:`REPLAYED_SHARE`,
    at least one, never all."""
    return 0 if batches < 2 else max(1, int(batches * REPLAYED_SHARE))


def cuda_synchronizer(torch: Any = None) -> Callable[[], None] | None:
    """``torch.cuda.synchronize`` when the script has initialised CUDA, else None."""
    if torch is None:
        import torch
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is not None and cuda.is_available() and cuda.is_initialized():
            synchronize: Callable[[], None] = cuda.synchronize
            return synchronize
    except Exception:  # a broken CUDA install: time without synchronizing
        return None
    return None


@dataclass
class StepClock:
    """Every epoch the script ran over one loader (its call site), with memory samples.

    Besides the real epochs: the step alone (from epoch 2 on, each epoch's last batches are epoch 1's,
    replayed from memory after the loader's: its workers idle or gone, so the step's own cost without
    contention, interleaved with the real epochs) and the loader alone (an epoch of a copy of the
    loader, batches drawn and dropped, measured by the harness).
    """

    epochs: list[EpochRecord] = field(default_factory=list)
    peak_bytes: int = 0
    kept: list[Any] = field(default_factory=list)  # epoch 1's batches, for the replay
    kept_bytes: int = 0
    replays: list[EpochRecord] = field(default_factory=list)
    loader_alone_s: float | None = None
    cores: int = 1  # usable cores: what the workers' CPU time is measured against
    workers: int = 0  # the loader's num_workers
    loading_cpu_share: float | None = None  # of a core, loading in the main process (the sweep measures it)
    worker_cpu: dict[int, float] = field(default_factory=dict)  # per worker pid: CPU seconds read last

    def start(self, number: int | None = None) -> EpochRecord:
        record = EpochRecord(number or len(self.epochs) + 1, time.perf_counter(), cpu_at_start=cpu_now())
        self.epochs.append(record)
        return record

    def start_replay(self, number: int) -> EpochRecord:
        record = EpochRecord(number, time.perf_counter())
        self.replays.append(record)
        return record

    def keep(self, batch: Any) -> None:
        """Keep one of epoch 1's batches for the replay, within :data:`KEPT_BYTES` (past it the
        replay cycles over the batches kept)."""
        from dllint.probe.measure import batch_bytes

        size = batch_bytes(batch)
        if self.kept_bytes + size <= KEPT_BYTES or not self.kept:
            self.kept.append(batch)
            self.kept_bytes += size

    def sample_memory(self) -> None:
        from dllint.probe.measure import process_tree_memory

        try:
            self.peak_bytes = max(self.peak_bytes, process_tree_memory())
        except Exception:  # a process gone mid-read: the next sample counts
            pass

    def sample_workers(self, iterator: Any, record: EpochRecord) -> None:
        """The CPU seconds the loader's workers used since they were last read (persistent workers)
        or started (the others): read at the epoch's last batch, while they are alive."""
        import psutil

        from dllint.probe.internals import worker_pids

        used = 0.0
        for pid in worker_pids(iterator):
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.Error:  # a worker gone: its share is not known
                continue
            total = times.user + times.system
            used += total - self.worker_cpu.get(pid, 0.0)
            self.worker_cpu[pid] = total
        record.worker_cpu_s = used
        now = cpu_now()
        if record.cpu_at_start is not None and now is not None:
            machine, main = now[0] - record.cpu_at_start[0], now[1] - record.cpu_at_start[1]
            record.other_cpu_s = max(0.0, machine - main - used)

    def summary(self) -> dict[str, Any]:
        """Per-step means over every batch the loader gave but each epoch's first (worker start-up,
        reported apart)."""
        pairs = [(wait, body) for epoch in self.epochs for wait, body in zip(epoch.waits[1:], epoch.bodies[1:])]
        firsts = [epoch.waits[0] for epoch in self.epochs if epoch.waits]
        summary: dict[str, Any] = {"steps": len(pairs), "epochs": len(self.epochs),
                                   "batches": [len(epoch.waits) + epoch.replayed for epoch in self.epochs],
                                   "cut": any(epoch.cut for epoch in self.epochs)}
        if pairs:
            wait = statistics.fmean(pair[0] for pair in pairs)
            step = wait + statistics.fmean(pair[1] for pair in pairs)
            summary.update(data_wait_s=wait, step_s=step, data_wait_fraction=wait / step if step > 0 else 0.0)
        if firsts:
            summary["first_wait_s"] = statistics.fmean(firsts)
        complete = [seconds for epoch in self.epochs if (seconds := epoch.full_seconds()) is not None]
        if complete:
            summary["epoch_s"] = statistics.fmean(complete)
            summary["epochs_s"] = [round(seconds, 4) for seconds in complete]
        if self.peak_bytes:
            summary["peak_pss_mb"] = round(self.peak_bytes / 2**20, 1)
        summary.update(self.three_measurements())
        return summary

    def three_measurements(self) -> dict[str, Any]:
        """The real epoch, the step alone, the loader alone: how much faster would this be if the data were free?

        ``input_bound_fraction`` is ``1 - step_alone / epoch`` per batch, whole epochs (first batches
        included; an epoch whose tail was replayed at its full length). ``bound``: ``step`` up to
        :data:`INPUT_BOUND`; else ``contention`` where the workers take the step's CPU: the loop body
        between batches took :data:`CONTENDED` times the step alone (medians: one preemption moves
        neither) and the difference is :data:`MATERIAL_SLOWDOWN` of each batch's time; or the
        workers kept :data:`BUSY_CORES` of the usable cores busy through the real epochs; or there are
        as many as the cores and their loading is CPU-bound (:data:`CPU_BOUND_LOADING`); else ``input``.
        """
        found: dict[str, Any] = {}
        if self.loader_alone_s is not None:
            found["loader_alone_s"] = self.loader_alone_s
        real = [epoch for epoch in self.epochs if epoch.full_seconds() and not epoch.failed]
        replays = [replay for replay in self.replays if replay.seconds is not None and replay.waits]
        if not real or not replays:
            return found
        lengths = [len(epoch.waits) + epoch.replayed for epoch in real]
        per_batch = statistics.fmean((epoch.full_seconds() or 0.0) / length for epoch, length in zip(real, lengths))
        replayed = sum(len(replay.waits) for replay in replays)
        alone = sum(replay.seconds or 0.0 for replay in replays) / replayed
        fraction = max(0.0, 1 - alone / per_batch) if per_batch > 0 else 0.0
        bodies = [body for epoch in real for body in epoch.bodies[1:]]
        alone_bodies = [body for replay in replays for body in replay.bodies]
        body, body_alone = (statistics.median(bodies), statistics.median(alone_bodies)) \
            if bodies and alone_bodies else (0.0, 0.0)
        slower = body / body_alone if body_alone > 0 else 1.0
        # a slower step is the workers' doing where it costs a material share of each batch's time
        costly = slower >= CONTENDED and body - body_alone >= MATERIAL_SLOWDOWN * per_batch
        busy = _busy_cores(real, lambda epoch: epoch.worker_cpu_s)
        filled = self.workers >= self.cores and (self.loading_cpu_share or 0.0) >= CPU_BOUND_LOADING
        contended = costly or filled or (busy is not None and busy >= BUSY_CORES * self.cores)
        bound = "step" if fraction <= INPUT_BOUND else ("contention" if contended else "input")
        found.update(step_alone_s=alone * statistics.fmean(lengths), replayed_batches=replayed,
                     input_bound_fraction=fraction, bound=bound, step_slowdown=slower, usable_cores=self.cores,
                     num_workers=self.workers, cpu_bound_workers=filled)
        if busy is not None:
            found["workers_busy_cores"] = busy
        other = _busy_cores(real, lambda epoch: epoch.other_cpu_s)
        if other is not None:
            found["other_busy_cores"] = other
        if bound == "contention":
            found["contended_by"] = contended_by(self.workers, busy, filled)
        return found


def contended_by(workers: int, busy: float | None, filled: bool) -> str:
    """Who took the step's CPU: ``workers`` where the loader's workers took at least
    :data:`WORKERS_TOOK_CORES` through the real epochs (or, not read, as many CPU-bound workers as
    cores); ``other processes`` otherwise (the machine's other load slowed the step)."""
    took = busy >= WORKERS_TOOK_CORES if busy is not None else filled
    return "workers" if workers > 0 and took else "other processes"


def _busy_cores(real: list[EpochRecord], used: Callable[[EpochRecord], float | None]) -> float | None:
    """How many cores ``used`` (CPU seconds per epoch) kept busy through the real epochs (None where none was read)."""
    measured = [(epoch, seconds) for epoch in real if (seconds := used(epoch)) is not None and epoch.seconds]
    wall = sum(epoch.seconds or 0.0 for epoch, _ in measured)
    return sum(seconds for _, seconds in measured) / wall if measured and wall > 0 else None


def cpu_now() -> tuple[float, float] | None:
    """The machine's busy CPU seconds (every process, every CPU) and this process's, now (None without psutil)."""
    try:
        import psutil

        times = psutil.cpu_times()
    except Exception:  # no psutil, or no /proc/stat: the other load is not known
        return None
    idle = times.idle + getattr(times, "iowait", 0.0)
    return sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0), time.process_time()


@dataclass
class Tail:
    """The end of an epoch replayed from memory once the loader's batches are drawn: epoch 1's batches,
    cycled, timed into their own record."""

    batches: Iterator[Any]
    record: Callable[[], EpochRecord]  # starts the replay's record, when the loader's part ends
    on_end: Callable[[EpochRecord], None]


class TimedEpoch:
    """The script's iterator for one bounded epoch, timing each ``next()``.

    Attributes it does not have are the wrapped iterator's (code that reads
    ``_num_yielded`` or calls ``_shutdown_workers`` keeps working). With a
    :class:`Tail`, the loader's batches are followed by replayed ones.
    """

    def __init__(self, iterator: Any, record: EpochRecord, clock: StepClock, *,
                 sync: Callable[[], None] | None, bound: EpochBound | None, last: int | None,
                 on_end: Callable[[EpochRecord], None], on_error: Callable[[EpochRecord, BaseException], None],
                 keep: bool = False, tail: Tail | None = None) -> None:
        self._iterator = iterator
        self._record = record
        self._clock = clock
        self._sync = sync
        self._bound = bound  # raised at the end when the loader had more batches than the bound
        self._last = last  # how many batches this epoch will give (None: unknown), where memory is sampled
        self._on_end = on_end
        self._on_error = on_error
        self._keep = keep  # epoch 1: its batches are kept for the replay
        self._tail = tail
        self._got: float | None = None
        self._ended = False
        self._replaying = False  # the epoch's tail, from memory
        self._length = None if tail is None or last is None else last + record.replayed

    def __iter__(self) -> TimedEpoch:
        return self

    def __len__(self) -> int:
        return self._length if self._length is not None else len(self._iterator)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._iterator, name)

    def __next__(self) -> Any:
        if self._ended:
            raise self._bound if self._bound is not None else StopIteration
        if self._sync is not None:
            self._sync()  # the body's GPU work belongs to the step, not to the next wait
        requested = time.perf_counter()
        record = self._record
        if self._got is not None:
            record.bodies.append(requested - self._got)
        try:
            batch = next(self._iterator)
        except StopIteration:
            if self._tail is not None and record.waits and (self._last is None or len(record.waits) >= self._last):
                self._replay_tail(requested)
                return next(self)
            record.replayed = 0  # the loader ran out before its part ended: nothing is replayed
            self._end(requested)
            raise self._bound if self._bound is not None else StopIteration from None
        except Exception as error:
            self._ended = record.failed = True
            record.ended = time.perf_counter()
            self._on_error(record, error)
            raise
        got = time.perf_counter()
        record.waits.append(got - requested)
        if len(record.waits) == self._last:
            self._clock.sample_memory()
            self._clock.sample_workers(self._iterator, record)
        if self._keep:
            self._clock.keep(batch)
        self._got = time.perf_counter()
        record.sampling += self._got - got
        record.marks.append((requested, got, self._got))
        return batch

    def _replay_tail(self, when: float) -> None:
        """The loader's part of the epoch ended at ``when``: the rest comes from memory, in its own record."""
        tail, record = self._tail, self._record
        assert tail is not None
        record.seconds = when - record.started - record.sampling
        self._on_end(record)
        self._tail, self._keep, self._last, self._got, self._replaying = None, False, None, None, True
        self._iterator, self._record, self._on_end = tail.batches, tail.record(), tail.on_end

    def _end(self, when: float) -> None:
        self._ended = True
        self._record.ended = when
        if len(self._record.waits) != self._last and self._record.waits and not self._replaying:
            # A length not known ahead: sampled at its end (non-persistent workers are gone), after ``when``.
            self._clock.sample_memory()
        self._record.seconds = when - self._record.started - self._record.sampling
        self._record.cut = self._bound is not None and len(self._record.waits) + self._record.replayed >= self._bound.bound
        self._on_end(self._record)

    def abandon(self) -> None:
        """The script left this epoch without reaching its end (a ``break``; Lightning stops at ``len()``).

        Its epoch time ends at the last batch's arrival plus a mean loop body
        (the last body is never seen); an epoch without a batch has none.
        """
        if self._ended:
            return
        bodies = self._record.bodies
        if self._got is None:
            self._ended = True
            self._on_end(self._record)
            return
        self._end(self._got + (statistics.fmean(bodies) if bodies else 0.0))


BOUND_WORDS = {"input": "input-bound: the step waits on its data",
               "step": "step-bound: the step itself takes the time"}
CONTENTION_WORDS = {"workers": "contention: the workers take the step's CPU ({why}), so the wait between "
                               "batches understates the input-bound time",
                    "other processes": "contention: other processes take the step's CPU, not the loader's workers "
                                       "({why})"}


def three_measurements_text(step: dict[str, Any]) -> str | None:
    """``epoch 0.74 s; step alone 0.02 s (...); loader alone 0.70 s: input-bound share 97% (contention: ...)``."""
    if "bound" not in step:
        return None
    alone = f"; loader alone {step['loader_alone_s']:.2f} s" if step.get("loader_alone_s") is not None else ""
    return (f"epoch {step['epoch_s']:.2f} s; step alone {step['step_alone_s']:.2f} s (the step on "
            f"{step['replayed_batches']} of epoch 1's batches replayed from memory, the loader idle){alone}: "
            f"input-bound share {step['input_bound_fraction'] * 100:.0f}% ({_bound_words(step)})")


def _bound_words(step: dict[str, Any]) -> str:
    if step["bound"] != "contention":
        return BOUND_WORDS[step["bound"]]
    source = step.get("contended_by", "workers")
    return CONTENTION_WORDS[source].format(why=_contention_why(step, source == "workers"))


def _contention_why(step: dict[str, Any], workers: bool) -> str:
    said = []
    if step.get("cpu_bound_workers") and workers:
        cores = step.get("usable_cores", 0)
        said.append(f"{step['num_workers']} CPU-bound workers for {cores} usable core{'s' if cores != 1 else ''}")
    cores_text = "the usable core" if step.get("usable_cores", 0) == 1 else f"the {step.get('usable_cores', '?')} usable cores"
    if step.get("workers_busy_cores") is not None:
        said.append(f"{'they' if workers else 'the workers'} keep {step['workers_busy_cores']:.1f} of {cores_text} busy")
    if step.get("other_busy_cores") is not None and not workers:
        said.append(f"other processes {step['other_busy_cores']:.1f} cores")
    if step.get("step_slowdown", 1.0) >= CONTENDED:
        said.append(f"the step runs {step['step_slowdown']:.1f}x slower {'beside them' if workers else 'than alone'}")
    return "; ".join(said) or "measured"


def data_wait_text(step: dict[str, Any]) -> str:
    """``data wait: 72% of each step (29.0 ms of 40.0 ms), 12 steps`` from a :meth:`StepClock.summary`."""
    return (f"data wait: {step['data_wait_fraction'] * 100:.0f}% of each step ({step['data_wait_s'] * 1000:.1f} ms "
            f"of {step['step_s'] * 1000:.1f} ms), {step['steps']} steps")


def short_waits(step: dict[str, Any]) -> str | None:
    """Why a step that waits on its data most of the time still earns no block: each wait, or the
    step itself, is under the floor where workers could help (the report says so; None otherwise)."""
    if not _mostly_waiting(step):
        return None
    wait = step.get("data_wait_s", 0.0)
    if wait < MATERIAL_WAIT_S:
        return (f"each wait ({wait * 1e3:.1f} ms) is under {MATERIAL_WAIT_S * 1e3:.0f} ms, about what handing a batch"
                " over from a worker costs: workers would not shorten it")
    if step.get("step_s", 0.0) - wait < MATERIAL_STEP_S:
        return f"the loop body takes under {MATERIAL_STEP_S * 1e3:.1f} ms: it draws batches and does no step to speed up"
    return None


def waits_on_data(step: dict[str, Any]) -> bool:
    """Whether a :meth:`StepClock.summary` shows a real step waiting on its data most of the time,
    each wait and the step long enough for workers to help."""
    return _mostly_waiting(step) and short_waits(step) is None


def _mostly_waiting(step: dict[str, Any]) -> bool:
    return (not step.get("no_step") and step.get("steps", 0) >= FEWEST_STEPS
            and step.get("data_wait_fraction", 0.0) > INPUT_BOUND)
