"""Linting one file with CPython's cyclic garbage collector paused.

A parsed module is a tree of many small objects without reference cycles, built at
once and dropped at once. The collector traverses every live object each time enough
new ones pile up, so on a large file it walked the whole tree again and again: on a
2 MB file of small functions it took as long as parsing and linting together
(``benchmarks/huge_inputs.py``). Reference counting still frees what a lint drops;
the collector resumes, and catches up on any cycles, when the file is done.

Over a run of many files (:func:`files_in_batch`) it stays off between files too: what
survives a lint (the project's summaries, its cached analyses) was otherwise traversed
by the young generations' collections after every file (0.5 s of a 6 s run over the
benchmark corpus), though little of it is cyclic garbage (a lint empties its facts, the
project index the analyses it lets go of). A full collection once COLLECT_AFTER objects
have piled up frees whatever cycles remain.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


def collector_paused(function: Callable[..., T]) -> Callable[..., T]:
    """Run ``function`` with the collector off; leave it as it was found (a caller may have paused it)."""

    @functools.wraps(function)
    def paused(*args, **kwargs) -> T:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused


# Objects the collector tracks, allocated and still alive since the last collection, past which a
# batch collects (a few times the live objects of a big project's index; each costs ~50 ms).
COLLECT_AFTER = 1_000_000


def file_done() -> None:
    """After each file of a batch: a full collection once COLLECT_AFTER objects piled up."""
    if not gc.isenabled() and gc.get_count()[0] > COLLECT_AFTER:
        gc.collect()


@contextlib.contextmanager
def files_in_batch() -> Iterator[None]:
    """The collector off for a run of many files (turned back on at the end, if it was on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
