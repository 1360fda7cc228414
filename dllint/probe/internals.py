"""What the probe knows about torch's and CPython's internals: messages and private attributes.

The probe reads torch's error messages, tunes two private settings of its
multiprocessing iterator and bounds the order a loader's private
``_index_sampler`` hands out; it also sends torch's writers through the file
guard (for guard.py) and wraps ``multiprocessing``'s ``BaseProcess.__init__``
(for rank_children.py). None of it is public API, so each piece is named
here, used only through these functions, guarded (a torch without the
attribute leaves the probe slower, never broken) and tested against the pinned
torch (tests/probe/test_internals.py). When torch changes a message, that test
fails here rather than a verdict silently turning into "not confirmed".

Not everything is here yet: checks/sharding.py calls an iterator's private
``_shutdown_workers`` itself (not through :func:`shutdown_iterator`), and
interpreters.py wraps CPython's private ``_posixsubprocess.fork_exec`` (and
``subprocess._fork_exec``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# -- messages torch raises ------------------------------------------------------

# Substrings of DataLoader.__init__'s ValueErrors, most specific first.
CONSTRUCTION_MESSAGES: tuple[tuple[str, str], ...] = (
    ("DataLoader with IterableDataset: expected unspecified", "DL006"),
    ("persistent_workers option needs num_workers > 0", "DL001"),
    ("prefetch_factor option could only be specified in multiprocessing", "DL002"),
    ("multiprocessing_context can only be used with multi-process loading", "DL002"),
    ("sampler option is mutually exclusive with shuffle", "DL003"),
    ("batch_sampler option is mutually exclusive", "DL004"),
    ("batch_size=None option disables auto-batching and is mutually exclusive with drop_last", "DL004"),
    ("should be non-negative", "DL005"),
    ("multiprocessing_context option should specify a valid start method", "DL005"),
)

# pickle's messages for what spawn cannot send (CPython's, not torch's).
PICKLING_LAMBDA = "<lambda>"
PICKLING_LOCAL = ("local object", "<locals>")
PICKLING_UNPICKLABLE = "cannot pickle"
# Any of pickle's errors for what cannot be sent to (or rebuilt in) a worker.
PICKLING_FAILURE = re.compile(r"PicklingError|can't pickle|cannot pickle|can't get local object", re.IGNORECASE)

# multiprocessing's error in a spawn child that re-ran a script without a main guard.
SPAWN_BOOTSTRAP = "bootstrapping phase"
# pickle's error in a spawn child that cannot find a name defined under the main guard.
MISSING_IN_MP_MAIN = re.compile(r"Can't get attribute '([\w.]+)' on <module '__mp_main__'")
# pickle's error in a spawn child that cannot find a name defined in a notebook (a kernel's
# __main__ has no file the child could import).
MISSING_IN_MAIN = re.compile(r"Can't get attribute '([\w.]+)' on <module '__main__'")
# torch's error in a forked worker that touches CUDA initialised in the parent.
CUDA_REINIT = "Cannot re-initialize CUDA in forked subprocess"
# multiprocessing's error when a daemonic process (every DataLoader worker is one) starts a process.
DAEMONIC_CHILDREN = "daemonic processes are not allowed to have children"
# torch wraps an error raised in a worker; the original follows this line.
WORKER_TRACEBACK = "Original Traceback"
# A frame of a traceback as Python formats it (torch formats a worker's so).
TRACEBACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
# torch's errors when a worker process died (a signal, os._exit, the OOM killer).
WORKER_DIED = ("DataLoader worker (pid", "exited unexpectedly", "is killed by signal")


def construction_code(error: BaseException) -> str | None:
    """The DL00x code of a ValueError from DataLoader.__init__, or None."""
    text = str(error)
    return next((code for needle, code in CONSTRUCTION_MESSAGES if needle in text), None)


def pickling_code(part: str, error: BaseException | str) -> str | None:
    """Which rule a pickling error (or its text) of one worker argument confirms, or None."""
    text = str(error)
    if PICKLING_LAMBDA in text:
        return "DL102"
    if any(needle in text for needle in PICKLING_LOCAL):
        return "DL103"
    if part == "dataset" and PICKLING_UNPICKLABLE in text:
        return "DL104"
    return None


def crash_code(text: str) -> str | None:
    """The DL1xx rule whose crash an error's text shows, or None for any other error.

    ``text`` is what torch raised in the main process (a worker's error it
    re-raised, or its own while starting workers) and what a dying worker
    printed. A pickling failure names the lambda (DL102), the local object
    (DL103), or else something that cannot be pickled at all, a lock, an
    open file, a generator (DL104).
    """
    if CUDA_REINIT in text:
        return "DL105"
    if DAEMONIC_CHILDREN in text:
        return "DL108"
    if MISSING_IN_MP_MAIN.search(text):
        return "DL107"
    if MISSING_IN_MAIN.search(text):
        return "DL106"
    if PICKLING_FAILURE.search(text):
        return pickling_code("dataset", text)
    return None


def worker_died(error: BaseException) -> bool:
    """Whether torch raised this because a worker process died (not an error raised in it)."""
    text = str(error)
    return WORKER_DIED[0] in text and any(needle in text for needle in WORKER_DIED[1:])


def worker_error_summary(error: BaseException) -> str | None:
    """For an error torch re-raised from a worker: its summary line plus the original error."""
    text = str(error)
    if WORKER_TRACEBACK not in text:
        return None
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return f"{lines[0].strip()} {lines[-1].strip()}"


def worker_frames(error: BaseException) -> list[tuple[str, int]]:
    """The (path, line) frames of the traceback torch formatted in a worker, innermost last; none for
    an error that was not raised in a worker."""
    text = str(error)
    if WORKER_TRACEBACK not in text:
        return []
    return [(path, int(line)) for path, line in TRACEBACK_FRAME.findall(text.split(WORKER_TRACEBACK, 1)[1])]


# -- private attributes of torch's multiprocessing iterator ------------------------

# torch polls its workers every MP_STATUS_CHECK_INTERVAL (5 s); a dead worker
# should be noticed faster, and shutdown should not wait 5 s per worker.
WORKER_CHECK_SECONDS = 0.25
SHUTDOWN_JOIN_SECONDS = 1.0


def tune_worker_polling(dataloader_module: Any) -> list[str]:
    """Shorten torch's worker-status poll and shutdown join; return what could not be tuned."""
    untuned = []
    multi = getattr(dataloader_module, "_MultiProcessingDataLoaderIter", None)
    try_get = getattr(multi, "_try_get_data", None)
    if try_get is not None and getattr(try_get, "__defaults__", None) and len(try_get.__defaults__) == 1:
        try_get.__defaults__ = (WORKER_CHECK_SECONDS,)
    else:
        untuned.append("_MultiProcessingDataLoaderIter._try_get_data")
    utils = getattr(dataloader_module, "_utils", None)
    if utils is not None and hasattr(utils, "MP_STATUS_CHECK_INTERVAL"):
        utils.MP_STATUS_CHECK_INTERVAL = SHUTDOWN_JOIN_SECONDS
    else:
        untuned.append("_utils.MP_STATUS_CHECK_INTERVAL")
    return untuned


def shutdown_iterator(iterator: Any) -> None:
    """Stop a loader iterator's workers now rather than whenever it is collected."""
    shutdown = getattr(iterator, "_shutdown_workers", None)
    if shutdown is not None:
        shutdown()


def bound_index_sampler(loader_class: Any, wrap: Any) -> Any:
    """Replace the loader class's ``_index_sampler`` property (the order every epoch's iterator
    reads, and map-style ``len(loader)``) by ``wrap(loader, order)``; return the original property."""
    original = loader_class.__dict__["_index_sampler"]
    loader_class._index_sampler = property(lambda loader: wrap(loader, original.fget(loader)))
    return original


def current_iterator(loader: Any) -> Any:
    """The iterator a persistent loader keeps between epochs (torch's ``_iterator``)."""
    return getattr(loader, "_iterator", None)


def forget_iterator(loader: Any, iterator: Any) -> None:
    """Make the loader start fresh workers next epoch instead of reusing stopped ones."""
    if getattr(loader, "_iterator", None) is iterator:
        loader._iterator = None


# -- generator classes a dataset may hold (DL304) ------------------------------------


def generator_classes() -> tuple[type, ...]:
    """The random generator classes whose state a fork or pickle copies unchanged."""
    import random

    classes: list[type] = [random.Random]
    try:
        import numpy

        classes += [numpy.random.Generator, numpy.random.RandomState]
    except ImportError:  # numpy is optional for torch
        pass
    import torch

    classes.append(torch.Generator)
    return tuple(classes)


# -- torch's writers that write through C++, past open() and the audit hook --------------

Redirect = Callable[..., Any]  # FileGuard.redirect_path(action, path, keep_content=False) -> path to use


def redirect_torch_writers(redirect: Redirect, read_back: Callable[[Any], Any]) -> None:
    """Send every torch writer's path through ``redirect`` (the file guard): ``torch.save``,
    ``torch.jit.save`` (a ScriptModule's ``save``), and a shared memory map of a file
    (``torch.UntypedStorage.from_file``/``torch.from_file`` with ``shared=True``, which writes
    the file in place, so its copy starts from the file's content). ``torch.jit.load`` reads
    through ``read_back``: the script loads what it saved. Once per process."""
    import torch
    import torch.serialization

    if getattr(torch.serialization.save, "_dllint_guarded", False):
        return

    def marked(function: Callable[..., Any]) -> Callable[..., Any]:
        function._dllint_guarded = True  # type: ignore[attr-defined]
        return function

    save = torch.serialization.save
    torch.save = torch.serialization.save = marked(lambda obj, f, *args, **kwargs: save(
        obj, redirect("torch.save", f), *args, **kwargs))
    script_module = getattr(getattr(torch.jit, "_script", None), "RecursiveScriptModule", None)
    if script_module is not None and hasattr(script_module, "save"):
        save_script = script_module.save
        script_module.save = marked(lambda module, f, **kwargs: save_script(module, redirect("torch.jit.save", f), **kwargs))
    if hasattr(torch.jit, "load"):
        load_script: Callable[..., Any] = torch.jit.load  # untyped in torch
        torch.jit.load = marked(lambda f, *args, **kwargs: load_script(read_back(f), *args, **kwargs))
    storage_from_file = torch.UntypedStorage.from_file
    torch.UntypedStorage.from_file = classmethod(marked(  # type: ignore[method-assign, assignment]  # monkeypatching
        lambda cls, filename, shared=False, *args, **kwargs: storage_from_file(
            _shared_map(redirect, "torch.UntypedStorage.from_file", filename, shared), shared, *args, **kwargs)))
    tensor_from_file = torch.from_file
    torch.from_file = marked(lambda filename, shared=None, *args, **kwargs: tensor_from_file(
        _shared_map(redirect, "torch.from_file", filename, shared), shared, *args, **kwargs))


def _shared_map(redirect: Redirect, action: str, filename: Any, shared: Any) -> Any:
    return redirect(action, filename, keep_content=True) if shared else filename


# -- multiprocessing's Process, whose targets the probe replaces ---------------------------------


def replace_process_targets(replace: Callable[[Any, tuple[Any, ...]], tuple[Any, tuple[Any, ...]] | None]) -> None:
    """Wrap ``multiprocessing``'s ``BaseProcess.__init__`` (CPython's signature: ``group, target,
    name, args, kwargs, *, daemon``) so that ``replace(target, args)`` may return another
    ``(target, args)`` for the process to run, or None to leave it."""
    import functools
    from multiprocessing.process import BaseProcess

    original = BaseProcess.__init__

    @functools.wraps(original)
    def __init__(process: BaseProcess, group: None = None, target: Any = None, name: str | None = None,
                 args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None, *,
                 daemon: bool | None = None) -> None:
        replaced = replace(target, args)
        if replaced is not None:
            target, args = replaced
        original(process, group, target, name, args, kwargs or {}, daemon=daemon)

    BaseProcess.__init__ = __init__  # type: ignore[method-assign, assignment]  # monkeypatching: the wrapper takes what it takes


def worker_pids(iterator: Any) -> list[int]:
    """The process ids of a multi-worker iterator's workers (torch's private ``_workers``); [] if none."""
    workers = getattr(iterator, "_workers", None) or []
    return [worker.pid for worker in workers if getattr(worker, "pid", None)]


# -- subprocess.Popen's Windows handle, which the job object needs ------------------------------


def windows_process_handle(process: Any) -> int | None:
    """The Windows handle of the process ``subprocess.Popen`` created (its private ``_handle``);
    None where it has none (every POSIX system)."""
    handle = getattr(process, "_handle", None)
    return None if handle is None else int(handle)
