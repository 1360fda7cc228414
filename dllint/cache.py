"""The result cache: findings per file, reused while the file, the settings and dllint stay the same.

Layout: ``<cache-dir>/<version>/<key>.json``, one file per run key (dllint's
version, the effective settings, the enabled rules and the source of every
rule module's code). It maps each absolute source path to its last ``stat``
(mtime and ctime in ns, size, inode), the SHA-256 of its content, its findings
and its ``deps``.

A lookup first compares the ``stat`` (no read, no hash: the shortcut ruff
takes, plus ctime and inode, which a ``cp -p``, ``touch -r`` or archive
extraction that restores the mtime of an edited file does change); when any
of them moved (a ``git checkout``, a ``touch``) the content is hashed and
compared, so an unchanged file is not re-linted and a changed one never gets
stale findings: the cache is keyed by content. Measured on 4,856 files
(1.86 M lines): one JSON file per run key loads in ~40 ms, where one small file
per source file costs ~5,000 opens.

The project index's API (dllint.project):

- ``deps``: ``store_fingerprint(path, fingerprint, findings, deps)`` keeps, with
  a file's findings, what its lint read elsewhere (a :class:`dllint.deps.Deps`,
  ``FileResult.deps``; this module alone writes it as JSON: :func:`encode_deps`).
  ``lookup(path, deps_valid=check)`` then returns the findings only if
  ``check(deps)`` is true, i.e. every dep's current content digest is still the
  stored one; an entry with deps and no ``deps_valid`` is a miss (never trusted
  unchecked). ``lookup_entry(path, deps_valid)`` returns the findings and deps.
- run-level facts: ``meta(key)``/``put_meta(key, value)`` (the project files'
  stat as the last run saw them), ``entries_deps()`` and ``drop(path)``, which
  ``ProjectIndex.reconcile`` uses to drop findings that asked "who calls X"
  when a file changed since names X (a dropped entry stays dropped on merge).

The cache is never trusted blindly: a file that is not valid JSON, or whose
structure or any entry is not what this module writes, is dropped (the run
lints as if cold and writes it afresh). Writes go to a temporary file in the
same directory and are moved into place with ``os.replace``, so concurrent
runs see either the old cache or a new one, never a torn file; before
writing, entries another run stored meanwhile are merged back in.

The cache keeps findings, never code: a finding's fix is stored as its applicability and its
one-line message (what the report shows), not its edit (``NotKept``), so ``--fix`` lints a file
again and fixes from the text it writes: nothing read from the cache ever reaches a source file.

The cache is used only when it is the user's own. A repository may ship a hostile
``.dllint_cache`` (a symlink to a directory another user controls, a planted entry): the cache
directory and its version directory are opened one step at a time without following a symlink
(``O_NOFOLLOW``, then every access relative to the open directory), and each of them and the
cache file must be owned by this process's user and not writable by group or others. Otherwise
the cache is neither read nor written and the run says so in one line (``Cache.untrusted``).
Within a trusted directory a regular file only is read (no FIFO, at most ``MAX_CACHE_SIZE``), and
nothing is written through a symlink (the cache file, its lock, ``.gitignore``): a planted link
is replaced, never is its target written.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NamedTuple

from dllint import __version__
from dllint.atomic import write_atomic
from dllint.config import Settings
from dllint.deps import CallersDep, ConfigDep, ConfigFileDep, Deps, LoaderClassesDep, SummaryDep
from dllint.files import Unreadable, open_regular, read_bytes, read_fd, read_with_stat
from dllint.findings import ConfigKey, Finding, Fix, NotKept

DEFAULT_CACHE_DIR = ".dllint_cache"
FORMAT = 4  # bump when the layout of an entry changes
_SCALARS = (str, int, float, bool, type(None))
# A cache file larger than this is dropped unread (a file planted to exhaust memory); a cache of
# 100,000 files stays well under it.
MAX_CACHE_SIZE = 1 << 30


class Uncacheable(Exception):
    """A finding carries a value the cache cannot store exactly; the file is simply re-linted next time."""


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_key(settings: Settings, rule_codes: tuple[str, ...]) -> str:
    """What besides the file's content decides its findings."""
    digest = hashlib.sha256()
    for part in (f"format={FORMAT}", f"version={__version__}", settings.cache_key(), ",".join(rule_codes)):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(_code_fingerprint().encode())
    return digest.hexdigest()[:24]


_CODE_FINGERPRINT: str | None = None


def _code_fingerprint() -> str:
    """(name, size, mtime) of dllint's own modules: a development checkout changes without a version bump."""
    global _CODE_FINGERPRINT
    if _CODE_FINGERPRINT is None:
        parts = code_parts(os.path.dirname(os.path.realpath(__file__)))
        _CODE_FINGERPRINT = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return _CODE_FINGERPRINT


def code_parts(root: str | os.PathLike[str]) -> list[str]:
    """``path:size:mtime`` of every module under ``root``, subpackages included (``facts/flow/``
    writes the summaries a cached result rests on; listing a fixed set of folders missed it)."""
    parts = []
    top = os.fspath(root)
    for directory, subdirectories, files in os.walk(top):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        inside = os.path.join(directory[len(top) + 1 :], "") if directory != top else ""  # (os.path.relpath's, at a fifth of its cost)
        for name in sorted(files):
            if name.endswith(".py"):
                try:
                    st = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                parts.append(f"{inside}{name}:{st.st_size}:{st.st_mtime_ns}")
    return parts


# -- findings <-> JSON ------------------------------------------------------------
def _encode_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode_value(v) for v in value]
    if isinstance(value, _SCALARS) and not (isinstance(value, float) and value != value):
        return value
    raise Uncacheable(repr(value))  # lists, dicts, objects: not round-tripped exactly


def _decode_value(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode_value(v) for v in value)
    if isinstance(value, _SCALARS):
        return value
    raise ValueError("bad value")


def encode_finding(finding: Finding) -> list[Any]:
    if finding.probe is not None or finding.source != "static":
        raise Uncacheable("runtime finding")
    fix = None if finding.fix is None else [finding.fix.applicability, finding.fix.message]  # never the edit
    row = [
        finding.line,
        finding.column,
        finding.end_line,
        finding.end_column,
        finding.code,
        finding.name,
        finding.message,
        fix,
        finding.cell,
    ]
    if finding.config_keys:  # the config keys its values came from (dllint.project.config_values)
        row.append([key.to_json() for key in finding.config_keys])
    return row


def decode_finding(path: str, row: Any) -> Finding:
    """A finding from its stored row; ValueError when the row is not what ``encode_finding`` writes."""
    if not isinstance(row, list) or len(row) not in (9, 10):
        raise ValueError("bad finding row")
    line, column, end_line, end_column, code, name, message, fix, cell = row[:9]
    keys = row[9] if len(row) == 10 else []
    if not isinstance(keys, list):
        raise ValueError("bad config keys")
    if not all(type(v) is int for v in (line, column, end_line, end_column)):
        raise ValueError("bad position")
    if not all(isinstance(v, str) for v in (code, name, message)):
        raise ValueError("bad text")
    if cell is not None and type(cell) is not int:
        raise ValueError("bad cell")
    decoded_fix = None if fix is None else _decode_fix(fix)
    finding = Finding(path, line, column, end_line, end_column, code, name, message, decoded_fix, cell)
    finding.config_keys = tuple(ConfigKey.from_json(key) for key in keys)
    return finding


def _decode_fix(row: Any) -> Fix:
    if not (isinstance(row, list) and len(row) == 2 and row[0] in ("safe", "unsafe") and isinstance(row[1], str)):
        raise ValueError("bad fix")
    return Fix(row[0], row[1], NotKept())


class Untrusted(Exception):
    """The cache directory is not this user's own (the message says which part and why)."""


_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _not_own(st: os.stat_result) -> str | None:
    """Why a file or directory with this stat is not this user's own; None when it is."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows: no owners to compare
        return None
    if st.st_uid != os.geteuid():
        return f"owned by user {st.st_uid}, not by this user ({os.geteuid()})"
    if st.st_mode & 0o022:
        return f"writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _open_own_directory(name: str, dir_fd: int | None, shown: str, create: bool) -> int:
    """A descriptor on directory ``name`` (relative to ``dir_fd``), opened without following a
    symlink and checked to be this user's own; created (0o755) first with ``create``.
    :class:`Untrusted` when it is not; ``FileNotFoundError`` when it is missing."""
    if create:
        try:
            os.mkdir(name, 0o755, dir_fd=dir_fd)
        except FileExistsError:
            pass
    try:
        fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if os.path.islink(shown):
            raise Untrusted(f"{shown}: a symbolic link") from None
        raise Untrusted(f"{shown}: {exc.strerror or exc}") from None
    problem = _not_own(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        raise Untrusted(f"{shown}: {problem}")
    return fd


class Entry(NamedTuple):
    mtime_ns: int
    size: int
    ctime_ns: int
    inode: int
    digest: str
    findings: list[Any]  # encoded rows; decoded only on a hit
    deps: Deps  # what this file's lint read elsewhere
    stored: list[Any] | None = None  # the row it was read from: written back as it was (a save rewrites every entry)

    def row(self) -> list[Any]:
        if self.stored is not None:
            return self.stored
        return [self.mtime_ns, self.size, self.ctime_ns, self.inode, self.digest, self.findings, encode_deps(self.deps)]

    @classmethod
    def from_row(cls, value: Any) -> Entry | None:
        if not (isinstance(value, list) and len(value) == 7):
            return None
        mtime_ns, size, ctime_ns, inode, digest, findings, deps = value
        # (written out rather than with all() over a generator: this runs for every entry of a warm run)
        if not (type(mtime_ns) is int and type(size) is int and type(ctime_ns) is int and type(inode) is int):
            return None
        if type(digest) is not str or len(digest) != 64 or type(findings) is not list or type(deps) is not dict:
            return None
        if deps and not all(type(v) is str for v in deps.values()):
            return None
        return cls(mtime_ns, size, ctime_ns, inode, digest, findings, decode_deps(deps) if deps else Deps(), value)


# -- deps as stored: ``{key: value}`` -------------------------------------------------------
# A file read is its path (a summary: its content digest; a config: CONFIG_DIGEST + its digest;
# a config's base read whole: CONFIG_FILE); a question is a key no path starts with (a NUL).
MENTIONS = "\0mentions:"  # + needle (+ NUL + gate): a CallersDep, with the value ""
LOADER_CLASSES = "\0loader-classes"  # a LoaderClassesDep, with its digest
CONFIG_DIGEST = "config:"
CONFIG_FILE = "config-file"


def encode_deps(deps: Deps) -> dict[str, str]:
    stored: dict[str, str] = {}
    for dependency in deps:
        if isinstance(dependency, CallersDep):
            gate = "\0" + dependency.gate.decode() if dependency.gate else ""
            stored[MENTIONS + dependency.needle.decode("utf-8", "surrogateescape") + gate] = ""
        elif isinstance(dependency, LoaderClassesDep):
            stored[LOADER_CLASSES] = dependency.digest
        elif isinstance(dependency, ConfigDep):
            stored[dependency.path] = CONFIG_DIGEST + dependency.digest
        elif isinstance(dependency, ConfigFileDep):
            stored[dependency.path] = CONFIG_FILE
        else:
            stored[dependency.path] = dependency.digest
    return stored


def decode_deps(stored: dict[str, str]) -> Deps:
    deps = Deps()
    for key, value in stored.items():
        if key == LOADER_CLASSES:
            deps.add(LoaderClassesDep(value))
        elif key.startswith(MENTIONS):
            needle, _, gate = key[len(MENTIONS):].partition("\0")
            deps.add(CallersDep(needle.encode("utf-8", "surrogateescape"), gate.encode() or None))
        elif value.startswith(CONFIG_DIGEST):
            deps.add(ConfigDep(key, value[len(CONFIG_DIGEST):]))
        elif value == CONFIG_FILE:
            deps.add(ConfigFileDep(key))
        else:
            deps.add(SummaryDep(key, value))
    return deps


class Hit(NamedTuple):
    findings: list[Finding]
    deps: Deps


DepsCheck = Callable[[Deps], bool]
TakenStat = Callable[[str], "os.stat_result | None"]


class CacheStats:
    """What a run's lookups found (counters; a class rather than a dataclass: see :mod:`dllint.deps`)."""

    __slots__ = ("hits", "rehashed_hits", "misses", "uncacheable", "discarded")

    def __init__(self) -> None:
        self.hits = 0  # by stat
        self.rehashed_hits = 0  # stat moved, content unchanged
        self.misses = 0
        self.uncacheable = 0
        self.discarded = False  # the cache file was unreadable or malformed and was dropped


class Cache:
    """Findings of one run key, loaded once per run and written once at its end."""

    def __init__(self, directory: str | os.PathLike[str], settings: Settings, rule_codes: tuple[str, ...]) -> None:
        # Paths as strings (pathlib is not imported by a run: 2 ms), "." and ".." parts folded.
        self.directory = os.path.normpath(os.fspath(directory))
        self.key = run_key(settings, rule_codes)
        self._name = f"{self.key}.json"
        self.path = os.path.join(self.directory, __version__, self._name)
        self.max_file_size = settings.max_file_size  # what a source may be to be hashed
        self.stats = CacheStats()
        self._entries: dict[str, Entry] = {}
        self._updated: dict[str, Entry] = {}
        self._meta: dict[str, Any] = {}  # run-level facts (the project's stat table), merged on save
        self._new_meta: dict[str, Any] = {}
        self._dropped: set[str] = set()
        self._loaded = False
        self._loaded_stat: tuple[int, ...] | None = None  # the cache file as loaded (see _merge_and_replace)
        self.untrusted: str | None = None  # why the cache is not used at all (said once, in one line)
        self._cwd: str | None = None  # see _key

    def _key(self, path: str) -> str:
        """``os.path.abspath(path)``, the working directory asked once (a cache serves one run):
        the getcwd call of each of 4,853 lookups cost a warm run 8 ms."""
        if self._cwd is None:
            self._cwd = os.getcwd()
        return os.path.normpath(os.path.join(self._cwd, path))

    # -- reading ------------------------------------------------------------
    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            with self._version_directory(create=False) as (_, directory):
                loaded = self._read(directory)
                if loaded is None:
                    self.stats.discarded = os.path.lexists(self.path)
        except FileNotFoundError:  # no cache yet
            loaded = None
        except Untrusted as exc:
            self.untrusted = f"{exc}: the cache is not used (remove it, or give --cache-dir)"
            loaded = None
        self._entries, self._meta = loaded or ({}, {})

    @contextmanager
    def _version_directory(self, create: bool) -> Iterator[tuple[int, int]]:
        """Descriptors on ``<directory>`` and ``<directory>/<version>``, each this user's own
        (:func:`_open_own_directory`)."""
        above, name = os.path.split(self.directory)
        above = above or os.curdir
        if create:
            os.makedirs(above, exist_ok=True)  # where the user put it: links allowed
        parent = os.open(above, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            top = _open_own_directory(name, parent, self.directory, create)
        finally:
            os.close(parent)
        try:
            version = _open_own_directory(__version__, top, os.path.dirname(self.path), create)
            try:
                yield top, version
            finally:
                os.close(version)
        finally:
            os.close(top)

    def _read(self, directory: int) -> tuple[dict[str, Entry], dict[str, Any]] | None:
        """The entries and meta of the cache file in ``directory``; None when it is missing,
        unreadable, not this user's own or malformed in any way."""
        try:
            data, st = read_with_stat(self._name, MAX_CACHE_SIZE, follow_symlinks=False, dir_fd=directory)
            if _not_own(st) is not None:
                return None
            self._loaded_stat = _identity(st)
            raw = json.loads(data)
        except (Unreadable, ValueError, RecursionError):
            return None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("files"), dict):
            return None
        meta = raw.get("meta", {})
        if not isinstance(meta, dict):
            return None
        entries: dict[str, Entry] = {}
        for source, value in raw["files"].items():
            entry = Entry.from_row(value)
            if entry is None:
                return None
            entries[source] = entry
        return entries, meta

    def lookup(self, path: str, deps_valid: DepsCheck | None = None) -> list[Finding] | None:
        """The cached findings of ``path`` if it has not changed since they were stored (and,
        if they depend on other files, ``deps_valid(deps)`` says those are unchanged); else None."""
        hit = self.lookup_entry(path, deps_valid)
        return hit.findings if hit is not None else None

    def lookup_entry(self, path: str, deps_valid: DepsCheck | None = None, taken_stat: TakenStat | None = None) -> Hit | None:
        """:meth:`lookup`, with the entry's ``deps``; ``taken_stat``: the stat of an absolute path
        as this run already took it (:meth:`dllint.project.files.ProjectFiles.taken_stat`), if it did."""
        self._load()
        key = self._key(path)
        entry = self._updated.get(key) or self._entries.get(key)
        if entry is None:
            self.stats.misses += 1
            return None
        if entry.deps and (deps_valid is None or not deps_valid(entry.deps)):
            self.stats.misses += 1
            return None
        st = taken_stat(key) if taken_stat is not None else None
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                self.stats.misses += 1
                return None
        if (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino) != (entry.mtime_ns, entry.size, entry.ctime_ns, entry.inode):
            try:
                digest = content_hash(read_bytes(path, self.max_file_size))
            except Unreadable:
                self.stats.misses += 1
                return None
            if digest != entry.digest:
                self.stats.misses += 1
                return None
            # Same content under a new stat: remember the new stat so the next run skips the hash.
            entry = Entry(st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino, entry.digest, entry.findings, entry.deps)
            self._updated[key] = entry
            self.stats.rehashed_hits += 1
        else:
            self.stats.hits += 1
        try:
            return Hit([decode_finding(path, row) for row in entry.findings], entry.deps.copy())
        except (ValueError, TypeError):
            self.stats.misses += 1
            self.stats.hits -= 1
            self._entries.pop(key, None)
            self._updated.pop(key, None)
            return None

    # -- run-level facts and invalidation -------------------------------------
    def meta(self, key: str) -> Any:
        self._load()
        return self._new_meta.get(key, self._meta.get(key))

    def put_meta(self, key: str, value: Any) -> None:
        self._load()
        self._new_meta[key] = value

    def entries_deps(self) -> Iterator[tuple[str, Deps]]:
        """(path, deps) of every stored entry that has deps."""
        self._load()
        for path, entry in {**self._entries, **self._updated}.items():
            if entry.deps:
                yield path, entry.deps

    def drop(self, path: str) -> None:
        """Forget ``path``'s findings (something they depend on changed); kept dropped on save."""
        key = self._key(path)
        self._entries.pop(key, None)
        self._updated.pop(key, None)
        self._dropped.add(key)

    # -- writing ------------------------------------------------------------
    def store(
        self,
        path: str,
        mtime_ns: int,
        size: int,
        digest: str,
        findings: list[Finding],
        *,
        ctime_ns: int = -1,
        inode: int = -1,
        deps: Deps | None = None,
    ) -> None:
        """Remember ``findings`` for ``path`` as it was when stat-ed (before it was read).
        (Without ``ctime_ns``/``inode``, the next lookup hashes the file once to confirm it.)"""
        try:
            rows = [encode_finding(f) for f in findings]
        except Uncacheable:
            self.stats.uncacheable += 1
            return
        self._updated[self._key(path)] = Entry(mtime_ns, size, ctime_ns, inode, digest, rows, deps.copy() if deps else Deps())

    def store_fingerprint(self, path: str, fingerprint: Any, findings: list[Finding], deps: Deps | None = None) -> None:
        """:meth:`store` with a :class:`dllint.per_file.Fingerprint` (mtime_ns, size, ctime_ns, inode, digest)."""
        mtime_ns, size, ctime_ns, inode, digest = fingerprint
        self.store(path, mtime_ns, size, digest, findings, ctime_ns=ctime_ns, inode=inode, deps=deps)

    # -- side files: what the project index keeps between runs -------------------------------
    def side(self, name: str) -> Any:
        """The JSON value of the side file ``name`` beside the cache file; None when it is
        missing, unreadable, not this user's own or not JSON. The caller checks the value's shape
        (a side file is trusted no more than the cache)."""
        data = self.side_bytes(name)
        try:
            return None if data is None else json.loads(data)
        except (ValueError, RecursionError):
            return None

    def side_bytes(self, name: str) -> bytes | None:
        """The bytes of the side file ``name`` beside the cache file; None when it is missing,
        unreadable or not this user's own."""
        if self.untrusted is not None:
            return None
        try:
            with self._version_directory(create=False) as (_, directory):
                data, st = read_with_stat(name, MAX_CACHE_SIZE, follow_symlinks=False, dir_fd=directory)
                return data if _not_own(st) is None else None
        except (OSError, Untrusted, Unreadable):
            return None

    def side_reader(self, name: str) -> SideReader | None:
        """The side file ``name`` beside the cache file, open to be read by parts (the project
        index's records of its files: :mod:`dllint.project.records`); None when it is missing,
        unreadable, larger than MAX_CACHE_SIZE or not this user's own."""
        if self.untrusted is not None:
            return None
        try:
            with self._version_directory(create=False) as (_, directory):
                fd, st = open_regular(name, follow_symlinks=False, dir_fd=directory)
        except (OSError, Untrusted, Unreadable):
            return None
        if _not_own(st) is not None or st.st_size > MAX_CACHE_SIZE:
            os.close(fd)
            return None
        return SideReader(fd, st.st_size)

    def put_side(self, name: str, value: Any) -> None:
        """Write the side file ``name`` as JSON (see :meth:`put_side_bytes`)."""
        self.put_side_bytes(name, json.dumps(value, separators=(",", ":")).encode())

    def put_side_bytes(self, name: str, data: bytes) -> None:
        """Write the side file ``name`` (atomically, never through a symlink). Never raises."""
        if self.untrusted is not None:
            return
        try:
            with self._version_directory(create=True) as (top, directory):
                _ensure_gitignore(top)
                write_atomic(name, data, durable=False, follow_symlinks=False, dir_fd=directory)
        except (OSError, Untrusted):
            pass  # only slower next time

    def save(self) -> None:
        """Write the cache if this run changed it; merge what another run wrote meanwhile. Never raises."""
        if self.untrusted is not None:
            return
        if not self._updated and not self._new_meta and not self._dropped and not self.stats.discarded:
            return
        try:
            with self._version_directory(create=True) as (top, directory):
                _ensure_gitignore(top)
                with _write_lock(f"{self.key}.lock", directory):
                    self._merge_and_replace(directory)
        except Untrusted as exc:  # made not this user's own since it was read: not written
            self.untrusted = f"{exc}: the cache is not used (remove it, or give --cache-dir)"
        except OSError:
            pass  # a read-only tree or a full disk: the run's findings are still right, only uncached
        self._entries.update(self._updated)
        self._updated = {}
        self._meta.update(self._new_meta)
        self._new_meta = {}
        self._dropped = set()

    def _merge_and_replace(self, directory: int) -> None:
        # What is on disk now is newer than what this run loaded; what this run linted is newest.
        # The file this run loaded, still there (no run wrote one since: each write is a new
        # file moved into place): nothing to merge, and the megabytes are not decoded again.
        loaded, self._loaded_stat = self._loaded_stat, None
        try:
            unchanged = loaded is not None and _identity(os.stat(self._name, dir_fd=directory, follow_symlinks=False)) == loaded
        except OSError:
            unchanged = False
        on_disk_entries, on_disk_meta = ({}, {}) if unchanged else self._read(directory) or ({}, {})
        merged = {**self._entries, **on_disk_entries, **self._updated}
        for key in self._dropped - self._updated.keys():
            merged.pop(key, None)
        payload = {
            "format": FORMAT,
            "files": {source: e.row() for source, e in sorted(merged.items())},
            "meta": {**self._meta, **on_disk_meta, **self._new_meta},
        }
        data = json.dumps(payload, separators=(",", ":")).encode()
        # A symlink planted at the cache's path is replaced, never written through: a cache file
        # never lands outside the cache directory. A cache: lost is only slower (not durable).
        write_atomic(self._name, data, durable=False, follow_symlinks=False, dir_fd=directory)
        if unchanged:  # what is on disk now is this run's view: a later save of it need not read it back
            self._loaded_stat = _identity(os.stat(self._name, dir_fd=directory, follow_symlinks=False))


class SideReader:
    """A side file open for reading by offset: a run reads the parts of the project's records
    its questions need (on the benchmark corpus 1.5 of 7.5 MB; reading all of it cost 3 ms),
    and every part from the file it opened, whatever replaced it since (each write is a new file
    moved into place). ``read`` gives None where the file no longer holds the part (truncated
    in place by another program). The descriptor is closed with the reader."""

    def __init__(self, fd: int, size: int) -> None:
        self.size = size
        self._fd: int | None = fd
        self._data: bytes | None = None
        if not hasattr(os, "pread"):  # pragma: no cover - Windows: read whole, once
            try:
                self._data = read_fd(fd, size, MAX_CACHE_SIZE)
            except Unreadable:
                self._data = b""
            self.close()

    def read(self, start: int, end: int) -> bytes | None:
        """Bytes ``start`` to ``end`` of the file; None when it does not hold them all."""
        if not 0 <= start <= end <= self.size:
            return None
        if self._data is not None:  # pragma: no cover - Windows
            part = self._data[start:end]
            return part if len(part) == end - start else None
        if self._fd is None:
            return None
        parts: list[bytes] = []
        at = start
        try:
            while at < end:
                chunk = os.pread(self._fd, end - at, at)
                if not chunk:
                    return None
                parts.append(chunk)
                at += len(chunk)
        except OSError:
            return None
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What tells one cache file from another written later in its place."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@contextmanager
def _write_lock(name: str, directory: int) -> Iterator[None]:
    """Serialise read-merge-write between concurrent runs (POSIX); readers never wait: os.replace is atomic.

    Without the lock (Windows, or a file system without ``flock``) concurrent writers can only lose each
    other's new entries, which costs a re-lint, never a wrong finding."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    # Not through a symlink, and never blocking on a FIFO planted under the lock's name.
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(name, flags, 0o644, dir_fd=directory)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{name} is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)


def _ensure_gitignore(directory: int) -> None:
    """Create the cache's ``.gitignore`` unless something (even a dangling symlink) is there:
    ``O_EXCL`` never follows a link, so dllint never creates a file outside its directory."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(".gitignore", flags, 0o644, dir_fd=directory)
    except OSError:
        return
    try:
        os.write(fd, b"# Created by dllint automatically.\n*\n")
    except OSError:
        pass
    finally:
        os.close(fd)
