"""Replacing a file's content in one step: a new file beside it, then ``os.replace``.

Readers see the old content or the new, never a part; a run killed half-way leaves the file as
it was. The temporary file is created here rather than with ``tempfile.mkstemp``: importing
``tempfile`` (with ``shutil``, ``random`` and the compression modules) cost 6 ms, a twentieth of
a one-file run; ``O_EXCL`` gives what ``mkstemp`` does, a file no one else has (not even a
symlink planted under its name).

The new file keeps the old one's permission bits, owner and group (a root run fixing a mounted
repository must not hand a user's file to root); when the owner cannot be kept the write fails
and the file stays as it was. The signals dllint can catch (SIGINT, SIGTERM, SIGHUP) are held
back from the moment the temporary file exists until it is renamed or removed, so none of them
can leave it behind: they are delivered, with their usual effect, right after.
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from typing import Iterator


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True, follow_symlinks: bool = True) -> None:
    """Write ``data`` as ``path``'s content, keeping its permission bits, owner and group.
    ``follow_symlinks``: write through a symlink to its target (a file the user named); else a
    symlink at ``path`` is itself replaced, never its target (dllint's own files: the cache).
    ``durable``: on disk (fsync) before it replaces the old content."""
    target = os.path.realpath(path) if follow_symlinks else os.path.abspath(path)
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not follow_symlinks and not stat.S_ISREG(st.st_mode):
        st = None  # a link, a FIFO, ...: replaced by a new regular file, its own mode and owner
    with _signals_held():
        handle, temporary = _new_file_beside(target)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                if durable:
                    out.flush()
                    os.fsync(out.fileno())
            if st is not None:
                _keep_mode_and_owner(temporary, st)
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise


def _keep_mode_and_owner(temporary: str, st: os.stat_result) -> None:
    if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.chown(temporary, st.st_uid, st.st_gid)
        except PermissionError:
            raise PermissionError(f"cannot keep the file's owner and group ({st.st_uid}:{st.st_gid}); left unchanged") from None
    os.chmod(temporary, stat.S_IMODE(st.st_mode))  # after chown, which clears set-user-ID bits


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back SIGINT/SIGTERM/SIGHUP (POSIX, main thread or not): delivered on leaving.
    ``signal`` is imported here: its enums cost a check-only run ~1 ms for nothing."""
    import signal

    held = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]
    sigmask = getattr(signal, "pthread_sigmask", None)
    if sigmask is None or not held:  # pragma: no cover - Windows
        yield
        return
    old = sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        sigmask(signal.SIG_SETMASK, old)


def _new_file_beside(target: str) -> tuple[int, str]:
    directory, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1000):
        temporary = os.path.join(directory, f".{name}.{os.getpid()}-{attempt}.dllint-tmp")
        try:
            return os.open(temporary, flags, 0o600), temporary
        except FileExistsError:  # left by a run killed before its clean-up, or taken by another
            continue
    raise FileExistsError(f"no free temporary name beside {target}")
