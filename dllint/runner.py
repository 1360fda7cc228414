"""Running the linter over many files: the cache first, then a process pool for what is left.

Each file is linted independently, so the work splits per file. What shapes
this module, measured on 4,856 files (1.86 M lines) of PyTorch packages on
2 cores:

- Most files never reach the parser (the engine's byte prefilter), so a task
  is a *chunk* of files: one pickled round trip per file would cost more than
  the prefilter itself. Files are sorted largest first before chunking, so a
  big file does not start last and leave the other workers idle.
- Workers are started once and build their :class:`~dllint.engine.Linter`
  once (the initializer), not per chunk.
- A run with little to lint (a warm cache with one changed file, a handful of
  paths) stays in-process: starting workers would cost more than it saves.
- Results come back in the order of ``paths``, whatever the order the workers
  finish in, so output never depends on ``--jobs``.

Each file is read once (:func:`dllint.per_file.read_file`): the bytes that are
hashed for the cache are the bytes linted, through :mod:`dllint.per_file`, the
same functions as an in-process run, in every mode: ``--fix`` runs here too,
with the same pool and cache, and a file whose cached findings hold no fix to
apply is neither read nor parsed.

``multiprocessing`` and ``concurrent.futures`` are imported only when a pool is
started: a run over a few files (pre-commit's) never pays for them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from dllint.config import Settings
from dllint.engine import FileResult, Linter
from dllint.findings import Finding
from dllint.per_file import FileOutcome, Fingerprint, check, fingerprint, fix, read_file, wants_fix
from dllint.source import unreadable

if TYPE_CHECKING:
    import multiprocessing.context

    from dllint.cache import Cache

# Below this many files (or bytes) to lint, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 8
MIN_BYTES_FOR_POOL = 256 * 1024
CHUNKS_PER_JOB = 8  # enough tasks to balance uneven files, few enough that IPC stays small
MAX_CHUNK_FILES = 128

Progress = Callable[[int, int], None]  # (files done, files total)


@dataclass(frozen=True)
class Task:
    """What to do with each file: check it, or fix it (``fix``), allowing unsafe fixes (``unsafe``)."""

    fix: bool = False
    unsafe: bool = False


CHECK = Task()


# Measured on the benchmark corpus on 2 cores (which behave like SMT siblings), with other
# work on the machine: a pool of 2 never beat one process in wall time (torchgeo 2.5 MB,
# timm+monai 13 MB, the whole 4,856 files), used 10-20% more CPU and twice the memory.
POOL_MIN_CORES = 3


def usable_cores() -> int:
    """The cores this process may run on (a container's or ``taskset``'s limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def default_jobs() -> int:
    """Worker processes when ``--jobs`` is not given: one process on up to 2 cores, else one per core."""
    cores = usable_cores()
    return cores if cores >= POOL_MIN_CORES else 1


def project_index(settings: Settings, root: str | None = None, store: Any = None) -> Any:
    """The project index files are linted against (``facts.project``); built once per process.
    None: each file alone (no project root). ``store``: where summaries are kept (the cache)."""
    if root is None:
        return None
    from dllint.project import ProjectIndex

    return ProjectIndex(root, settings, store)


# -- one file ---------------------------------------------------------------------
def process(
    path: str,
    linter: Linter,
    task: Task,
    want_fingerprint: bool,
    index: Any = None,
    cached: list[Finding] | None = None,
) -> tuple[FileOutcome, Fingerprint | None]:
    """Read, lint (or fix) one file; with ``want_fingerprint`` also its :class:`Fingerprint`."""
    data, st = read_file(path, linter.settings.max_file_size, want_fingerprint)
    if isinstance(data, Finding):
        return FileOutcome(path, linter.filter_findings(path, "", [data])), None
    stamp = fingerprint(st, data) if st is not None else None
    project = index.view(path) if index is not None else None
    try:
        if task.fix:
            outcome = fix(linter, path, data, task.unsafe, project, cached)
        else:
            outcome = check(linter, path, data, project)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the run (errors are values)
        outcome = FileOutcome(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])
    return outcome, stamp


# -- worker processes ------------------------------------------------------------------
_WORKER_LINTER: Linter | None = None
_WORKER_INDEX: Any = None
# The parent's cache, seen by forked workers: they read its stored summaries (what they
# summarize themselves stays theirs; the parent stores summaries it computes).
_PARENT_CACHE: Any = None


def _init_worker(settings: Settings, root: str | None = None) -> None:
    global _WORKER_LINTER, _WORKER_INDEX
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the pool
    _WORKER_LINTER = Linter(settings)
    _WORKER_INDEX = project_index(settings, root, _ReadOnly(_PARENT_CACHE) if _PARENT_CACHE is not None else None)


class _ReadOnly:
    """Summaries from the parent's cache; a worker's own stay in its memory."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.new: dict[str, Any] = {}

    def get_summary(self, digest: str) -> Any:
        return self.new.get(digest) or self.cache.get_summary(digest)

    def put_summary(self, digest: str, value: Any) -> None:
        self.new[digest] = value


def _run_chunk(
    chunk: list[tuple[int, str, list[Finding] | None]], task: Task, want_fingerprint: bool
) -> list[tuple[int, FileOutcome, Fingerprint | None]]:
    assert _WORKER_LINTER is not None
    out = []
    for index, path, cached in chunk:
        outcome, stamp = process(path, _WORKER_LINTER, task, want_fingerprint, _WORKER_INDEX, cached)
        out.append((index, outcome, stamp))
    return out


Item = tuple[int, str, "list[Finding] | None"]  # (position in paths, path, cached findings)


def _chunks(items: list[Item], jobs: int) -> list[list[Item]]:
    """Largest files first, cut into chunks of about equal bytes (at least one file each)."""
    sized = []
    for item in items:
        try:
            size = os.stat(item[1]).st_size
        except OSError:
            size = 0
        sized.append((size, item))
    sized.sort(key=lambda t: (-t[0], t[1][0]))
    total = sum(s for s, _ in sized) or 1
    budget = max(total // (jobs * CHUNKS_PER_JOB), 1)
    chunks: list[list[Item]] = []
    current: list[Item] = []
    current_bytes = 0
    for size, item in sized:
        current.append(item)
        current_bytes += size
        if current_bytes >= budget or len(current) >= MAX_CHUNK_FILES:
            chunks.append(current)
            current, current_bytes = [], 0
    if current:
        chunks.append(current)
    return chunks


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork starts a worker in ~1 ms with dllint already imported; elsewhere (macOS, Windows) the
    # platform default (spawn) is the only safe choice.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _worth_a_pool(items: list[Item], jobs: int) -> bool:
    if jobs <= 1 or len(items) < MIN_FILES_FOR_POOL:
        return False
    total = 0
    for item in items:
        try:
            total += os.stat(item[1]).st_size
        except OSError:
            pass
        if total >= MIN_BYTES_FOR_POOL:
            return True
    return False


# -- the run --------------------------------------------------------------------------
def run_files(
    paths: Sequence[str],
    settings: Settings,
    task: Task = CHECK,
    jobs: int | None = None,
    cache: Cache | None = None,
    progress: Progress | None = None,
    linter: Linter | None = None,
    project_root: str | None = None,
) -> list[FileOutcome]:
    """Check (or fix, as ``task`` says) ``paths``; one :class:`FileOutcome` per path, in their order.

    ``jobs``: worker processes (None: :func:`default_jobs`; 1: in this process).
    ``cache``: reuse findings of unchanged files and store the new ones (saved before returning);
    a file whose findings read other files' summaries is reused only while those are unchanged.
    ``project_root``: lint each file knowing the rest of that project (:mod:`dllint.project`).
    A fixed file's new bytes are in its outcome; nothing is written here.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    results: list[FileOutcome | None] = [None] * len(paths)
    todo: list[Item] = []
    project = project_index(settings, project_root, cache)
    deps_valid = project.deps_valid if project is not None else None
    if project is not None and cache is not None:
        project.reconcile(cache)  # findings that asked "who calls X" meet the files changed since
    for index, path in enumerate(paths):
        hit = cache.lookup_entry(path, deps_valid) if cache is not None else None
        if hit is None:
            todo.append((index, path, None))
        elif task.fix and any(wants_fix(f, task.unsafe) for f in hit.findings):
            todo.append((index, path, hit.findings))  # a fix to make: the file is read, the lint skipped
        else:
            results[index] = FileOutcome(path, hit.findings, deps=dict(hit.deps))
    done = len(paths) - len(todo)
    if progress is not None:
        progress(done, len(paths))

    want_fingerprint = cache is not None

    def collect(index: int, outcome: FileOutcome, stamp: Fingerprint | None) -> None:
        results[index] = outcome
        # A fixed file's findings are those of bytes not on disk yet: the next run lints it afresh.
        if cache is not None and stamp is not None and not outcome.errors and not outcome.changed:
            cache.store_fingerprint(outcome.path, stamp, outcome.findings, outcome.deps)

    if _worth_a_pool(todo, jobs):
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        chunks = _chunks(todo, jobs)
        global _PARENT_CACHE
        _PARENT_CACHE = cache if project is not None else None
        pool = ProcessPoolExecutor(
            max_workers=min(jobs, len(chunks)),
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=(settings, project_root),
        )
        try:
            futures = [pool.submit(_run_chunk, chunk, task, want_fingerprint) for chunk in chunks]
            try:
                for future in as_completed(futures):
                    for index, outcome, stamp in future.result():
                        collect(index, outcome, stamp)
                        done += 1
                    if progress is not None:
                        progress(done, len(paths))
            except BrokenProcessPool:
                pass  # a worker died (killed, out of memory): what it left undone is done below
        except BaseException:
            # Ctrl-C: neither wait for the queued chunks nor for the running ones (the workers
            # ignore SIGINT, so that only this process decides; `_processes` is the pool's own).
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in list((getattr(pool, "_processes", None) or {}).values()):
                worker.terminate()
            raise
        pool.shutdown()
        _PARENT_CACHE = None
        todo = [item for item in todo if results[item[0]] is None]
    if todo:
        linter = linter or Linter(settings)
        index_ = project
        for count, (index, path, cached) in enumerate(todo, start=1):
            collect(index, *process(path, linter, task, want_fingerprint, index_, cached))
            done += 1
            if progress is not None and (count % 16 == 0 or count == len(todo)):
                progress(done, len(paths))

    if cache is not None:
        if project is not None:
            project.remember_files(cache, (r.deps for r in results if r is not None and r.deps))
        cache.save()
    return [
        r if r is not None else FileOutcome(p, [unreadable(p, "cannot read file")]) for r, p in zip(results, paths)
    ]


def run_lint(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    cache: Cache | None = None,
    progress: Progress | None = None,
    linter: Linter | None = None,
) -> list[FileResult]:
    """Check ``paths``: one :class:`~dllint.engine.FileResult` per path, in the order of ``paths``."""
    return list(run_files(paths, settings, CHECK, jobs=jobs, cache=cache, progress=progress, linter=linter))
