"""Where a loader was built or iterated: the user's line, found on the stack.

Static findings are reported at a loader call or at an argument inside it, so
the harness records the whole span of the call expression (first and last
line). Python 3.11 keeps each instruction's source span, so the frame's current
instruction gives the span of the call being executed without reparsing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import FrameType

_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class CallSite:
    path: str
    line: int
    end_line: int

    def label(self) -> str:
        return f"{os.path.relpath(self.path) if os.path.isabs(self.path) else self.path}:{self.line}"


def _is_library_frame(frame: FrameType, skip_objects: tuple[object, ...]) -> bool:
    filename = frame.f_code.co_filename
    if filename.startswith(_PROBE_DIR) or f"{os.sep}torch{os.sep}" in filename:
        return True
    if filename.startswith("<frozen") or filename == "<string>":
        return True
    # A DataLoader subclass's __init__ calling super().__init__(): the call
    # site the user wrote is where the subclass was constructed.
    self_object = frame.f_locals.get("self") if frame.f_code.co_name == "__init__" else None
    return self_object is not None and any(self_object is obj for obj in skip_objects)


def _call_span(frame: FrameType) -> tuple[int, int]:
    line = frame.f_lineno
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return line, line
    first, last = positions[0], positions[1]
    if first is None:
        return line, line
    return first, last if last is not None else first


def find_call_site(*skip_objects: object) -> CallSite | None:
    """The innermost frame outside torch and the probe, with its call's line span."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_library_frame(frame, skip_objects):
        frame = frame.f_back
    if frame is None:
        return None
    first, last = _call_span(frame)
    return CallSite(os.path.realpath(frame.f_code.co_filename), first, last)
