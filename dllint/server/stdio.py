"""The server's side of stdio, bounded: frames and header lines have a size limit, and the
server ends when the editor that started it does.

pygls reads a frame's body with ``stdin.read(Content-Length)``: a frame announcing 100 GB
allocated it (a ``MemoryError`` that ended the session). Here a body over :data:`MAX_FRAME` is
never read into memory: its bytes are skipped up to the next ``Content-Length`` header, and the
message loop is handed a :data:`REFUSED` notification instead, which the server reports.

The server reads ahead (:meth:`FrameReader.read_ahead`): a thread reads the frames as they come,
so that the server can tell whether a newer message already waits (:meth:`FrameReader.waiting`)
and leave a lint that a newer ``didChange`` supersedes undone.
"""

from __future__ import annotations

import io
import json
import os
import queue
import re
import sys
import threading
import time
from typing import Awaitable, BinaryIO, Callable

MAX_FRAME = 64 * 1024 * 1024  # bytes of one message: a 60 MB didOpen is still read (and refused as a document)
MAX_HEADER_LINE = 4096  # bytes of one header line (a longer "line" is read in pieces)
HEADER = b"Content-Length:"
REFUSED = "$/dllint/refusedFrame"  # the notification that stands for a refused frame
PARENT_POLL = 1.0  # seconds between checks that the editor (``initialize.processId``) still runs
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")  # (as pygls's run_async reads a header)


class FrameReader:
    """pygls's ``AsyncReader`` over a binary stream, with every read bounded."""

    def __init__(self, stream: BinaryIO, run: Callable[[Callable[[], bytes]], Awaitable[bytes]], limit: int = MAX_FRAME) -> None:
        self.stream = stream
        self.run = run  # runs a blocking read off the event loop (pygls's thread pool)
        self.limit = limit
        self.pending = b""  # a header line found while skipping a refused body
        self._ahead: queue.SimpleQueue[bytes] | None = None  # pieces read ahead (see read_ahead)
        self._idle = _Flag()  # the read-ahead thread waits for input that has not come

    @classmethod
    def read_ahead(cls, fd: int, run: Callable[[Callable[[], bytes]], Awaitable[bytes]], limit: int = MAX_FRAME) -> FrameReader:
        """A reader of ``fd`` whose frames a thread reads as they come, in the pieces pygls's
        message loop asks for (header lines, then the body): :meth:`waiting` says whether one
        is there that the loop has not taken yet."""
        idle = _Flag()
        reader = cls(io.BufferedReader(_Watched(fd, idle)), run, limit)
        reader._ahead, reader._idle = queue.SimpleQueue(), idle
        threading.Thread(target=reader._read_frames, name="dllint-stdin", daemon=True).start()
        return reader

    def waiting(self) -> bool:
        """A message the loop has not handled is here or arriving (read ahead only; else False)."""
        if self._ahead is None:
            return False
        return not self._ahead.empty() or not self._idle.set

    def readline(self) -> Awaitable[bytes]:
        if self._ahead is not None:
            return self.run(self._ahead.get)
        return self.run(self._readline)

    def readexactly(self, n: int) -> Awaitable[bytes]:
        if self._ahead is not None:
            return self.run(self._ahead.get)  # (the body that follows the header lines read ahead)
        if n > self.limit:
            return self.run(lambda: self._refuse(n))
        return self.run(lambda: self.stream.read(n))

    def _read_frames(self) -> None:
        """The read-ahead thread: each header line, then the body, as pygls's loop takes them."""
        assert self._ahead is not None
        length = 0
        while True:
            header = self._readline()
            self._ahead.put(header)
            if not header:
                return
            if not length:
                match = _CONTENT_LENGTH.fullmatch(header)
                length = int(match.group(1)) if match else 0
            if length and not header.strip():
                body = self._refuse(length) if length > self.limit else self.stream.read(length)
                self._ahead.put(body)
                if not body:
                    return
                length = 0

    def _readline(self) -> bytes:
        if self.pending:
            line, self.pending = self.pending, b""
            return line
        return self.stream.readline(MAX_HEADER_LINE)

    def _refuse(self, length: int) -> bytes:
        """Skip to the next frame's header (the announced bytes may never come) and hand the loop
        the notification that says so; b"" (the end of the session) when the input ends first."""
        carry = b""
        while True:
            piece = self.stream.readline(MAX_HEADER_LINE)
            if not piece:
                return b""
            seen = carry + piece
            at = seen.find(HEADER)
            if at >= 0:
                self.pending = seen[at:]
                if not self.pending.endswith(b"\n"):  # the header line goes on in the next piece
                    self.pending += self.stream.readline(MAX_HEADER_LINE)
                break
            carry = seen[-(len(HEADER) - 1) :]
        message = {"jsonrpc": "2.0", "method": REFUSED, "params": {"length": length, "limit": self.limit}}
        return json.dumps(message).encode()


class _Flag:
    set = True  # the read-ahead thread waits in a read of its input (nothing read is left to hand on)


class _Watched(io.RawIOBase):
    """The input's file descriptor, saying (``idle``) while a read of it waits for bytes."""

    def __init__(self, fd: int, idle: _Flag) -> None:
        super().__init__()
        self.fd, self.idle = fd, idle

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        self.idle.set = True
        try:
            data = os.read(self.fd, len(buffer))
        finally:
            self.idle.set = False
        buffer[: len(data)] = data
        return len(data)


def watch_parent(pid: int, poll: float = PARENT_POLL) -> None:
    """End this process once ``pid`` (the editor) is gone, even if it left our pipes open."""

    def watch() -> None:
        while _alive(pid):
            time.sleep(poll)
        print(f"dllint server: the editor (process {pid}) is gone: exiting", file=sys.stderr, flush=True)
        os._exit(1)  # LSP's code for an exit without shutdown; nothing is left to write or flush

    threading.Thread(target=watch, name="dllint-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # another user's process (or a pid no process can have: not watched)
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:  # a zombie still answers kill(0): it has ended
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
