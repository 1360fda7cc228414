"""The child process: runs the user's script with DataLoader hooked.

``python -m dllint.probe.harness CONFIG.json``. Every loader the script builds
is recorded with its call site. When the script first iterates a loader, the
checks measure it; the script then gets an empty iterator, so its loops run
through without training and reach the next loader. Once nothing new has been
built for a while, the script is stopped. Results stream to the events file
as JSON lines, so a run killed at the deadline still reports what it measured.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import runpy
import sys
import time
import traceback
import weakref
from typing import Any

from dllint.probe import ranks
from dllint.probe.callsite import _PROBE_DIR, find_call_site
from dllint.probe.checks import all_checks
from dllint.probe.context import ProbeContext, Settings, StaticFinding
from dllint.probe.limits import Budget, MeasurementTimeout
from dllint.probe.measure import close_iterator, describe_error
from dllint.probe.results import skipped
from dllint.probe.site import FirstBatch, LoaderSite

# Time kept back from the child's budget for finishing and reporting.
RESERVE_SECONDS = 1.5
# torch polls its workers every 5 s; a dead worker should be noticed faster than that.
WORKER_CHECK_SECONDS = 0.25


class ProbeFinished(BaseException):
    """Stops the user's script once everything reachable was probed.

    A BaseException, so that the script's own ``except Exception`` cannot
    swallow it.
    """


def describe_failure(error: BaseException) -> str:
    """One line; for an error raised in a worker, torch's summary plus the original error."""
    text = str(error)
    if "Original Traceback" in text:
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return f"{lines[0].strip()} {lines[-1].strip()}"
    return describe_error(error)


def user_location(tb) -> str | None:
    """path:line of the innermost frame in the user's code."""
    frames = [
        frame
        for frame in traceback.extract_tb(tb)
        if not frame.filename.startswith(_PROBE_DIR)
        and f"{os.sep}torch{os.sep}" not in frame.filename
        and not frame.filename.endswith(("runpy.py", "importlib/__init__.py"))
        and not frame.filename.startswith("<frozen")
    ]
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
                return original_init(loader, *args, **kwargs)
            call_site = find_call_site(loader)
            try:
                original_init(loader, *args, **kwargs)
            except Exception as error:
                harness.record(call_site, original_init, loader, args, kwargs, error)
                raise
            harness.record(call_site, original_init, loader, args, kwargs)

        @functools.wraps(original_iter)
        def __iter__(loader):
            site = None if harness.bypass() else harness.site_of_loader.get(loader)
            if site is None:
                return original_iter(loader)
            return harness.on_iteration(site, loader, original_iter)

        DataLoader.__init__, DataLoader.__iter__ = __init__, __iter__
        multi = dataloader_module._MultiProcessingDataLoaderIter
        multi._try_get_data.__defaults__ = (WORKER_CHECK_SECONDS,)
        dataloader_module._utils.MP_STATUS_CHECK_INTERVAL = 1.0  # shutdown joins

    # -- construction ----------------------------------------------------------
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
                    if getattr(loader, "_iterator", None) is iterator:
                        loader._iterator = None  # the next epoch must not reuse stopped workers
        except StopIteration:
            result.error = "the loader yielded no batch"
        except Exception as error:  # the script's own error is the measurement
            result.error, result.exception = describe_failure(error), error
        self.ctx.emit({"event": "first_batch", "loader": site.id, "seconds": result.seconds, "error": result.error})
        return result

    def run_check(self, check, hook: str, site: LoaderSite, *args) -> None:
        try:
            getattr(check, hook)(site, self.ctx, *args)
        except (ProbeFinished, KeyboardInterrupt):
            raise
        except Exception as error:  # a check that fails must not take the others down
            verdict = skipped(str(error) if isinstance(error, MeasurementTimeout) else f"probe error: {describe_error(error)}")
            self.skip_check(check, site, verdict, f"{check.__name__.rsplit('.', 1)[-1]} could not finish")

    def finish(self) -> None:
        for site in self.ctx.sites:
            for check in all_checks():
                if hasattr(check, "on_script_end"):
                    self.run_check(check, "on_script_end", site)
            close_iterator(getattr(site.loader, "_iterator", None))

    # -- running the target ----------------------------------------------------
    def run_script(self, script: str, args: list[str]) -> dict[str, Any]:
        sys.argv = [script, *args]
        sys.path[0] = os.path.dirname(script)
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
            for _ in loader:  # the first iteration is where the probe runs
                break

        sys.path.insert(0, os.getcwd())
        return self.guarded(call)

    def guarded(self, run) -> dict[str, Any]:
        try:
            run()
        except ProbeFinished:
            return {"how": "stopped", "detail": "stopped once every loader it built was probed"}
        except SystemExit as exit_:
            location = user_location(sys.exc_info()[2])
            return {"how": "exit", "detail": f"the script called sys.exit({exit_.code!r})", "location": location}
        except MeasurementTimeout as error:
            return {"how": "timeout", "detail": str(error)}
        except BaseException as error:  # the script's own crash is part of the report
            return {"how": "error", "detail": describe_failure(error), "location": user_location(error.__traceback__)}
        return {"how": "finished", "detail": "the script ran to its end"}


def main(config_path: str) -> None:
    with open(config_path, encoding="utf-8") as stream:
        config = json.load(stream)
    events = ranks.open_events(config) or open(config["events"], "a", encoding="utf-8")  # noqa: SIM115 - closed by os._exit's flush below
    seconds_left = config["deadline"] - time.time() - RESERVE_SECONDS
    ctx = ProbeContext(
        budget=Budget(time.monotonic() + seconds_left),
        settings=Settings.from_dict(config["settings"]),
        mode=config["mode"],
        findings=[StaticFinding(**finding) for finding in config["findings"]],
        events=events,
        stderr_path=config.get("stderr"),
    )
    ctx.emit({"event": "start", "pid": os.getpid(), "pgid": os.getpgid(0)})
    harness = Harness(ctx)
    harness.install()
    ranks.hook_children(harness, config)
    if config["mode"] == "script":
        outcome = harness.run_script(config["script"], config["args"])
    else:
        outcome = harness.run_factory(config["module"], config["function"])
    try:
        harness.finish()
    except BaseException as error:  # finishing must still report
        ctx.emit({"event": "note", "loader": None, "text": f"cleanup failed: {describe_error(error)}"})
    ctx.emit({"event": "script_end", **outcome})
    ctx.emit({"event": "done"})
    sys.stdout.flush()
    sys.stderr.flush()
    events.close()
    # Skip interpreter shutdown: the user's threads or atexit handlers must not keep us alive.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
