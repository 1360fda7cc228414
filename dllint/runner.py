"""Running the linter over many files: the cache first, then a process pool for what is left.

Each file is linted independently, so the work splits per file. What shapes
this module, measured on 4,856 files (1.86 M lines) of PyTorch packages on
2 cores:

- Most files never reach the parser: this process screens every file with the
  engine's byte prefilter (a read and a few substring searches) and only the
  rest is linted, in *chunks* of about ``CHUNK_BYTES``: one pickled round trip
  per file would cost more than the prefilter itself.
- Whether to start workers is decided by that work, not by the paths given: a
  run with less than ``MIN_BYTES_FOR_POOL`` to parse (a pre-commit run, a warm
  cache with one changed file, a big package that barely uses DataLoader)
  stays in this process. Past it, ``jobs - 1`` workers start and lint while
  the screening goes on; then this process lints too, as the last of the jobs.
- A run over most of a project's files reads and joins the project's text first (what its
  cross-file questions search, built before any fork anyway) and screens each file where its
  bytes lie in it: each file is read once (:func:`_joined_spans`).
- Workers are started once and build their :class:`~dllint.engine.Linter`
  once (the initializer), not per chunk. Forked ones inherit the project index
  with the joined text of the project's files and its class names already built
  (``ProjectIndex.prepare``), and the modules a lint imports once a file asks for them
  (:func:`dllint.engine.preload`), rather than each process building or importing its own.
- The cyclic collector is off for the run, the cache and the project's records read too
  (:mod:`dllint.gc_pause`), and at the interpreter's exit it has nothing left to walk.
- Results come back in the order of ``paths``, whatever the order the chunks
  finish in, so output never depends on ``--jobs``.

A file handed on is read again by whoever lints it (from the page cache), and not
screened again: the prefilter's open gates go with it, trusted only while the bytes read
have the CRC-32 of those screened. The bytes linted are the bytes hashed for the cache, through :mod:`dllint.per_file`,
the same functions in a worker as in this process, in every mode: ``--fix``
runs here too, with the same pool and cache. A file whose cached findings hold
no fix to apply is neither read nor parsed; one that does is linted again, and
its fixes computed from the bytes read now (the cache keeps findings, never an
edit: nothing read from it reaches a source file). A fixed file's outcome
carries the digest of the bytes its fixes were computed from, which the write
compares with the file just before replacing it (:func:`dllint.atomic.write_fixed`).

``multiprocessing`` and ``concurrent.futures`` are imported only when a pool is
started: a run over a few files (pre-commit's) never pays for them.
"""

from __future__ import annotations

import gc
import os
import sys
import zlib
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from dllint.config import Settings
from dllint.engine import Linter, preload
from dllint.findings import Finding
from dllint.gc_pause import file_done, files_in_batch
from dllint.per_file import FileOutcome, Fingerprint, fingerprint, fix, lint, read_file, wants_fix
from dllint.prefilter import _Gate
from dllint.source import unreadable

if TYPE_CHECKING:
    import multiprocessing.context

    from dllint.cache import Cache
    from dllint.project.index import ProjectIndex

# A pool starts once the work past the prefilter passes MIN_BYTES_FOR_POOL. Measured on the
# benchmark corpus's packages on 2 cores (linting costs ~0.3 s per MB past the prefilter): with
# 0.8-0.9 MB to parse (accelerate, lightning) a second process saved 0-12% of the wall time for
# 20-60% more CPU; with 1.3 MB (torchgeo) 29% for 7% more; on the whole corpus (6.9 MB) 35-40%
# for 10-20% more (processes sharing the caches of two cores each run slower).
MIN_FILES_FOR_POOL = 2
MIN_BYTES_FOR_POOL = 1024 * 1024
CHUNK_BYTES = 128 * 1024  # a task: ~40 ms of parsing; small enough that no worker idles long at the end
MAX_CHUNK_FILES = 128
IN_FLIGHT_PER_WORKER = 3  # chunks queued to a worker: it never waits while this process lints one

Progress = Callable[[int, int], None]  # (files done, files total)


class Task(NamedTuple):
    """What to do with each file: check it, or fix it (``fix``), allowing unsafe fixes (``unsafe``);
    ``edits``: the report shows each fix's edits, which the cache never keeps, so a file whose
    cached findings hold a fix is linted again."""

    fix: bool = False
    unsafe: bool = False
    edits: bool = False


CHECK = Task()


def usable_cores() -> int:
    """The cores this process may run on (a container's or ``taskset``'s limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def default_jobs() -> int:
    """Worker processes when ``--jobs`` is not given: one per usable core (a run with little to
    parse stays in one process whatever this says: see ``MIN_BYTES_FOR_POOL``)."""
    return usable_cores()


def project_index(settings: Settings, root: str | None = None) -> ProjectIndex | None:
    """The project index files are linted against (``facts.project``); built once per process.
    None: each file alone (no project root)."""
    if root is None:
        return None
    from dllint.project import ProjectIndex

    return ProjectIndex(root, settings)


# -- one file ---------------------------------------------------------------------
def process(
    path: str,
    linter: Linter,
    task: Task,
    want_fingerprint: bool,
    index: ProjectIndex | None = None,
    screened: Screened | None = None,
) -> tuple[FileOutcome, Fingerprint | None]:
    """Read, lint (or fix) one file; with ``want_fingerprint`` also its :class:`Fingerprint`.
    ``screened``: what :func:`screen` found in the file's bytes, trusted while they read the same."""
    data, st = read_file(path, linter.settings.max_file_size, want_fingerprint)
    if isinstance(data, Finding):
        return FileOutcome(path, linter.filter_findings(path, "", [data])), None
    stamp = fingerprint(st, data) if st is not None else None
    live = screened.gates if screened is not None and screened.checksum == zlib.crc32(data) else None
    if live is None:
        live = linter.prefilter.screen(data, path)
        if live is None:  # most files: settled before the project is asked (a view resolves the path)
            return FileOutcome(path, skipped=True), stamp
    project = index.view(path) if index is not None else None
    try:
        if task.fix:
            outcome = fix(linter, path, data, task.unsafe, project)
            if outcome.changed:
                from dllint.cache import content_hash

                outcome.read_digest = content_hash(data)  # what the write checks the file still holds
        else:
            outcome = lint(linter, path, data, project, live)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the run (errors are values)
        outcome = FileOutcome(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])
    return outcome, stamp


# -- worker processes ------------------------------------------------------------------
_WORKER_LINTER: Linter | None = None
_WORKER_INDEX: ProjectIndex | None = None


def _init_worker(settings: Settings, root: str | None = None, inherited: ProjectIndex | None = None) -> None:
    """``inherited``: the parent's project index, handed to a forked worker (never pickled)."""
    global _WORKER_LINTER, _WORKER_INDEX
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the pool
    gc.disable()  # for the worker's life: see dllint.gc_pause (file_done collects)
    _WORKER_LINTER = Linter(settings)
    _WORKER_INDEX = inherited if inherited is not None else project_index(settings, root)


def _run_chunk(
    chunk: list[Item], task: Task, want_fingerprint: bool
) -> list[tuple[int, FileOutcome, Fingerprint | None]]:
    assert _WORKER_LINTER is not None
    out = []
    for index, path, screened in chunk:
        outcome, stamp = process(path, _WORKER_LINTER, task, want_fingerprint, _WORKER_INDEX, screened)
        file_done()
        out.append((index, outcome, stamp))
    return out


class Screened(NamedTuple):
    """A file the byte prefilter let through: the gates open in it (a worker does not search its
    bytes again), the CRC-32 of those bytes (read again, they are trusted only if unchanged)
    and their size (the work it hands on)."""

    gates: tuple[_Gate, ...]
    checksum: int
    size: int


# (position in paths, path, what the screen found: None when not screened)
Item = tuple[int, str, "Screened | None"]
Done = Callable[[int, FileOutcome, "Fingerprint | None"], None]


JoinedSpans = Callable[[str], "tuple[bytes, int, int, os.stat_result] | None"]


def screen(
    path: str, linter: Linter, want_fingerprint: bool, joined: JoinedSpans | None = None
) -> tuple[FileOutcome, Fingerprint | None] | Screened:
    """A file settled without parsing (the byte prefilter rules it out, or it cannot be read),
    or else what the prefilter found: the file is linted (and read again, from the page cache)
    without being screened again. ``joined``: where the project's joined text holds the file's
    bytes, and its stat from before they were read (see :func:`_joined_spans`)."""
    found: tuple[bytes, int, int, os.stat_result | None] | None = joined(path) if joined is not None else None
    if found is None or found[2] - found[1] > linter.settings.max_file_size:  # (too large: read, to say so)
        read, st = read_file(path, linter.settings.max_file_size, want_fingerprint)
        if isinstance(read, Finding):
            return FileOutcome(path, linter.filter_findings(path, "", [read])), None
        found = (read, 0, len(read), st)
    data, start, end, stat = found
    live = linter.prefilter.screen(data, path, start, end)
    if live is not None:
        return Screened(live, zlib.crc32(memoryview(data)[start:end]), end - start)
    return FileOutcome(path, skipped=True), (fingerprint(stat, memoryview(data)[start:end]) if want_fingerprint and stat is not None else None)


def _joined_spans(project: ProjectIndex | None, todo: list[Item]) -> JoinedSpans | None:
    """Where the screen takes files' bytes from when this run screens most of the project's
    files: the project's joined text (what its cross-file questions search, built before the
    pool forks in any case), read and joined first, so that each file is read once, not for
    the screen and again for the join (4,853 reads of 0.07 s CPU on the benchmark corpus), and
    screened where it lies in it (a copy of each file's bytes cost 0.045 s).
    None: each file read by the screen, the joined text left for the first question that needs it."""
    if project is None or 2 * len(todo) < len(project.files.paths()):
        return None
    text = project.text
    text.join()
    # The joined text knows files by their absolute paths under the project's real root (a path
    # through a link is read); an absolute path as discovered is one already, a relative one
    # (``dllint .``) is one once joined to the working directory: normalized (abspath) only
    # when that is none, as a path with ``..`` or ``./`` (normpath on every path: 0.01 s of 4,853).
    prefix = os.path.join(os.getcwd(), "")
    span = text.joined_span
    return lambda path: span(path) or span(prefix + path) or span(os.path.abspath(path))


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork starts a worker in ~1 ms with dllint already imported; elsewhere (macOS, Windows) the
    # platform default (spawn) is the only safe choice.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class _Pool:
    """Worker processes that share the linting with this one. Started when the work screened so
    far is worth them (until then, and in a run that never gets there, the chunks wait in
    ``queue`` for this process); then fed chunks while this process screens the rest, and once
    it has, this process lints the queued chunks itself, as one of the ``jobs``: on 2 cores, one
    worker and this process rather than two workers and an idle parent (each forked worker pays
    for copying the pages of the parent it touches)."""

    def __init__(
        self, jobs: int, task: Task, want_fingerprint: bool, settings: Settings, project_root: str | None, project: ProjectIndex | None = None
    ) -> None:
        self.workers = jobs - 1
        self.project = project
        self.task, self.want_fingerprint = task, want_fingerprint
        self.settings, self.project_root = settings, project_root
        self.executor: Any = None
        self.queue: deque[list[Item]] = deque()
        self.queued_bytes = 0
        self.queued_files = 0
        self.submitted: dict[Any, list[Item]] = {}  # future -> its chunk, until its outcomes are collected
        self.broken = False

    def add(self, chunk: list[Item], size: int) -> None:
        self.queue.append(chunk)
        self.queued_bytes += size
        self.queued_files += len(chunk)
        if self.executor is None and self.queued_bytes >= MIN_BYTES_FOR_POOL and self.queued_files >= MIN_FILES_FOR_POOL:
            self._start()
        self.feed()

    def _start(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        context = _pool_context()
        inherited = None
        if context.get_start_method() == "fork":
            preload()  # what each worker would import at its first files, inherited instead
        if self.project is not None and context.get_start_method() == "fork":
            # What every process's first cross-file question builds (the joined text, its class
            # names: 0.5 s on 79 MB), built once here; a forked worker's initargs are its copy of
            # this process's objects, not pickled ones.
            self.project.prepare()
            inherited = self.project
        self.executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(self.settings, self.project_root, inherited),
        )

    def feed(self) -> None:
        """Keep ``IN_FLIGHT_PER_WORKER`` chunks submitted per worker: none idles while this process
        lints a chunk of its own, and the rest stay in ``queue`` for whoever is free first."""
        if self.executor is None or self.broken:
            return
        from concurrent.futures.process import BrokenProcessPool

        in_flight = sum(not future.done() for future in self.submitted)
        while self.queue and in_flight < IN_FLIGHT_PER_WORKER * self.workers:
            try:
                future = self.executor.submit(_run_chunk, self.queue[0], self.task, self.want_fingerprint)
            except BrokenProcessPool:
                self._broke()
                return
            self.submitted[future] = self.queue.popleft()
            in_flight += 1

    def collect(self, done: Done, progress: Callable[[int], None], wait: bool) -> None:
        """Hand the outcomes of finished chunks (with ``wait``: of all submitted) to ``done``."""
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        finished = as_completed(self.submitted) if wait else [f for f in self.submitted if f.done()]
        try:
            for future in finished:  # as_completed holds its own set: deleting below is safe
                outcomes = future.result()
                del self.submitted[future]
                for index, outcome, stamp in outcomes:
                    done(index, outcome, stamp)
                progress(len(outcomes))
        except BrokenProcessPool:
            self._broke()

    def reclaim(self) -> None:
        """Take back the submitted chunks no worker has started (they go back to ``queue``): once
        this process has linted the rest, it lints these rather than wait for a worker to reach
        them (a chunk is some 40 ms of work)."""
        for future in reversed(list(self.submitted)):
            if future.cancel():
                self.queue.append(self.submitted.pop(future))

    def _broke(self) -> None:
        """A worker died (killed, out of memory): what the pool holds goes back to ``queue``."""
        self.broken = True
        self.queue.extend(self.submitted.values())
        self.submitted.clear()

    def close(self, abandon: bool = False) -> None:
        if self.executor is None:
            return
        if abandon:
            # Ctrl-C: neither wait for the queued chunks nor for the running ones (the workers
            # ignore SIGINT, so that only this process decides; `_processes` is the pool's own).
            self.executor.shutdown(wait=False, cancel_futures=True)
            for worker in list((getattr(self.executor, "_processes", None) or {}).values()):
                worker.terminate()
        else:
            self.executor.shutdown()
        self.executor = None


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

    ``jobs``: processes that lint, this one included (None: :func:`default_jobs`; 1: this one alone).
    ``cache``: reuse findings of unchanged files and store the new ones (saved before returning);
    a file whose findings read other files is reused only while those are unchanged.
    ``project_root``: lint each file knowing the rest of that project (:mod:`dllint.project`).
    A fixed file's new bytes are in its outcome; nothing is written here.
    """
    with files_in_batch():  # loading the cache and the project's records too: many objects, few cycles
        return _run_files(paths, settings, task, jobs, cache, progress, linter, project_root)


def _run_files(
    paths: Sequence[str],
    settings: Settings,
    task: Task,
    jobs: int | None,
    cache: Cache | None,
    progress: Progress | None,
    linter: Linter | None,
    project_root: str | None,
) -> list[FileOutcome]:
    _no_collection_at_exit()
    jobs = default_jobs() if jobs is None else max(1, jobs)
    results: list[FileOutcome | None] = [None] * len(paths)
    todo: list[Item] = []
    project = project_index(settings, project_root)
    deps_valid = project.deps_valid if project is not None else None
    taken_stat = project.taken_stat if project is not None else None
    if project is not None and cache is not None:
        project.use_records(cache)  # what the cache kept of each project file, by its stat
        project.reconcile(cache)  # findings that asked "who calls X" meet the files changed since
    for index, path in enumerate(paths):
        hit = cache.lookup_entry(path, deps_valid, taken_stat) if cache is not None else None
        if hit is None or (task.fix and any(wants_fix(f, task.unsafe) for f in hit.findings)) or (
            task.edits and any(f.fix is not None for f in hit.findings)
        ):
            todo.append((index, path, None))  # a fix to make: linted again, its fixes computed from the text read
        else:
            results[index] = FileOutcome(path, hit.findings, deps=hit.deps)
    done = len(paths) - len(todo)
    if progress is not None:
        progress(done, len(paths))

    want_fingerprint = cache is not None

    def collect(index: int, outcome: FileOutcome, stamp: Fingerprint | None) -> None:
        results[index] = outcome
        # A fixed file's findings are those of bytes not on disk yet: the next run lints it afresh.
        if cache is not None and stamp is not None and not outcome.errors and not outcome.changed:
            cache.store_fingerprint(outcome.path, stamp, outcome.findings, outcome.deps)

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, len(paths))

    linter = linter or Linter(settings)

    def lint_here(items: list[Item]) -> None:
        reported = 0
        for count, (index, path, screened) in enumerate(items, start=1):
            collect(index, *process(path, linter, task, want_fingerprint, project, screened))
            file_done()
            if count % 16 == 0 or count == len(items):
                advance(count - reported)
                reported = count

    if jobs > 1 and len(todo) >= MIN_FILES_FOR_POOL:  # fewer: no pool can start, and screening would read them twice
        _screen_and_share(todo, linter, task, want_fingerprint, jobs, project_root, project, collect, advance, lint_here)
    else:
        lint_here(_screened_in_joined_text(todo, linter, want_fingerprint, project, collect, advance))

    if cache is not None:
        if project is not None:
            project.remember_files(cache, (r.deps for r in results if r is not None and r.deps))
        cache.save()
    return [
        r if r is not None else FileOutcome(p, [unreadable(p, "cannot read file")]) for r, p in zip(results, paths)
    ]


_freezing_at_exit = False


def _no_collection_at_exit() -> None:
    """At the interpreter's exit, the collector's last passes over what a run leaves (the cache,
    the project's records and summaries: 10-12 ms of a 0.14 s one-file run in the corpus project)
    are skipped: ``gc.freeze`` moves every object out of their reach. Registered once per process;
    the objects are freed as before (reference counts), and what a cycle holds goes back to the
    system with the process, as a cycle's memory does at any exit."""
    global _freezing_at_exit
    if not _freezing_at_exit:
        import atexit

        atexit.register(gc.freeze)
        _freezing_at_exit = True


def _screened_in_joined_text(
    todo: list[Item], linter: Linter, want_fingerprint: bool, project: ProjectIndex | None, collect: Done,
    advance: Callable[[int], None],
) -> list[Item]:
    """In one process, the files of ``todo`` to lint, each with what the prefilter found. Where the
    run lints most of the project's files, they are screened where the joined text holds them
    (:func:`_joined_spans`): its first cross-file question reads and joins every project file, and
    a file read for the screen as well was read twice (a ``--jobs 1`` run of the benchmark corpus:
    19,876 reads, 10,904 now); the files it settles are handed to ``collect``. Otherwise ``todo``
    as it is."""
    joined = _joined_spans(project, todo) if len(todo) >= MIN_FILES_FOR_POOL else None
    if joined is None:
        return todo
    passed: list[Item] = []
    for index, path, _ in todo:
        screened = screen(path, linter, want_fingerprint, joined)
        if isinstance(screened, Screened):
            passed.append((index, path, screened))
        else:
            collect(index, *screened)
            advance(1)
    return passed


def _screen_and_share(
    todo: list[Item],
    linter: Linter,
    task: Task,
    want_fingerprint: bool,
    jobs: int,
    project_root: str | None,
    project: ProjectIndex | None,
    collect: Done,
    advance: Callable[[int], None],
    lint_here: Callable[[list[Item]], None],
) -> None:
    """Screen ``todo`` here, and lint what passes with a pool if it is worth one, else here."""
    pool = _Pool(jobs, task, want_fingerprint, linter.settings, project_root, project)
    chunk: list[Item] = []
    chunk_bytes = 0
    joined = _joined_spans(project, todo)
    try:
        for item in todo:
            index, path, _ = item
            screened = screen(path, linter, want_fingerprint, joined)
            if not isinstance(screened, Screened):
                collect(index, *screened)
                advance(1)
                continue
            size = screened.size
            item = (index, path, screened)
            chunk.append(item)
            chunk_bytes += size
            if chunk_bytes >= CHUNK_BYTES or len(chunk) >= MAX_CHUNK_FILES:
                pool.add(chunk, chunk_bytes)
                chunk, chunk_bytes = [], 0
        if chunk:
            pool.add(chunk, chunk_bytes)
        while pool.queue:
            lint_here(pool.queue.pop())  # the last screened first: the workers took the earliest
            if pool.executor is not None:
                pool.collect(collect, advance, wait=False)
                pool.feed()
        if pool.executor is not None:
            pool.reclaim()
            while pool.queue:  # chunks no worker started
                lint_here(pool.queue.pop())
            pool.collect(collect, advance, wait=True)
            while pool.queue:  # a dead worker's chunks
                lint_here(pool.queue.pop())
    except BaseException:
        pool.close(abandon=True)
        raise
    pool.close()
