"""A value bound into ``functools.partial(f, loader=...)`` (the tenth audit's K8): where the
partial goes, the value goes, and each call of the partial hands ``f`` the value.

The partial is followed as any value is (bound to a name, handed to a function of the file as
``train(model, eval_fn)``, stored as ``self.eval_fn`` and read back by the class's methods);
each place it is called (``eval_fn(model)``, ``self.eval_fn(model)``) is a call of ``f`` with
the value, under the loops around that place, and ``f`` (a function of this file, or of
another project file through its summary) decides what the value meets. A call that passes
the bound keyword again replaces the value: it hands ``f`` nothing of it. Anywhere else the
partial goes is the value's fate as the partial's: unclaimed where the partial is, unknown
where it is handed to code outside the project or used any other way (iterated, returned to
another file, handed on to another file's function: what that code does with the partial is
not what it would do with the value).
"""

from __future__ import annotations

import ast
import functools
import itertools
from typing import TYPE_CHECKING, Callable, NamedTuple

from dllint.facts.device_kinds import passed_devices
from dllint.facts.flow.model import FlowState, How, Move, Use, shown, uses_from
from dllint.facts.flow.syntax import parameter_for

if TYPE_CHECKING:
    from dllint.facts.flow.queries import ProjectQueries
    from dllint.facts.scopes import Scope
    from dllint.facts.usage import UsageAnalysis

PARTIAL = "functools.partial"
WHY = "bound into functools.partial(), which is used where the value's fate cannot be told"

# How one call of the partial hands ``f`` the value: the uses it meets there (None: unknown).
Handing = Callable[[ast.Call, Use, FlowState], "list[Use] | None"]


def bound_by_partial(flow: UsageAnalysis, call: ast.Call, keyword: str | None, index: int | None, state: FlowState) -> list[Use] | None:
    """The uses of a value passed to ``call`` when ``call`` is ``functools.partial(f, ...)``
    with ``f`` a function of this file or of another project file and the value one of the
    arguments it binds (see the module's docstring); None when ``call`` is no such partial."""
    facts = flow.facts
    if facts.qualname(call.func) != PARTIAL or not call.args or index == 0:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args[: (index or 0) + 1]) or any(k.arg is None for k in call.keywords):
        return None  # a splat hides where the value lands
    function = flow.lookups.same_file_function(call.args[0], state.scope)
    handing = _in_file(flow, function, call, keyword, index) if function is not None else _elsewhere(flow, call, keyword, index, state)
    if handing is None:
        return None
    found: list[Use] = []
    for use in flow.expressions.uses_of_expr(call, state):
        site = _called_at(flow, use)
        if site is None:
            found.append(_carried(use))
            continue
        if keyword is not None and any(k.arg == keyword for k in site.keywords):
            continue  # eval_fn(loader=other): this call replaces the bound value
        if any(k.arg is None for k in site.keywords):
            found.append(Use(Move.ESCAPE, site, use.loops, use.via, How.UNKNOWN, why="a call of its functools.partial() may replace it (a ** splat)"))
            continue
        at = state._replace(scope=facts.scopes.scope_of(site), loops=use.loops, via=use.via)
        uses = handing(site, use, at)
        if uses is None:
            return None
        found += uses
    return found


def _in_file(flow: UsageAnalysis, function: ast.AST, call: ast.Call, keyword: str | None, index: int | None) -> Handing | None:
    """``f`` a function of this file: its parameter's uses, at each call of the partial."""
    position = None if index is None else index - 1
    param = parameter_for(function, keyword, position, isinstance(call.args[0], ast.Attribute))
    if param is None:
        return None
    return lambda site, use, at: flow.arguments.into_parameter(site, function, param, at, use.loops)


def _elsewhere(flow: UsageAnalysis, call: ast.Call, keyword: str | None, index: int | None, state: FlowState) -> Handing | None:
    """``f`` a function of another project file: what its summary says it does with the
    argument, at each call of the partial (while this file is summarized: handed to it)."""
    project = flow.facts.project
    remote = project.target_of(flow.facts, call.args[0], state.scope) if project is not None else None
    if project is None or remote is None:
        return None
    argument = keyword if keyword is not None else str((index or 0) - 1)
    return functools.partial(_remote_uses, flow, project, Remote(remote, argument, _bound_expr(call, keyword, index), call, state.scope))


class Remote(NamedTuple):
    """A partial binding the value to a function of another project file."""

    target: str  # the function, as summaries name it
    argument: str  # the value's argument of it: a keyword, or a position ("0")
    expr: ast.expr  # the partial's argument that holds the value
    call: ast.Call  # the partial
    scope: Scope  # where the partial is made


def _remote_uses(flow: UsageAnalysis, project: ProjectQueries, remote: Remote, site: ast.Call, use: Use, at: FlowState) -> list[Use] | None:
    """What the function of another file does with the value at the call ``site`` of the partial."""
    devices = _devices(flow, remote.call, remote.scope, site, at)
    if project.summarizing:
        return [Use(Move.ESCAPE, remote.expr, use.loops, use.via, How.REMOTE, (remote.target, remote.argument), devices=devices)]
    effects = project.parameter_effects(remote.target, remote.argument, devices)
    if effects is None:
        return None
    found = uses_from(effects, site, remote.expr, use.loops, use.via, shown(remote.target))
    if effects.returns:  # handed back: the call's result is the value
        found += flow.expressions.uses_of_expr(site, at)
    return found


def _called_at(flow: UsageAnalysis, use: Use) -> ast.Call | None:
    """The call ``use`` is, where the followed partial is what is called (``eval_fn(model)``)."""
    if use.kind is not Move.ESCAPE or use.how is not How.UNCLAIMED or use.caller is not None:
        return None
    site = flow.lookups.parents.get(use.node)
    return site if isinstance(site, ast.Call) and site.func is use.node else None


def _carried(use: Use) -> Use:
    """Where the partial goes otherwise, the value goes with it: unclaimed or unknown as the
    partial is; anything else (iterated, handed to another file) is unknown for the value."""
    if use.kind is Move.ESCAPE and use.how in (How.UNCLAIMED, How.UNKNOWN) and use.caller is None:
        return use
    return Use(Move.ESCAPE, use.node, use.loops, use.via, How.UNKNOWN, why=WHY)


def _bound_expr(call: ast.Call, keyword: str | None, index: int | None) -> ast.expr:
    """The argument of the partial that holds the value."""
    if keyword is not None:
        return next(k.value for k in call.keywords if k.arg == keyword)
    return call.args[index or 0]


def _devices(flow: UsageAnalysis, call: ast.Call, partial_scope: Scope, site: ast.Call, at: FlowState) -> dict[str, str]:
    """The CUDA devices ``f`` receives, by its positions and keywords: the partial's arguments
    first, then the call's (which may replace the partial's keywords)."""
    facts = flow.facts
    bound = list(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args[1:]))
    found: dict[str, str] = {}
    for key, kind in passed_devices(facts, call, partial_scope).items():
        if key.isdigit():
            if 0 < int(key) <= len(bound):
                found[str(int(key) - 1)] = kind
        else:
            found[key] = kind
    for key, kind in passed_devices(facts, site, at.scope).items():
        found[str(int(key) + len(bound)) if key.isdigit() else key] = kind
    return found
