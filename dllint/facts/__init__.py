"""The facts layer: what the rules ask about a file, one module per analysis, answered once.

:class:`~dllint.facts.file.FileFacts` (:mod:`dllint.facts.file`) is what a rule reads; the
modules beside it are the analyses it is built from, and the flow engine (:mod:`dllint.facts.flow`),
whose records the project layer keeps. This module is kept light: importing one of those (a
project's records, read by a run whose files are all cached) does not import the file analyses.
The names below are :mod:`dllint.facts.file`'s, imported when first read.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dllint.facts.file import ClassInfo as ClassInfo
    from dllint.facts.file import ColumnMap as ColumnMap
    from dllint.facts.file import FileFacts as FileFacts
    from dllint.facts.file import is_main_guard as is_main_guard

_FROM_FILE = frozenset({"ClassInfo", "ColumnMap", "FileFacts", "is_main_guard"})


def __getattr__(name: str) -> Any:
    if name in _FROM_FILE:
        return getattr(importlib.import_module("dllint.facts.file"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
