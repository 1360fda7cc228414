"""A file's summary: what the rest of the project needs to know about it.

Computed from the file's text alone; at once only its import table and the names of its
functions and classes: each function and class, its calls into other modules and its loaders
are summarized when first asked for (most questions name one function or class of a big
module), and the file's facts are built then:

- ``functions``: per module-level function and method of a module-level class (``"f"``,
  ``"Cls.m"``), its parameters and what it does with each (:class:`Effects`), and the
  loaders, samplers and datasets it returns (:class:`Returned`);
- ``calls``: calls into other modules (by target, see :mod:`dllint.facts.flow.targets`) and
  what the file does with their results;
- ``classes``: module-level classes, their bases, the framework hooks they define (and the
  ``self.X`` each returns), the attributes their methods store ``self.m(...)`` results in, and worker-side facts (a sampler that
  never ends, a loader subclass that keeps one iterator, random generators it stores and
  draws from), and whether it is a DataLoader subclass whose ``__iter__`` is torch's;
- ``loaders``: loaders whose dataset is a class of another module (DL304 across files);
- ``imported``: per name the file imports at module level from another module (``train_loader``,
  ``data.train_loader``), what its reads do with the value (:class:`ImportedUse`): a module-level
  loader of that module is decided by its importers;
- ``imports``: the module's own import table (re-exports are followed through it);
- ``set_epoch``: the file calls ``set_epoch`` somewhere (DL301 is then not sure).

Uses are folded into ``Effects`` by :mod:`~dllint.facts.flow.effects`; the classes and the
worker side of functions are :mod:`~dllint.facts.flow.worker_side`'s; functions wait in a
:class:`~dllint.facts.flow.records.Deferred` until asked for, and so do classes.
"""

from __future__ import annotations

import ast
import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.batches import parameter_copies
from dllint.facts.device_kinds import passed_devices
from dllint.facts.imports import dotted_name
from dllint.facts.loaders import constant_dicts
from dllint.facts.rebuilt import rebuilt_at
from dllint.facts.flow.effects import dict_entry_effects, effects_of, element_effects, used_as_dict
from dllint.facts.flow.queries import NullProject
from dllint.facts.flow.records import (
    CallSummary, ClassSummary, Deferred, Effects, FileSummary, FunctionSummary, ImportedUse, LoaderSummary, Returned,
)
from dllint.facts.flow.syntax import call_shape, constant_args
from dllint.facts.flow.targets import Target, call_target, project_imports, target_text
from dllint.facts.flow.worker_side import MAX_ONWARD, class_summary, worker_side
from dllint.facts.values import follow, passed_options, resolve
from dllint.source import parse_module
from dllint.facts.walk import walk, walk_statements

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Constant
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope


class SummaryContext(NullProject):
    """``facts.project`` while a file is summarized: names calls into other modules but
    follows none of them (a summary depends on its own file only)."""

    summarizing = True

    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports  # project_imports of the file

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        return target_text(call_target(facts, self.imports, func, scope))


def summarize(
    path: str, text: str, settings: Settings, tree: ast.Module | None = None, own: frozenset[str] = frozenset()
) -> FileSummary:
    """The summary of one file (an empty one when it does not parse); ``own``: see
    :func:`~dllint.facts.flow.targets.project_imports`."""
    try:
        tree = tree or parse_module(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FileSummary()
    # Only the import table and the names of the definitions now: many summaries are asked for
    # nothing more (is ``X`` a function of this module? where does its import lead?), and the
    # file's facts cost more than its parse. They are built when a deferred part is asked for.
    source = _Source(path, text, settings, own, project_imports(tree, own))
    source.keep(tree)
    classes, functions = _definitions(tree)
    set_epoch = "set_epoch" in text
    return FileSummary(Deferred(dict.fromkeys(functions), source.function), lambda last: source.calls(last, set_epoch),
                       Deferred(dict.fromkeys(classes), source.class_), source.loaders, source.imports, set_epoch, source.imported)


def _definitions(tree: ast.Module) -> tuple[dict[str, ast.ClassDef], dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]]:
    """The module-level classes by name, and its functions and its classes' methods ("f", "Cls.m") with whether each is bound."""
    classes: dict[str, ast.ClassDef] = {}
    functions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[stmt.name] = (stmt, False)
        elif isinstance(stmt, ast.ClassDef):
            classes[stmt.name] = stmt
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    static = any(dotted_name(d) == "staticmethod" for d in item.decorator_list)
                    functions[f"{stmt.name}.{item.name}"] = (item, not static)
    return classes, functions


class _Analysis(NamedTuple):
    facts: FileFacts
    context: SummaryContext
    classes: dict[str, ast.ClassDef]  # module-level classes
    functions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]  # "f", "Cls.m" -> (node, bound)


class _Source:
    """What a summary's deferred parts are computed from: the file's facts, rebuilt from its text
    when they were let go. At most MAX_ANALYSES files' facts are kept (each holds its tree: an
    index that lives long, an editor's, must not keep every file's, nor make the collector walk
    them all)."""

    def __init__(self, path: str, text: str, settings: Settings, own: frozenset[str], imports: dict[str, str]) -> None:
        self.path, self.text, self.settings, self.own, self.imports = path, text, settings, own, imports
        self.broken = False  # its facts could not be built

    def keep(self, tree: ast.Module) -> None:
        """Keep the tree parsed for the summary, for the analysis its first deferred part asks
        for (at most MAX_ANALYSES trees, the most recently parsed: then it is parsed again)."""
        _TREES[self] = tree
        while len(_TREES) > MAX_ANALYSES:
            _TREES.popitem(last=False)

    def analysis(self) -> _Analysis | None:
        """The file's facts and definitions; None when they cannot be built (a bug building a
        file's facts must not fail the lint that asked about it: nothing is known of the file,
        as when its summary failed whole)."""
        found = _ANALYSES.pop(self, None)
        if found is None:
            if self.broken:
                return None
            tree = _TREES.pop(self, None)
            try:
                found = self._analyse(tree or parse_module(self.text))
            except Exception:  # noqa: BLE001 - see the docstring
                self.broken = True
                return None
        _ANALYSES[self] = found  # the most recently used last
        while len(_ANALYSES) > MAX_ANALYSES:
            # Its facts' analyses point back at them (cycles): emptied, as a lint's are, they are
            # freed now, not traversed by the collector. No analysis is in use while another is
            # built: a summary's questions stay in its own file.
            _ANALYSES.popitem(last=False)[1].facts.__dict__.clear()
        return found

    def _analyse(self, tree: ast.Module) -> _Analysis:
        from dllint.facts import FileFacts

        context = SummaryContext(self.imports)
        facts = FileFacts(self.path, self.text, tree, self.settings, project=context)
        return _Analysis(facts, context, *_definitions(tree))

    def function(self, name: str) -> FunctionSummary:
        """One function's summary; a bug summarizing it must not fail the lint that asked: then nothing is known."""
        analysis = self.analysis()
        if analysis is None:
            return FunctionSummary([], [], False, {})
        node, method = analysis.functions[name]
        try:
            return _function(analysis.facts, node, method)
        except Exception:  # noqa: BLE001 - see the docstring
            args = node.args
            return FunctionSummary([a.arg for a in [*args.posonlyargs, *args.args]], [a.arg for a in args.kwonlyargs], method, {})

    def class_(self, name: str) -> ClassSummary:
        """One module-level class's summary; as :meth:`function`, a bug summarizing it leaves
        only its bases as the file names them."""
        analysis = self.analysis()
        if analysis is None:
            return ClassSummary([])
        node = analysis.classes[name]
        try:
            return class_summary(analysis.facts, node)
        except Exception:  # noqa: BLE001 - as function()
            return ClassSummary([dotted_name(b) or "" for b in node.bases])

    def loaders(self) -> list[LoaderSummary]:
        """The file's loaders over calls into other modules (:func:`_loaders_over_imports`)."""
        analysis = self.analysis()
        if analysis is None:
            return []
        try:
            return _loaders_over_imports(analysis.facts, analysis.context)
        except Exception:  # noqa: BLE001 - as function()
            return []

    def imported(self, local: str) -> ImportedUse | None:
        """What the file does with a name it imports (:func:`_imported`); as :meth:`function`,
        a bug summarizing it leaves it unknown (handed outside)."""
        analysis = self.analysis()
        if analysis is None:
            return None
        try:
            return _imported(analysis.facts, local)
        except Exception:  # noqa: BLE001 - as function()
            return ImportedUse(0, Effects(unknown=True))

    def calls(self, last: str | None, set_epoch: bool) -> list[CallSummary]:
        """The file's calls into other modules (named ``last``), as :func:`_calls_into_modules`."""
        analysis = self.analysis()
        if analysis is None:
            return []
        try:
            return _calls_into_modules(analysis.facts, analysis.context, set_epoch, last)
        except Exception:  # noqa: BLE001 - as function()
            return []


MAX_ANALYSES = 16
_ANALYSES: OrderedDict[_Source, _Analysis] = OrderedDict()
_TREES: OrderedDict[_Source, ast.Module] = OrderedDict()  # parsed for a summary, not analysed yet


def _loaders_over_imports(facts: FileFacts, context: SummaryContext) -> list[LoaderSummary]:
    """Loaders whose dataset is built by a call into another module (DL304 asks across files)."""
    found: list[LoaderSummary] = []
    for loader in facts.loader_calls:
        arg = loader.argument("dataset")
        value = follow(arg.value, arg.scope, facts) if arg is not None else None
        if value is not None and isinstance(value[0], ast.Call):
            target = context.target_of(facts, value[0].func, value[1])
            if target is not None and not Target.parse(target).bound:
                worker_init = loader.given("worker_init_fn") or loader.unknown_splat and loader.argument("worker_init_fn") is None
                found.append(LoaderSummary(target, loader.node.lineno, loader.is_multi_worker, worker_init))
    return found


def _calls_into_modules(facts: FileFacts, context: SummaryContext, set_epoch: bool, last: str | None = None) -> list[CallSummary]:
    """Each call into another module whose result is used (``last``: only those whose name ends
    so): what happens to the result (and to each element taken out of it), which function hands
    it back as it is, its constants."""
    usage = facts.usage
    found_calls: list[CallSummary] = []
    for call in facts.calls:
        scope = facts.scopes.scope_of(call)
        target = context.target_of(facts, call.func, scope)
        if target is None or last is not None and not Target.parse(target).dotted.endswith(last):
            continue
        if isinstance(facts.scopes.parents.get(call), ast.Expr):
            # a result discarded: what it passes still matters where it hands on a CUDA device
            # (``train(net, loader, device)``: the callee copies its batches there)
            cuda_devices = passed_devices(facts, call, scope)
            if cuda_devices:
                constants, cpu_counts = _passed_values(facts, call, scope)
                found_calls.append(CallSummary(target, call.lineno, Effects(), {}, "", constants, call_shape(call), cpu_counts, cuda_devices))
            continue
        built = set(map(id, usage.enclosing_loops(call, scope)))  # a fresh result each pass
        effects = effects_of(usage.uses_of(call, scope), built, facts)
        elements = element_effects(facts, call, scope, built)
        for found in [effects, *elements.values()]:
            found.set_epoch |= set_epoch and not found.empty
        returned_by = _returned_by(facts, call)
        if not effects.empty or elements or returned_by:
            constants, cpu_counts = _passed_values(facts, call, scope)
            rebuilt = rebuilt_at(facts, call, usage.uses_of(call, scope)) if effects.iterations == 1 and not elements else 0
            found_calls.append(CallSummary(target, call.lineno, effects, elements, returned_by, constants, call_shape(call),
                                           cpu_counts, passed_devices(facts, call, scope), passed_options(call, scope, facts),
                                           _passed_dicts(facts, call, scope, constants), rebuilt))
    return found_calls


def _imported(facts: FileFacts, local: str) -> ImportedUse | None:
    """What the file does with the module-level import binding ``local`` (``from data import
    train_loader``; ``data.train_loader`` for ``import data``), and the line of the first pass
    over it (a repeated one first); None when no module-level import binds it."""
    uses = facts.usage.imported_uses(local)
    if uses is None:
        return None
    passes = sorted((not use.loops, use.node.lineno) for use in uses if use.iterates and hasattr(use.node, "lineno"))
    effects = effects_of(uses, set(), facts)
    # ``sampler.set_epoch(epoch)`` on an imported sampler is a read the flow looks at only: a
    # file naming set_epoch may call it on what it imports (as for a call's result, not sure)
    effects.set_epoch |= "set_epoch" in facts.source
    return ImportedUse(passes[0][1] if passes else 0, effects)


def _passed_values(facts: FileFacts, call: ast.Call, scope: Scope) -> tuple[dict[str, Constant], tuple[str, ...]]:
    """What the call passes as its file resolves it (the file alone: literals, names bound
    once, argparse defaults, dict literals' entries): JSON constants, and the arguments that
    are the machine's CPU count (by position "0" and keyword)."""
    constants = constant_args(call)
    cpu_counts: list[str] = []
    keywords = [] if any(k.arg is None for k in call.keywords) else [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    positional = [(str(i), a) for i, a in enumerate(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args))]
    for key, expr in [*positional, *keywords]:
        if key in constants or isinstance(expr, ast.Constant):
            continue
        value = resolve(expr, scope, facts)
        if value.is_const and isinstance(value.value, (str, int, float, bool, type(None))):
            constants[key] = value.value
        elif value.is_cpu_count:
            cpu_counts.append(key)
    return constants, tuple(cpu_counts)


def _passed_dicts(facts: FileFacts, call: ast.Call, scope: Scope, constants: dict[str, Constant]) -> dict[str, list[dict[str, Constant]]]:
    """The arguments that are dict literals of JSON constants (:func:`constant_dicts`), by
    position ("0") and keyword, and the one dict the call splats ("**"): loader options the
    callee may splat (``**kwargs``)."""
    splats = [k.value for k in call.keywords if k.arg is None]
    if len(splats) > 1:
        return {}
    positional = [(str(i), a) for i, a in enumerate(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args))]
    found: dict[str, list[dict[str, Constant]]] = {}
    passed = [*positional, *((k.arg, k.value) for k in call.keywords if k.arg is not None), *(("**", v) for v in splats)]
    for key, expr in passed:
        if key in constants or not isinstance(expr, (ast.Name, ast.Dict, ast.IfExp)):
            continue
        dicts = constant_dicts(facts, expr, scope, call)
        if dicts is not None:
            found[key] = dicts
    return found


def _returned_by(facts: FileFacts, call: ast.Call) -> str:
    """The summarized function (``"f"``, ``"Cls.m"``) that returns the call's result as it
    is (``return _build_loader(cfg)``); "" otherwise."""
    if not isinstance(facts.scopes.parents.get(call), ast.Return):
        return ""
    function = facts.scopes.enclosing_function(call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    owner = facts.scopes.parents.get(function)
    if isinstance(owner, ast.Module):
        return function.name
    if isinstance(owner, ast.ClassDef) and isinstance(facts.scopes.parents.get(owner), ast.Module):
        return f"{owner.name}.{function.name}"
    return ""


def _function(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> FunctionSummary:
    args = function.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    kwonly = [a.arg for a in args.kwonlyargs]
    effects: dict[str, Effects] = {}
    set_epoch_on = _set_epoch_roots(function) if "set_epoch" in facts.source else set()
    for name in (params[1:] if method else params) + kwonly:
        found = effects_of(facts.usage.parameter_uses(function, name), set(), facts)
        found.set_epoch |= name in set_epoch_on
        if not found.empty:
            effects[name] = found
    summary = FunctionSummary(params, kwonly, method, effects, _returns(facts, function))
    scope = facts.scopes.scopes[function]
    for name in (params[1:] if method else params) + kwonly:
        loads = facts.usage.loads_in(name, scope)
        if used_as_dict(facts, loads):
            entries = dict_entry_effects(facts, loads, lambda index, rest: facts.usage.parameter_entry_uses(function, name, index, rest))
            if entries:
                summary.entries[name] = entries
    for name in (params[1:] if method else params) + kwonly:
        copies, onward = parameter_copies(facts, function, name)
        if copies:
            summary.copies[name] = copies
        if onward:
            summary.copy_onward[name] = onward[:MAX_ONWARD]
    worker_side(facts, function, method, summary)
    return summary


RETURNED_LOADER_ARGS = ("shuffle", "num_workers", "persistent_workers", "pin_memory")


def _returns(facts: FileFacts, function: ast.AST) -> list[Returned]:
    """Loaders, samplers, datasets and instances of the file's classes ``function`` returns
    (through names bound once)."""
    loaders = facts.loader_at
    found: list[Returned] = []
    for node in walk_statements(function):  # returns are statements
        if not isinstance(node, ast.Return) or node.value is None or facts.scopes.enclosing_function(node) is not function:
            continue
        scope = facts.scopes.scope_of(node)
        value, value_scope = follow(node.value, scope, facts)
        returned = _returned_call(facts, value, value_scope, loaders.get(value)) if isinstance(value, ast.Call) else None
        if returned is not None:
            found.append(returned)
    return found


def _returned_call(facts: FileFacts, value: ast.Call, scope: Scope, loader: LoaderCall | None) -> Returned | None:
    """What a returned call builds, as far as other files ask: a loader (its constant
    arguments), a sampler (random? endless?), a dataset class of this file, or an instance of
    another class of this file; None otherwise."""
    from dllint.facts.endless import endless_sampler_call
    from dllint.knowledge.frameworks import RANDOM_SAMPLERS

    name = facts.qualname(value.func) or dotted_name(value.func) or ""
    last = name.rsplit(".", 1)[-1]
    local = facts.classes.get(name)
    if loader is not None:
        return Returned("loader", name, _constant_arguments(loader))
    if last.endswith("Sampler") or local is not None and any(b.endswith("Sampler") for b in local.base_names):
        endless = endless_sampler_call(facts, value, scope) is not None
        return Returned("sampler", name, random=last in RANDOM_SAMPLERS, endless=endless)
    if local is not None and local.is_dataset:
        return Returned("dataset", name)
    if local is not None:  # backend = get_backend(): backend.distribute(...) is Backend.distribute
        return Returned("instance", name)
    return None


def _constant_arguments(loader: LoaderCall) -> dict[str, bool | int | float | str | None]:
    """The RETURNED_LOADER_ARGS of a returned loader that resolve to JSON constants."""
    args = {}
    for arg in RETURNED_LOADER_ARGS:
        resolved = loader.value(arg)
        if resolved.is_const and isinstance(resolved.value, (bool, int, float, str, type(None))):
            args[arg] = resolved.value
    return args


def _set_epoch_roots(function: ast.AST) -> set[str]:
    """The names ``n`` of ``n.set_epoch(...)`` and ``n.sampler.set_epoch(...)`` in ``function``
    (one walk for all its parameters)."""
    roots = set()
    for node in walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "set_epoch":
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name):
                roots.add(root.id)
    return roots
