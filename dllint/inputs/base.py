"""What an input adapter hands the engine: :class:`Input`, and how positions map back to the file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from dllint.findings import Finding


class PositionMap(Protocol):
    """Maps a finding at a position of ``Input.text`` back to the file's own positions."""

    def to_file(self, finding: Finding) -> Finding: ...


class WriteBackError(Exception):
    """A fixed text that cannot be put back into the file's format; the message says why."""


@dataclass
class Input:
    """One file as the engine sees it.

    ``kind`` "python": ``text`` is the module the engine parses (a notebook: its code cells
    joined); "config": ``document`` is a parsed config file (dllint.configs; ``text`` is the
    file's text, for ``# noqa`` and quoting).
    """

    path: str
    kind: Literal["python", "config"]
    text: str
    positions: PositionMap | None = None  # None: the engine's positions are the file's
    document: object | None = None  # kind "config": the parsed document
    notebook: bool = False  # python text that came from notebook cells
    errors: list[Finding] = field(default_factory=list)  # DL000s that did not stop the lint (a broken cell)
    adapter: str = ""  # the module that made it (dllint.inputs.write_back dispatches on it)
    origin: object | None = None  # the adapter's own state for write-back (encoding, notebook JSON)
