"""A one-line progress count on stderr, for long runs on a terminal only.

Quiet by default: nothing is drawn in the first ``delay`` seconds (most runs
end before), nothing when stderr is not a terminal (CI logs, pipes) and
nothing for machine-read formats, whose consumers read stdout but whose
wrappers often merge the two streams.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

MACHINE_FORMATS = frozenset({"json", "sarif", "github"})


class ProgressLine:
    def __init__(self, stream: TextIO | None = None, delay: float = 2.0, interval: float = 0.1) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    @classmethod
    def for_run(cls, fmt: str, stream: TextIO | None = None) -> ProgressLine | None:
        """A progress line if this run should show one, else None."""
        stream = stream if stream is not None else sys.stderr
        if fmt in MACHINE_FORMATS:
            return None
        try:
            if not stream.isatty():
                return None
        except (AttributeError, ValueError):
            return None
        return cls(stream)

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.start < self.delay or (now - self._last_draw < self.interval and done < total):
            return
        self._last_draw = now
        self._drawn = True
        width = len(str(total))
        self.stream.write(f"\rdllint: {done:>{width}}/{total} files checked")
        self.stream.flush()

    def finish(self) -> None:
        """Erase the line, so the report starts on a clean line."""
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False
