"""Replacing a file's content: the cache's in one step, a fixed source's only if it is as read.

``write_atomic`` (the cache, and the base of a fix): a new file beside the old, then
``os.replace``. Readers see the old content or the new, never a part; a run killed half-way
leaves the file as it was. The temporary file is created here rather than with
``tempfile.mkstemp``: importing ``tempfile`` (with ``shutil``, ``random`` and the compression
modules) cost 6 ms, a twentieth of a one-file run; ``O_EXCL`` gives what ``mkstemp`` does, a
file no one else has (not even a symlink planted under its name). The new file keeps the old
one's permission bits, owner and group (a root run fixing a mounted repository must not hand a
user's file to root). The signals dllint can catch (SIGINT, SIGTERM, SIGHUP) are held back from
the moment the temporary file exists until it is renamed or removed, so none of them can leave
it behind: they are delivered, with their usual effect, right after.

``write_fixed`` (``--fix``): a fix was computed from the bytes dllint read, so the file is
written only if it still holds them. It is opened for writing (a file the user may not write is
not fixed, even by root when no write bit is set: mode 0444 means "leave me alone"), locked
(``flock``: two ``dllint --fix`` runs take turns), checked to be still the file at that path
and to hold, byte for byte (SHA-256), what was read; else :class:`Changed`, and it is left as
it is (an edit saved meanwhile, another run's fix). Then it is replaced as above with its
extended attributes copied too (ACLs, SELinux labels, ``user.*``), or, when the file has other
hard links or the new file cannot carry its owner or attributes, written in place, through the
descriptor already open: its inode, links, owner, mode and attributes stay as they were.
(ruff 0.17 writes every fixed file in place; run as root it rewrites a 0444 file.)
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from typing import Iterator


class Changed(OSError):
    """The file no longer holds what was read: not written."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} (an edit saved meanwhile, or another dllint --fix): left as it is; run dllint --fix again")


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, durable: bool = True, follow_symlinks: bool = True, dir_fd: int | None = None
) -> None:
    """Write ``data`` as ``path``'s content, keeping its permission bits, owner and group.
    ``follow_symlinks``: write through a symlink to its target (a file the user named); else a
    symlink at ``path`` is itself replaced, never its target (dllint's own files: the cache).
    ``dir_fd``: ``path`` is a name in that open directory (the cache's: never a path walked again).
    ``durable``: on disk (fsync) before it replaces the old content."""
    if dir_fd is not None:
        target = os.fspath(path)
    else:
        target = os.path.realpath(path) if follow_symlinks else os.path.abspath(path)
    try:
        st: os.stat_result | None = os.stat(target, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and not follow_symlinks and not stat.S_ISREG(st.st_mode):
        st = None  # a link, a FIFO, ...: replaced by a new regular file, its own mode and owner
    _replace(target, data, st, durable, dir_fd)


def _replace(target: str, data: bytes, st: os.stat_result | None, durable: bool, dir_fd: int | None, source: int | None = None) -> None:
    """``target``'s content replaced by a new file holding ``data`` with ``st``'s mode and owner
    (and, given the old file's descriptor ``source``, its extended attributes)."""
    with _signals_held():
        handle, temporary = _new_file_beside(target, dir_fd)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                if durable:
                    out.flush()
                    os.fsync(out.fileno())
                if st is not None:
                    _keep_mode_and_owner(out.fileno(), st)
                if source is not None:
                    _copy_attributes(source, out.fileno())
            if dir_fd is None:
                os.replace(temporary, target)
            else:
                os.replace(temporary, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=dir_fd)
            except OSError:
                pass
            raise


def write_fixed(path: str | os.PathLike[str], data: bytes, read_digest: str, limit: int) -> None:
    """Write a fixed file if it still holds the bytes whose SHA-256 is ``read_digest`` (at most
    ``limit`` bytes are read to tell); :class:`Changed` when it does not, ``OSError`` when it
    cannot be written. Follows a symlink to the file it names (the user named it)."""
    target = os.path.realpath(path)
    st = os.stat(target)
    if not stat.S_ISREG(st.st_mode):
        raise Changed("it is no longer a regular file")
    if not st.st_mode & 0o222:
        raise PermissionError(errno.EACCES, f"read-only (mode {stat.S_IMODE(st.st_mode):o}): left as it is")
    fd = os.open(target, os.O_RDWR | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _lock(fd)
        st = _unchanged(target, fd, read_digest, limit)
        if st.st_nlink > 1 or not _replace_keeping(target, data, st, fd):
            _write_in_place(fd, data)
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, the digest check remains
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # a file system without flock
        pass


def _unchanged(target: str, fd: int, read_digest: str, limit: int) -> os.stat_result:
    """The open file's stat, once it is known to be still at ``target`` and to hold what was read."""
    import hashlib

    from dllint.files import Unreadable, read_fd

    st = os.fstat(fd)
    try:
        now = os.stat(target)
    except FileNotFoundError:
        raise Changed("it was removed since dllint read it") from None
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):  # replaced meanwhile (an editor's save, another run's fix)
        raise Changed("it changed since dllint read it")
    try:
        current = read_fd(fd, st.st_size, limit)
    except Unreadable:  # grown past the limit
        raise Changed("it changed since dllint read it") from None
    if hashlib.sha256(current).hexdigest() != read_digest:
        raise Changed("it changed since dllint read it")
    return st


def _replace_keeping(target: str, data: bytes, st: os.stat_result, source: int) -> bool:
    """Replace ``target`` in one step, keeping its owner, mode and extended attributes; False
    (nothing changed) when the new file cannot keep them."""
    try:
        _replace(target, data, st, True, None, source)
    except _NotKept:
        return False
    return True


class _NotKept(OSError):
    """A new file cannot carry the old one's owner or an extended attribute."""


def _keep_mode_and_owner(fd: int, st: os.stat_result) -> None:
    if hasattr(os, "fchown") and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            raise _NotKept(errno.EPERM, f"cannot keep the file's owner and group ({st.st_uid}:{st.st_gid}); left unchanged") from None
    os.fchmod(fd, stat.S_IMODE(st.st_mode))  # after chown, which clears set-user-ID bits


def _copy_attributes(source: int, destination: int) -> None:
    """The extended attributes of one open file onto another (Linux); :class:`_NotKept` when one cannot be set."""
    if not hasattr(os, "listxattr"):  # pragma: no cover - macOS, Windows
        return
    try:
        names = os.listxattr(source)
    except OSError:  # a file system without them: nothing to keep
        return
    for name in names:
        try:
            os.setxattr(destination, name, os.getxattr(source, name))
        except OSError as exc:
            raise _NotKept(exc.errno, f"cannot keep the extended attribute {name}") from None


def _write_in_place(fd: int, data: bytes) -> None:
    """``data`` over the open file's content: its inode, links, owner, mode and attributes stay."""
    with _signals_held():
        view = memoryview(data)
        offset = 0
        while offset < len(data):
            offset += os.pwrite(fd, view[offset:], offset)
        os.ftruncate(fd, len(data))
        os.fsync(fd)


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


def _new_file_beside(target: str, dir_fd: int | None = None) -> tuple[int, str]:
    directory, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1000):
        temporary = os.path.join(directory, f".{name}.{os.getpid()}-{attempt}.dllint-tmp")
        try:
            return os.open(temporary, flags, 0o600, dir_fd=dir_fd), temporary
        except FileExistsError:  # left by a run killed before its clean-up, or taken by another
            continue
    raise FileExistsError(f"no free temporary name beside {target}")
