"""DL101-DL104, DL106, DL107: what breaks when workers are started with ``spawn``.

Under spawn every worker receives the dataset, sampler, collate_fn and
worker_init_fn by pickle, and imports the main module afresh as
``__mp_main__``. Pickling with the same pickler spawn uses reproduces its
error in-process (cheap, so it runs on every loader); errors that only happen
inside the worker (a module without a main guard starting processes, a name
defined under the guard, a class defined in a notebook, whose kernel's
``__main__`` no worker can import: DL106) need one real spawn start, run where
a static finding asks for it.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from dllint.probe.context import out_of_time
from dllint.probe.internals import MISSING_IN_MAIN, MISSING_IN_MP_MAIN, SPAWN_BOOTSTRAP, pickling_code
from dllint.probe.limits import MeasurementTimeout
from dllint.probe.measure import (
    default_start_method,
    describe_error,
    error_block,
    worker_stderr,
)
from dllint.probe.results import CONFIRMED, NOT_CONFIRMED, WHOLE_FILE, Anchor, skipped

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES = ("DL101", "DL102", "DL103", "DL104", "DL106", "DL107")
SPAWN_START_CODES = ("DL101", "DL106", "DL107")
ALWAYS = True

WORKER_PAYLOAD = ("dataset", "sampler", "batch_sampler", "collate_fn", "worker_init_fn")


def pickling_error(value: Any) -> BaseException | None:
    from multiprocessing.reduction import ForkingPickler

    try:
        ForkingPickler.dumps(value)
    except Exception as error:  # any pickling failure is the measurement
        return error
    return None


def _source_anchor(obj: Any) -> Anchor | None:
    try:
        lines, first = inspect.getsourcelines(obj)
        path = inspect.getsourcefile(obj)
    except (OSError, TypeError):
        return None
    if path is None:
        return None
    import os

    return Anchor(os.path.realpath(path), first, first + len(lines) - 1)


def culprit_anchors(value: Any, code: str, depth: int = 3) -> list[Anchor]:
    """Where the unpicklable piece was written: the lambda, the local def, the __init__."""
    if code == "DL104":
        init = getattr(type(value), "__init__", None)
        anchor = _source_anchor(init) if init is not None else None
        return [anchor] if anchor else []
    found: list[Anchor] = []
    seen: set[int] = set()

    def visit(obj: Any, level: int) -> None:
        if id(obj) in seen or level > depth:
            return
        seen.add(id(obj))
        qualname = getattr(obj, "__qualname__", "")
        if callable(obj) and ("<lambda>" in qualname if code == "DL102" else "<locals>" in qualname):
            anchor = _source_anchor(obj)
            if anchor:
                found.append(anchor)
            return
        children: list[Any] = []
        if isinstance(obj, dict):
            children = list(obj.values())
        elif isinstance(obj, (list, tuple, set)):
            children = list(obj)
        elif hasattr(obj, "func") and hasattr(obj, "args"):  # functools.partial
            children = [obj.func, *obj.args]
        elif hasattr(obj, "__dict__") and not inspect.ismodule(obj):
            children = list(vars(obj).values())
        for child in children:
            visit(child, level + 1)

    visit(value, 0)
    return found


def on_first_iteration(site: LoaderSite, ctx: ProbeContext) -> None:
    if site.num_workers == 0:
        for code in CODES:
            if ctx.requested(site, (code,)):
                ctx.result(site, code, NOT_CONFIRMED, "num_workers is 0: nothing is sent to worker processes")
        return
    failed_parts = _pickle_payload(site, ctx)
    if ctx.mode == "script" and ctx.requested(site, SPAWN_START_CODES):
        _start_one_spawn_worker(site, ctx, failed_parts)


def _pickle_payload(site: LoaderSite, ctx: ProbeContext) -> set[str]:
    failed: set[str] = set()
    confirmed: set[str] = set()
    with ctx.measuring(site, "pickling what spawn workers receive"):
        for part in WORKER_PAYLOAD:
            value = site.arguments.get(part)
            if value is None:
                continue
            error = pickling_error(value)
            if error is None:
                continue
            failed.add(part)
            code = pickling_code(part, error)
            if code is None:
                continue
            confirmed.add(code)
            if code == "DL104" and _pickle_each_attribute(site, ctx, value):
                continue
            ctx.result(site, code, CONFIRMED, f"pickling {part} for a spawn worker raised {describe_error(error)}",
                       {"part": part, "error": describe_error(error)}, culprit_anchors(value, code))
    for code in ("DL102", "DL103", "DL104"):
        if code not in confirmed and ctx.requested(site, (code,)):
            ctx.result(site, code, NOT_CONFIRMED, "everything the workers receive pickles")
    return failed


def attribute_lines(cls: type) -> dict[str, Anchor]:
    """Where ``__init__`` assigns each ``self.NAME`` (the line DL104 reports), first assignment wins."""
    import ast
    import textwrap

    init = getattr(cls, "__init__", None)
    anchor = _source_anchor(init) if init is not None else None
    if init is None or anchor is None:
        return {}
    try:
        lines, _ = inspect.getsourcelines(init)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, Anchor] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                line = anchor.first_line + node.lineno - 1
                if target.attr not in found or line < found[target.attr].first_line:
                    found[target.attr] = Anchor(anchor.path, line, anchor.first_line + (node.end_lineno or node.lineno) - 1)  # (parsed code has end lines)
    return found


def _pickle_each_attribute(site: LoaderSite, ctx: ProbeContext, dataset: Any) -> bool:
    """DL104 per attribute: each one pickled on its own, each verdict at its own assignment.

    False when no single attribute fails (the culprit is nested deeper): the
    caller then reports the dataset as a whole.
    """
    lines = attribute_lines(type(dataset))
    failures = {name: error for name, value in vars(dataset).items()
                if (error := pickling_error(value)) is not None and pickling_code("dataset", error) == "DL104"}
    if not failures:
        return False
    for name, error in failures.items():
        anchors = [lines[name]] if name in lines else culprit_anchors(dataset, "DL104")
        ctx.result(site, "DL104", CONFIRMED, f"pickling dataset.{name} for a spawn worker raised {describe_error(error)}",
                   {"part": "dataset", "attribute": name, "error": describe_error(error)}, anchors)
    if ctx.requested(site, ("DL104",)):
        for name, anchor in lines.items():
            if name not in failures and hasattr(dataset, name):
                ctx.result(site, "DL104", NOT_CONFIRMED, f"dataset.{name} pickles", {"attribute": name}, [anchor])
    return True


def _start_one_spawn_worker(site: LoaderSite, ctx: ProbeContext, failed_parts: set[str]) -> None:
    """One batch with one spawn worker, the process-wide default set to spawn too.

    The worker copies the parent's default start method; a script without a
    main guard re-runs its loader there, and only a spawn start checks
    whether the process is still bootstrapping.
    """
    if "dataset" in failed_parts or "sampler" in failed_parts or "batch_sampler" in failed_parts:
        for code in SPAWN_START_CODES:
            ctx.result(site, code, skipped("the dataset or sampler cannot be pickled"), "no spawn worker could start")
        return
    # Unpicklable callables would fail before the worker starts: use torch's defaults instead.
    overrides = {part: None for part in ("collate_fn", "worker_init_fn") if part in failed_parts}
    error: BaseException | None = None
    with worker_stderr(ctx.stderr_path) as lines:
        try:
            with ctx.measuring(site, "one batch with a spawn worker"), default_start_method("spawn"):
                loader = site.variant(num_workers=1, multiprocessing_context="spawn",
                                      persistent_workers=False, prefetch_factor=None, timeout=0, **overrides)
                next(iter(loader))
        except Exception as caught:
            error = caught
    if error is not None and isinstance(error, MeasurementTimeout):
        for code in SPAWN_START_CODES:
            ctx.result(site, code, out_of_time(error), "the spawn worker did not deliver a batch in time")
        return
    bootstrap = error_block(lines, SPAWN_BOOTSTRAP) if error is not None else None
    missing = MISSING_IN_MP_MAIN.search("\n".join(lines)) if error is not None else None
    measurements = {"error": describe_error(error) if error else None, "worker_error": bootstrap or (missing and missing.group(0))}
    if bootstrap and SPAWN_BOOTSTRAP in bootstrap:
        script = ctx.main_globals.get("__file__")
        anchors = [Anchor(script, 1, WHOLE_FILE)] if script else []
        ctx.result(site, "DL101", CONFIRMED, f"under spawn the worker re-ran the script and failed: {bootstrap}",
                   measurements, anchors)
    else:
        ctx.result(site, "DL101", NOT_CONFIRMED, "a spawn worker started and delivered a batch"
                   if error is None else f"the spawn start failed otherwise: {describe_error(error)}", measurements)
    if missing:
        name = missing.group(1)
        definition = ctx.main_globals.get(name.split(".")[0])
        anchor = _source_anchor(definition) if definition is not None else None
        ctx.result(site, "DL107", CONFIRMED, f"the spawn worker failed: {missing.group(0)}>",
                   measurements, [anchor] if anchor else [])
    else:
        ctx.result(site, "DL107", NOT_CONFIRMED, "the spawn worker found every name it unpickled", measurements)
    in_notebook = MISSING_IN_MAIN.search("\n".join(lines)) if error is not None else None
    if in_notebook:
        ctx.result(site, "DL106", CONFIRMED, f"the spawn worker failed: {in_notebook.group(0)}>", measurements)
    elif ctx.requested(site, ("DL106",)):
        ctx.result(site, "DL106", NOT_CONFIRMED, "the spawn worker found every name it unpickled"
                   if error is None else f"the spawn start failed otherwise: {describe_error(error)}", measurements)
