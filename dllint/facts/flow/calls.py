"""How a value moves at the expression it is: iterated (``for``, comprehensions, iterating
builtins), bound, passed to a call (same-file functions and classes, the project's other
files through ``facts.project``, framework calls, wrappers), or kept."""

from __future__ import annotations

import ast

from dllint.facts.flow.model import How, Move, RemoteLoop, Use
from dllint.facts.frameworks import framework_call
from dllint.facts.imports import dotted_name
from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.knowledge.frameworks import Passing


from dllint.facts.flow.base import (
    dict_key,
    element_index,
    MAX_CALL_DEPTH,
    MAX_STEPS,
    FlowBase,
    ITERATING_BUILTINS,
    WRAPPING_BUILTINS,
    WRAPPING_QUALNAMES,
    NEUTRAL_BUILTINS,
)


class CallFlow(FlowBase):

    # -- the flow --------------------------------------------------------------------
    def continue_from(self, expr: ast.AST, scope: Scope, loops: tuple, via: tuple, seen: frozenset) -> list[Use]:
        """Go on following a value at ``expr`` (a project function handed it back)."""
        return self._uses_of_expr(expr, scope, loops, via, seen)

    def _uses_of_expr(
        self, expr: ast.AST, scope: Scope, loops: tuple, via: tuple, seen: frozenset
    ) -> list[Use]:
        self._steps += 1
        if self._steps > MAX_STEPS:  # a value fanning out through many calls: give up on it
            return [Use(Move.ESCAPE, expr, loops, via, How.UNKNOWN)]
        parent = self.parents.get(expr)
        here = loops + self.enclosing_loops(expr, scope)
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is expr:
            return [Use(Move.ITERATE, parent, here, via)]
        if isinstance(parent, ast.YieldFrom):  # ``while True: yield from loader``: a pass per round
            return [Use(Move.ITERATE, parent, here, via)]
        if isinstance(parent, ast.comprehension) and parent.iter is expr:
            comp = self.parents.get(parent)
            return [Use(Move.ITERATE, comp or parent, loops + self.enclosing_loops(comp or parent, scope), via)]
        if isinstance(parent, ast.keyword):
            call = self.parents.get(parent)
            if isinstance(call, ast.Call):
                return self._passed_to_call(call, parent.arg, None, expr, scope, loops, via, seen)
            return [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]
        if isinstance(parent, ast.Call) and expr is not parent.func:
            if expr in parent.args:
                return self._passed_to_call(parent, None, parent.args.index(expr), expr, scope, loops, via, seen)
            return [Use(Move.ESCAPE, expr, here, via, How.UNKNOWN)]
        if isinstance(parent, ast.Attribute):
            if parent.attr == "__iter__":
                return [Use(Move.ITERATE, parent, here, via)]
            return []  # loader.dataset, loader.sampler, len-like reads
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is expr:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            uses: list[Use] = []
            for target in targets:
                if isinstance(target, ast.Name):
                    uses += self._uses_of_name(target.id, scope, loops, via, seen, parent)
                elif self._is_self_attribute(target):
                    uses += self._stored(target, expr, scope, here, via, seen)  # type: ignore[arg-type]
                else:
                    found = self._stored_in_dict(parent, target, (), scope, loops, via, seen) if len(targets) == 1 else None
                    uses += found if found is not None else [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]  # loaders[k] = ...
            return uses
        if isinstance(parent, ast.IfExp) and expr is not parent.test:
            return self._uses_of_expr(parent, scope, loops, via, seen)
        if isinstance(parent, ast.BoolOp):
            return self._uses_of_expr(parent, scope, loops, via, seen)
        if isinstance(parent, (ast.Compare, ast.Expr, ast.If, ast.While, ast.Assert, ast.UnaryOp)):
            return []
        if isinstance(parent, ast.withitem) and parent.context_expr is expr:
            if isinstance(parent.optional_vars, ast.Name):  # the binding stops ``with f(x) as x`` going round
                return self._uses_of_name(parent.optional_vars.id, scope, loops, via, seen, parent)
            return []
        if isinstance(parent, ast.Return) and parent.value is expr:
            return self._returned(expr, scope, loops, via, seen)
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            index = element_index(parent, expr)
            found = self._uses_of_element(parent, index, scope, loops, via, seen) if index is not None else None
            if found is not None:
                return found
        if isinstance(parent, ast.Lambda) and parent.body is expr:  # lambda ds: DataLoader(ds, ...)
            handed = self._handed_on(parent, expr, here, via, seen)
            if handed is not None:
                return handed
        if isinstance(parent, ast.Dict):
            key = dict_key(parent, expr)
            found = self._uses_of_element(parent, key, scope, loops, via, seen) if key is not None else None
            if found is not None:
                return found
        return [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]  # yielded, put in a container, ...

    def _passed_to_call(
        self,
        call: ast.Call,
        keyword: str | None,
        index: int | None,
        expr: ast.AST,
        scope: Scope,
        loops: tuple,
        via: tuple,
        seen: frozenset,
    ) -> list[Use]:
        here = loops + self.enclosing_loops(call, scope)
        func = call.func
        if isinstance(func, ast.Name) and self.facts.scopes.lookup(func.id, scope) is None:
            name = func.id  # a builtin
            if name == "iter" and self._restarted_on_stop(call):
                return [Use(Move.ITERATE, call, here, via, How.ON_STOP)]
            if name in ITERATING_BUILTINS:
                return [Use(Move.ITERATE, call, here, via)]
            if name in WRAPPING_BUILTINS:
                return self._uses_of_expr(call, scope, loops, via, seen)
            if name in NEUTRAL_BUILTINS:
                return []
        qualname = self.facts.qualname(func)
        if qualname in WRAPPING_QUALNAMES:
            return self._uses_of_expr(call, scope, loops, via, seen)
        target = self.same_file_function(func, scope)
        if target is not None and len(via) < MAX_CALL_DEPTH:
            param = self._parameter(target, keyword, index, isinstance(func, ast.Attribute))
            key = (target, param)
            if param is not None and key not in seen:
                callee_scope = self.facts.scopes.scopes[target]
                self._entry_loops[(call, via)] = loops
                return self._uses_of_name(param, callee_scope, here, via + (call,), seen | {key})
        if self.facts.is_loader_class_name(func)[0]:
            return [Use(Move.ESCAPE, expr, here, via, How.UNKNOWN)]  # the dataset/sampler a loader takes
        field = self._record_field(func, keyword, index, scope)
        if field is not None:  # DataInfo(dataloader=loader): reads of info.dataloader decide
            found = self._uses_of_element(call, field, scope, loops, via, seen)
            if found is not None:
                return found
        init = self._same_file_init(func, scope)
        if init is not None and len(via) < MAX_CALL_DEPTH:
            param = self._parameter(init, keyword, index, True)
            key = (init, param)
            if param is not None and key not in seen:  # Trainer(model, loader): what __init__ does with it
                self._entry_loops[(call, via)] = loops
                return self._uses_of_name(param, self.facts.scopes.scopes[init], here, via + (call,), seen | {key})

        framework = framework_call(self.facts, call, keyword, index, scope)
        if framework is Passing.SAME:  # accelerator.prepare(loader): the same loader comes back
            return self._same_value_returned(call, index, scope, loops, via, seen)
        if framework is not None:
            shown = qualname or ast.unparse(func)
            marker = (RemoteLoop(f"{shown}()", framework=True),) if framework is Passing.PER_EPOCH else ()
            return [Use(Move.ITERATE, call, here + marker, via, How.ELSEWHERE)]
        # Iterating the result of any call that takes the loader is one pass over it, and its
        # items are the loader's batches (``logger.log_every(loader, 10)``): callee unknown, or
        # while summarizing (a summary depends on its own file only). A callee of another
        # project file is read instead: its summary says how often it iterates the loader
        # (``iter(ForeverLoader(loader))`` re-iterating it forever).
        result = self._uses_of_expr(call, scope, loops, via, seen)
        wrapped = bool(result) and all(u.kind is Move.ITERATE for u in result)
        project = self.facts.project
        remote = project.target_of(self.facts, func, scope) if project is not None else None
        if remote is not None and not (wrapped and project.summarizing):
            argument = keyword if keyword is not None else str(index)
            if project.summarizing:
                return [Use(Move.ESCAPE, expr, here, via, How.REMOTE, (remote, argument))]
            resolved = project.param_uses(self, remote, argument, call, expr, scope, loops, via, seen)
            if resolved is not None and not (wrapped and not _repeats_elsewhere(resolved)):
                return resolved  # unless one pass there is the pass iterated here (its batches seen here)
        if wrapped:
            return result
        return [Use(Move.ESCAPE, expr, here, via, How.UNKNOWN)]

    def _same_value_returned(self, call: ast.Call, index: int | None, scope, loops, via, seen) -> list[Use]:
        """``x = f(loader)`` or ``a, x = f(model, loader)`` where ``f`` hands its arguments back."""
        parent = self.parents.get(call)
        if (
            index is not None
            and isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], (ast.Tuple, ast.List))
            and len(parent.targets[0].elts) == len(call.args)
        ):
            target = parent.targets[0].elts[index]
            if isinstance(target, ast.Name):
                return self._uses_of_name(target.id, scope, loops, via, seen, parent)
            return [Use(Move.ESCAPE, call, loops + self.enclosing_loops(call, scope), via, How.UNCLAIMED)]
        return self._uses_of_expr(call, scope, loops, via, seen)

    def _restarted_on_stop(self, call: ast.Call) -> bool:
        """``iter(loader)`` inside ``except StopIteration:``: the exhausted iterator is replaced
        and the same endless pass goes on (RULES.md's "Endless iteration")."""
        current = self.parents.get(call)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.ExceptHandler):
                caught = current.type
                names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
                return any(isinstance(n, (ast.Name, ast.Attribute)) and (getattr(n, "id", None) or getattr(n, "attr", None)) == "StopIteration" for n in names)
            current = self.parents.get(current)
        return False

    def _record_field(self, func: ast.expr, keyword: str | None, index: int | None, scope: Scope) -> str | None:
        """The field an argument of ``func(...)`` fills, when ``func`` is a same-file
        ``@dataclass`` or ``NamedTuple`` class with no ``__init__`` of its own."""
        if not isinstance(func, ast.Name):
            return None
        found = self.facts.scopes.lookup(func.id, scope)
        if not found or len(found[1]) != 1 or found[1][0].kind != "class":
            return None
        cls = found[1][0].node
        record = any((dotted_name(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] == "dataclass" for d in cls.decorator_list)  # type: ignore[attr-defined]
        record |= any((dotted_name(b) or "").rsplit(".", 1)[-1] == "NamedTuple" for b in cls.bases)  # type: ignore[attr-defined]
        body = cls.body  # type: ignore[attr-defined]
        if not record or any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("__init__", "__post_init__") for s in body):
            return None
        fields = [s.target.id for s in body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        if keyword is not None:
            return keyword if keyword in fields else None
        return fields[index] if index is not None and index < len(fields) else None


def _repeats_elsewhere(uses: list[Use]) -> bool:
    """Some use is repeated by a loop in another file (a helper's ``while True`` around its
    ``for``): more than the one pass a wrapper's caller sees."""
    return any(isinstance(loop, RemoteLoop) for use in uses for loop in use.loops)
