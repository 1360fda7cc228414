"""Time limits inside the harness.

A measurement can block forever (a dataset that hangs, a worker that never
starts). The parent kills the whole process group at the overall deadline; this
module adds a per-measurement limit in the child so that one stuck measurement
costs its own slice of the budget, not the whole run.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any
from collections.abc import Iterator
from contextlib import contextmanager


class MeasurementTimeout(Exception):
    """A measurement ran past its slice of the budget."""


class Budget:
    """The time the harness may still spend, against an absolute deadline."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def slice(self, at_most: float) -> float:
        return min(at_most, self.remaining())


@contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Raise MeasurementTimeout in the main thread after ``seconds``.

    SIGALRM interrupts blocking queue reads, which a watchdog thread could not.
    Outside the main thread there is no signal to use; the parent's deadline
    still holds there.
    """
    if seconds <= 0:
        raise MeasurementTimeout(f"no time left for {what}")
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:  # noqa: ARG001 - signal handler signature
        raise MeasurementTimeout(f"{what} took longer than {seconds:.1f} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
