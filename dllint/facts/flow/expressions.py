"""How a value moves at the expression it is: iterated (``for``, comprehensions, ``yield
from``), appended to a list, passed to a call (:mod:`.arguments` follows it there), bound,
contained, returned, or kept."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.base import MAX_STEPS
from dllint.facts.flow.lookups import is_self_attribute
from dllint.facts.flow.model import FlowState, How, Loops, Move, Use
from dllint.facts.flow.syntax import dict_key, element_index
from dllint.facts.scopes import Scope

if TYPE_CHECKING:
    from dllint.facts.usage import UsageAnalysis


class Expressions:
    """A value at the expression it is: the node around it decides (iterated, bound, passed
    to a call, contained, returned)."""

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
                return self.flow.arguments.passed_to_call(call, parent.arg, None, expr, state)
            return [Use(Move.ESCAPE, expr, here, state.via, How.UNCLAIMED)]
        if isinstance(parent, ast.Call) and expr is not parent.func:
            if expr in parent.args:
                return self.flow.arguments.passed_to_call(parent, None, parent.args.index(expr), expr, state)  # type: ignore[arg-type]  # in args: an expr
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
        """An element of a tuple, list or dict display (where it is taken out decides), the
        value of a dict comprehension over literal keys (each key's entry on its own), the
        element of a list comprehension (any element it builds), or the body of a lambda
        handed on (``lambda ds: DataLoader(ds, ...)``)."""
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            index = element_index(parent, expr)
            return self.flow.containers.uses_of_element(parent, index, state) if index is not None else None
        if isinstance(parent, ast.Lambda) and parent.body is expr:
            return self.flow.returns.handed_on(parent, expr, state.inside(here))
        if isinstance(parent, ast.Dict):
            key = dict_key(parent, expr)
            return self.flow.containers.uses_of_element(parent, key, state) if key is not None else None
        if isinstance(parent, ast.DictComp) and parent.value is expr:
            return self.flow.dicts.built_per_key(parent, state)
        if isinstance(parent, ast.ListComp) and parent.elt is expr:
            # ``[DataLoader(ds, ...) for ds in sets]``: every element is one it builds, wherever
            # one is taken out (looped over, indexed); the comprehension builds each afresh
            return self.flow.containers.uses_of_element(parent, "*", state)
        return None
