"""Reading the files dllint did not write: one way, for sources, configs, bases, stdin and the cache.

Only regular files are read (a FIFO would block for ever, ``/dev/zero`` would never end), and
never more than a limit: the file is opened with ``O_NONBLOCK`` (opening a FIFO then returns at
once), ``fstat``-ed on the open descriptor, refused unless it is a regular file no larger than the
limit, and read with the limit enforced on the bytes too (a file that grows under the read). A
failure is :class:`Unreadable`, whose message is one line that names the reason.

The limit of files read without settings at hand (a config's ``_base_``, a YAML file followed from
``OmegaConf.load(PATH)``) is the run's ``max-file-size``, set once per process by the engine
(:func:`set_default_limit`).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Callable

_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024  # bytes; larger sources get one DL000 instead of a lint (the setting's default)
_default_limit = DEFAULT_MAX_FILE_SIZE


class Unreadable(Exception):
    """Why a file was not read, in words (``cannot read file: ...`` is the caller's prefix)."""

    def __init__(self, reason: str, size: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.size = size  # set when the file is larger than the limit


class TooLarge(Unreadable):
    """Over the limit: ``size`` bytes (at least; a stream is read only to the limit plus one byte)."""


def set_default_limit(limit: int) -> None:
    global _default_limit
    _default_limit = limit


def default_limit() -> int:
    return _default_limit


def reason_of(exc: OSError) -> str:
    """An ``OSError`` in the words a one-line message needs."""
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop (too many levels of symbolic links)"
    if exc.errno == errno.ENXIO:  # opening a Unix socket
        return "not a regular file (a socket)"
    return exc.strerror or str(exc)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "of another kind"


def open_regular(
    path: str | os.PathLike[str], *, follow_symlinks: bool = True, dir_fd: int | None = None
) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on a regular file (``path`` relative to ``dir_fd`` when
    given), and its stat; :class:`Unreadable` otherwise."""
    flags = _FLAGS if follow_symlinks else _FLAGS | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise Unreadable(reason_of(exc)) from None
    except ValueError:  # a path with a NUL byte, written in a config
        raise Unreadable("not a valid path (it holds a NUL byte)") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise Unreadable(reason_of(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Unreadable(f"not a regular file ({_kind(st.st_mode)})")
    return fd, st


def read_fd(fd: int, expected: int, limit: int) -> bytes:
    """All of a regular file's bytes, at most ``limit`` (:class:`TooLarge` past it)."""
    data = _read_bounded(lambda size: os.read(fd, size), min(expected, limit) + 1, limit)  # + 1: the read that says it ended
    if len(data) > limit:
        raise TooLarge("file too large", len(data))
    return data


def _read_bounded(read: Callable[[int], bytes], first: int, limit: int) -> bytes:
    """What ``read`` gives until it ends or ``limit`` plus one byte have come."""
    parts = []
    total = 0
    want = first
    while total <= limit:
        try:
            chunk = read(want)
        except OSError as exc:
            raise Unreadable(reason_of(exc)) from None
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        want = min(1 << 20, limit + 1 - total)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_with_stat(
    path: str | os.PathLike[str], limit: int | None = None, *, follow_symlinks: bool = True, dir_fd: int | None = None
) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and its stat from before the read; :class:`Unreadable` (or
    :class:`TooLarge`, decided on the stat before any byte is read) when it cannot be read."""
    limit = _default_limit if limit is None else limit
    fd, st = open_regular(path, follow_symlinks=follow_symlinks, dir_fd=dir_fd)
    try:
        if st.st_size > limit:
            raise TooLarge("file too large", st.st_size)
        return read_fd(fd, st.st_size, limit), st
    finally:
        os.close(fd)


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    return read_with_stat(path, limit)[0]


def read_text(path: str | os.PathLike[str], limit: int | None = None) -> str:
    """A regular file as UTF-8 text (``UnicodeDecodeError`` when it is not)."""
    return read_bytes(path, limit).decode("utf-8")


def read_stream(stream: BinaryIO, limit: int) -> bytes:
    """A stream (standard input) read to its end or to ``limit`` plus one byte, whichever is first:
    a result longer than ``limit`` says the stream is, without reading the rest (``- < /dev/zero``)."""
    return _read_bounded(stream.read, min(1 << 20, limit + 1), limit)
