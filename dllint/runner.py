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

Each file is read once (:func:`dllint.source.read_source`): the bytes that are
hashed for the cache are the bytes linted, through ``Linter.lint_bytes``, the
same entry point as an in-process run, so notebooks work in workers too.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Sequence

from dllint.cache import Cache, content_hash
from dllint.config import Settings
from dllint.engine import FileResult, Linter
from dllint.findings import Finding
from dllint.source import read_source, unreadable

# Below this many files (or bytes) to lint, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 8
MIN_BYTES_FOR_POOL = 256 * 1024
CHUNKS_PER_JOB = 8  # enough tasks to balance uneven files, few enough that IPC stays small
MAX_CHUNK_FILES = 128

Progress = Callable[[int, int], None]  # (files done, files total)


def default_jobs() -> int:
    """The cores this process may run on (a container's or ``taskset``'s limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


# -- one file ---------------------------------------------------------------------
def _lint_and_fingerprint(path: str, linter: Linter, want_fingerprint: bool) -> tuple[FileResult, tuple[int, int, str] | None]:
    """Lint ``path``; with ``want_fingerprint``, also its (mtime_ns, size, sha256) *before* it was read,
    so that an edit racing with the run makes the next run look again rather than trust stale findings."""
    fingerprint = None
    try:
        # stat before reading: an edit racing with the run makes the next run look again
        st = os.stat(path) if want_fingerprint else None
    except OSError:
        st = None
    data = read_source(path)
    if isinstance(data, Finding):
        return FileResult(path, [data]), None
    if st is not None:
        fingerprint = (st.st_mtime_ns, st.st_size, content_hash(data))
    try:
        result = linter.lint_bytes(path, data)  # the bytes just hashed: the file is read once
    except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the run (errors are values)
        result = FileResult(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])
    return result, fingerprint


# -- worker processes ------------------------------------------------------------------
_WORKER_LINTER: Linter | None = None


def _init_worker(settings: Settings) -> None:
    global _WORKER_LINTER
    _WORKER_LINTER = Linter(settings)


def _lint_chunk(chunk: list[tuple[int, str]], want_fingerprint: bool) -> list[tuple[int, FileResult, tuple[int, int, str] | None]]:
    assert _WORKER_LINTER is not None
    out = []
    for index, path in chunk:
        result, fingerprint = _lint_and_fingerprint(path, _WORKER_LINTER, want_fingerprint)
        out.append((index, result, fingerprint))
    return out


def _chunks(items: list[tuple[int, str]], jobs: int) -> list[list[tuple[int, str]]]:
    """Largest files first, cut into chunks of about equal bytes (at least one file each)."""
    sized = []
    for index, path in items:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        sized.append((size, index, path))
    sized.sort(key=lambda t: (-t[0], t[1]))
    total = sum(s for s, _, _ in sized) or 1
    budget = max(total // (jobs * CHUNKS_PER_JOB), 1)
    chunks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    current_bytes = 0
    for size, index, path in sized:
        current.append((index, path))
        current_bytes += size
        if current_bytes >= budget or len(current) >= MAX_CHUNK_FILES:
            chunks.append(current)
            current, current_bytes = [], 0
    if current:
        chunks.append(current)
    return chunks


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork starts a worker in ~1 ms with dllint already imported; elsewhere (macOS, Windows) the
    # platform default (spawn) is the only safe choice.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _worth_a_pool(items: list[tuple[int, str]], jobs: int) -> bool:
    if jobs <= 1 or len(items) < MIN_FILES_FOR_POOL:
        return False
    total = 0
    for _, path in items:
        try:
            total += os.stat(path).st_size
        except OSError:
            pass
        if total >= MIN_BYTES_FOR_POOL:
            return True
    return False


# -- the run --------------------------------------------------------------------------
def run_lint(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    cache: Cache | None = None,
    progress: Progress | None = None,
    linter: Linter | None = None,
) -> list[FileResult]:
    """Lint ``paths`` and return one :class:`FileResult` per path, in the order of ``paths``.

    ``jobs``: worker processes (None: the usable cores; 1: lint in this process).
    ``cache``: reuse findings of unchanged files and store the new ones (saved before returning).
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    results: list[FileResult | None] = [None] * len(paths)
    todo: list[tuple[int, str]] = []
    for index, path in enumerate(paths):
        cached = cache.lookup(path) if cache is not None else None
        if cached is not None:
            results[index] = FileResult(path, cached)
        else:
            todo.append((index, path))
    done = len(paths) - len(todo)
    if progress is not None:
        progress(done, len(paths))

    want_fingerprint = cache is not None

    def collect(index: int, result: FileResult, fingerprint: tuple[int, int, str] | None) -> None:
        results[index] = result
        if cache is not None and fingerprint is not None and not result.errors:
            cache.store(result.path, *fingerprint, result.findings)

    if _worth_a_pool(todo, jobs):
        chunks = _chunks(todo, jobs)
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(chunks)),
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=(settings,),
        ) as pool:
            futures = [pool.submit(_lint_chunk, chunk, want_fingerprint) for chunk in chunks]
            try:
                for future in as_completed(futures):
                    for index, result, fingerprint in future.result():
                        collect(index, result, fingerprint)
                        done += 1
                    if progress is not None:
                        progress(done, len(paths))
            except BrokenProcessPool:
                pass  # a worker died (killed, out of memory): what it left undone is linted below
        todo = [(index, path) for index, path in todo if results[index] is None]
    if todo:
        linter = linter or Linter(settings)
        for count, (index, path) in enumerate(todo, start=1):
            collect(index, *_lint_and_fingerprint(path, linter, want_fingerprint))
            done += 1
            if progress is not None and (count % 16 == 0 or count == len(todo)):
                progress(done, len(paths))

    if cache is not None:
        cache.save()
    return [r if r is not None else FileResult(p, [unreadable(p, "cannot read file")]) for r, p in zip(results, paths)]
