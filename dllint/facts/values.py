"""Value resolution, as the rule catalog defines it: literals, names bound once,
``args.NAME`` with an argparse default, and the CPU-count calls; also ``self.X`` / ``args.X``
stored once and names bound only to one expression (:mod:`dllint.facts.attributes`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from dllint.facts.attributes import bound_once

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.queries import PassedArguments
    from dllint.facts.scopes import Scope
    from dllint.findings import ConfigKey

CPU_COUNT_CALLS = frozenset(
    {
        "os.cpu_count",
        "os.process_cpu_count",
        "multiprocessing.cpu_count",
        "torch.multiprocessing.cpu_count",
        "psutil.cpu_count",
    }
)
SCHED_GETAFFINITY = "os.sched_getaffinity"
MAX_DEPTH = 8


class Value(NamedTuple):
    """What an expression is known to evaluate to.

    kind is "const" (``value`` holds it), "cpu_count" (the machine's CPU
    count), "absent" (the argument was not passed) or "dynamic".
    ``origin`` is where the value is written, for reporting.
    """

    kind: str
    value: Any = None
    origin: ast.AST | None = None
    config: ConfigKey | None = None  # the config file's key the value is read from (cfg.train_ds.num_workers)
    # "dynamic" only: the value is decided by the calls in view, which pass what the engine cannot
    # read (a value another module holds, a file read at run time) and nothing known to be truthy:
    # no evidence either way, so a rule that needs it stays silent (the rule catalog: unknown is silent)
    unknown: bool = False

    @property
    def is_const(self) -> bool:
        return self.kind == "const"

    @property
    def is_absent(self) -> bool:
        return self.kind == "absent"

    @property
    def is_dynamic(self) -> bool:
        return self.kind == "dynamic"

    @property
    def is_cpu_count(self) -> bool:
        return self.kind == "cpu_count"

    def truthy(self) -> bool | None:
        """True/False when known, None when it cannot be told."""
        if self.kind == "const":
            return bool(self.value)
        if self.kind == "absent":
            return False
        if self.kind == "cpu_count":
            return True
        return None

    def is_zero_or_absent(self) -> bool:
        return self.kind == "absent" or (self.kind == "const" and self.value == 0 and not isinstance(self.value, bool))

    def is_int(self) -> bool:
        return self.kind == "const" and isinstance(self.value, int) and not isinstance(self.value, bool)


ABSENT = Value("absent")


def dynamic(origin: ast.AST | None = None) -> Value:
    return Value("dynamic", origin=origin)


def resolve(expr: ast.expr, scope: Scope, facts: FileFacts, depth: int = 0) -> Value:
    """Resolve ``expr`` evaluated in ``scope`` as far as the rule catalog allows."""
    if depth > MAX_DEPTH:
        return dynamic(expr)
    if isinstance(expr, ast.Constant):
        return Value("const", expr.value, expr)
    if (
        isinstance(expr, ast.UnaryOp)
        and isinstance(expr.op, (ast.USub, ast.UAdd))
        and isinstance(expr.operand, ast.Constant)
        and isinstance(expr.operand.value, (int, float))
        and not isinstance(expr.operand.value, bool)
    ):
        value = expr.operand.value
        return Value("const", -value if isinstance(expr.op, ast.USub) else value, expr)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        target, target_scope = follow(expr, scope, facts)
        if target is not expr:
            return resolve(target, target_scope, facts, depth + 1)
        held = bound_once(expr, scope, facts)
        if held is not None:
            return resolve(held[0], held[1], facts, depth + 1)
    if isinstance(expr, ast.Name):
        passed = parameter_value(expr, scope, facts, depth)
        if passed is not None:
            return passed
    if isinstance(expr, ast.Subscript):
        target, target_scope = follow(expr, scope, facts)  # args["workers"] of a vars() namespace
        if target is not expr:
            return resolve(target, target_scope, facts, depth + 1)
        entry = dict_entry(expr, scope, facts)
        if entry is not None:
            return resolve(entry, scope, facts, depth + 1)
    if isinstance(expr, (ast.Attribute, ast.Subscript)):
        return config_value(expr, scope, facts) or dynamic(expr)
    if isinstance(expr, ast.Call):
        if is_cpu_count_call(expr, facts):
            return Value("cpu_count", origin=expr)
        return dynamic(expr)
    return dynamic(expr)


def parameter_value(name: ast.Name, scope: Scope, facts: FileFacts, depth: int = 0) -> Value | None:
    """A parameter of a function, from every call of it in the project (this file's and other
    files', :func:`project_calls`), each leaving it at its default or passing a value: the
    constant (or CPU count) they all agree on (``def build(ds, persistent=False)`` called as
    ``build(ds)`` everywhere); an unknown value when the calls pass what cannot be read and
    nothing known to be truthy (``num_workers=SETTINGS['num workers']`` with ``SETTINGS``
    another module's, :attr:`Value.unknown`). A parameter without a default takes only a
    constant every call passes (:func:`_required_value`). None (dynamic) when they differ, when
    nothing calls it, or while a file is summarized (a summary depends on its own file only)."""
    found = project_calls(name, scope, facts)
    if found is not None and found.bound and not found.elsewhere.readable:
        return _partly_read(found, name.id, facts, depth)
    if found is None or not found.decided:
        return _default_out_of_view(name, scope, facts, depth)
    default = parameter_default(found.function, name.id)
    if default is None:
        return _required_value(_passed(found, name.id, dynamic(name), facts, depth))
    value = resolve(default, facts.scopes.scope_of(default), facts, depth + 1)
    return _agreed(value, _passed(found, name.id, value, facts, depth))


def _partly_read(found: ProjectCalls, param: str, facts: FileFacts, depth: int) -> Value | None:
    """``__init__``'s parameter where another file constructs the class in a way its summary
    does not read (an instance that only shows a few batches: no use of it is recorded): the
    constructions that are read decide only where one passes something known and truthy (four
    workers: evidence, as :func:`_agreed` says); otherwise the count is unknown, never the
    default (tenth audit B3: a DataModule built in one notebook to look at its data, in another
    with ``num_workers=4``)."""
    cls = facts.scopes.parents.get(found.function)
    project = facts.project
    assert isinstance(cls, ast.ClassDef) and project is not None  # constructions() of a project's file
    readable = found._replace(elsewhere=OtherCallers(tuple(project.calls_elsewhere(cls.name, complete=False) or ())))
    written = parameter_default(found.function, param)
    default = resolve(written, facts.scopes.scope_of(written), facts, depth + 1) if written is not None else dynamic()
    return _agreed(default, [*_passed(readable, param, default, facts, depth), dynamic()])


def _passed(found: ProjectCalls, param: str, default: Value, facts: FileFacts, depth: int) -> list[Value]:
    """What each call of the function passes for ``param`` (``default`` where it leaves it out)."""
    passed: list[Value] = []
    for call in found.here:
        argument = found.argument(call, param)
        if argument is ABSENT:
            passed.append(default)
        else:
            passed.append(resolve(argument, facts.scopes.scope_of(call), facts, depth + 1) if isinstance(argument, ast.expr) else dynamic(call))
    position = found.position(param)
    for arguments in found.elsewhere.calls:
        passes = arguments.shape.passes(position, param)
        passed.append(default if passes is False else _passed_elsewhere(arguments, position, param))
    return passed


def _required_value(passed: list[Value]) -> Value | None:
    """A parameter without a default (``def create_dataloaders(X, num_workers)``): the constant
    (or CPU count) every call passes (tabnet's ``create_dataloaders(..., self.num_workers, ...)``
    where ``fit`` leaves ``num_workers`` at 0); None (dynamic, as before) where they differ or
    one passes what cannot be read."""
    if all(v.is_const and _same(v.value, passed[0].value) for v in passed):
        return passed[0]
    return passed[0] if all(v.is_cpu_count for v in passed) else None


def _passed_elsewhere(arguments: PassedArguments, position: int | None, keyword: str) -> Value:
    """What another file's call passes for a parameter (as its own file resolves it)."""
    key = keyword if keyword in arguments.shape.keywords else str(position)
    if key in arguments.constants:
        return Value("const", arguments.constants[key])
    return Value("cpu_count") if key in arguments.cpu_counts else dynamic()


def _agreed(default: Value, passed: list[Value]) -> Value | None:
    """The value every call's ``passed`` agrees on: the default's record where it is that
    constant (or the CPU count), else the first call's; unknown where the calls pass unreadable values besides falsy
    ones; None (dynamic) where they differ, one passes something truthy besides, or one leaves the
    parameter at a default this file computes (what the rules read where it is written in place)."""
    if all(v.is_const and default.is_const and _same(v.value, default.value) for v in passed):
        return default
    if passed and all(v.is_const and _same(v.value, passed[0].value) for v in passed):
        return passed[0]  # every call passes the same constant (another file's: no origin here)
    if all(v.is_cpu_count for v in passed) and default.is_cpu_count:
        return default
    if default.is_dynamic and not default.unknown and any(v is default for v in passed):
        return None  # a call leaves it at a default computed here (``int(os.cpu_count() / 2)``): read as if written in place
    if any(v.truthy() is not False and not v.is_dynamic for v in passed) or not any(v.is_dynamic for v in passed):
        return None  # a path passes something known and truthy (a worker count): evidence
    return Value("dynamic", origin=default.origin, unknown=True)


def _default_out_of_view(name: ast.Name, scope: Scope, facts: FileFacts, depth: int) -> Value | None:
    """The default of a parameter whose function no call in view reaches (no caller in this
    file, no file that imports it; a method, called through instances): its only evidence (the
    rule catalog: unknown is silent, a documented default is evidence). ``make(ds,
    num_workers=0)`` that nothing here calls builds a loader without workers; with
    ``num_workers=4`` one with four. A method's default is read while its file is summarized
    too: the answer depends on its own file only (tabnet's ``self.num_workers`` stored by
    ``fit(..., num_workers=0)`` and passed to another module's factory)."""
    found = facts.scopes.lookup(name.id, scope)
    if found is None or len(found[1]) != 1 or found[1][0].kind != "param":
        return None
    function = found[0].node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
        not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in function.decorator_list
    ):
        return None  # decorated (a registry, a CLI command, a hook): its callers are elsewhere by design
    default = parameter_default(function, name.id)
    project = facts.project
    owner = facts.scopes.parents.get(function)
    if not isinstance(owner, (ast.Module, ast.ClassDef)):
        return None  # a nested function: its enclosing function calls it
    if default is None or isinstance(owner, ast.Module) and project is not None and project.summarizing or _called_here(facts, function):
        return None  # a summary depends on its own file only; a method's answer does (its calls through instances are not read)
    if isinstance(owner, ast.Module) and project is not None and project.named_elsewhere(function.name):
        return None  # another file imports it: its calls there decide (or leave it unknown)
    value = resolve(default, facts.scopes.scope_of(default), facts, depth + 1)
    return value if value.is_const else None


def _called_here(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A call in this file passes ``function``'s parameters: a call of it, or for ``__init__``
    a call of its class (``Loaders(workers=2)``; a class also used otherwise is not followed)."""
    if facts.usage.callers(function):
        return True
    cls = facts.scopes.parents.get(function)
    if function.name != "__init__" or not isinstance(cls, ast.ClassDef):
        return False
    return bool(facts.usage.lookups.call_sites(cls, facts.scopes.scope_of(cls)))


_MISSING = object()  # an argument passed as no JSON constant


def _same(a: Any, b: Any) -> bool:
    return a is not _MISSING and a == b and type(a) is type(b)


def _constant_of(node: ast.expr) -> Any:
    return node.value if isinstance(node, ast.Constant) else _MISSING


def parameter_position(function: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> int | None:
    """The position a call may pass ``param`` at; None for a keyword-only parameter."""
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    return positional.index(param) if param in positional else None


def parameter_default(function: ast.AST, param: str) -> ast.expr | None:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return defaults_of(function).get(param)


def defaults_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Each parameter with a default -> its default."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def argument_for(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str, bound: int = 0) -> ast.expr | Value | None:
    """What ``call`` passes for ``param``: the expression, ABSENT, or None when unknown.
    ``bound``: leading parameters the call does not pass (``self`` of ``__init__``)."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    position = parameter_position(function, param)
    if position is not None:
        position -= bound
    return call.args[position] if position is not None and 0 <= position < len(call.args) else ABSENT


class OtherCallers(NamedTuple):
    """The calls of a function in the project's other files: what each passes (``calls``,
    empty where no other file calls it), or ``readable`` False where a file that names it
    calls it in a way no summary reads (then what the calls pass is unknown)."""

    calls: tuple[PassedArguments, ...] = ()
    readable: bool = True


NO_OTHER_CALLERS = OtherCallers()
UNREADABLE_CALLERS = OtherCallers(readable=False)


class ProjectCalls(NamedTuple):
    """Every call in the project of a function: this file's (``here``), and what each call in
    another file passes (``elsewhere``, see :class:`OtherCallers`). ``bound``: the leading
    parameters the calls do not pass (1 for ``__init__``, called as its class: ``self``)."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    here: list[ast.Call]
    elsewhere: OtherCallers
    bound: int = 0

    def position(self, param: str) -> int | None:
        """The position a call passes ``param`` at; None for a keyword-only (or bound) one."""
        position = parameter_position(self.function, param)
        return None if position is None or position < self.bound else position - self.bound

    def argument(self, call: ast.Call, param: str) -> ast.expr | Value | None:
        """What one of the calls here passes for ``param`` (:func:`argument_for`)."""
        return argument_for(call, self.function, param, self.bound)

    @property
    def decided(self) -> bool:
        """The calls decide what a parameter holds: some call is in view, and every other
        file's can be read."""
        return self.elsewhere.readable and bool(self.here or self.elsewhere.calls)


def project_calls(
    name: ast.Name, scope: Scope, facts: FileFacts, wanted: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], bool] = lambda f: True
) -> ProjectCalls | None:
    """The calls of the function whose parameter ``name`` is (:func:`function_calls`). None
    when ``name`` is no parameter bound once of a function (a method: called through instances
    the analysis does not track), when the function is not ``wanted`` (asked before another
    file is searched for its name), or while a file is summarized."""
    found = facts.scopes.lookup(name.id, scope)
    project = facts.project
    if found is None or len(found[1]) != 1 or found[1][0].kind != "param" or project is None or project.summarizing:
        return None
    function = found[0].node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not wanted(function):
        return None
    if isinstance(facts.scopes.parents.get(function), ast.ClassDef):
        return constructions(facts, function)
    return function_calls(facts, function)


def constructions(facts: FileFacts, init: ast.FunctionDef | ast.AsyncFunctionDef) -> ProjectCalls | None:
    """The calls of ``init``'s class, where ``init`` is its ``__init__``: ``Loaders(workers=2)``
    passes ``workers`` after ``self``, as a function's call passes its parameters. This file's
    calls of the class by its name and other files' (:func:`other_callers`). None (the calls
    cannot be told) for any other method, a decorated class, a class bound more than once, used
    other than by calling it (handed on, a base class, ``isinstance``), or one that builds
    itself (``cls(...)``, ``type(self)(...)``: a classmethod's own arguments)."""
    cls = facts.scopes.parents.get(init)
    if init.name != "__init__" or not isinstance(cls, ast.ClassDef) or cls.decorator_list or _builds_itself(facts, cls):
        return None
    owner = facts.scopes.scope_of(cls)
    bound = facts.scopes.lookup(cls.name, owner)
    here = facts.usage.lookups.call_sites(cls, owner)
    if bound is None or bound[0] is not owner or len(bound[1]) != 1 or here is None:
        return None
    return ProjectCalls(init, here, other_callers(facts, cls), bound=1)


def _builds_itself(facts: FileFacts, cls: ast.ClassDef) -> bool:
    """A method of ``cls`` constructs an instance of its own (sub)class: ``cls(...)``,
    ``type(self)(...)``, ``self.__class__(...)``, whose arguments no call of the name shows."""
    return any(facts.contains(cls, call) for call in _self_constructions(facts))


def _self_constructions(facts: FileFacts) -> list[ast.Call]:
    """The file's calls that construct an instance of the class they are in, found once per
    file among its calls (a walk of each class asked about cost more than the file's walk)."""
    found: list[ast.Call] | None = facts.__dict__.get("_self_constructions")
    if found is None:
        found = facts.__dict__["_self_constructions"] = [
            call for call in facts.calls
            if isinstance(call.func, ast.Name) and call.func.id == "cls"
            or isinstance(call.func, ast.Attribute) and call.func.attr == "__class__"
            or isinstance(call.func, ast.Call) and isinstance(call.func.func, ast.Name) and call.func.func.id == "type"
        ]
    return found


def function_calls(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef) -> ProjectCalls:
    """This file's calls of ``function`` (none for a method: its calls through instances do
    not line up with its parameters), and its other files' (:func:`other_callers`)."""
    if isinstance(facts.scopes.parents.get(function), ast.ClassDef):
        return ProjectCalls(function, [], NO_OTHER_CALLERS)
    return ProjectCalls(function, facts.usage.callers(function), other_callers(facts, function))


def other_callers(facts: FileFacts, function: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> OtherCallers:
    """The calls of a module-level ``function`` (or class) in the project's other files, as their
    summaries read them. None for a nested function (a namesake elsewhere is not its caller),
    and none asked while a file is summarized (a summary depends on its own file only)."""
    project = facts.project
    if project is None or project.summarizing or not project.named_elsewhere(function.name):
        return NO_OTHER_CALLERS
    if not isinstance(facts.scopes.parents.get(function), ast.Module):
        return NO_OTHER_CALLERS
    found = project.calls_elsewhere(function.name)
    return UNREADABLE_CALLERS if found is None else OtherCallers(tuple(found))


def default_callee(func: ast.expr, facts: FileFacts) -> ast.expr | None:
    """``klass`` of ``def make(ds, klass=DataLoader, **kwargs): return klass(ds, **kwargs)``:
    its default, where every call of ``make`` in the project leaves it out."""
    if not isinstance(func, ast.Name):
        return None
    defaults: dict[ast.AST, ast.expr | None] = {}

    def named_default(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        defaults[function] = parameter_default(function, func.id)
        return isinstance(defaults[function], (ast.Name, ast.Attribute))

    found = project_calls(func, facts.scopes.scope_of(func), facts, named_default)
    if found is None or not found.decided or not all(found.argument(call, func.id) is ABSENT for call in found.here):
        return None
    position = found.position(func.id)
    if any(arguments.shape.passes(position, func.id) is not False for arguments in found.elsewhere.calls):
        return None
    return defaults[found.function]


def callers_keywords(expr: ast.expr, scope: Scope, facts: FileFacts) -> dict[str, tuple[ast.expr, Scope]] | None:
    """The entries of a function's ``**kwargs`` parameter, where every call of the function in
    the project passes the same keywords beyond its named parameters, each the same expression
    (in another file: the same JSON constant): ``make(ds, num_workers=4, shuffle=True)``. None
    when they differ or cannot be read (a splat, a value of another file that is no constant)."""
    if not isinstance(expr, ast.Name):
        return None
    name = expr.id
    found = project_calls(expr, scope, facts, lambda function: function.args.kwarg is not None and function.args.kwarg.arg == name)
    if found is None or not found.decided:
        return None
    function, calls, elsewhere = found.function, found.here, found.elsewhere.calls
    named = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    first = _extra_keywords(calls[0], named) if calls else _keywords_elsewhere(elsewhere[0], named, expr)
    if first is None or any(_extra_keywords(call, named, first) is None for call in calls[1:]):
        return None
    if not all(_agrees(_keywords_elsewhere(arguments, named, expr), first) for arguments in elsewhere):
        return None
    where = facts.scopes.scope_of(calls[0]) if calls else scope
    return {key: (value, where) for key, value in first.items()}


def _agrees(passed: dict[str, ast.expr] | None, first: dict[str, ast.expr]) -> bool:
    """Another file's call passes the keywords of ``first``, each the same JSON constant."""
    return passed is not None and passed.keys() == first.keys() and all(
        _same(_constant_of(value), _constant_of(first[key])) for key, value in passed.items()
    )


def _keywords_elsewhere(arguments: PassedArguments, named: set[str], at: ast.expr) -> dict[str, ast.expr] | None:
    """The keywords another file's call passes beyond the ``named`` parameters, each as a
    constant placed at ``at`` (the ``**kwargs`` it reaches); None when one is no JSON constant."""
    if arguments.shape.hidden:
        return None
    passed: dict[str, ast.expr] = {}
    for key in arguments.shape.keywords:
        if key not in named:
            if key not in arguments.constants:
                return None
            passed[key] = ast.copy_location(ast.Constant(arguments.constants[key]), at)
    return passed


def _extra_keywords(call: ast.Call, named: set[str], same_as: dict[str, ast.expr] | None = None) -> dict[str, ast.expr] | None:
    """The keywords ``call`` passes beyond the ``named`` parameters (None: a splat hides them,
    or they are not the keys and expressions of ``same_as``)."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    passed = {k.arg: k.value for k in call.keywords if k.arg is not None and k.arg not in named}
    if same_as is not None and (passed.keys() != same_as.keys() or any(ast.dump(v) != ast.dump(same_as[k]) for k, v in passed.items())):
        return None
    return passed


def config_value(expr: ast.expr, scope: Scope, facts: FileFacts) -> Value | None:
    """``cfg.train_ds.num_workers`` read from the project's config file(s): the value they
    agree on (the rule catalog "Config files"); None when unknown or no project is in view."""
    project = facts.project
    lookup = getattr(project, "config_value", None)
    if lookup is None or getattr(project, "summarizing", False):
        return None
    cache = facts.config_values
    if id(expr) in cache:
        return cache[id(expr)][1]
    from dllint.facts.config_reads import config_read

    read = config_read(expr, scope, facts)
    found = lookup(facts, read) if read is not None else None
    value = None if found is None else Value("const", found[0], expr, found[1])
    cache[id(expr)] = (expr, value)
    return value


def dict_entry(expr: ast.Subscript, scope: Scope, facts: FileFacts) -> ast.expr | None:
    """``SETTINGS['num workers']`` where ``SETTINGS`` is bound once to a dict literal whose keys
    are all written out (no ``**`` entry), read under a constant key: the entry's expression.
    A dict changed after it is built (item assignment, ``.update()``) is bound more than once
    or escapes the scope's single binding, and stays unread."""
    if not isinstance(expr.slice, ast.Constant):
        return None
    target, _ = follow(expr.value, scope, facts)
    if not isinstance(target, ast.Dict) or any(key is None for key in target.keys) or not isinstance(expr.value, ast.Name):
        return None
    if _changed_in_place(expr.value.id, scope, facts):
        return None
    found = [v for k, v in zip(target.keys, target.values) if isinstance(k, ast.Constant) and k.value == expr.slice.value]
    return found[-1] if found else None


def _changed_in_place(name: str, scope: Scope, facts: FileFacts) -> bool:
    """The dict ``name`` is changed after it is built: an item assigned or deleted, or a
    method called on it that changes it."""
    for node in facts.nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete, ast.AnnAssign)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name for t in targets):
                return True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.value.id == name and node.func.attr in ("update", "setdefault", "pop", "popitem", "clear"):
                return True
    return False


def follow(expr: ast.expr, scope: Scope, facts: FileFacts) -> tuple[ast.expr, Scope]:
    """Follow names bound once and ``args.NAME`` (``args["NAME"]``) argparse defaults to the expression that is
    written: the value resolution rules of the rule catalog, for checks that look at its shape."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            found = facts.scopes.single_value(expr.id, scope)
            if found is None or found[1].kind != "assign" or found[1].value is None:
                break
            scope, expr = found[0], found[1].value
        elif (dest := facts.argparse.destination(expr)) is not None:
            default = facts.argparse.default_for(dest)
            if default is None:
                break
            scope, expr = facts.scopes.module, default
        else:
            break
    return expr, scope


def option_of(expr: ast.expr, scope: Scope, facts: FileFacts) -> str | None:
    """The command-line option (``--num_workers``) ``expr`` takes its value from, following
    names bound once to an ``args.NAME`` with an argparse default."""
    for _ in range(MAX_DEPTH):
        if isinstance(expr, ast.Name):
            found = facts.scopes.single_value(expr.id, scope)
            if found is None or found[1].kind != "assign" or found[1].value is None:
                return None
            scope, expr = found[0], found[1].value
        elif (dest := facts.argparse.destination(expr)) is not None:
            if facts.argparse.default_for(dest) is None:
                return None
            return facts.argparse.options.get(dest)
        else:
            return None
    return None


def passed_options(call: ast.Call, scope: Scope, facts: FileFacts) -> dict[str, str]:
    """The keyword arguments of ``call`` that a command-line option sets (``num_workers=
    args.num_workers`` with ``--num_workers``), each with the option: another file's DL1xx
    rules count such a worker count as "may be > 0" (the rule catalog, "Worker counts from the
    command line")."""
    found: dict[str, str] = {}
    for keyword in call.keywords:
        option = option_of(keyword.value, scope, facts) if keyword.arg is not None else None
        if option is not None and keyword.arg is not None:
            found[keyword.arg] = option
    return found


def is_cpu_count_call(call: ast.Call, facts: FileFacts) -> bool:
    name = facts.qualname(call.func)
    if name in CPU_COUNT_CALLS:
        return True
    # len(os.sched_getaffinity(0))
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "len"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Call)
        and facts.qualname(call.args[0].func) == SCHED_GETAFFINITY
    )


def maybe_none(expr: ast.expr, scope: Scope, facts: FileFacts, depth: int = 0) -> bool:
    """Whether ``expr`` may evaluate to None (``x if c else None``, a name bound to None, ...)."""
    if depth > MAX_DEPTH:
        return True
    if isinstance(expr, ast.Constant):
        return expr.value is None
    if isinstance(expr, ast.IfExp):
        return maybe_none(expr.body, scope, facts, depth + 1) or maybe_none(expr.orelse, scope, facts, depth + 1)
    if isinstance(expr, ast.BoolOp):
        return any(maybe_none(v, scope, facts, depth + 1) for v in expr.values)
    if isinstance(expr, ast.Name):
        found = facts.scopes.lookup(expr.id, scope)
        if found is None:
            return expr.id == "None"
        owner, bindings = found
        for binding in bindings:
            if binding.kind in ("def", "class", "import"):
                continue
            if binding.kind != "assign" or binding.value is None:
                return True  # a parameter or a loop variable: could be anything
            if maybe_none(binding.value, owner, facts, depth + 1):
                return True
        return False
    if isinstance(expr, ast.Attribute):
        return True  # self.sampler, args.x: unknown
    return False  # calls, literals, lambdas
