"""How a value moves at the expression it is: iterated (``for``, comprehensions, iterating
builtins), bound, passed to a call (same-file functions and classes, the project's other
files through ``facts.project``, framework calls, wrappers), or kept."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.devices import passed_devices
from dllint.facts.flow.base import ITERATING_BUILTINS, MAX_CALL_DEPTH, MAX_STEPS, NEUTRAL_BUILTINS, WRAPPING_BUILTINS, WRAPPING_QUALNAMES
from dllint.facts.flow.lookups import is_self_attribute
from dllint.facts.flow.model import FlowState, How, Loops, Move, RemoteLoop, Use, shown, uses_from
from dllint.facts.flow.syntax import dict_key, element_index, parameter_for
from dllint.facts.frameworks import framework_call
from dllint.facts.imports import dotted_name
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


class Calls:
    """A value at the expression it is: the node around it decides (iterated, bound, passed
    to a call, contained, returned); a call it is passed to is followed into this file's
    functions and classes, framework calls and the project's other files."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where a bound, contained or returned value goes next
        self.facts = flow.facts
        self.lookups = flow.lookups

    def uses_of_expr(self, expr: ast.AST, state: FlowState) -> list[Use]:
        """What happens to the value ``expr`` evaluates to, decided by the node around it."""
        question = state.question
        question.steps += 1
        if question.steps > MAX_STEPS:  # a value fanning out through many calls: give up on it
            return [Use(Move.ESCAPE, expr, state.loops, state.via, How.UNKNOWN, why=f"followed through more than {MAX_STEPS} steps")]
        parent = self.lookups.parents.get(expr)
        here = state.loops + self.lookups.enclosing_loops(expr, state.scope)
        for step in (self._iterated_at, self._appended_at, self._passed_at, self._bound_at, self._contained_at):
            found = step(parent, expr, state, here)
            if found is not None:
                return found
        if isinstance(parent, (ast.IfExp, ast.BoolOp)) and expr is not getattr(parent, "test", None):
            return self.uses_of_expr(parent, state)  # a or b, a if c else b: the same value
        if isinstance(parent, (ast.Compare, ast.Expr, ast.If, ast.While, ast.Assert, ast.UnaryOp)):
            return []  # looked at, not kept
        if isinstance(parent, ast.Return) and parent.value is expr:
            return self.flow.returns.returned(expr, state)
        return [Use(Move.ESCAPE, expr, here, state.via, How.UNCLAIMED)]  # yielded, put in a container, ...

    def _iterated_at(self, parent: ast.AST | None, expr: ast.AST, state: FlowState, here: Loops) -> list[Use] | None:
        """A pass starts here: ``for x in expr``, ``yield from expr`` (a pass per round of a
        loop around it), a comprehension over it, ``expr.__iter__``; other attribute reads
        (``loader.dataset``) look at it only. ``here``: the loops around ``expr``."""
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is expr or isinstance(parent, ast.YieldFrom):
            return [Use(Move.ITERATE, parent, here, state.via)]
        if isinstance(parent, ast.comprehension) and parent.iter is expr:
            comp = self.lookups.parents.get(parent) or parent
            return [Use(Move.ITERATE, comp, state.loops + self.lookups.enclosing_loops(comp, state.scope), state.via)]
        if isinstance(parent, ast.Attribute):
            return [Use(Move.ITERATE, parent, here, state.via)] if parent.attr == "__iter__" else []
        return None

    def _appended_at(self, parent: ast.AST | None, expr: ast.AST, state: FlowState, here: Loops) -> list[Use] | None:
        """``loaders.append(loader)`` on a list display bound once (a local name, or ``self.X``
        in the class): the value is an element of it, and where its elements are read decides
        (``iter(self.loaders[i])``, ``for dl in loaders``). None when the list is no such
        display, or its elements' fate cannot be told (then it is passed on, as any call)."""
        if not (isinstance(parent, ast.Call) and parent.args == [expr] and not parent.keywords):
            return None
        func = parent.func
        if not (isinstance(func, ast.Attribute) and func.attr == "append"):
            return None
        container = self._list_display(func.value, state.scope)
        return self.flow.containers.uses_of_element(container, "*", state) if container is not None else None

    def _list_display(self, holder: ast.expr, scope: Scope) -> ast.List | None:
        """The list display ``holder`` is bound to once: ``loaders = []`` in scope, or
        ``self.loaders = []`` in its class."""
        values: list[ast.AST | None] = []
        if isinstance(holder, ast.Name):
            found = self.facts.scopes.single_value(holder.id, scope)
            values = [found[1].value] if found is not None and found[1].kind == "assign" else []
        elif is_self_attribute(holder):
            cls = self.lookups.enclosing_class(scope)
            stores = [] if cls is None else [n for n in self.lookups.attributes_of_self(cls).get(holder.attr, ()) if not isinstance(n.ctx, ast.Load)]  # type: ignore[attr-defined]
            values = [getattr(self.lookups.parents.get(n), "value", None) for n in stores]
        return values[0] if len(values) == 1 and isinstance(values[0], ast.List) else None

    def _passed_at(self, parent: ast.AST | None, expr: ast.AST, state: FlowState, here: Loops) -> list[Use] | None:
        """An argument of a call: by keyword or position (after a ``*`` it lands nowhere known)."""
        if isinstance(parent, ast.keyword):
            call = self.lookups.parents.get(parent)
            if isinstance(call, ast.Call):
                return self._passed_to_call(call, parent.arg, None, expr, state)
            return [Use(Move.ESCAPE, expr, here, state.via, How.UNCLAIMED)]
        if isinstance(parent, ast.Call) and expr is not parent.func:
            if expr in parent.args:
                return self._passed_to_call(parent, None, parent.args.index(expr), expr, state)  # type: ignore[arg-type]  # in args: an expr
            return [Use(Move.ESCAPE, expr, here, state.via, How.UNKNOWN)]
        return None

    def _bound_at(self, parent: ast.AST | None, expr: ast.AST, state: FlowState, here: Loops) -> list[Use] | None:
        """Bound: to a name (its loads decide), to ``self.X`` (the class's reads decide), into
        a dict this code made, or by ``with expr as name``."""
        if isinstance(parent, ast.withitem) and parent.context_expr is expr:
            if isinstance(parent.optional_vars, ast.Name):  # the binding stops ``with f(x) as x`` going round
                return self.flow.names.uses_of_name(parent.optional_vars.id, state, parent)
            return []
        if not (isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is expr):
            return None
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        uses: list[Use] = []
        for target in targets:
            if isinstance(target, ast.Name):
                uses += self.flow.names.uses_of_name(target.id, state, parent)
            elif isinstance(target, ast.Attribute) and is_self_attribute(target):
                uses += self.flow.stores.stored(target, expr, state.inside(here))
            else:
                found = self.flow.dicts.stored_in_dict(parent, target, (), state) if len(targets) == 1 else None
                uses += found if found is not None else [Use(Move.ESCAPE, expr, here, state.via, How.UNCLAIMED)]  # loaders[k] = ...
        return uses

    def _contained_at(self, parent: ast.AST | None, expr: ast.AST, state: FlowState, here: Loops) -> list[Use] | None:
        """An element of a tuple, list or dict display (where it is taken out decides), or the
        body of a lambda handed on (``lambda ds: DataLoader(ds, ...)``)."""
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            index = element_index(parent, expr)
            return self.flow.containers.uses_of_element(parent, index, state) if index is not None else None
        if isinstance(parent, ast.Lambda) and parent.body is expr:
            return self.flow.returns.handed_on(parent, expr, state.inside(here))
        if isinstance(parent, ast.Dict):
            key = dict_key(parent, expr)
            return self.flow.containers.uses_of_element(parent, key, state) if key is not None else None
        return None

    def _passed_to_call(self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState) -> list[Use]:
        """The value is an argument of ``call``: builtins, wrappers, this file's functions and
        classes, framework calls, then the project's other files, decide in that order."""
        here = state.loops + self.lookups.enclosing_loops(call, state.scope)
        found = self._passed_to_builtin(call, state, here)
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
        """``TRAINERS[args.trainer](model, loader)``: a class picked from a literal dict or list
        of classes is any of them; what each one's constructor does, together. None when it is
        no such pick, or one of them is neither this file's class nor the project's."""
        choices = picked_from(self.facts, call.func, state.scope)
        project = self.facts.project
        if choices is None or project is None or project.summarizing:
            return None
        found: list[Use] = []
        for choice in choices:
            init = self.lookups.same_file_init(choice, state.scope)
            if init is not None:
                uses = self._into_parameter(call, init, parameter_for(init, keyword, index, True), state, here)
            else:
                remote = project.target_of(self.facts, choice, state.scope)
                effects = project.parameter_effects(remote, keyword if keyword is not None else str(index)) if remote else None
                uses = uses_from(effects, call, expr, here, state.via, shown(remote)) if effects is not None and remote else None
            if uses is None:
                return None
            found += uses
        return found

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
                return self.uses_of_expr(call, state)
            if name in NEUTRAL_BUILTINS:
                return []
        if self.facts.qualname(func) in WRAPPING_QUALNAMES:
            return self.uses_of_expr(call, state)
        return None

    def _passed_in_file(
        self, call: ast.Call, keyword: str | None, index: int | None, expr: ast.AST, state: FlowState, here: Loops
    ) -> list[Use] | None:
        """A function or class of this file takes it: what its parameter meets decides (a
        record's field: its reads); a loader takes it as its dataset or sampler."""
        func, scope = call.func, state.scope
        target = self.lookups.same_file_function(func, scope)
        if target is not None:
            found = self._into_parameter(call, target, parameter_for(target, keyword, index, isinstance(func, ast.Attribute)), state, here)
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
            return self._into_parameter(call, init, parameter_for(init, keyword, index, True), state, here)
        return None

    def _into_parameter(self, call: ast.Call, function: ast.AST, param: str | None, state: FlowState, here: Loops) -> list[Use] | None:
        key = (function, param)
        if param is None or key in state.seen or len(state.via) >= MAX_CALL_DEPTH:
            return None
        self.flow.returns.entered(call, state.via, state.loops)
        return self.flow.names.uses_of_name(param, state.through(call, self.facts.scopes.scopes[function], here, key))

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
        result = self.uses_of_expr(call, state)
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
                if effects.returns:  # handed back: the caller goes on with the call's result
                    resolved += self.uses_of_expr(call, state)
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
        return self.uses_of_expr(call, state)

    def _restarted_on_stop(self, call: ast.Call) -> bool:
        """``iter(loader)`` inside ``except StopIteration:``: the exhausted iterator is replaced
        by a new pass (the rule catalog's "Endless iteration": torch starts the workers again)."""
        current = self.lookups.parents.get(call)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.ExceptHandler):
                caught = current.type
                names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
                return any(isinstance(n, (ast.Name, ast.Attribute)) and (getattr(n, "id", None) or getattr(n, "attr", None)) == "StopIteration" for n in names)
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
