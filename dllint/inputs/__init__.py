"""Input adapters: a file's bytes -> the :class:`Input` the engine lints, and a fixed text -> bytes.

The engine knows one thing, an :class:`Input` (Python module text, or a parsed config
document); what a file format needs besides (a notebook's cells, a YAML file's spans) stays
here, at the edge. Adding a format is a new module with ``KIND``, ``load`` and
``write_back`` plus one line in ``ADAPTERS``; discovery takes its suffixes from there.

Adapters are imported on first use, so a run over ``.py`` files never imports the others.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from dllint.findings import Finding
from dllint.inputs.base import Input, PositionMap, WriteBackError

__all__ = ["ADAPTERS", "SUFFIXES", "Input", "PositionMap", "WriteBackError", "adapter_for", "load", "write_back"]

# suffix -> adapter module
ADAPTERS: dict[str, str] = {
    ".py": "dllint.inputs.python",
    ".pyi": "dllint.inputs.python",
    ".ipynb": "dllint.inputs.notebook",
    ".yaml": "dllint.inputs.yaml",
    ".yml": "dllint.inputs.yaml",
}
SUFFIXES: tuple[str, ...] = tuple(ADAPTERS)
DEFAULT_ADAPTER = "dllint.inputs.python"  # stdin without a file name, and files named on the command line


def adapter_for(path: str) -> ModuleType:
    """The adapter for ``path`` by its suffix; Python for anything else (a script without ``.py``)."""
    name = ADAPTERS.get(os.path.splitext(path)[1].lower(), DEFAULT_ADAPTER)
    return importlib.import_module(name)


def load(path: str, data: bytes, settings: object = None) -> Input | Finding:
    """``data`` (the file's bytes) as an :class:`Input`, or the DL000 finding that says why not."""
    return adapter_for(path).load(path, data, settings)


def write_back(input: Input, new_text: str) -> bytes:
    """The file's new bytes for a fixed ``input.text``; :class:`WriteBackError` when it cannot be."""
    return importlib.import_module(input.adapter).write_back(input, new_text)
