"""The child process: runs the user's script with DataLoader hooked.

Started as ``python -m dllint.probe.harness_main CONFIG.json``. Every loader the script builds
is recorded with its call site. When the script first iterates a loader, the
checks measure it; the script then gets an empty iterator, so its loops run
through without training and reach the next loader. Once nothing new has been
built for a while, the script is stopped. Results stream to the events file
as JSON lines, so a run killed at the deadline still reports what it measured.

``install_harness(config)`` sets all of this up in the calling process and
returns the harness; :func:`dllint.probe.harness_main.main` then runs the target. A process that runs
loaders for the probe (a distributed rank) can install it the same way.
"""

from __future__ import annotations

import functools
import importlib
import os
import runpy
import sys
import time
import traceback
import weakref
from typing import IO, Any

import dllint.probe.guard as guard
import dllint.probe.notebook_target as notebook_target
import dllint.probe.ranks as ranks
from dllint.probe.callsite import find_call_site, is_library_file, library_builder
from dllint.probe.checks import all_checks
from dllint.probe.context import ProbeContext, Settings, StaticFinding
from dllint.probe.internals import current_iterator, forget_iterator, tune_worker_polling, worker_error_summary
from dllint.probe.limits import Budget, MeasurementTimeout
from dllint.probe.measure import close_iterator, describe_error
from dllint.probe.results import skipped
from dllint.probe.site import FirstBatch, LoaderSite

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
    return worker_error_summary(error) or describe_error(error)


def user_location(tb) -> str | None:
    """path:line of the innermost frame in the user's code."""
    frames = [frame for frame in traceback.extract_tb(tb) if not is_library_file(frame.filename)]
    if not frames:
        return None
    return f"{os.path.relpath(frames[-1].filename)}:{frames[-1].lineno}"


class Harness:
    def __init__(self, ctx: ProbeContext) -> None:
        self.ctx = ctx
        self.pid = os.getpid()
        self.sites: dict[tuple[str, int, int], LoaderSite] = {}
        self.site_of_loader: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.idle_iterations = 0

    # -- hooks ---------------------------------------------------------------
    def bypass(self) -> bool:
        # Workers forked from here inherit the hooks; loaders the checks build must not be probed.
        return self.ctx.inside_probe or os.getpid() != self.pid

    def install(self) -> None:
        from torch.utils.data import DataLoader
        from torch.utils.data import dataloader as dataloader_module

        original_init, original_iter = DataLoader.__init__, DataLoader.__iter__
        harness = self

        # wraps(): inspect.signature(DataLoader.__init__) must stay torch's, for LoaderSite.variant.
        @functools.wraps(original_init)
        def __init__(loader, *args, **kwargs):
            if harness.bypass():
                harness.note_child_loader()
                return original_init(loader, *args, **kwargs)
            call_site = find_call_site(loader)
            builder = library_builder(loader)
            try:
                original_init(loader, *args, **kwargs)
            except Exception as error:
                harness.record(call_site, original_init, loader, args, kwargs, error)
                raise
            if builder is None or not harness.adopt_rebuild(loader, builder, original_init, args, kwargs):
                harness.record(call_site, original_init, loader, args, kwargs)

        @functools.wraps(original_iter)
        def __iter__(loader):
            site = None if harness.bypass() else harness.site_of_loader.get(loader)
            if site is None:
                return original_iter(loader)
            return harness.on_iteration(site, loader, original_iter)

        DataLoader.__init__, DataLoader.__iter__ = __init__, __iter__
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
    def adopt_rebuild(self, loader, builder: str, init, args, kwargs) -> bool:
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

    def record(self, call_site, init, loader, args, kwargs, error: BaseException | None = None) -> None:
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
        self.ctx.emit({"event": "loader", "id": site.id, **site.summary()})
        if error is None:
            self.site_of_loader[loader] = site
            return
        site.loader, site.construction_error = None, error
        self.ctx.emit({"event": "loader_error", "loader": site.id, "error": describe_error(error)})
        for check in all_checks():
            if hasattr(check, "on_construction_error"):
                self.run_check(check, "on_construction_error", site, error)

    # -- iteration -------------------------------------------------------------
    def on_iteration(self, site: LoaderSite, loader, original_iter):
        if site.loader is loader:
            site.iterations += 1
            if site.iterations == 1:
                self.probe(site, original_iter)
                self.idle_iterations = 0
                return iter(())
            if site.iterations == 2:
                self.ctx.emit({"event": "iterated_again", "loader": site.id})
            for check in all_checks():
                if hasattr(check, "on_later_iteration"):
                    self.run_check(check, "on_later_iteration", site)
        self.idle_iterations += 1
        if self.idle_iterations >= self.ctx.settings.stop_after_idle_iterations:
            raise ProbeFinished
        return iter(())

    def probe(self, site: LoaderSite, original_iter) -> None:
        main = sys.modules.get("__main__")
        self.ctx.main_globals = vars(main) if main is not None else {}
        site.first_batch = self.first_batch(site, original_iter)
        for check in all_checks():
            if site.first_batch.error and not check.ALWAYS:
                # Costly measurements would only repeat the same failure, many times.
                self.skip_check(check, site, skipped(f"the first batch failed: {site.first_batch.error}"))
                continue
            self.run_check(check, "on_first_iteration", site)

    def skip_check(self, check, site: LoaderSite, verdict: str, evidence: str = "") -> None:
        for code in check.CODES:
            if self.ctx.requested(site, (code,)):
                self.ctx.result(site, code, verdict, evidence or f"{check.__name__.rsplit('.', 1)[-1]} did not run")

    def first_batch(self, site: LoaderSite, original_iter) -> FirstBatch:
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

    def run_check(self, check, hook: str, site: LoaderSite, *args) -> None:
        was_inside, self.ctx.inside_probe = self.ctx.inside_probe, True  # loaders a check builds are not the script's
        try:
            getattr(check, hook)(site, self.ctx, *args)
        except (ProbeFinished, KeyboardInterrupt):
            raise
        except Exception as error:  # a check that fails must not take the others down
            verdict = skipped(str(error) if isinstance(error, MeasurementTimeout) else f"probe error: {describe_error(error)}")
            self.skip_check(check, site, verdict, f"{check.__name__.rsplit('.', 1)[-1]} could not finish")
        finally:
            self.ctx.inside_probe = was_inside

    def finish(self) -> None:
        for site in self.ctx.sites:
            for check in all_checks():
                if hasattr(check, "on_script_end"):
                    self.run_check(check, "on_script_end", site)
            close_iterator(current_iterator(site.loader))

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
            # A factory's loader is for training: iterate it as two epochs would (the probe runs in the first).
            for _epoch in range(FACTORY_EPOCHS):
                for _ in loader:
                    break

        sys.path.insert(0, os.getcwd())
        return self.guarded(call)

    def loops_emptied(self) -> bool:
        return any(site.iterations > 0 for site in self.ctx.sites)

    def phase(self) -> str:
        return "after the loops" if self.loops_emptied() else "before any loader was iterated"

    def guarded(self, run) -> dict[str, Any]:
        try:
            run()
        except ProbeFinished:
            return {"how": "stopped", "detail": "stopped once every loader it built was probed"}
        except guard.WriteStopped as stop:
            return {"how": "write_stopped", "detail": f"stopped at {stop.attempt}; nothing written",
                    "after_loops": self.loops_emptied()}
        except SystemExit as exit_:
            location = user_location(sys.exc_info()[2])
            return {"how": "exit", "detail": f"the script called sys.exit({exit_.code!r})", "location": location, "code": exit_.code,
                    "after_loops": self.loops_emptied()}
        except MeasurementTimeout as error:
            return {"how": "timeout", "detail": str(error)}
        except BaseException as error:  # the script's own crash is part of the report
            return {"how": "error", "detail": describe_failure(error), "location": user_location(error.__traceback__),
                    "after_loops": self.loops_emptied()}
        return {"how": "finished", "detail": "the script ran to its end"}


def die_with_parent() -> None:
    """Linux: the kernel kills the harness if dllint itself dies (even by SIGKILL)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        pass


def install_harness(config: dict[str, Any], events: IO[str]) -> Harness:
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
    ctx.emit({"event": "start", "pid": os.getpid(), "pgid": os.getpgid(0)})
    harness = Harness(ctx)
    file_guard = guard.install(config["scratch"], ctx.emit)
    file_guard.phase = harness.phase
    harness.install()
    guard.guard_torch_save(file_guard)
    ctx.budget = Budget(time.monotonic() + config["timeout"] - RESERVE_SECONDS)
    config["deadline"] = time.time() + config["timeout"]  # wall clock, for ranks the script starts later
    ctx.emit({"event": "ready"})
    return harness
