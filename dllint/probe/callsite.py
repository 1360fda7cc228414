"""Where a loader was built or iterated: the user's line, found on the stack.

The call site is the first frame in the user's own code: frames of the probe,
of the standard library and of installed packages (site-packages) are
skipped, so a loader that Lightning, accelerate or a HF Trainer builds on the
user's behalf is attributed to the user's line that asked for it.

Static findings are reported at a loader call or at an argument inside it, so
the harness records the whole span of the call expression (first and last
line). Python 3.11 keeps each instruction's source span (``co_positions``);
on 3.10 the span comes from the innermost call expression around the frame's
line in the parsed source.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
import sysconfig
from dataclasses import dataclass
from types import FrameType

_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    try:
        import site

        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # site trimmed down (virtualenv's old site.py)
        pass
    return tuple(sorted(os.path.realpath(root) + os.sep for root in roots if root))


LIBRARY_ROOTS = _library_roots()
_INSTALLED_MARKERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def is_library_file(filename: str) -> bool:
    """Code the user did not write: the probe, the standard library, installed packages."""
    if filename.startswith(("<frozen", "<string>")) or filename.startswith(_PROBE_DIR):
        return True
    if any(marker in filename for marker in _INSTALLED_MARKERS):
        return True
    real = os.path.realpath(filename) if os.path.isabs(filename) else filename
    return real.startswith(LIBRARY_ROOTS)


@dataclass(frozen=True)
class CallSite:
    path: str
    line: int
    end_line: int

    def label(self) -> str:
        return f"{os.path.relpath(self.path) if os.path.isabs(self.path) else self.path}:{self.line}"


def _is_library_frame(frame: FrameType, skip_objects: tuple[object, ...]) -> bool:
    if is_library_file(frame.f_code.co_filename):
        return True
    # A DataLoader subclass's __init__ calling super().__init__(): the call
    # site the user wrote is where the subclass was constructed.
    self_object = frame.f_locals.get("self") if frame.f_code.co_name == "__init__" else None
    return self_object is not None and any(self_object is obj for obj in skip_objects)


def _call_span(frame: FrameType) -> tuple[int, int]:
    line = frame.f_lineno
    if not hasattr(frame.f_code, "co_positions"):  # Python 3.10
        return call_span_from_source(frame.f_code.co_filename, line)
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return line, line
    first, last = positions[0], positions[1]
    if first is None:
        return line, line
    return first, last if last is not None else first


@functools.lru_cache(maxsize=64)
def _calls_in(filename: str) -> tuple[tuple[int, int], ...]:
    try:
        with open(filename, encoding="utf-8") as stream:
            tree = ast.parse(stream.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return ()
    return tuple((node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Call))


def call_span_from_source(filename: str, line: int) -> tuple[int, int]:
    """The span of the innermost call expression that contains ``line`` (or the line alone)."""
    around = [span for span in _calls_in(filename) if span[0] <= line <= span[1]]
    if not around:
        return line, line
    return min(around, key=lambda span: span[1] - span[0])


def find_call_site(*skip_objects: object) -> CallSite | None:
    """The innermost frame outside torch and the probe, with its call's line span."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_library_frame(frame, skip_objects):
        frame = frame.f_back
    if frame is None:
        return None
    first, last = _call_span(frame)
    return CallSite(os.path.realpath(frame.f_code.co_filename), first, last)


def library_builder(*skip_objects: object) -> str | None:
    """The installed package that is building this loader (Lightning rebuilding the user's), or None.

    The innermost frame outside torch and the probe: when it is library code,
    a framework builds the loader, usually from one the user built before.
    """
    torch_module = sys.modules.get("torch")
    torch_dir = os.path.dirname(os.path.realpath(torch_module.__file__)) + os.sep if torch_module and torch_module.__file__ else None
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        real = os.path.realpath(filename) if os.path.isabs(filename) else filename
        self_object = frame.f_locals.get("self") if frame.f_code.co_name == "__init__" else None
        if (real.startswith(_PROBE_DIR) or (torch_dir and real.startswith(torch_dir))
                or any(self_object is obj for obj in skip_objects if self_object is not None)):
            frame = frame.f_back
            continue
        return filename if is_library_file(filename) and not filename.startswith("<") else None
    return None


def site_key(path: str, line: int) -> str:
    """How a call site is named across the probe's runs (the recommendation's ``overrides``)."""
    return f"{os.path.realpath(path)}:{line}"
