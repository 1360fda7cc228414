"""How a value moves into a call it is passed to: iterated by a builtin (``iter``, ``list``),
seen through by a wrapper (``enumerate``, ``tqdm``), followed into a same-file function or
class by parameter (or a record's field), iterated or handed back by a framework call, or
decided by the summary of a function of another project file."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.device_kinds import passed_devices
from dllint.facts.flow.base import ITERATING_BUILTINS, MAX_CALL_DEPTH, NEUTRAL_BUILTINS, WRAPPING_BUILTINS, WRAPPING_QUALNAMES
from dllint.facts.flow.model import DictKey, FlowState, How, Loops, Move, RemoteLoop, Use, shown, uses_from
from dllint.facts.flow.syntax import parameter_for
from dllint.facts.frameworks import framework_call
from dllint.facts.imports import dotted_name
from dllint.facts.partials import bound_by_partial
from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.knowledge.frameworks import Passing

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.usage import UsageAnalysis


MAX_CHOICES = 16  # classes in one literal dict or list a call picks from


def picked_from(facts: FileFacts, func: ast.expr, scope: Scope) -> list[ast.expr] | None:
    """The classes of a literal dict or list (bound once) that ``func`` picks one of:
    ``TRAINERS[key]``, ``TRAINERS.get(key)``, or a name bound once to such a pick."""
    if isinstance(func, ast.Name):
        found = facts.scopes.single_value(func.id, scope)
        if found is None or found[1].kind != "assign" or found[1].value is None:
            return None
        func, scope = found[1].value, found[0]
    if isinstance(func, ast.Subscript):
        holder = func.value
    elif isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute) and func.func.attr == "get" and func.args:
        holder = func.func.value
    else:
        return None
    if not isinstance(holder, ast.Name):
        return None
    bound = facts.scopes.single_value(holder.id, scope)
    literal = bound[1].value if bound is not None and bound[1].kind == "assign" else None
    values = literal.values if isinstance(literal, ast.Dict) else literal.elts if isinstance(literal, (ast.List, ast.Tuple)) else None
    if not values or len(values) > MAX_CHOICES or not all(isinstance(v, (ast.Name, ast.Attribute)) for v in values):
        return None
    return list(values)


class Arguments:
    """A value passed to a call: builtins, wrappers, this file's functions and classes,
    framework calls, then the project's other files decide, in that order."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where the value goes in the callee, or with the call's result
        self.facts = flow.facts
        self.lookups = flow.lookups

    def passed_to_call(self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState) -> list[Use]:
        """The value is an argument of ``call``: builtins, wrappers, this file's functions and
        classes, framework calls, then the project's other files, decide in that order."""
        here = state.loops + self.lookups.enclosing_loops(call, state.scope)
        found = self._entry_of_dict_call(call, keyword, state)
        if found is None:
            found = self._passed_to_builtin(call, state, here)
        if found is None:
            found = self._bound_by_partial(call, keyword, index, state)
        if found is None:
            found = self._passed_in_file(call, keyword, index, expr, state, here)
        if found is None:
            found = self._passed_to_framework(call, index, state, here, keyword)
        if found is None:
            found = self._passed_to_one_of(call, keyword, index, expr, state, here)
        if found is not None:
            return found
        return self._passed_elsewhere(call, keyword, index, expr, state, here)

    def _passed_to_one_of(
        self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState, here: Loops
    ) -> list[Use] | None:
        """``TRAINERS[args.trainer](model, loader)``: a class (or a function of this file) picked
        from a literal dict or list is any of them; what each one's constructor (or the function)
        does, together. None when it is no such pick, or one of them is neither this file's class
        or function nor the project's class."""
        choices = picked_from(self.facts, call.func, state.scope)
        project = self.facts.project
        if choices is None or project is None or project.summarizing:
            return None
        found: list[Use] = []
        for choice in choices:
            init = self.lookups.same_file_init(choice, state.scope)
            function = self.lookups.same_file_function(choice, state.scope) if init is None else None
            if init is not None:
                uses = self.into_parameter(call, init, parameter_for(init, keyword, index, True), state, here)
            elif function is not None:  # EPOCH_FUNCTIONS[kind](model, loader): each function of the file
                uses = self.into_parameter(call, function, parameter_for(function, keyword, index, False), state, here)
            else:
                remote = project.target_of(self.facts, choice, state.scope)
                effects = project.parameter_effects(remote, keyword if keyword is not None else str(index)) if remote else None
                uses = uses_from(effects, call, expr, here, state.via, shown(remote)) if effects is not None and remote else None
            if uses is None:
                return None
            found += uses
        return found

    def _entry_of_dict_call(self, call: ast.Call, keyword: str | None, state: FlowState) -> list[Use] | None:
        """``dict(train_loader=loader, ...)``: the entry under that key, followed as a dict
        display's (``f(**args)`` hands it to ``f``'s parameter of that name); None when it is
        no such call or the entry's fate cannot be told (``dict`` then counts as before)."""
        func = call.func
        if keyword is None or not (isinstance(func, ast.Name) and func.id == "dict"):
            return None
        if self.facts.scopes.lookup("dict", state.scope) is not None:
            return None  # a name of the file's own
        return self.flow.containers.uses_of_element(call, DictKey(keyword), state)

    def _passed_to_builtin(self, call: ast.Call, state: FlowState, here: Loops) -> list[Use] | None:
        """``iter``/``list``... iterate it (``iter`` in ``except StopIteration:`` too: a new pass
        each time the last one ends, marked ``How.ON_STOP``); ``enumerate``/``tqdm``... wrap it;
        ``len``/``print``... look."""
        func = call.func
        if isinstance(func, ast.Name) and self.facts.scopes.lookup(func.id, state.scope) is None:
            name = func.id  # a builtin
            if name == "iter" and self._restarted_on_stop(call):
                return [Use(Move.ITERATE, call, here, state.via, How.ON_STOP)]
            if name in ITERATING_BUILTINS:
                return [Use(Move.ITERATE, call, here, state.via)]
            if name in WRAPPING_BUILTINS:
                return self.flow.expressions.uses_of_expr(call, state)
            if name in NEUTRAL_BUILTINS:
                return []
        if self.facts.qualname(func) in WRAPPING_QUALNAMES:
            return self.flow.expressions.uses_of_expr(call, state)
        return None

    def _passed_in_file(
        self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState, here: Loops
    ) -> list[Use] | None:
        """A function or class of this file takes it: what its parameter meets decides (a
        record's field: its reads); a loader takes it as its dataset or sampler."""
        func, scope = call.func, state.scope
        target = self.lookups.same_file_function(func, scope)
        if target is not None:
            found = self.into_parameter(call, target, parameter_for(target, keyword, index, isinstance(func, ast.Attribute)), state, here)
            if found is not None:
                return found
        if call in self.facts.loader_at:
            return [Use(Move.ESCAPE, expr, here, state.via, How.UNKNOWN, why="given to a loader as its dataset or sampler")]
        field = self._record_field(func, keyword, index, scope)
        if field is not None:  # DataInfo(dataloader=loader): reads of info.dataloader decide
            found = self.flow.containers.uses_of_element(call, field, state)
            if found is not None:
                return found
        init = self.lookups.same_file_init(func, scope)
        if init is not None:  # Trainer(model, loader): what __init__ does with it
            return self.into_parameter(call, init, parameter_for(init, keyword, index, True), state, here)
        return None

    def _bound_by_partial(self, call: ast.Call, keyword: str | None, index: int | None, state: FlowState) -> list[Use] | None:
        """``eval_fn = functools.partial(evaluate, loader=loader)``: :mod:`dllint.facts.partials`."""
        return bound_by_partial(self.flow, call, keyword, index, state)

    def into_parameter(self, call: ast.Call, function: ast.AST, param: str | None, state: FlowState, here: Loops) -> list[Use] | None:
        key = (function, param)
        if param is None or key in state.seen or len(state.via) >= MAX_CALL_DEPTH:
            return None
        self.flow.returns.entered(call, state.via, state.loops)
        callee = self.facts.scopes.scopes[function]
        return self.flow.names.uses_of_name(param, state.through(call, callee, here, key), self.flow.names.parameter_binding(param, callee))

    def _passed_to_framework(
        self, call: ast.Call, index: int | None, state: FlowState, here: Loops, keyword: str | None
    ) -> list[Use] | None:
        """A framework call (:mod:`dllint.knowledge.frameworks`): iterates it (every epoch or
        once) or hands the same loader back."""
        framework = framework_call(self.facts, call, keyword, index, state.scope)
        if framework is Passing.SAME:  # accelerator.prepare(loader): the same loader comes back
            return self._same_value_returned(call, index, state)
        if framework is None:
            return None
        shown = self.facts.qualname(call.func) or ast.unparse(call.func)
        marker = (RemoteLoop(f"{shown}()", framework=True),) if framework is Passing.PER_EPOCH else ()
        return [Use(Move.ITERATE, call, here + marker, state.via, How.ELSEWHERE)]

    def _passed_elsewhere(
        self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState, here: Loops
    ) -> list[Use]:
        """Iterating the result of any call that takes the loader is one pass over it, and its
        items are the loader's batches (``logger.log_every(loader, 10)``): callee unknown, or
        while summarizing (a summary depends on its own file only). A callee of another
        project file is read instead: its summary says how often it iterates the loader
        (``iter(ForeverLoader(loader))`` re-iterating it forever), unless that is the one
        pass iterated here (whose batches are seen here)."""
        via = state.via
        result = self.flow.expressions.uses_of_expr(call, state)
        wrapped = bool(result) and all(u.kind is Move.ITERATE for u in result)
        project = self.facts.project
        remote = project.target_of(self.facts, call.func, state.scope) if project is not None else None
        if project is not None and remote is not None and not (wrapped and project.summarizing):
            argument = keyword if keyword is not None else str(index)
            devices = passed_devices(self.facts, call, state.scope)
            if project.summarizing:
                return [Use(Move.ESCAPE, expr, here, via, How.REMOTE, (remote, argument), devices=devices)]
            effects = project.parameter_effects(remote, argument, devices)
            if effects is not None:
                resolved = uses_from(effects, call, expr, here, via, shown(remote))
                resolved += self.flow.stores.passes_by_methods(call, effects, state)  # kept by an instance: its method calls
                if effects.returns:  # handed back: the caller goes on with the call's result
                    resolved += self.flow.expressions.uses_of_expr(call, state)
                if not (wrapped and not _repeats_elsewhere(resolved)):
                    return resolved
        if wrapped:
            return result
        callee = dotted_name(call.func) or "a call"
        return [Use(Move.ESCAPE, expr, here, via, How.UNKNOWN, why=f"handed to {callee}() outside the project")]

    def _same_value_returned(self, call: ast.Call, index: int | None, state: FlowState) -> list[Use]:
        """``x = f(loader)`` or ``a, x = f(model, loader)`` where ``f`` hands its arguments back."""
        parent = self.lookups.parents.get(call)
        if (
            index is not None
            and isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], (ast.Tuple, ast.List))
            and len(parent.targets[0].elts) == len(call.args)
        ):
            target = parent.targets[0].elts[index]
            if isinstance(target, ast.Name):
                return self.flow.names.uses_of_name(target.id, state, parent)
            return [Use(Move.ESCAPE, call, state.loops + self.lookups.enclosing_loops(call, state.scope), state.via, How.UNCLAIMED)]
        return self.flow.expressions.uses_of_expr(call, state)

    def _restarted_on_stop(self, call: ast.Call) -> bool:
        """``iter(loader)`` inside ``except StopIteration:`` (or a bare ``except:``, ``except
        Exception:``, which catch it too): the exhausted iterator is replaced by a new pass (the
        rule catalog's "Endless iteration": torch starts the workers again)."""
        current = self.lookups.parents.get(call)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.ExceptHandler):
                caught = current.type
                if caught is None:
                    return True
                names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
                return any(
                    isinstance(n, (ast.Name, ast.Attribute)) and (getattr(n, "id", None) or getattr(n, "attr", None)) in _CATCHES_STOP
                    for n in names
                )
            current = self.lookups.parents.get(current)
        return False

    def _record_field(self, func: ast.expr, keyword: str | None, index: int | None, scope: Scope) -> str | None:
        """The field an argument of ``func(...)`` fills, when ``func`` is a same-file
        ``@dataclass`` or ``NamedTuple`` class with no ``__init__`` of its own."""
        found = self.facts.scopes.lookup(func.id, scope) if isinstance(func, ast.Name) else None
        cls = found[1][0].node if found and len(found[1]) == 1 and found[1][0].kind == "class" else None
        if not isinstance(cls, ast.ClassDef) or not _is_record(cls):
            return None
        fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        if keyword is not None:
            return keyword if keyword in fields else None
        return fields[index] if index is not None and index < len(fields) else None


_CATCHES_STOP = frozenset({"StopIteration", "Exception", "BaseException"})


def _repeats_elsewhere(uses: list[Use]) -> bool:
    """Some use is repeated by a loop in another file (a helper's ``while True`` around its
    ``for``): more than the one pass a wrapper's caller sees."""
    return any(isinstance(loop, RemoteLoop) for use in uses for loop in use.loops)


def _is_record(cls: ast.ClassDef) -> bool:
    """A ``@dataclass`` or ``NamedTuple`` class whose fields are its ``__init__`` (none of its own)."""
    last = [(dotted_name(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] for d in cls.decorator_list]
    record = "dataclass" in last or any((dotted_name(b) or "").rsplit(".", 1)[-1] == "NamedTuple" for b in cls.bases)
    own_init = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("__init__", "__post_init__") for s in cls.body)
    return record and not own_init
