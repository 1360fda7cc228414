"""The project's files: which they are (one walk of the root), each one's stat (the stat table
that ``reconcile`` compares) and bytes (an open editor buffer stands for its file), and what an
earlier run read from each of them (:mod:`dllint.project.records`, in a run with a cache). A
part of the project index with its own state and :meth:`ProjectFiles.forget`."""

from __future__ import annotations

import os
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dllint.files import Unreadable, read_bytes, read_with_stat
from dllint.project.base import MAX_PROJECT_FILES, SKIPPED_DIRS
from dllint.project.side_file import packed_ints, unpacked_ints
from dllint.project.sources import PROJECT_SUFFIXES

if TYPE_CHECKING:
    from dllint.project.records import FileRecords

# A folder changed this long before it was listed is trusted to be as listed while its mtime and
# inode stay: one changed later within the same tick of the file system's clock keeps its mtime.
RACY_NS = 2_000_000_000
Folder = list[Any]  # [mtime_ns (-1: list it again), inode, its file names, its folder names]


class ProjectFiles:
    def __init__(self, root: str) -> None:
        self.root = root
        self.buffers: dict[str, bytes] = {}  # open editor buffers, by path (the language server's)
        self.records: FileRecords | None = None  # kept between runs by a cache (ProjectIndex.use_records)
        self._paths: list[str] | None = None
        self._listed: frozenset[str] | None = None  # see listed
        self._stat_table: dict[str, list[int]] | None = None
        self._stats: dict[str, os.stat_result] = {}  # the stat each row of the table was taken from
        self._packed: dict[str, Any] | None = None  # the stat table packed (see packed_stat_table)
        # With records: each folder walked, as listed (what the records keep for the next run's walk).
        self.folders: dict[str, Folder] = {}

    def forget(self, path: str) -> None:
        """``path`` changed: the stat table is taken again, its record read again."""
        self._stat_table = None
        self._stats = {}
        if self.records is not None:
            self.records.forget(path)

    def relist(self) -> None:
        """A file appeared or went away: the project's files are listed again."""
        self._paths = None
        self._listed = None

    def listed(self, path: str) -> bool:
        """``path`` is one of :meth:`paths` (what is read of every file, its class headers, holds its text)."""
        if self._listed is None:
            self._listed = frozenset(self.paths())
        return path in self._listed

    def read(self, path: str) -> bytes | None:
        """``path``'s bytes (its open buffer's, where it has one); None when it cannot be read."""
        buffer = self.buffers.get(path)
        if buffer is not None:
            return buffer
        try:
            return read_bytes(path)  # a regular file, within max-file-size (dllint.files)
        except Unreadable:
            return None

    def read_with_stat(self, path: str) -> tuple[bytes, os.stat_result] | None:
        """``path``'s bytes on disk and its stat from before they were read (its buffer's are
        not: None, as when it cannot be read)."""
        if path in self.buffers:
            return None
        try:
            return read_with_stat(path)  # a regular file, within max-file-size (dllint.files)
        except Unreadable:
            return None

    def paths(self) -> list[str]:
        """The project's ``.py`` files and notebooks (hidden, virtual-environment and build folders skipped;
        at most MAX_PROJECT_FILES: a root that is a home directory must not stall a run). With
        records, a folder whose mtime and inode are those the records listed it at is not listed
        again (a file added, removed or renamed in it moves its mtime)."""
        if self._paths is None:
            known = (self.folders or self.records.folders()) if self.records is not None else None
            self.folders = {}
            files: list[str] = []
            todo = [self.root]
            while todo and len(files) < MAX_PROJECT_FILES:  # os.walk's order (folders sorted), at half its cost
                directory = todo.pop()
                names, dirs = _list(directory) if known is None else self._folder(directory, known)
                inside = directory if directory.endswith(os.sep) else directory + os.sep  # (os.path.join's, at a fifth of its cost)
                if names:
                    files += [inside + name for name in names]
                if dirs:
                    todo += sorted([inside + d for d in dirs if d[:1] != "." and d not in SKIPPED_DIRS], reverse=True)
            self._paths = sorted(files[:MAX_PROJECT_FILES])
        return self._paths

    def _folder(self, directory: str, known: dict[str, Folder]) -> tuple[list[str], list[str]]:
        """``directory``'s file and folder names: as ``known`` lists them while its mtime and
        inode are those, else listed now (and noted, with its mtime unless it changed within
        RACY_NS of now)."""
        try:
            st = os.stat(directory)
        except OSError:
            return [], []
        folder = known.get(directory)
        if folder is None or folder[0] != st.st_mtime_ns or folder[1] != st.st_ino:
            names, dirs = _list(directory)
            settled = time.time_ns() - st.st_mtime_ns > RACY_NS
            folder = [st.st_mtime_ns if settled else -1, st.st_ino, names, dirs]
        self.folders[directory] = folder
        return folder[2], folder[3]

    def stat_table(self) -> dict[str, list[int]]:
        """Each project file's stat (mtime, size, inode), taken once per run, before the files
        are read to answer "who names X" (never after: see ``ProjectIndex.remember_files``)."""
        if self._stat_table is None:
            table: dict[str, list[int]] = {}
            stats: dict[str, os.stat_result] = {}
            for path in self.paths():
                try:
                    st = stats[path] = os.stat(path)
                except OSError:
                    continue
                table[path] = [st.st_mtime_ns, st.st_size, st.st_ino]
            self._stat_table, self._stats = table, stats
            self._packed = None
        return self._stat_table

    def taken_stat(self, path: str) -> os.stat_result | None:
        """``path``'s stat as :meth:`stat_table` took it this run (None where it took none): the
        cache's lookups read it rather than stat each file a second time (4,853 stats, 20 ms, on
        the benchmark corpus)."""
        return self._stats.get(path)

    def packed_stat_table(self) -> dict[str, Any]:
        """:meth:`stat_table` as a cache keeps it (:func:`packed`), packed once per table."""
        table = self.stat_table()
        if self._packed is None:
            self._packed = packed(table)
        return self._packed

    @cached_property
    def own_roots(self) -> frozenset[str]:
        """Names dllint otherwise takes for outside packages (``timm``, ``accelerate``) that are
        packages or modules of this project, at its root or under ``src/``: linting timm's own
        repository, calls into ``timm.data`` are followed."""
        from dllint.facts.flow.targets import EXTERNAL_ROOTS

        found: set[str] = set()
        for base in (self.root, os.path.join(self.root, "src")):
            try:
                names = os.listdir(base)
            except OSError:
                continue
            for name in names:
                stem = name[:-3] if name.endswith(".py") else name
                if stem in EXTERNAL_ROOTS and (name.endswith(".py") or _holds_python(os.path.join(base, name))):
                    found.add(stem)
        return frozenset(found)


def packed(table: dict[str, list[int]]) -> dict[str, Any]:
    """A stat table as the cache keeps it (JSON): the paths joined by NUL (no path holds one),
    the stats packed (:func:`~dllint.project.side_file.packed_ints`). On the benchmark corpus
    (4,853 files) it loads in 0.3 ms and is written in 0.7, where a JSON object of paths to
    lists took 1.6 and 2.5 (a run after one file changed does both)."""
    return {"paths": "\0".join(table), "stats": packed_ints([value for stat in table.values() for value in stat])}


def moved_since(stored: Any, table: dict[str, list[int]]) -> list[str] | None:
    """The paths of ``table`` whose stat is not the one ``stored`` (:func:`packed`) holds for
    them, or that it does not hold; None when ``stored`` is no packed table."""
    if not isinstance(stored, dict) or not isinstance(stored.get("paths"), str):
        return None
    paths = stored["paths"].split("\0") if stored["paths"] else []
    stats = unpacked_ints(stored.get("stats"))
    if stats is None or len(stats) != 3 * len(paths):
        return None
    return moved_between(paths, stats, table)


def moved_between(paths: list[str], stats: list[int], table: dict[str, list[int]]) -> list[str]:
    """The paths of ``table`` whose stat is not the one ``stats`` (three numbers per path of
    ``paths``) holds for them, or that ``paths`` does not hold."""
    numbers = iter(stats)
    if paths == list(table):  # the same files (most runs): compared in order, three numbers each
        return [p for p, stat, m, s, i in zip(paths, table.values(), numbers, numbers, numbers) if stat != [m, s, i]]
    before = {p: [m, s, i] for p, m, s, i in zip(paths, numbers, numbers, numbers)}
    return [p for p, stat in table.items() if before.get(p) != stat]


def _list(directory: str) -> tuple[list[str], list[str]]:
    """``directory``'s project file names and its folder names, symbolic links to folders left
    out (never followed, as ``os.walk``). The type of each entry comes with the listing: no
    ``stat`` of each folder to ask whether it is a link (``os.walk`` makes one)."""
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError:
        return [], []
    files: list[str] = []
    dirs: list[str] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if not entry.is_symlink():
                dirs.append(entry.name)
        elif entry.name.endswith(PROJECT_SUFFIXES):
            files.append(entry.name)
    return files, dirs


def _holds_python(directory: str) -> bool:
    """A package: ``__init__.py``, or (a namespace package) ``.py`` files in it or one level down."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    if any(e.name.endswith(".py") and e.is_file() for e in entries):
        return True
    for entry in entries:
        if entry.is_dir() and not entry.name.startswith("."):
            try:
                if any(name.endswith(".py") for name in os.listdir(entry.path)):
                    return True
            except OSError:
                continue
    return False
