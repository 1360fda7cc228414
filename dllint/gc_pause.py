"""Linting one file with CPython's cyclic garbage collector paused.

A parsed module is a tree of many small objects without reference cycles, built at
once and dropped at once. The collector traverses every live object each time enough
new ones pile up, so on a large file it walked the whole tree again and again: on a
2 MB file of small functions it took as long as parsing and linting together
(``benchmarks/huge_inputs.py``). Reference counting still frees what a lint drops;
the collector resumes, and catches up on any cycles, when the file is done.
"""

from __future__ import annotations

import functools
import gc
from typing import Callable, TypeVar

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
