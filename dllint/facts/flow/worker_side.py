"""What a file's summary says about the code around its loaders rather than their flow: its
module-level classes (their bases, whether a sampler never ends or a loader subclass keeps one
iterator or hands out its own, the framework hooks they define, the random generators they
store and draw from), and per function what worker-side rules ask of code a dataset may call
(worker info, epoch state, and the calls that lead out of the file)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable

from dllint.facts.endless import iter_never_ends, keeps_one_iterator
from dllint.facts.imports import dotted_name
from dllint.facts.device_kinds import cuda_device_kind
from dllint.facts.inherited_devices import stored_devices
from dllint.facts.inherited_loops import loop_calls
from dllint.facts.loaders import mentions_pin_memory
from dllint.facts.flow.records import ClassSummary, FunctionSummary
from dllint.facts.flow.targets import Target
from dllint.facts.walk import walk

if TYPE_CHECKING:
    from dllint.facts import ClassInfo, FileFacts

MAX_ONWARD = 24  # calls a function summary names for the index to follow on
# What a loader subclass's own ``__iter__`` calls when it still hands out torch's iterator
# (``super().__iter__()``, ``self._get_iterator()``).
TORCH_ITERATORS = ("__iter__", "_get_iterator")


def class_summary(facts: FileFacts, cls: ast.ClassDef) -> ClassSummary:
    """What other files ask of a module-level class (see :class:`ClassSummary`)."""
    from dllint.facts.frameworks import class_hooks, class_stores

    bases = _base_names(facts, cls)
    iter_method = _method_named(cls, "__iter__")
    summary = ClassSummary(bases, endless=iter_never_ends(iter_method), keeps_iterator=keeps_one_iterator(cls))
    info = facts.classes.get(cls.name)
    summary.loader = bool(info and info.node is cls and info.is_loader)
    summary.names_pin = summary.loader and mentions_pin_memory(cls)
    summary.own_iter = iter_method is not None and not _reaches_torch_iterator(iter_method)
    summary.hooks = class_hooks(facts, cls)
    summary.stores = class_stores(cls)
    summary.devices = stored_devices(facts, cls, cuda_device_kind)
    summary.loop_calls = loop_calls(cls)
    summary.generators = _drawn_generators(facts, cls)
    init = _method_named(cls, "__init__")
    if init is not None:
        from dllint.facts.rng import stored_generators

        summary.stored_generators = sorted(stored_generators(facts, init))
    return summary


def _base_names(facts: FileFacts, cls: ast.ClassDef) -> list[str]:
    """Each base as a target into another module where it is one, else as the file names it."""
    context = facts.project
    bases = []
    for base in cls.bases:
        target = context.target_of(facts, base, facts.scopes.module) if context is not None else None
        bases.append(target or facts.qualname(base) or dotted_name(base) or "")
    return bases


def _method_named(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The class's own (not async) method ``name``, the first one defined."""
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _reaches_torch_iterator(iter_method: ast.FunctionDef) -> bool:
    """The ``__iter__`` still hands out torch's iterator (it names one of TORCH_ITERATORS)."""
    return any(isinstance(node, ast.Attribute) and node.attr in TORCH_ITERATORS for node in ast.walk(iter_method))


def _drawn_generators(facts: FileFacts, cls: ast.ClassDef) -> list[str]:
    """The ``self.X`` random generators ``__init__`` stores that another method draws from
    (a worker copies each: DL104 across files); none without an ``__init__``."""
    from dllint.facts.rng import draws, stored_generators

    init = _method_named(cls, "__init__")
    if init is None:
        return []
    methods: list[ast.AST] = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s is not init]
    return sorted(a for a in stored_generators(facts, init) if draws(methods, a))


def worker_side(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, summary: FunctionSummary) -> None:
    """What worker-side rules ask of a function that a dataset may call: whether it, or a
    same-file function or ``self`` method it calls, consults worker info or reads the epoch
    state, and which calls lead out of the file (for the index to follow)."""
    from dllint.facts.worker_code import consults_worker_info, is_abstract, reads_epoch_state

    owner = facts.scopes.parents.get(function)
    cls = facts.classes.get(owner.name) if method and isinstance(owner, ast.ClassDef) else None
    worker_code = facts.worker_code
    reached = worker_code.reached_from([function], cls)
    memo = _memo(facts)
    summary.worker_info = any(memo.once(f, "info", consults_worker_info) for f in reached)
    summary.epoch_state = any(memo.once(f, "epoch", reads_epoch_state) for f in reached)
    summary.abstract = is_abstract(function)
    if summary.worker_info and summary.epoch_state:
        return
    onward: set[str] = set()
    for reached_function in reached:
        onward.update(memo.once(reached_function, ("onward", id(cls)), lambda f: _calls_out(facts, f, cls)))
    summary.onward = sorted(onward, key=lambda o: (o.startswith("."), o))[:MAX_ONWARD]  # other modules first


def _calls_out(facts: FileFacts, function: ast.AST, cls: ClassInfo | None) -> set[str]:
    """The calls in ``function`` that lead out of the file: project targets, ``.m`` methods."""
    out: set[str] = set()
    context = facts.project
    for node in walk(function):
        if not isinstance(node, ast.Call):
            continue
        target = context.target_of(facts, node.func, facts.scopes.scope_of(node)) if context is not None else None
        if target is not None:
            out.add(Target.parse(target).unbound)
            continue
        name = facts.worker_code.method_on_other(node.func, cls)
        if name is not None and not _builtin_method(name):
            out.add(f".{name}")
    return out


class _Memo:
    """Per-file answers about one function, asked again for every function that reaches it
    (a big class's methods reach each other: without this, summarizing transformers'
    ``trainer.py`` walks its methods thousands of times)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[ast.AST, Any], Any] = {}

    def once(self, function: ast.AST, question: Any, answer: Callable[[ast.AST], Any]) -> Any:
        key = (function, question)
        if key not in self.answers:
            self.answers[key] = answer(function)
        return self.answers[key]


def _memo(facts: FileFacts) -> _Memo:
    memo = getattr(facts, "_summary_memo", None)
    if memo is None:
        memo = facts._summary_memo = _Memo()  # type: ignore[attr-defined]
    return memo


def _builtin_method(name: str) -> bool:
    from dllint.facts.worker_code import BUILTIN_METHOD_NAMES

    return name in BUILTIN_METHOD_NAMES
