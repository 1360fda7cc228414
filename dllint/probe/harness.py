"""The child process: runs the user's script with DataLoader hooked, on real batches in bounded epochs.

Started as ``python -m dllint.probe.harness_main CONFIG.json``. Every loader the script builds
is recorded with its call site. When the script first iterates a loader, the
checks measure it on variants built beside it (persistence on/off, start
methods, the num_workers sweep, spawn pickling). Then the script's own loop
runs as written, on real batches: forward, backward, optimizer steps, logging
and checkpoint writes (the file guard redirects those). Each epoch is bounded
to ``Settings.epoch_batches`` batches (:mod:`dllint.probe.steps` bounds the
loader's order, so ``len(loader)`` agrees) and each loader to
``Settings.max_epochs`` epochs; past that cap the script's loop gets an empty
epoch, and once nothing new was built for a few of those, the script is
stopped (:class:`ProbeFinished`). Every epoch is timed: the data wait of the
real step. Results stream to the events file as JSON lines, so a run killed
at the deadline still reports what it measured.

A second run (``measure_only``) applies recommended settings at given call
sites (``overrides``) and only times the bounded epochs: the "after" of the
recommendation.

``install_harness(config)`` sets all of this up in the calling process and
returns the harness; :func:`dllint.probe.harness_main.main` then runs the target. A process that runs
loaders for the probe (a distributed rank) can install it the same way.
"""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import itertools
import os
import runpy
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

import dllint.probe.guard as guard
import dllint.probe.notebook_target as notebook_target
import dllint.probe.ranks as ranks
from dllint.probe.callsite import find_call_site, is_library_file, library_builder, site_key
from dllint.probe.checks import (
    Capability,
    Check,
    all_checks,
    capable,
    hook,
    judge_data_wait,
    sweep_codes,
    with_capability,
)
from dllint.probe.checks.sweep import usable_cores
from dllint.probe.context import EventStream, ProbeContext, Settings, StaticFinding
from dllint.probe.internals import (
    bound_index_sampler,
    current_iterator,
    forget_iterator,
    tune_worker_polling,
    worker_died,
    worker_error_summary,
    worker_frames,
)
from dllint.probe.limits import Budget, MeasurementTimeout
from dllint.probe.measure import (
    close_iterator,
    describe_error,
    last_error_line,
    loader_alone_seconds,
    stderr_mark,
    stderr_since,
)
from dllint.probe.results import skipped
from dllint.probe.site import WORKER_ONLY_OPTIONS, FirstBatch, LoaderSite
from dllint.probe.steps import (
    BoundedOrder,
    EpochBound,
    EpochRecord,
    Tail,
    TimedEpoch,
    cuda_synchronizer,
    replayed_count,
)
from dllint.probe.trace import epoch_event, traced_workers

if TYPE_CHECKING:
    from dllint.probe.callsite import CallSite

# Time kept back from the child's budget for finishing and reporting.
RESERVE_SECONDS = 1.5


# A factory target's loader is iterated as this many epochs.
FACTORY_EPOCHS = 2


class ProbeFinished(BaseException):
    """Stops the user's script once everything reachable was probed.

    A BaseException, so that the script's own ``except Exception`` cannot
    swallow it.
    """


def describe_failure(error: BaseException) -> str:
    """One line; for an error raised in a worker, torch's summary plus the original error."""
    if isinstance(error, EpochBound):
        return "StopIteration"  # what the script sees; the report says it is the probe's
    return worker_error_summary(error) or describe_error(error)


def user_location(tb: TracebackType | None) -> str | None:
    """path:line of the innermost frame in the user's code."""
    frames = [frame for frame in traceback.extract_tb(tb) if not is_library_file(frame.filename)]
    if not frames:
        return None
    return f"{os.path.relpath(frames[-1].filename)}:{frames[-1].lineno}"


def worker_user_frame(error: BaseException) -> tuple[str, int] | None:
    """(path, line) of the innermost frame in the user's code of a worker's traceback: where it failed."""
    frames = [(os.path.realpath(path), line) for path, line in worker_frames(error) if not is_library_file(path)]
    return frames[-1] if frames else None


def epoch_bound_in(error: BaseException) -> EpochBound | None:
    """The probe's end of a cut epoch, if it is what the script's error is (or was raised from)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, EpochBound):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def override_arguments(init: Callable[..., Any], loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                       settings: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The script's arguments with ``settings`` applied, as torch will accept them.

    With ``num_workers=0`` the options torch allows only with workers go.
    """
    bound = inspect.signature(init).bind(loader, *args, **kwargs)
    arguments = bound.arguments
    extra = arguments.pop("kwargs", None)
    if isinstance(extra, dict):
        arguments.update(extra)
    arguments.update(settings)
    if not arguments.get("num_workers"):
        for option in WORKER_ONLY_OPTIONS:
            arguments.pop(option, None)
    rebound = inspect.signature(init).bind_partial(**arguments)
    return rebound.args[1:], rebound.kwargs


class Harness:
    def __init__(self, ctx: ProbeContext, overrides: dict[str, dict[str, Any]] | None = None,
                 measure_only: bool = False) -> None:
        self.ctx = ctx
        ctx.ranks_on_node = ranks.ranks_on_node  # asked when a sweep starts (the process group exists by then)
        self.pid = os.getpid()
        self.sites: dict[tuple[str, int, int], LoaderSite] = {}
        self.site_of_loader: weakref.WeakKeyDictionary[Any, LoaderSite] = weakref.WeakKeyDictionary()
        self.idle_iterations = 0
        self.overrides = overrides or {}  # site_key -> settings applied when the loader is built there
        self.measure_only = measure_only  # the recommendation's re-run: epochs timed, no checks
        self.active: tuple[LoaderSite, EpochRecord] | None = None  # the epoch running now
        self.open_epochs: dict[int, TimedEpoch] = {}  # per site: its last epoch, until it ends
        self.stderr_marks: dict[int, int | None] = {}  # per site: where stderr ended when its last epoch began
        self.last_epoch: tuple[LoaderSite, EpochRecord] | None = None
        self.emptied: dict[str, int] | None = None  # the first epoch handed out empty past the cap
        self.drawn: int | None = None  # batches the epoch starting now draws from its loader (its tail is replayed)

    # -- hooks ---------------------------------------------------------------
    def bypass(self) -> bool:
        # Workers forked from here inherit the hooks; loaders the checks build must not be probed.
        return self.ctx.inside_probe or os.getpid() != self.pid

    def limit(self, loader: Any) -> int | None:
        """Batches per epoch a probed loader is bounded to (None where it is not bounded)."""
        if self.bypass() or loader not in self.site_of_loader:
            return None
        return self.ctx.settings.epoch_batches

    def install(self) -> None:
        from torch.utils.data import DataLoader
        from torch.utils.data import dataloader as dataloader_module

        original_init, original_iter, original_len = DataLoader.__init__, DataLoader.__iter__, DataLoader.__len__
        harness = self

        # wraps(): inspect.signature(DataLoader.__init__) must stay torch's, for LoaderSite.variant.
        @functools.wraps(original_init)
        def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
            if harness.bypass():
                harness.note_child_loader()
                return original_init(loader, *args, **kwargs)
            call_site = find_call_site(loader)
            builder = library_builder(loader)
            settings = harness.overrides.get(site_key(call_site.path, call_site.line)) if call_site else None
            if settings:
                args, kwargs = override_arguments(original_init, loader, args, kwargs, settings)
            try:
                original_init(loader, *args, **kwargs)
            except Exception as error:
                harness.record(call_site, original_init, loader, args, kwargs, error)
                raise
            if builder is None or not harness.adopt_rebuild(loader, builder, original_init, args, kwargs):
                harness.record(call_site, original_init, loader, args, kwargs)

        @functools.wraps(original_iter)
        def __iter__(loader: Any) -> Iterator[Any]:
            site = None if harness.bypass() else harness.site_of_loader.get(loader)
            if site is None:
                return original_iter(loader)
            return harness.on_iteration(site, loader, original_iter)

        def bounded_order(loader: Any, order: Any) -> Any:
            limit = harness.limit(loader)
            return order if limit is None else BoundedOrder(order, limit, lambda: harness.drawn)

        @functools.wraps(original_len)
        def __len__(loader: Any) -> int:
            length = original_len(loader)  # map-style: already bounded through _index_sampler
            limit = harness.limit(loader)
            return length if limit is None else min(length, limit)

        # monkeypatching torch's DataLoader: the wrappers take what the originals take
        DataLoader.__init__, DataLoader.__iter__, DataLoader.__len__ = __init__, __iter__, __len__  # type: ignore[method-assign, assignment]
        index_sampler = bound_index_sampler(DataLoader, bounded_order)
        self.unbounded_length: Callable[[Any], int | None] = lambda loader: _length(original_len, index_sampler, loader)
        for name in tune_worker_polling(dataloader_module):
            self.ctx.emit({"event": "note", "loader": None, "text": f"torch has no {name}: worker checks stay at torch's pace"})

    def note_child_loader(self) -> None:
        """A loader built in a process the script started (not a DataLoader worker): say so."""
        if self.ctx.inside_probe or os.getpid() == self.pid or ranks.current_rank() is not None:
            return  # a child run as a rank has a harness of its own
        from torch.utils.data import get_worker_info

        if get_worker_info() is not None:
            return
        call_site = find_call_site()
        self.ctx.emit({"event": "child_loader", "pid": os.getpid(),
                       "call_site": call_site.label() if call_site else None})

    # -- construction ----------------------------------------------------------
    def adopt_rebuild(self, loader: Any, builder: str, init: Callable[..., Any], args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> bool:
        """A framework rebuilt a loader the script built (Lightning adds its sampler): probe the rebuild there.

        The rebuild shares the script's dataset object; its measurements belong
        to the script's call site, where the static findings are.
        """
        dataset = getattr(loader, "dataset", None)
        site = next((site for site in self.ctx.sites if site.loader is not None and site.iterations == 0
                     and site.dataset is dataset and dataset is not None), None)
        if site is None:
            return False
        try:
            rebuilt = LoaderSite.from_call(site.id, site.call_site, init, loader, args, kwargs)
            site.arguments = rebuilt.arguments
        except TypeError:
            pass
        site.loader, site.loader_class = loader, type(loader)
        self.site_of_loader[loader] = site
        package = builder.split(os.sep + "site-packages" + os.sep)[-1]
        self.ctx.emit({"event": "note", "loader": site.id, "text": f"rebuilt by {package}; the rebuilt loader is the one probed"})
        return True

    def record(self, call_site: CallSite | None, init: Callable[..., Any], loader: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any], error: BaseException | None = None) -> None:
        if call_site is None:
            return
        key = (call_site.path, call_site.line, call_site.end_line)
        site = self.sites.get(key)
        if site is not None:
            site.constructions += 1
            if error is None:
                self.site_of_loader[loader] = site
            return
        try:
            site = LoaderSite.from_call(len(self.sites) + 1, call_site, init, loader, args, kwargs)
        except TypeError:  # a signature torch itself would reject; keep what was passed by name
            site = LoaderSite(len(self.sites) + 1, call_site, type(loader), dict(kwargs), loader=loader)
        self.sites[key] = site
        self.ctx.sites.append(site)
        self.idle_iterations = 0
        overridden = self.overrides.get(site_key(call_site.path, call_site.line))
        self.ctx.emit({"event": "loader", "id": site.id, **site.summary(), **({"overridden": overridden} if overridden else {})})
        if error is None:
            self.site_of_loader[loader] = site
            return
        site.loader, site.construction_error = None, error
        self.ctx.emit({"event": "loader_error", "loader": site.id, "error": describe_error(error)})
        if self.measure_only:
            return
        for check in all_checks():  # those with the hook
            self.run_check(check, "on_construction_error", site, error)

    # -- iteration -------------------------------------------------------------
    def on_iteration(self, site: LoaderSite, loader: Any,
                     original_iter: Callable[[Any], Iterator[Any]]) -> Iterator[Any]:
        if site.loader is loader:
            site.iterations += 1
            if site.iterations == 1 and not self.measure_only:
                self.probe(site, original_iter)
            elif site.iterations == 2:
                self.ctx.emit({"event": "iterated_again", "loader": site.id})
            if site.iterations > 1 and not self.measure_only:
                for check in all_checks():  # those with the hook
                    self.run_check(check, "on_later_iteration", site)
        site.epochs += 1
        if site.epochs > self.ctx.settings.max_epochs:
            return self.empty_epoch(site)
        return self.real_epoch(site, loader, original_iter)

    def measures_step(self) -> bool:
        """The first run of a script (not the re-run with the block, not a factory) measures the step alone."""
        return not self.measure_only and self.ctx.mode != "factory"

    def replay_tail(self, site: LoaderSite, record: EpochRecord) -> Tail | None:
        """From epoch 2 on, the step alone: the last of the epoch's batches are epoch 1's again, replayed
        from memory once the loader's part ended (its workers idle or gone), timed in a record of their
        own. Interleaved with the real epochs, a two-epoch script gets it too, and a load that changes
        over the run weighs on both alike."""
        if not record.replayed:
            return None
        kept = site.clock.kept

        def start() -> EpochRecord:
            if not site.clock.replays:  # written before the clock starts: on a loaded machine an event's write
                # took milliseconds, more than a tiny step's 4 replayed batches (the share read 36% for 70%)
                self.ctx.emit({"event": "note", "loader": site.id, "text": (
                    f"from epoch 2 on, the last {record.replayed} batches of each epoch are epoch 1's, replayed "
                    "from memory once the loader's part ended: the step alone")})
            replay = site.clock.start_replay(record.number)
            self.active = (site, replay)
            return replay

        return Tail(itertools.islice(itertools.cycle(kept), record.replayed), start,
                    functools.partial(self.replay_ended, site))

    def replay_ended(self, site: LoaderSite, record: EpochRecord) -> None:
        if record.number >= self.ctx.settings.max_epochs:
            site.clock.kept.clear()  # the last replay is done: its batches go
        self.trace_epoch(site, record, replay=True)
        self.open_epochs.pop(site.id, None)
        if self.active is not None and self.active[1] is record:
            self.active = None
        self.last_epoch = (site, record)
        self.ctx.emit({"event": "step", "loader": site.id, **site.clock.summary(), **self.factory_mark()})

    def real_epoch(self, site: LoaderSite, loader: Any, original_iter: Callable[[Any], Iterator[Any]]) -> TimedEpoch:
        """The script's own epoch on real batches, at most ``epoch_batches`` of them, timed."""
        limit = self.ctx.settings.epoch_batches
        full = self.unbounded_length(loader)
        bound = EpochBound(site.id, limit, full) if full is None or full > limit else None
        left = self.open_epochs.pop(site.id, None)
        if left is not None:  # the script left its last epoch early (a break, Lightning's count)
            left.abandon()
        record = site.clock.start(site.epochs)
        site.clock.cores = ranks.cores_per_rank(self.ctx.settings.cores or usable_cores())
        site.clock.workers = site.num_workers
        self.stderr_marks[site.id] = stderr_mark(self.ctx.stderr_path)
        length = limit if full is None else min(limit, full)
        if site.epochs > 1 and site.clock.kept and self.measures_step():
            record.replayed = replayed_count(length)
        self.drawn = length - record.replayed
        try:
            with traced_workers(loader, self.events_id(site), self.ctx.settings.trace):
                iterator = original_iter(loader)
        finally:
            self.drawn = None
        self.active = (site, record)
        epoch = TimedEpoch(iterator, record, site.clock, sync=cuda_synchronizer(), bound=bound,
                           last=length - record.replayed, on_end=functools.partial(self.epoch_ended, site),
                           on_error=functools.partial(self.epoch_failed, site),
                           keep=site.epochs == 1 and self.measures_step(), tail=self.replay_tail(site, record))
        self.open_epochs[site.id] = epoch
        return epoch

    def empty_epoch(self, site: LoaderSite) -> Iterator[Any]:
        """Past the cap: an empty epoch, so the script reaches what comes after its loop (a test loader)."""
        if self.emptied is None:
            self.emptied = {"loader": site.id, "epoch": site.epochs, "cap": self.ctx.settings.max_epochs}
            self.ctx.emit({"event": "emptied", **self.emptied})
        self.idle_iterations += 1
        done = self.measure_only and all(site.epochs > self.ctx.settings.max_epochs for site in self.ctx.sites
                                         if site.loader is not None)
        if done or self.idle_iterations >= self.ctx.settings.stop_after_idle_iterations:
            raise ProbeFinished
        return iter(())

    def epoch_ended(self, site: LoaderSite, record: EpochRecord) -> None:
        if not record.replayed:  # else the epoch goes on from memory (:meth:`replay_tail`)
            self.open_epochs.pop(site.id, None)
        self.trace_epoch(site, record)
        if self.active is not None and self.active[1] is record:
            self.active = None
        self.last_epoch = (site, record)
        self.ctx.emit({"event": "epoch", "loader": site.id, "epoch": record.number, "batches": len(record.waits),
                       "seconds": record.seconds, "cut": record.cut})
        summary = site.clock.summary()
        self.ctx.emit({"event": "step", "loader": site.id, **summary, **self.factory_mark()})
        if record.number == 1 and not self.measure_only:
            self.sweep_if_waiting(site, summary)

    def epoch_failed(self, site: LoaderSite, record: EpochRecord, error: BaseException) -> None:
        self.open_epochs.pop(site.id, None)
        self.trace_epoch(site, record)
        self.active, self.last_epoch = None, (site, record)
        died = worker_died(error)
        # A worker that died may have printed why (a spawn worker's unpickling error): the last error line
        # written to stderr since the epoch began. The runner classifies it.
        said = last_error_line(stderr_since(self.ctx.stderr_path, self.stderr_marks.get(site.id))) if died else None
        self.ctx.emit({"event": "epoch_failed", "loader": site.id, "epoch": record.number, "batch": len(record.waits) + 1,
                       "error": describe_failure(error), "worker_died": died, "worker_said": said,
                       "worker_frame": worker_user_frame(error),
                       "in_worker": died or worker_error_summary(error) is not None})
        self.ctx.emit({"event": "step", "loader": site.id, **site.clock.summary(), **self.factory_mark()})

    def trace_epoch(self, site: LoaderSite, record: EpochRecord, replay: bool = False) -> None:
        """--probe-trace: the epoch's waits and steps, for the picture."""
        if self.ctx.settings.trace:
            self.ctx.emit(epoch_event(site.id, record, replay))

    @staticmethod
    def events_id(site: LoaderSite) -> int:
        """The loader's id in the run's events: a rank's are renumbered (workers write theirs directly)."""
        return site.id if ranks.current_rank() is None else ranks.global_id(ranks.current_slot(), site.id)

    def factory_mark(self) -> dict[str, bool]:
        """A factory target has no training step: its loop body is empty, its data wait all of it."""
        return {"no_step": True} if self.ctx.mode == "factory" else {}

    def sweep_if_waiting(self, site: LoaderSite, summary: dict[str, Any]) -> None:
        """A loader that earns a settings block and that no finding had swept: sweep it where the
        sweeping check names the codes it answers there (:func:`dllint.probe.checks.sweep_codes`), so
        that the block's num_workers is measured. Its results inform the block only (advisory)."""
        sweep = with_capability(Capability.SWEEPS_WORKERS)
        if sweep is None or site.swept:
            return
        codes = sweep_codes(sweep, site, summary)
        if not codes:
            return
        self.ctx.forced.setdefault(site.id, set()).update(codes)
        site.swept, self.ctx.advisory = True, True
        try:
            self.run_check(sweep, "on_first_iteration", site)
        finally:
            self.ctx.advisory = False
            gc.collect()  # as after the first checks: epoch 2's workers start on a collected heap

    def probe(self, site: LoaderSite, original_iter: Callable[[Any], Iterator[Any]]) -> None:
        main = sys.modules.get("__main__")
        self.ctx.main_globals = vars(main) if main is not None else {}
        site.first_batch = self.first_batch(site, original_iter)
        for check in all_checks():
            if site.first_batch.error and not check.ALWAYS:
                # Costly measurements would only repeat the same failure, many times.
                self.skip_check(check, site, skipped(f"the first batch failed: {site.first_batch.error}"))
                continue
            if capable(check, Capability.SWEEPS_WORKERS) and self.ctx.requested(site, check.CODES):
                site.swept = True
            self.run_check(check, "on_first_iteration", site)
        if not site.first_batch.error and self.measures_step():
            self.measure_loader_alone(site)
        # The checks leave garbage behind: collected now, so that a collection in a worker forked for the
        # script's epoch 1 (which touches, and so copies, every page it traverses) does not slow its start.
        gc.collect()

    def measure_loader_alone(self, site: LoaderSite) -> None:
        """The loader alone: a copy of it with the script's settings, its epochs drawn and dropped."""
        batches = self.ctx.settings.epoch_batches
        try:
            with self.ctx.measuring(site, "the loader alone (batches drawn and dropped)"):
                if site.is_iterable_dataset:
                    loader, bounded = site.variant(), batches
                else:
                    loader, bounded = site.short_epoch_variant(batches), None
                site.clock.loader_alone_s = loader_alone_seconds(loader, bounded, 2 if site.persistent else 1)
        except (ProbeFinished, KeyboardInterrupt):
            raise
        except Exception as error:  # the real epochs still run; the report says what was not measured
            self.ctx.emit({"event": "note", "loader": site.id,
                           "text": f"the loader alone could not be measured: {describe_error(error)}"})

    def skip_check(self, check: Check, site: LoaderSite, verdict: str, evidence: str = "") -> None:
        for code in check.CODES:
            if self.ctx.requested(site, (code,)):
                self.ctx.result(site, code, verdict, evidence or f"{check.__name__.rsplit('.', 1)[-1]} did not run")

    def first_batch(self, site: LoaderSite, original_iter: Callable[[Any], Iterator[Any]]) -> FirstBatch:
        """One batch from the script's own loader, exactly as configured."""
        loader = site.loader
        result = FirstBatch()
        try:
            with self.ctx.measuring(site, "first batch"):
                started = time.perf_counter()
                iterator = original_iter(loader)
                try:
                    next(iterator)
                    result.seconds = time.perf_counter() - started
                finally:
                    close_iterator(iterator)
                    forget_iterator(loader, iterator)  # the next epoch must not reuse stopped workers
        except StopIteration:
            result.error = "the loader yielded no batch"
        except Exception as error:  # the script's own error is the measurement
            result.error, result.exception = describe_failure(error), error
        self.ctx.emit({"event": "first_batch", "loader": site.id, "seconds": result.seconds, "error": result.error})
        return result

    def run_check(self, check: Check, name: str, site: LoaderSite, *args: Any) -> None:
        run = hook(check, name)
        if run is None:
            return
        was_inside, self.ctx.inside_probe = self.ctx.inside_probe, True  # loaders a check builds are not the script's
        try:
            run(site, self.ctx, *args)
        except (ProbeFinished, KeyboardInterrupt):
            raise
        except Exception as error:  # a check that fails must not take the others down
            verdict = skipped(str(error) if isinstance(error, MeasurementTimeout) else f"probe error: {describe_error(error)}")
            self.skip_check(check, site, verdict, f"{check.__name__.rsplit('.', 1)[-1]} could not finish")
        finally:
            self.ctx.inside_probe = was_inside

    def finish(self) -> None:
        for epoch in list(self.open_epochs.values()):
            epoch.abandon()
        for site in self.ctx.sites:
            if not self.measure_only:
                self.judge_data_wait(site)
                for check in all_checks():  # those with the hook
                    self.run_check(check, "on_script_end", site)
            close_iterator(current_iterator(site.loader))

    def judge_data_wait(self, site: LoaderSite) -> None:
        """Runtime findings from the real step's data wait: each check that judges it
        (:attr:`Capability.JUDGES_DATA_WAIT`) gets the loader's summary."""
        summary = site.clock.summary()
        for check in all_checks():
            if capable(check, Capability.JUDGES_DATA_WAIT):
                judge_data_wait(check, site, self.ctx, summary)

    # -- running the target ----------------------------------------------------
    def run_script(self, script: str, args: list[str]) -> dict[str, Any]:
        sys.argv = [script, *args]
        sys.path[0] = os.path.dirname(script)
        if notebook_target.is_notebook(script):  # its code cells, in order, as its kernel runs them
            return self.guarded(lambda: notebook_target.run_notebook(script))
        return self.guarded(lambda: runpy.run_path(script, run_name="__main__"))

    def run_factory(self, module_name: str, function_name: str) -> dict[str, Any]:
        def call() -> None:
            from torch.utils.data import DataLoader

            factory = getattr(importlib.import_module(module_name), function_name, None)
            if factory is None:
                raise LookupError(f"{module_name} has no attribute {function_name}")
            loader = factory()
            if not isinstance(loader, DataLoader):
                raise TypeError(f"{module_name}:{function_name}() returned {type(loader).__name__}, not a DataLoader")
            # A factory's loader is for training: iterate it as two bounded epochs would (the checks run in the first).
            for _epoch in range(FACTORY_EPOCHS):
                for _ in loader:
                    pass

        sys.path.insert(0, os.getcwd())
        return self.guarded(call)

    def where(self) -> dict[str, Any] | None:
        """The epoch running now, or the last one that ran: where an error or a write happened."""
        current = self.active or self.last_epoch
        if current is None:
            return None
        site, record = current
        return {"loader": site.id, "epoch": record.number, "in_epoch": self.active is not None or record.failed,
                "batch": len(record.waits) + (1 if record.failed else 0)}

    def phase(self) -> str:
        where = self.where()
        if where is None:
            return "before any loader was iterated"
        if self.emptied is not None:
            return f"past the probe's cap of {self.emptied['cap']} epochs"
        if where["in_epoch"]:
            return f"in loader {where['loader']}'s epoch {where['epoch']}"
        return f"after loader {where['loader']}'s epoch {where['epoch']}"

    def cut_loaders(self) -> dict[int, list[int | None]]:
        """Loaders whose epochs the bound cut short: id -> [bound, full length]."""
        return {site.id: [self.ctx.settings.epoch_batches, self.unbounded_length(site.loader) if site.loader is not None else None]
                for site in self.ctx.sites if any(epoch.cut for epoch in site.clock.epochs)}

    def ending(self, error: BaseException | None) -> dict[str, Any]:
        """What the report needs to say who caused an ending: where it happened, the probe's bound or cap."""
        facts: dict[str, Any] = {"where": self.where(), "emptied": self.emptied, "cut": self.cut_loaders()}
        bound = epoch_bound_in(error) if error is not None else None
        if bound is not None:
            facts["bound"] = {"loader": bound.loader, "bound": bound.bound, "full": bound.full}
        return facts

    def guarded(self, run: Callable[[], object]) -> dict[str, Any]:
        try:
            run()
        except ProbeFinished:
            return {"how": "stopped", "detail": "stopped once every loader it built was probed", **self.ending(None)}
        except guard.WriteStopped as stop:
            return {"how": "write_stopped", "detail": f"stopped at {stop.attempt}; nothing written", **self.ending(None)}
        except SystemExit as exit_:
            location = user_location(sys.exc_info()[2])
            return {"how": "exit", "detail": f"the script called sys.exit({exit_.code!r})", "location": location,
                    "code": exit_.code, **self.ending(None)}
        except MeasurementTimeout as error:
            return {"how": "timeout", "detail": str(error)}
        except BaseException as error:  # the script's own crash is part of the report
            return {"how": "error", "detail": describe_failure(error), "location": user_location(error.__traceback__),
                    "type": type(error).__name__, **self.ending(error)}
        return {"how": "finished", "detail": "the script ran to its end", **self.ending(None)}


def _length(original_len: Callable[[Any], int], index_sampler: Any, loader: Any) -> int | None:
    """A loader's epoch length without the probe's bound; None when it has none."""
    try:
        from torch.utils.data import IterableDataset

        if isinstance(loader.dataset, IterableDataset):
            return original_len(loader)
        return len(index_sampler.fget(loader))
    except (TypeError, AttributeError, NotImplementedError):
        return None


def die_with_parent() -> None:
    """Linux: the kernel kills the harness if dllint itself dies (even by SIGKILL)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        pass


def install_harness(config: dict[str, Any], events: EventStream) -> Harness:
    """Set the probe up in this process: file guard, DataLoader hooks, then the time budget.

    The budget starts once torch is imported (``ready``): importing torch is
    not the probe's time to spend.
    """
    ctx = ProbeContext(
        budget=Budget(float("inf")),
        settings=Settings.from_dict(config["settings"]),
        mode=config["mode"],
        findings=[StaticFinding(**finding) for finding in config["findings"]],
        events=events,
        stderr_path=config.get("stderr"),
    )
    ctx.emit({"event": "start", "pid": os.getpid()})
    harness = Harness(ctx, config.get("overrides"), bool(config.get("measure_only")))
    file_guard = guard.install(config["scratch"], ctx.emit)
    file_guard.phase = harness.phase
    harness.install()
    guard.guard_torch_save(file_guard)
    ctx.budget = Budget(time.monotonic() + config["timeout"] - RESERVE_SECONDS)
    config["deadline"] = time.time() + config["timeout"]  # wall clock, for ranks the script starts later
    ctx.emit({"event": "ready"})
    return harness
