"""A file's summary: what the rest of the project needs to know about it.

Computed from the file's text alone; its functions and its calls into other modules are
summarized when first asked for (most questions name one function of a big module):

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
- ``imports``: the module's own import table (re-exports are followed through it);
- ``set_epoch``: the file calls ``set_epoch`` somewhere (DL301 is then not sure).
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from dllint.facts.devices import parameter_copies
from dllint.facts.endless import iter_never_ends, keeps_one_iterator
from dllint.facts.imports import dotted_name
from dllint.facts.loaders import mentions_pin_memory
from dllint.facts.flow.model import AnyEntry, DictKey, How, Move, path_key
from dllint.facts.flow.queries import NullProject
from dllint.facts.flow.records import CallSummary, ClassSummary, Effects, FileSummary, FunctionSummary, LoaderSummary, Returned
from dllint.facts.flow.syntax import constant_args
from dllint.facts.flow.targets import Target, call_target, project_imports, target_text
from dllint.facts.values import follow
from dllint.facts.walk import walk_with_parents

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.facts import ClassInfo, FileFacts
    from dllint.facts.flow.model import Element, Path, Use
    from dllint.facts.scopes import Scope

MAX_ONWARD = 24  # calls a function summary names for the index to follow on
# What a loader subclass's own ``__iter__`` calls when it still hands out torch's iterator
# (``super().__iter__()``, ``self._get_iterator()``).
TORCH_ITERATORS = ("__iter__", "_get_iterator")


class SummaryContext(NullProject):
    """``facts.project`` while a file is summarized: names calls into other modules but
    follows none of them (a summary depends on its own file only)."""

    summarizing = True

    def __init__(self, tree: ast.Module, own: frozenset[str] = frozenset(), nodes: list[ast.AST] | None = None) -> None:
        self.imports = project_imports(tree, own, nodes)

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        return target_text(call_target(facts, self.imports, func, scope))


def summarize(
    path: str, text: str, settings: Settings, tree: ast.Module | None = None, own: frozenset[str] = frozenset()
) -> FileSummary:
    """The summary of one file (an empty one when it does not parse); ``own``: see
    :func:`~dllint.facts.flow.targets.project_imports`."""
    try:
        tree = tree or ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FileSummary()
    source = _Source(path, text, settings, own)
    analysis = source.analysis(tree)
    summary = FileSummary(imports=analysis.context.imports, set_epoch="set_epoch" in text,
                          calls=lambda last: source.calls(last, summary.set_epoch))
    summary.classes = {name: _class(analysis.facts, node) for name, node in analysis.classes.items()}
    summary.functions = Deferred(dict.fromkeys(analysis.functions), source.function)
    _loaders_over_imports(analysis.facts, analysis.context, summary)
    return summary


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

    def __init__(self, path: str, text: str, settings: Settings, own: frozenset[str]) -> None:
        self.path, self.text, self.settings, self.own = path, text, settings, own

    def analysis(self, tree: ast.Module | None = None) -> _Analysis:
        found = _ANALYSES.pop(self, None)
        if found is None:
            found = self._analyse(tree or ast.parse(self.text, filename=self.path))
        _ANALYSES[self] = found  # the most recently used last
        while len(_ANALYSES) > MAX_ANALYSES:
            _ANALYSES.popitem(last=False)
        return found

    def _analyse(self, tree: ast.Module) -> _Analysis:
        from dllint.facts import FileFacts

        nodes, parents = walk_with_parents(tree)  # the one walk the context and the facts share
        context = SummaryContext(tree, self.own, nodes)
        facts = FileFacts(self.path, self.text, tree, self.settings, project=context, nodes=nodes, parent_index=parents)
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
        return _Analysis(facts, context, classes, functions)

    def function(self, name: str) -> FunctionSummary:
        """One function's summary; a bug summarizing it must not fail the lint that asked: then nothing is known."""
        analysis = self.analysis()
        node, method = analysis.functions[name]
        try:
            return _function(analysis.facts, node, method)
        except Exception:  # noqa: BLE001 - see the docstring
            args = node.args
            return FunctionSummary([a.arg for a in [*args.posonlyargs, *args.args]], [a.arg for a in args.kwonlyargs], method, {})

    def calls(self, last: str | None, set_epoch: bool) -> list[CallSummary]:
        """The file's calls into other modules (named ``last``), as :func:`_calls_into_modules`."""
        analysis = self.analysis()
        try:
            return _calls_into_modules(analysis.facts, analysis.context, set_epoch, last)
        except Exception:  # noqa: BLE001 - as function()
            return []


MAX_ANALYSES = 16
_ANALYSES: OrderedDict[_Source, _Analysis] = OrderedDict()


class Deferred(Mapping[str, FunctionSummary]):
    """A file's function summaries by name, each computed the first time it is asked for: a
    query names one function (``build_loader``), and summarizing every function of a big module
    costs most of a cross-file lint (transformers' ``trainer.py`` has hundreds)."""

    def __init__(self, names: dict[str, None], summarize: Callable[[str], FunctionSummary]) -> None:
        self._names = names
        self._summarize = summarize
        self._done: dict[str, FunctionSummary] = {}

    def __getitem__(self, name: str) -> FunctionSummary:
        found = self._done.get(name)
        if found is None:
            if name not in self._names:
                raise KeyError(name)
            found = self._done[name] = self._summarize(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


def _loaders_over_imports(facts: FileFacts, context: SummaryContext, summary: FileSummary) -> None:
    """Loaders whose dataset is built by a call into another module (DL304 asks across files)."""
    for loader in facts.loader_calls:
        arg = loader.argument("dataset")
        value = follow(arg.value, arg.scope, facts) if arg is not None else None
        if value is not None and isinstance(value[0], ast.Call):
            target = context.target_of(facts, value[0].func, value[1])
            if target is not None and not Target.parse(target).bound:
                worker_init = loader.given("worker_init_fn") or loader.unknown_splat and loader.argument("worker_init_fn") is None
                summary.loaders.append(LoaderSummary(target, loader.node.lineno, loader.is_multi_worker, worker_init))


def _calls_into_modules(facts: FileFacts, context: SummaryContext, set_epoch: bool, last: str | None = None) -> list[CallSummary]:
    """Each call into another module whose result is used (``last``: only those whose name ends
    so): what happens to the result (and to each element taken out of it), which function hands
    it back as it is, its constants."""
    usage = facts.usage
    found_calls: list[CallSummary] = []
    for call in facts.calls:
        target = context.target_of(facts, call.func, facts.scopes.scope_of(call))
        if target is None or isinstance(facts.scopes.parents.get(call), ast.Expr):
            continue
        if last is not None and not Target.parse(target).dotted.endswith(last):
            continue
        scope = facts.scopes.scope_of(call)
        built = set(map(id, usage.enclosing_loops(call, scope)))  # a fresh result each pass
        effects = effects_of(usage.uses_of(call, scope), built, facts)
        elements = _element_effects(facts, call, scope, built)
        for found in [effects, *elements.values()]:
            found.set_epoch |= set_epoch and not found.empty
        returned_by = _returned_by(facts, call)
        if not effects.empty or elements or returned_by:
            found_calls.append(CallSummary(target, call.lineno, effects, elements, returned_by, constant_args(call)))
    return found_calls


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


def _element_effects(facts: FileFacts, call: ast.Call, scope: Scope, built: set[int]) -> dict[str, Effects]:
    """What the file does with each element of a call's result that it unpacks
    (``a, b = f()``: by position) or loops over (``for x in f()``: ``"*"``); only decidable
    ones are kept."""
    parent = facts.scopes.parents.get(call)
    if isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            indices: list[int | str | DictKey] = list(range(len(target.elts)))
        elif isinstance(target, ast.Name) and _keyed(facts, loads := facts.usage.loads_in(target.id, scope)):
            # data = get_data(...): a dict read under constant keys, maybe handed on whole
            return _entries(facts, loads, lambda index, rest: facts.usage.result_entry_uses(call, index, scope, rest), built)
        else:  # info = build(...): the fields read as info.X (a record the callee returns)
            indices = [*sorted(_fields_read(facts, target.id, scope), key=str)[:MAX_FIELDS]] if isinstance(target, ast.Name) else []
    elif isinstance(parent, (ast.For, ast.AsyncFor, ast.Call)):
        indices = ["*"] if facts.usage.element_loop_target(call) is not None else []
    else:
        indices = []
    elements: dict[str, Effects] = {}
    for index in indices:
        uses = facts.usage.element_uses(call, index, scope)
        found = effects_of(uses, built, facts) if uses is not None else None
        if found is not None and (isinstance(index, int) or not found.empty):  # a field nothing uses: not worth keeping
            elements[str(index)] = found
    return elements


MAX_FIELDS = 8


def _fields_read(facts: FileFacts, name: str, scope: Scope) -> set[int | str | DictKey]:
    """Attributes read off loads of ``name`` in ``scope`` (``info.dataloader``), and
    constant keys or positions it is subscripted with (``loaders["train"]``,
    ``loaders.get("train")``, ``loaders[1]`` of a returned list)."""
    parents = facts.scopes.parents
    found: set[int | str | DictKey] = set()
    for load in facts.usage.loads_in(name, scope):
        parent = parents.get(load)
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load) and isinstance(parent.slice, ast.Constant):
            key = parent.slice.value
            if isinstance(key, str):
                found.add(DictKey(key))
            elif type(key) is int and key >= 0:
                found.add(key)
        elif isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
            call = parents.get(parent)
            if parent.attr == "get" and isinstance(call, ast.Call) and call.func is parent and call.args:
                key = call.args[0]
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found.add(DictKey(key.value))
            found.add(parent.attr)
    return found


def _function(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> FunctionSummary:
    args = function.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    kwonly = [a.arg for a in args.kwonlyargs]
    effects: dict[str, Effects] = {}
    for name in (params[1:] if method else params) + kwonly:
        found = effects_of(facts.usage.parameter_uses(function, name), set(), facts)
        found.set_epoch |= _set_epoch_on(facts, function, name)
        if not found.empty:
            effects[name] = found
    summary = FunctionSummary(params, kwonly, method, effects, _returns(facts, function))
    scope = facts.scopes.scopes[function]
    for name in (params[1:] if method else params) + kwonly:
        loads = facts.usage.loads_in(name, scope)
        if _keyed(facts, loads):
            entries = _entries(facts, loads, lambda index, rest: facts.usage.parameter_entry_uses(function, name, index, rest))
            if entries:
                summary.entries[name] = entries
    for name in (params[1:] if method else params) + kwonly:
        copies, onward = parameter_copies(facts, function, name)
        if copies:
            summary.copies[name] = copies
        if onward:
            summary.copy_onward[name] = onward[:MAX_ONWARD]
    _worker_side(facts, function, method, summary)
    return summary


def _keyed(facts: FileFacts, loads: list[ast.Name]) -> bool:
    """Some load is subscripted with a constant string: the value is used as a dict."""
    parents = facts.scopes.parents
    return any(
        isinstance(parent := parents.get(load), ast.Subscript)
        and isinstance(parent.slice, ast.Constant)
        and isinstance(parent.slice.value, str)
        for load in loads
    )


def _entries(
    facts: FileFacts, loads: list[ast.Name], uses_of: Callable[[Element, Path], list[Use] | None], built: set[int] | None = None
) -> dict[str, Effects]:
    """What happens to a dict's entries (see FunctionSummary.entries); {} when undecidable."""
    any_entry = AnyEntry()
    generic = uses_of(any_entry, ())
    if generic is None:
        return {}
    built = built or set()
    found = {"?": effects_of(generic, built, facts)}
    for key in sorted(any_entry.met)[:MAX_FIELDS]:
        entry = DictKey(key)
        paths: list[Path] = [(entry,)]
        paths += [(entry, field) for field in sorted(_fields_under(facts, loads, key))[:MAX_FIELDS]]
        for path in paths:
            uses = uses_of(path[0], path[1:])
            found[path_key(path)] = effects_of(uses, built, facts) if uses is not None else Effects(stores=True)
    if len(any_entry.met) > MAX_FIELDS:
        return {}  # keys left out would read as untouched
    return found


def _fields_under(facts: FileFacts, loads: list[ast.Name], key: str) -> set[str]:
    """``name["key"].field`` read directly off these loads."""
    parents = facts.scopes.parents
    fields = set()
    for load in loads:
        subscript = parents.get(load)
        if not (isinstance(subscript, ast.Subscript) and isinstance(subscript.slice, ast.Constant) and subscript.slice.value == key):
            continue
        attribute = parents.get(subscript)
        if isinstance(attribute, ast.Attribute) and isinstance(attribute.ctx, ast.Load):
            call = parents.get(attribute)
            if not (isinstance(call, ast.Call) and call.func is attribute):
                fields.add(attribute.attr)
    return fields


def _worker_side(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, summary: FunctionSummary) -> None:
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
    for node in ast.walk(function):
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


RETURNED_LOADER_ARGS = ("shuffle", "num_workers", "persistent_workers", "pin_memory")


def _returns(facts: FileFacts, function: ast.AST) -> list[Returned]:
    """Loaders, samplers, datasets and instances of the file's classes ``function`` returns
    (through names bound once)."""
    from dllint.facts.endless import endless_sampler_call
    from dllint.knowledge.frameworks import RANDOM_SAMPLERS

    loaders = {loader.node: loader for loader in facts.loader_calls}
    found: list[Returned] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Return) or node.value is None or facts.scopes.enclosing_function(node) is not function:
            continue
        scope = facts.scopes.scope_of(node)
        value, value_scope = follow(node.value, scope, facts)
        if not isinstance(value, ast.Call):
            continue
        name = facts.qualname(value.func) or dotted_name(value.func) or ""
        last = name.rsplit(".", 1)[-1]
        loader = loaders.get(value)
        local = facts.classes.get(name)
        if loader is not None:
            args = {}
            for arg in RETURNED_LOADER_ARGS:
                resolved = loader.value(arg)
                if resolved.is_const and isinstance(resolved.value, (bool, int, float, str, type(None))):
                    args[arg] = resolved.value
            found.append(Returned("loader", name, args))
        elif last.endswith("Sampler") or local is not None and any(b.endswith("Sampler") for b in local.base_names):
            endless = endless_sampler_call(facts, value, value_scope) is not None
            found.append(Returned("sampler", name, random=last in RANDOM_SAMPLERS, endless=endless))
        elif local is not None and local.is_dataset:
            found.append(Returned("dataset", name))
        elif local is not None:  # backend = get_backend(): backend.distribute(...) is Backend.distribute
            found.append(Returned("instance", name))
    return found


def _class(facts: FileFacts, cls: ast.ClassDef) -> ClassSummary:
    from dllint.facts.rng import draws, stored_generators
    from dllint.facts.frameworks import class_hooks, class_stores

    context = facts.project
    bases = []
    for base in cls.bases:
        target = context.target_of(facts, base, facts.scopes.module) if context is not None else None
        bases.append(target or facts.qualname(base) or dotted_name(base) or "")
    iter_method = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__iter__"), None)
    summary = ClassSummary(bases, endless=iter_never_ends(iter_method), keeps_iterator=keeps_one_iterator(cls))
    info = facts.classes.get(cls.name)
    summary.loader = bool(info and info.node is cls and info.is_loader)
    summary.names_pin = summary.loader and mentions_pin_memory(cls)
    summary.own_iter = iter_method is not None and not any(
        isinstance(node, ast.Attribute) and node.attr in TORCH_ITERATORS for node in ast.walk(iter_method)
    )
    summary.hooks = class_hooks(facts, cls)
    summary.stores = class_stores(cls)
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is not None:
        methods: list[ast.AST] = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s is not init]
        summary.generators = sorted(a for a in stored_generators(facts, init) if draws(methods, a))
    return summary


def _set_epoch_on(facts: FileFacts, function: ast.AST, name: str) -> bool:
    """``name.set_epoch(...)`` or ``name.sampler.set_epoch(...)`` in ``function``."""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "set_epoch":
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == name:
                return True
    return False


def effects_of(uses: list[Use], built: set[int], facts: FileFacts | None = None) -> Effects:
    """Fold a value's uses into :class:`Effects`; loops in ``built`` make a fresh value each pass."""
    from dllint.facts.devices import batch_cuda_copies, copies_of
    effects = Effects()
    seen: set[int] = set()
    for use in uses:
        loops = [loop for loop in use.loops if id(loop) not in built]
        if use.kind is Move.ITERATE:
            if use.how is How.ON_STOP or id(use.node) in seen:
                continue
            seen.add(id(use.node))
            effects.iterations = min(2, effects.iterations + 1)
            effects.per_epoch |= bool(loops)
            copies = batch_cuda_copies(facts, use) if facts is not None else []
            if copies:
                effects.cuda_copy = effects.cuda_copy.join(copies_of(copies))
            elif use.copies:
                effects.cuda_copy = effects.cuda_copy.join(use.copies)
        elif use.how is How.REMOTE and use.remote is not None:
            effects.follow.append([use.remote[0], use.remote[1], bool(loops), *use.remote[2:]])
        else:
            _escaped(effects, use.how)
    return effects


def _escaped(effects: Effects, how: How) -> None:
    """What an escape of the value says about it."""
    if how is How.RETURN:
        effects.returns = True
    elif how is How.UNCLAIMED:
        effects.stores = True
    elif how is How.SET_EPOCH:
        effects.set_epoch = True
    else:
        effects.unknown = True
