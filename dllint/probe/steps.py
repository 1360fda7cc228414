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
# overhead), and the loop body is a step at all (a loop that only draws batches waits all the time).
MATERIAL_WAIT_S = 0.001
# A step this many times slower in the real epoch than alone is starved of CPU by the workers.
CONTENDED = 1.5
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
    """The first ``limit`` items of an index sampler's order, each epoch (its ``set_epoch`` still applies)."""

    def __init__(self, order: Any, limit: int) -> None:
        self.order = order
        self.limit = limit

    def __iter__(self) -> Iterator[Any]:
        return itertools.islice(iter(self.order), self.limit)

    def __len__(self) -> int:
        return min(self.limit, len(self.order))

    def __getattr__(self, name: str) -> Any:  # a sampler's own attributes (set_epoch, epoch, ...)
        return getattr(self.order, name)


@dataclass
class EpochRecord:
    """One epoch of the script's loop over one loader."""

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


def cuda_synchronizer(torch: Any = None) -> Callable[[], None] | None:
    """``torch.cuda.synchronize`` when the script has initialised CUDA, else None."""
    if torch is None:
        import torch
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is not None and cuda.is_available() and cuda.is_initialized():
            return cuda.synchronize
    except Exception:  # a broken CUDA install: time without synchronizing
        return None
    return None


@dataclass
class StepClock:
    """Every epoch the script ran over one loader (its call site), with memory samples.

    Besides the real epochs: the step alone (an epoch whose batches are epoch 1's, replayed from
    memory: the workers idle, so the step's own cost without contention) and the loader alone (an
    epoch of a copy of the loader, batches drawn and dropped, measured by the harness).
    """

    epochs: list[EpochRecord] = field(default_factory=list)
    peak_bytes: int = 0
    kept: list[Any] = field(default_factory=list)  # epoch 1's batches, for the replay
    kept_bytes: int = 0
    replay: EpochRecord | None = None
    loader_alone_s: float | None = None

    def start(self, number: int | None = None) -> EpochRecord:
        record = EpochRecord(number or len(self.epochs) + 1, time.perf_counter())
        self.epochs.append(record)
        return record

    def start_replay(self, number: int) -> EpochRecord:
        self.replay = EpochRecord(number, time.perf_counter())
        return self.replay

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

    def summary(self) -> dict[str, Any]:
        """Per-step means over every batch but each epoch's first (worker start-up, reported apart)."""
        pairs = [(wait, body) for epoch in self.epochs for wait, body in zip(epoch.waits[1:], epoch.bodies[1:])]
        firsts = [epoch.waits[0] for epoch in self.epochs if epoch.waits]
        complete = [epoch.seconds for epoch in self.epochs if epoch.seconds is not None]
        summary: dict[str, Any] = {"steps": len(pairs), "epochs": len(self.epochs),
                                   "batches": [len(epoch.waits) for epoch in self.epochs],
                                   "cut": any(epoch.cut for epoch in self.epochs)}
        if pairs:
            wait = statistics.fmean(pair[0] for pair in pairs)
            step = wait + statistics.fmean(pair[1] for pair in pairs)
            summary.update(data_wait_s=wait, step_s=step, data_wait_fraction=wait / step if step > 0 else 0.0)
        if firsts:
            summary["first_wait_s"] = statistics.fmean(firsts)
        if complete:
            summary["epoch_s"] = statistics.fmean(complete)
        if self.peak_bytes:
            summary["peak_pss_mb"] = round(self.peak_bytes / 2**20, 1)
        summary.update(self.three_measurements(summary))
        return summary

    def three_measurements(self, steady: dict[str, Any]) -> dict[str, Any]:
        """The real epoch, the step alone, the loader alone: how much faster would this be if the data were free?

        ``input_bound_fraction`` is ``1 - step_alone / epoch`` per batch, whole epochs (first batches
        included). ``bound``: ``step`` below :data:`INPUT_BOUND`; else ``contention`` where the loop
        body between batches (``steady``: per-step means) took :data:`CONTENDED` times the step alone
        (the workers took the step's CPU, and the wait between batches understates the input-bound
        time), else ``input``.
        """
        real = [epoch for epoch in self.epochs if epoch.seconds and epoch.waits and not epoch.failed]
        found: dict[str, Any] = {}
        if self.loader_alone_s is not None:
            found["loader_alone_s"] = self.loader_alone_s
        replay = self.replay
        if not real or replay is None or not replay.seconds or not replay.waits:
            return found
        per_batch = statistics.fmean(epoch.seconds / len(epoch.waits) for epoch in real if epoch.seconds)
        alone = replay.seconds / len(replay.waits)
        fraction = max(0.0, 1 - alone / per_batch) if per_batch > 0 else 0.0
        body = steady.get("step_s", 0.0) - steady.get("data_wait_s", 0.0)
        contended = body > CONTENDED * alone
        bound = "step" if fraction <= INPUT_BOUND else ("contention" if contended else "input")
        found.update(step_alone_s=replay.seconds, replayed_batches=len(replay.waits),
                     input_bound_fraction=fraction, bound=bound)
        return found


class TimedEpoch:
    """The script's iterator for one bounded epoch, timing each ``next()``.

    Attributes it does not have are the wrapped iterator's (code that reads
    ``_num_yielded`` or calls ``_shutdown_workers`` keeps working).
    """

    def __init__(self, iterator: Any, record: EpochRecord, clock: StepClock, *,
                 sync: Callable[[], None] | None, bound: EpochBound | None, last: int | None,
                 on_end: Callable[[EpochRecord], None], on_error: Callable[[EpochRecord, BaseException], None],
                 keep: bool = False) -> None:
        self._iterator = iterator
        self._record = record
        self._clock = clock
        self._sync = sync
        self._bound = bound  # raised at the end when the loader had more batches than the bound
        self._last = last  # how many batches this epoch will give (None: unknown), where memory is sampled
        self._on_end = on_end
        self._on_error = on_error
        self._keep = keep  # epoch 1: its batches are kept for the replay
        self._got: float | None = None
        self._ended = False

    def __iter__(self) -> TimedEpoch:
        return self

    def __len__(self) -> int:
        return len(self._iterator)

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
        if self._keep:
            self._clock.keep(batch)
        self._got = time.perf_counter()
        record.sampling += self._got - got
        record.marks.append((requested, got, self._got))
        return batch

    def _end(self, when: float) -> None:
        self._ended = True
        self._record.ended = when
        if len(self._record.waits) != self._last and self._record.waits:
            # A length not known ahead: sampled at its end (non-persistent workers are gone), after ``when``.
            self._clock.sample_memory()
        self._record.seconds = when - self._record.started - self._record.sampling
        self._record.cut = self._bound is not None and len(self._record.waits) >= self._bound.bound
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
               "step": "step-bound: the step itself takes the time",
               "contention": "contention: the workers take the step's CPU (the step runs {slower:.1f}x slower "
                             "beside them), so the wait between batches understates the input-bound time"}


def three_measurements_text(step: dict[str, Any]) -> str | None:
    """``epoch 0.74 s; step alone 0.02 s (...); loader alone 0.70 s: input-bound share 97% (contention: ...)``."""
    if "bound" not in step:
        return None
    alone = f"; loader alone {step['loader_alone_s']:.2f} s" if step.get("loader_alone_s") is not None else ""
    slower = (step["step_s"] - step["data_wait_s"]) / (step["step_alone_s"] / step["replayed_batches"]) \
        if step.get("step_s") and step["step_alone_s"] else 0.0
    return (f"epoch {step['epoch_s']:.2f} s; step alone {step['step_alone_s']:.2f} s (the same "
            f"{step['replayed_batches']} batches replayed from memory){alone}: input-bound share "
            f"{step['input_bound_fraction'] * 100:.0f}% ({BOUND_WORDS[step['bound']].format(slower=slower)})")


def data_wait_text(step: dict[str, Any]) -> str:
    """``data wait: 72% of each step (29.0 ms of 40.0 ms), 12 steps`` from a :meth:`StepClock.summary`."""
    return (f"data wait: {step['data_wait_fraction'] * 100:.0f}% of each step ({step['data_wait_s'] * 1000:.1f} ms "
            f"of {step['step_s'] * 1000:.1f} ms), {step['steps']} steps")


def waits_on_data(step: dict[str, Any]) -> bool:
    """Whether a :meth:`StepClock.summary` shows a real step waiting on its data most of the time."""
    wait = step.get("data_wait_s", 0.0)
    return (not step.get("no_step") and step.get("steps", 0) >= FEWEST_STEPS
            and step.get("data_wait_fraction", 0.0) > INPUT_BOUND and wait >= MATERIAL_WAIT_S
            and step.get("step_s", 0.0) - wait >= MATERIAL_WAIT_S)
