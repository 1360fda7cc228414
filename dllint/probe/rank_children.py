"""The processes the script starts itself, each probed as one rank of a distributed job.

``torch.multiprocessing.spawn`` children run as rank ``i`` (the index spawn passes),
``multiprocessing.Process`` children with a target from the user's code as ranks 0, 1, ... in the
order they are made; each child runs its target under a :class:`~dllint.probe.harness.Harness` of
its own and writes its events through :class:`~dllint.probe.ranks.RankEvents`.

This module sits above :mod:`dllint.probe.harness` (it builds one in each child), so the harness
never imports it: the harness process's entry, :mod:`dllint.probe.harness_main`, calls
:func:`hook_children`. The functions children run (:func:`probed_child`, :func:`probed_process`)
live here, in a module a child can import by name, not in the entry (``__main__`` there).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import dllint.probe.guard as guard
import dllint.probe.internals as internals
import dllint.probe.ranks as ranks
from dllint.probe.context import ProbeContext, Settings, StaticFinding
from dllint.probe.harness import Harness, ProbeFinished
from dllint.probe.limits import Budget

if TYPE_CHECKING:
    from torch.multiprocessing.spawn import ProcessContext


def hook_children(harness: Harness, config: dict[str, Any]) -> None:
    """Install the harness in the processes the script starts itself: ``torch.multiprocessing.spawn``
    (each child runs as rank ``i``, the index spawn passes) and ``multiprocessing.Process`` with a
    target from the user's code (ranks 0, 1, ... in the order they are made)."""
    directory = ranks.rank_dir(config)
    if not directory or config.get("mode") != "script":
        return
    try:
        spawn_module = sys.modules.get("torch.multiprocessing.spawn") or __import__(
            "torch.multiprocessing.spawn", fromlist=["start_processes"]
        )
    except ImportError:
        return
    original = spawn_module.start_processes  # untyped in torch: a ProcessContext, or None once joined
    spec = {key: config[key] for key in ("events", "deadline", "settings", "findings", "stderr") if key in config}
    spec["rank_dir"] = directory

    @functools.wraps(original)
    def start_processes(fn: Callable[..., object], args: tuple[Any, ...] = (), nprocs: int = 1, join: bool = True,
                        daemon: bool = False, start_method: str = "spawn") -> Any:
        if harness.bypass():
            return original(fn, args, nprocs, join, daemon, start_method)
        os.makedirs(spec["rank_dir"], exist_ok=True)
        wrapped = functools.partial(probed_child, {**spec, "first_slot": slots[0]}, fn)
        slots[0] += nprocs
        context = original(wrapped, args, nprocs, False, daemon, start_method)
        if not join:
            return context
        _join_or_kill_hung(context)
        return None

    slots = [0]  # the next free slot, shared by spawn calls and processes
    spawn_module.start_processes = start_processes  # type: ignore[attr-defined]  # monkeypatching torch's spawn
    _hook_processes(harness, spec, slots)


def _join_or_kill_hung(context: ProcessContext) -> None:
    """``context.join()`` until every child ended; once one has ended, a child still running
    :data:`~dllint.probe.ranks.HANG_GRACE_SECONDS` later is killed (torch's join then raises, as
    for any dead rank)."""
    first_end = None
    while not context.join(timeout=0.2):
        alive = [process for process in context.processes if process.is_alive()]
        if len(alive) < len(context.processes) and first_end is None:
            first_end = time.monotonic()
        if first_end is not None and time.monotonic() - first_end > ranks.HANG_GRACE_SECONDS:
            for process in alive:
                process.kill()


def probed_child(spec: dict[str, Any], fn: Callable[..., object], index: int, *args: Any) -> None:
    """What a spawned child runs instead of ``fn``: ``fn(index, *args)`` as rank ``index``."""
    run_as_rank(spec, index, spec["first_slot"] + index, functools.partial(fn, index, *args))


def probed_process(spec: dict[str, Any], index: int, slot: int, target: Callable[..., object], *args: Any,
                   **kwargs: Any) -> None:
    """What a ``Process`` the script starts runs instead of its target, as rank ``index``."""
    run_as_rank(spec, index, slot, functools.partial(target, *args, **kwargs))


def run_as_rank(spec: dict[str, Any], index: int, slot: int, call: Callable[[], object]) -> None:
    """``call()`` under a harness of its own, as rank ``index``. The script's own error is
    recorded, then raised again, so that the parent sees the child fail as it would have
    without the probe."""
    ranks.become_rank(index, slot, spec["rank_dir"])
    os.makedirs(spec["rank_dir"], exist_ok=True)
    events = ranks.RankEvents(spec["events"], spec["rank_dir"], index, slot)
    ctx = ProbeContext(
        budget=Budget(time.monotonic() + spec["deadline"] - time.time() - 1.5),
        settings=Settings.from_dict(spec["settings"]),
        mode="script",
        findings=[StaticFinding(**finding) for finding in spec["findings"]],
        events=events,
        stderr_path=spec.get("stderr"),
    )
    ctx.emit({"event": "start", "pid": os.getpid()})
    harness = Harness(ctx)
    harness.install()
    active = guard.active()
    if active is not None:  # a spawned rank got the file guard from sitecustomize; torch.save too
        active.phase = harness.phase
        guard.guard_torch_save(active)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except ProbeFinished:
            raise
        except BaseException as error:
            raised.append(error)
            raise

    outcome = harness.guarded(run)
    try:
        harness.finish()
    finally:
        ctx.emit({"event": "script_end", **outcome})
        ctx.emit({"event": "done"})
        events.close()
    if raised and not isinstance(raised[0], SystemExit):
        raise raised[0]


def _hook_processes(harness: Harness, spec: dict[str, Any], slots: list[int]) -> None:
    """``multiprocessing.Process(target=f)`` with ``f`` from the user's code (not torch's workers,
    not a pool's): the child runs ``f`` under a harness of its own, as rank 0, 1, ... in order."""
    made = [0]

    def probed(target: Any, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]] | None:
        if target is None or harness.bypass() or not _is_user_code(target):
            return None
        index, slot = made[0], slots[0]
        made[0], slots[0] = index + 1, slot + 1
        return probed_process, (spec, index, slot, target, *args)

    internals.replace_process_targets(probed)


def _is_user_code(function: object) -> bool:
    module = (getattr(function, "__module__", None) or "").split(".")[0]
    return module not in LIBRARY_ROOTS


LIBRARY_ROOTS = frozenset({"torch", "multiprocessing", "concurrent", "dllint", "threading", "functools", ""})
