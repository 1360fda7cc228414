"""Loader calls and their arguments, mapped onto torch's DataLoader signature."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.values import ABSENT, ProjectCalls, Value, callers_keywords, option_of, project_calls, resolve
from dllint.knowledge.loaders import (
    TORCH_KEYWORD_ONLY,
    TORCH_LOADER_QUALNAMES,
    TORCH_POSITIONAL,
    FrameworkLoaderSettings,
    LibraryLoader,
)

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Constant
    from dllint.facts.scopes import Scope

LOADER_QUALNAMES = TORCH_LOADER_QUALNAMES

POSITIONAL_PARAMS = TORCH_POSITIONAL
KEYWORD_ONLY_PARAMS = TORCH_KEYWORD_ONLY
ALL_PARAMS = frozenset(POSITIONAL_PARAMS + KEYWORD_ONLY_PARAMS)
# torch's DataLoader parameters whose default is 0/False: written as 0/False, or left out, alike.
FALSE_BY_DEFAULT = frozenset({"num_workers", "persistent_workers", "pin_memory", "drop_last", "shuffle"})


class Argument(NamedTuple):
    name: str
    value: ast.expr  # the expression passed
    node: ast.AST  # where to report: the keyword (``name=value``) or the positional expression
    scope: Scope  # where ``value`` is evaluated
    keyword: ast.keyword | None = None  # None for positional or splat-provided arguments
    from_splat: bool = False


@dataclass
class LoaderCall:
    """One loader construction in the file, its arguments bound to the loader's signature."""

    node: ast.Call
    scope: Scope
    facts: FileFacts = field(repr=False)
    keywords_only: bool = False
    arguments: dict[str, Argument] = field(default_factory=dict)
    unknown_splat: bool = False  # an unresolvable ``*args``/``**kwargs``: absent arguments are unknown
    library: LibraryLoader | None = None  # a library's loader class (dllint.knowledge.loaders)
    settings: FrameworkLoaderSettings | None = None  # a framework's loader settings (TrainingArguments)

    def argument(self, name: str) -> Argument | None:
        return self.arguments.get(name)

    def value(self, name: str) -> Value:
        """The resolved value of parameter ``name``: absent, const, cpu_count or dynamic. An
        absent argument whose class documents a default of its own has that value."""
        arg = self.arguments.get(name)
        if arg is None:
            if self.unknown_splat:  # it may be in the splat: unknown (the rule catalog: unknown is silent)
                return Value("dynamic", unknown=True)
            defaults = self.settings.defaults if self.settings else self.library.defaults if self.library else {}
            return Value("const", defaults[name]) if name in defaults else ABSENT
        return resolve(arg.value, arg.scope, self.facts)

    @property
    def pins_batches(self) -> bool:
        """torch's ``pin_memory`` would pin this loader's batches (not a graph library's graphs)."""
        return self.library is None or self.library.pins_batches

    @property
    def torch_positions(self) -> bool:
        """Its positional arguments bind the parameters torch's would: what a fix that edits
        arguments by position assumes."""
        if self.library is None:
            return self.settings is None
        count = sum(1 for a in self.node.args if not isinstance(a, ast.Starred))
        return self.library.positional[:count] == POSITIONAL_PARAMS[:count]

    def takes_keyword(self, name: str) -> bool | None:
        """Adding ``name=...`` to this call is accepted: always for torch's and the libraries'
        loaders; for a custom loader class, what its ``__init__`` says (None: not read here)."""
        if not self.keywords_only or self.settings is not None:
            return True
        return self.facts.custom_loader_takes(self.node.func, name)

    def given(self, name: str) -> bool:
        """Passed with a value that is not (provably) ``None``."""
        arg = self.arguments.get(name)
        if arg is None:
            return False
        value = resolve(arg.value, arg.scope, self.facts)
        return not (value.is_const and value.value is None)

    @property
    def num_workers(self) -> Value:
        return self.value("num_workers")

    @property
    def is_multi_worker(self) -> bool:
        """``num_workers`` not provably 0, and the workers are processes (not threads: MONAI's
        ``ThreadDataLoader(use_thread_workers=True)``). Not a count the calls in view leave
        unknown (:attr:`Value.unknown`): no evidence that any worker starts."""
        threads = self.library.thread_workers if self.library else ""
        if threads and self.value(threads).truthy() is not False:
            return False
        workers = self.num_workers
        return not (workers.is_zero_or_absent() or workers.unknown)

    @property
    def workers_option(self) -> str | None:
        """The command-line option (or config key) ``num_workers`` comes from when only its
        default (0) keeps the loader single-process: the option exists to be raised."""
        arg = self.arguments.get("num_workers")
        if arg is None or self.is_multi_worker:
            return None
        option = option_of(arg.value, arg.scope, self.facts)
        if option is None and self.num_workers.config is not None:
            return self.num_workers.config.key  # a config key set to 0, as a machine's profile may (train_ds.num_workers)
        return option

    @property
    def may_start_workers(self) -> bool:
        """For the crash rules (DL1xx): multi-worker, or ``num_workers`` from a command-line
        option whose default is 0 (the rule catalog: "Worker counts from the command line");
        not a loader whose name is rebound before anything reads it (never iterated: B5)."""
        return (self.is_multi_worker or self.workers_option is not None) and not self.facts.usage.names.replaced_unread(self.node)

    def when_workers(self) -> str:
        """The message suffix naming the option, for a loader that starts workers only once it is raised."""
        option = None if self.is_multi_worker else self.workers_option
        return f" (when {option} > 0)" if option else ""

    @property
    def dataset(self) -> ast.expr | None:
        arg = self.arguments.get("dataset")
        return arg.value if arg else None


def mentions_pin_memory(node: ast.AST) -> bool:
    """A loader subclass's code names ``pin_memory`` (a parameter, a keyword it hands on, an
    attribute it sets): it may pin by default. One that never does keeps torch's ``False``."""
    for sub in ast.walk(node):
        name = (
            sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute)
            else sub.arg if isinstance(sub, (ast.keyword, ast.arg)) else sub.value if isinstance(sub, ast.Constant) else None
        )
        if name == "pin_memory":
            return True
    return False


def collect_loader_calls(facts: FileFacts, calls: list[ast.Call]) -> list[LoaderCall]:
    loaders = []
    for call in calls:
        kind = facts.loader_kind(call.func)
        if kind is not None:
            loaders.append(_build(facts, call, kind))
    return loaders


def collect_loader_settings(facts: FileFacts, calls: list[ast.Call]) -> list[LoaderCall]:
    """Framework settings calls (``TrainingArguments(dataloader_num_workers=4)``) as loader
    records: their ``dataloader_*`` keywords under torch's names, reported at the call."""
    found = []
    for call in calls:
        settings = facts.loader_settings_kind(call.func)
        if settings is None:
            continue
        scope = facts.scopes.scope_of(call)
        record = LoaderCall(call, scope, facts, keywords_only=True, settings=settings)
        record.unknown_splat = bool(call.args) and any(isinstance(a, ast.Starred) for a in call.args)
        for keyword in call.keywords:
            if keyword.arg is None:
                record.unknown_splat = True  # (dataclass fields from a dict: unknown)
            elif keyword.arg in settings.arguments:
                name = settings.arguments[keyword.arg]
                record.arguments[name] = Argument(name, keyword.value, keyword, scope, keyword)
        found.append(record)
    return found


def _build(facts: FileFacts, call: ast.Call, kind: bool | LibraryLoader) -> LoaderCall:
    """``kind``: a library's loader class, or whether a custom loader takes keywords only."""
    scope = facts.scopes.scope_of(call)
    library = kind if isinstance(kind, LibraryLoader) else None
    keywords_only = kind is True
    loader = LoaderCall(call, scope, facts, keywords_only, library=library)
    positional = _positional_names(library)
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            loader.unknown_splat = True
            break
        if keywords_only and index > 0:
            break  # a custom loader's positional parameters beyond the dataset are unknown
        if index < len(positional):
            name = positional[index]
            loader.arguments[name] = Argument(name, arg, arg, scope)
    for keyword in call.keywords:
        if keyword.arg is None:
            entries = _splat_entries(facts, keyword.value, scope, call)
            if entries is None:  # ``{...} if use_cuda else {}``: either branch's dict
                entries = _conditional_entries(facts, keyword.value, scope, call, library is None)
            if entries is None:  # the wrapper's own **kwargs: what its callers pass
                entries = callers_keywords(keyword.value, scope, facts)
            if entries is None:  # a parameter holding the dict its callers build
                entries = _callers_dict(facts, keyword.value, scope)
            if entries is None:
                loader.unknown_splat = True
                continue
            for name, (value, value_scope) in entries.items():
                loader.arguments.setdefault(_torch_name(library, name), Argument(name, value, keyword, value_scope, None, True))
        else:
            name = _torch_name(library, keyword.arg)
            loader.arguments[name] = Argument(name, keyword.value, keyword, scope, keyword)
    if library is not None:
        for name in library.sets_itself:
            loader.arguments.pop(name, None)  # the class passes its own: the caller's never reaches torch
    return loader


def _positional_names(library: LibraryLoader | None) -> tuple[str, ...]:
    """The parameters positional arguments bind, under torch's names where torch has one."""
    if library is None:
        return POSITIONAL_PARAMS
    return tuple(_torch_name(library, name) for name in library.positional)


def _torch_name(library: LibraryLoader | None, name: str) -> str:
    """A library's parameter under torch's name: its samples are torch's ``dataset``."""
    if library is not None and library.samples != "dataset":
        if name == library.samples:
            return "dataset"
        if name == "dataset":
            return "_dataset"  # not the samples of this class (PyG's NodeLoader sets its own)
    return name


def _splat_entries(
    facts: FileFacts, expr: ast.expr, scope: Scope, call: ast.Call | None = None, passing: bool = False
) -> dict[str, tuple[ast.expr, Scope]] | None:
    """Entries of a ``**`` splat that is a dict literal / ``dict(...)`` call, directly or via a
    name (bound once, or the binding that reaches ``call`` in straight-line module code: a
    notebook's ``kwargs = {...}`` in several cells), with the constant-key edits made to it before
    ``call`` in the same block (``kw["num_workers"] = 4``, ``kw.update(shuffle=True)``); None
    when it cannot be resolved."""
    edits: list[tuple[str, ast.expr]] = []
    if isinstance(expr, ast.Name):
        found = facts.reaching_value(expr.id, scope, call)
        if found is None or found[1].value is None:
            return None
        found_edits = _dict_edits(facts, expr.id, found[0], found[1].node, call, passing)
        if found_edits is None:
            return None
        edits = found_edits
        scope, expr = found[0], found[1].value
    entries = _literal_entries(expr, scope)
    if entries is None:
        return None
    for key, value in edits:
        entries[key] = (value, scope)
    return entries


def _conditional_entries(
    facts: FileFacts, expr: ast.expr, scope: Scope, call: ast.Call, torch_defaults: bool
) -> dict[str, tuple[ast.expr, Scope]] | None:
    """A ``**`` splat of a name bound to ``{...} if cond else {...}`` that nothing edits before
    ``call``: a key both branches write as the same constant is that constant, a key only one
    writes or they differ on is unknown, a key neither writes is absent (audit L2:
    ``kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}``); with
    ``torch_defaults``, a 0/False one branch writes where the other is silent is torch's default."""
    if not isinstance(expr, ast.Name):
        return None  # an inline ``**({...} if c else {})`` (an optional extra option) stays unknown
    branches = _branch_dicts(facts, expr, scope, call, passing=False)
    if branches is None:
        return None
    entries = _agreed_entries(branches, expr, scope)
    for key in FALSE_BY_DEFAULT & entries.keys() if torch_defaults else ():  # 0 in one branch, absent in the other: 0 either way
        written = [b[key][0] for b in branches if key in b]
        if all(isinstance(v, ast.Constant) and v.value in (0, False, None) for v in written):
            del entries[key]
    return entries


def _literal_entries(expr: ast.expr, scope: Scope) -> dict[str, tuple[ast.expr, Scope]] | None:
    entries: dict[str, tuple[ast.expr, Scope]] = {}
    if isinstance(expr, ast.Dict):
        for key, value in zip(expr.keys, expr.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None  # ``**`` inside the literal or a computed key
            entries[key.value] = (value, scope)
        return entries
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args:
        for keyword in expr.keywords:
            if keyword.arg is None:
                return None
            entries[keyword.arg] = (keyword.value, scope)
        return entries
    return None


def _dict_edits(
    facts: FileFacts, name: str, owner: Scope, binding: ast.AST, call: ast.Call | None, passing: bool = False
) -> list[tuple[str, ast.expr]] | None:
    """The constant-key edits of the dict bound to ``name`` that run, unconditionally, between its
    binding and ``call``: statements of the binding's own block. Any other use of the dict (an
    edit in a branch, a computed key, the dict handed to a function) may change it: None.
    ``passing``: the dict is an argument of ``call`` (a loader factory's options), and handing it
    as an argument to calls (``load_training(.., kwargs)``, ``load_testing(.., kwargs)``) is
    read as passing it on, not as changing it."""
    parents = facts.scopes.parents
    bound_at = facts.statement_of(binding)
    used_at = facts.statement_of(call) if call is not None else None
    edits: list[tuple[int, str, ast.expr]] = []
    for scope in facts.scopes.scopes.values():
        for load in scope.loads:
            if load.id != name:
                continue
            found = facts.scopes.lookup(name, scope)
            if found is None or found[0] is not owner:
                continue
            parent = parents.get(load)
            if isinstance(parent, ast.keyword) and parent.arg is None:
                continue  # the splat itself
            if passing and (isinstance(parent, ast.keyword) or isinstance(parent, ast.Call) and load in parent.args):
                continue  # handed on as an argument
            edit = _constant_key_edit(facts, load)
            statement = facts.statement_of(load)
            if edit is None or statement is None or bound_at is None or not _same_block(facts, bound_at, statement):
                return None
            if used_at is not None and _same_block(facts, bound_at, used_at) and statement.lineno > used_at.lineno:
                continue  # after the loader is built: it never sees the edit
            if statement.lineno < bound_at.lineno:
                continue  # an edit of an earlier binding of the name
            edits += [(statement.lineno, key, value) for key, value in edit]
    return [(key, value) for _, key, value in sorted(edits, key=lambda e: e[0])]


def _constant_key_edit(facts: FileFacts, load: ast.Name) -> list[tuple[str, ast.expr]] | None:
    """``d["k"] = v`` or ``d.update(k=v)`` / ``d.update({"k": v})`` as a statement of its own."""
    parent = facts.scopes.parents.get(load)
    above = facts.scopes.parents.get(parent) if parent is not None else None
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store) and isinstance(above, ast.Assign):
        key = parent.slice
        if len(above.targets) == 1 and isinstance(key, ast.Constant) and isinstance(key.value, str):
            return [(key.value, above.value)]
        return None
    if isinstance(parent, ast.Attribute) and parent.attr == "update" and isinstance(above, ast.Call):
        if not isinstance(facts.scopes.parents.get(above), ast.Expr):
            return None
        if above.args:
            literal = _literal_entries(above.args[0], facts.scopes.scope_of(above)) if len(above.args) == 1 else None
            if literal is None:
                return None
            found = [(key, value) for key, (value, _) in literal.items()]
        else:
            found = []
        if any(k.arg is None for k in above.keywords):
            return None
        return found + [(k.arg, k.value) for k in above.keywords if k.arg is not None]
    return None


def _same_block(facts: FileFacts, first: ast.stmt, second: ast.stmt) -> bool:
    """Both statements sit in one statement list (``body``, ``orelse``, ...) of one parent."""
    parent = facts.scopes.parents.get(first)
    if parent is None or facts.scopes.parents.get(second) is not parent:
        return False
    return any(
        isinstance(block, list) and first in block and second in block
        for block in (getattr(parent, field, None) for field in ("body", "orelse", "finalbody", "handlers"))
    )


def passed_dicts(facts: FileFacts, expr: ast.expr, scope: Scope, call: ast.Call) -> list[dict[str, tuple[ast.expr, Scope]]] | None:
    """The dict literal(s) an argument of ``call`` holds: a literal (directly or through a name,
    with its constant-key edits, :func:`_splat_entries`), or one per branch of ``{...} if cond
    else {}``. None when it cannot be told (the rule catalog: unknown is silent)."""
    branches = _branch_dicts(facts, expr, scope, call, passing=True)
    if branches is not None:
        return branches
    entries = _splat_entries(facts, expr, scope, call, passing=True)  # (None for a conditional not read above)
    return None if entries is None else [entries]


def _branch_dicts(
    facts: FileFacts, expr: ast.expr, scope: Scope, call: ast.Call, passing: bool
) -> list[dict[str, tuple[ast.expr, Scope]]] | None:
    """Each branch's dict of ``{...} if cond else {...}``, written at ``expr`` or bound to the
    name ``expr`` with no edit before ``call`` (``passing``: as :func:`_dict_edits`); None for
    anything else, or a branch that is not a dict literal."""
    if isinstance(expr, ast.Name):
        found = facts.reaching_value(expr.id, scope, call)
        if found is None or not isinstance(found[1].value, ast.IfExp):
            return None
        if _dict_edits(facts, expr.id, found[0], found[1].node, call, passing) != []:
            return None  # a conditional dict edited afterwards: not followed
        scope, expr = found[0], found[1].value
    if not isinstance(expr, ast.IfExp):
        return None
    branches = [_literal_entries(branch, scope) for branch in (expr.body, expr.orelse)]
    return None if any(b is None for b in branches) else [b for b in branches if b is not None]


def constant_dicts(facts: FileFacts, expr: ast.expr, scope: Scope, call: ast.Call) -> list[dict[str, Constant]] | None:
    """:func:`passed_dicts` whose every entry is a JSON constant (as its file resolves it): what
    another file's summary records of a call passing a dict of loader options."""
    dicts = passed_dicts(facts, expr, scope, call)
    if dicts is None:
        return None
    found: list[dict[str, Constant]] = []
    for entries in dicts:
        constants: dict[str, Constant] = {}
        for key, (value_expr, value_scope) in entries.items():
            value = resolve(value_expr, value_scope, facts)
            if not (value.is_const and isinstance(value.value, (str, int, float, bool, type(None)))):
                return None
            constants[key] = value.value
        found.append(constants)
    return found


def _callers_dict(facts: FileFacts, expr: ast.expr, scope: Scope) -> dict[str, tuple[ast.expr, Scope]] | None:
    """``**kwargs`` where ``kwargs`` is a (non-``**``) parameter: the dict literals every call of
    the function in the project passes for it (this file's, :func:`passed_dicts`; other files',
    as their summaries record them). An entry every one of them writes as the same constant is
    that constant; one they differ on or some leave out is unknown; a key none writes is known
    absent. None when a call passes what cannot be read, or no call is in view."""
    if not isinstance(expr, ast.Name):
        return None
    name = expr.id
    found = project_calls(expr, scope, facts)
    if found is None or not found.decided:
        return None
    splat = found.function.args.kwarg is not None and found.function.args.kwarg.arg == name
    options: list[dict[str, tuple[ast.expr, Scope]]] = []
    for call in found.here:
        dicts = _splatted_dicts(facts, call, found.function) if splat else _argument_dicts(facts, call, found, name)
        if dicts is None:
            return None
        options += dicts
    position = found.position(name)
    for arguments in found.elsewhere.calls:
        dicts_elsewhere = arguments.dicts.get("**" if splat else name if name in arguments.shape.keywords else str(position))
        if dicts_elsewhere is None:
            return None
        options += [{k: (_entry_elsewhere(k, v, expr), scope) for k, v in d.items()} for d in dicts_elsewhere]
    return _agreed_entries(options, expr, scope)


def _entry_elsewhere(key: str, value: Constant, at: ast.expr) -> ast.expr:
    """An entry of another file's dict as a constant placed at ``at``; a worker count above 0
    as an unknown value: whether it is written as a number there (``--workers 0`` must keep
    working after a fix, DL201's fix safety) is not in the summary."""
    if key == "num_workers" and value not in (0, None):
        return _unknown_at(at)
    return ast.copy_location(ast.Constant(value), at)


def _unknown_at(at: ast.expr) -> ast.expr:
    """A call of nothing known: resolves to an unknown value (may be > 0)."""
    return ast.copy_location(ast.Call(func=ast.Name(id="<callers>", ctx=ast.Load()), args=[], keywords=[]), at)


def _argument_dicts(facts: FileFacts, call: ast.Call, found: ProjectCalls, name: str) -> list[dict[str, tuple[ast.expr, Scope]]] | None:
    argument = found.argument(call, name)
    return passed_dicts(facts, argument, facts.scopes.scope_of(call), call) if isinstance(argument, ast.expr) else None


def _splatted_dicts(
    facts: FileFacts, call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[dict[str, tuple[ast.expr, Scope]]] | None:
    """What reaches ``function``'s ``**kwargs`` from a call that splats one dict
    (``make_data_loader(args, **kwargs)``): the dict's entries, per branch."""
    splats = [k for k in call.keywords if k.arg is None]
    if len(splats) != 1 or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is not None for k in call.keywords):
        return None  # keywords beside the splat: callers_keywords' shape, not this one
    named = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    dicts = passed_dicts(facts, splats[0].value, facts.scopes.scope_of(call), call)
    if dicts is None or any(key in named for entries in dicts for key in entries):
        return None  # an entry binds a named parameter: not all of it reaches ``**kwargs``
    return dicts


def _agreed_entries(
    options: list[dict[str, tuple[ast.expr, Scope]]], at: ast.expr, scope: Scope
) -> dict[str, tuple[ast.expr, Scope]]:
    """One entry per key any of the dicts writes: the expression where only one dict is in view
    or all write the same constant; else a call of nothing known, which resolves to an unknown
    value (``num_workers`` 1 under ``if args.cuda`` and absent otherwise: may be > 0)."""
    entries: dict[str, tuple[ast.expr, Scope]] = {}
    for key in dict.fromkeys(k for option in options for k in option):
        values = [option.get(key) for option in options]
        first = values[0]
        if first is not None and (len(values) == 1 or all(
            v is not None and isinstance(v[0], ast.Constant) and isinstance(first[0], ast.Constant)
            and type(v[0].value) is type(first[0].value) and v[0].value == first[0].value for v in values
        )):
            entries[key] = first
        else:
            entries[key] = (_unknown_at(at), scope)
    return entries
