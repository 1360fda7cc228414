"""How a value moves out of a function: returned to its callers (in this file, in other
files through their summaries, or to a framework hook), or handed on as a callback. Stored
on ``self`` for the class's methods is :mod:`.stores`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.model import (
    Constant,
    DictKey,
    Element,
    FlowState,
    Guard,
    How,
    Loops,
    Move,
    Path,
    Use,
    Via,
    admitted,
    hook_iterates,
    path_key,
    uses_from,
    without_loops,
)
from dllint.facts.flow.syntax import constant_args, ends_the_path
from dllint.facts.frameworks import assigned_hook, callback_result, hook_of, hooks_of_stored_result
from dllint.facts.imports import dotted_name
from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.knowledge.frameworks import Result

if TYPE_CHECKING:
    from dllint.facts.usage import UsageAnalysis


class Returns:
    """Values leaving a function: followed to its callers here, to other files' callers
    through their summaries, to framework hooks, or back to the call that passed them in
    (the loops around that call it remembers, :meth:`entered`)."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where a returned value goes next
        self.facts = flow.facts
        self.lookups = flow.lookups
        self._entry_loops: dict[tuple[ast.Call, Via], Loops] = {}  # (call, via before it) -> loops around the call's caller

    def entered(self, call: ast.Call, via: Via, loops: Loops) -> None:
        """The value went into a same-file function through ``call``, reached through ``via``
        under ``loops``: where it goes on if that function hands it back."""
        self._entry_loops[(call, via)] = loops

    def returned(self, expr: ast.AST, state: FlowState) -> list[Use]:
        """A value returned by its function: its callers decide what happens to it (the call
        site that passed it in, when it came in as an argument)."""
        via = state.via
        here = state.loops + self.lookups.enclosing_loops(expr, state.scope)
        func = state.scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]
        if func is state.question.summarizing:
            return [Use(Move.ESCAPE, expr, here, via, How.RETURN)]
        back = self._handed_back(func, via)
        if back is not None:  # handed back to the call that passed it in
            return self.flow.expressions.uses_of_expr(back, state.leaving(self.facts.scopes.scope_of(back), self._entry_loops.get((back, via[:-1]), ())))
        key = ("return", func)
        if key in state.seen:
            return []
        state = state.marked(key)

        hook = hook_of(self.facts, func)
        if hook is not None:
            return [hook_iterates(hook, expr, here, via)]
        uses = self._stored_for_hooks(func, expr, here, via)
        stored = bool(uses)
        guards = self.return_guards(expr, func)
        callers = self.lookups.callers(func)
        for call in callers:
            if not admitted(guards, constant_args(call)):
                continue  # get_loader("finetune") never receives the "pretrain" loader
            call_scope = self.facts.scopes.scope_of(call)
            uses += self.fresh_at(call, call_scope, here, self.flow.expressions.uses_of_expr(call, state.through(call, call_scope)))
        handed = self.handed_on(func, expr, state.inside(here))
        uses += handed or ()
        remote = self._callers_elsewhere(func, expr, here, via, None, guards)
        if remote:
            uses += remote
        if not callers and remote is None and not stored and handed is None:
            uses.append(self._nobody_claims(func, expr, here, via))
        return uses

    def _handed_back(self, func: ast.AST, via: Via) -> ast.Call | None:
        """The call that passed the value into ``func``, when ``func`` returns it to that call."""
        if via and self.lookups.same_file_function(via[-1].func, self.facts.scopes.scope_of(via[-1])) is func:
            return via[-1]
        return None

    def _stored_for_hooks(self, func: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, here: Loops, via: Via) -> list[Use]:
        """A base class stores what ``func`` returns for its framework hooks (this class
        overrides the factory): each such hook iterates it."""
        owner = self.lookups.parents.get(func)
        stored = hooks_of_stored_result(self.facts, owner, func.name) if isinstance(owner, ast.ClassDef) else None
        return [hook_iterates(hook, node, here, via) for hook in stored or ()]

    def _nobody_claims(self, func: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, here: Loops, via: Via) -> Use:
        """Returned with no caller in the project. ``get_data_loader()`` (a method): a trainer
        outside asks for a fresh loader when it needs one (coqui's calls it every epoch),
        which no ``persistent_workers`` helps: how often it is iterated is unknown."""
        if _on_request(func, self.lookups.parents.get(func)):
            return Use(Move.ESCAPE, node, here, via, How.UNKNOWN, why=f"returned by {func.name}(), which a trainer outside the project calls when it needs a loader")
        return Use(Move.ESCAPE, node, here, via, How.UNCLAIMED)

    def fresh_at(self, call: ast.Call, scope: Scope, here: Loops, uses: list[Use]) -> list[Use]:
        """``uses`` of the value ``call`` returns, seen from a frame whose loops are ``here``: the
        loops around ``call`` build a fresh value on every pass, so they repeat no use of one."""
        return without_loops(uses, set(map(id, self.lookups.enclosing_loops(call, scope))), here)

    def _callers_elsewhere(
        self, func: ast.AST, expr: ast.AST, here: Loops, via: Via, element: Element | None, guards: tuple[Guard, ...]
    ) -> list[Use] | None:
        """What calls of ``func`` in other project files do with the value it returns (an
        ``element`` of it), as uses; None when no other file calls it."""
        project = self.facts.project
        name = self.lookups.qualified_name(func)
        found = project.caller_effects(name, element, guards) if project is not None and name is not None else None
        if found is None or name is None:
            return None
        return [u._replace(caller=(name, c.where), rebuilt=c.rebuilt) for c in found for u in uses_from(c.effects, expr, expr, here, via, c.where)]

    def handed_on(self, func: ast.AST, expr: ast.AST, state: FlowState) -> list[Use] | None:
        """What becomes of the value ``func`` returns where ``func`` itself is handed on rather
        than called here: assigned as a framework hook onto an instance
        (``dm.train_dataloader = func``), or passed to a known higher-order utility whose result
        holds what it returns (``apply_to_collection(ds, Dataset, func)``, ``map(func, dss)``),
        from which the value is followed. None when ``func`` is handed on nowhere.
        ``state.loops``: the loops around ``expr``."""
        here, via = state.loops, state.via

        references: list[tuple[ast.expr, Scope]]
        if isinstance(func, ast.Lambda):
            references = [(func, self.facts.scopes.scope_of(func))]
        elif isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            references = list(self.lookups.loads_resolving_to(func.name, self.facts.scopes.scope_of(func)))
        else:
            return None
        uses: list[Use] = []
        found = False
        for reference, scope in references:
            parent = self.lookups.parents.get(reference)
            if isinstance(parent, ast.Assign) and parent.value is reference:
                for target in parent.targets:
                    hook = assigned_hook(self.facts, target, scope)
                    if hook is not None:
                        found = True
                        uses.append(hook_iterates(hook, expr, here, via))
                continue
            handed = callback_result(self.facts, reference, scope)
            if handed is None:
                continue
            found = True
            call, result = handed
            if result is Result.ELEMENTS:
                inner = self._callback_elements(call, state.through(call, scope))
            else:
                inner = self.flow.expressions.uses_of_expr(call, state.through(call, scope))
            uses += self.fresh_at(call, scope, here, inner)
        return uses if found else None

    def _callback_elements(self, call: ast.Call, state: FlowState) -> list[Use]:
        """Uses of each value in the iterator ``call`` (``map(make_loader, datasets)``) hands
        back, also through ``list(...)``/``tuple(...)`` of it; kept (unclaimed) when undecidable."""
        container: ast.AST = call
        scope = state.scope
        parent = self.lookups.parents.get(call)
        while (
            isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("list", "tuple")
            and parent.args == [container] and not parent.keywords and self.facts.scopes.lookup(parent.func.id, scope) is None
        ):
            container, parent = parent, self.lookups.parents.get(parent)
        found = self.flow.containers.uses_of_element(container, "*", state)
        if found is None:
            return [Use(Move.ESCAPE, container, self.lookups.enclosing_loops(container, scope), state.via, How.UNCLAIMED)]
        return found

    def return_guards(self, node: ast.AST, func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Guard, ...]:
        """The parameter tests (``if task == "pretrain":``, its ``else``) that must hold for
        ``node`` in ``func`` to run: a caller passing a constant that fails one never
        receives what ``node`` returns (a factory branching on a task name)."""
        positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        owner = self.lookups.parents.get(func)
        if isinstance(owner, ast.ClassDef) and not any(dotted_name(d) == "staticmethod" for d in func.decorator_list):
            positional = positional[1:]  # called bound: self is not passed
        names = {*positional, *(a.arg for a in func.args.kwonlyargs)}
        tests = [(test.test, arm == "body") for test, arm in self.lookups.if_arms(node).items()]
        tests += [(test, False) for test in self._left_before(node)]
        guards: list[Guard] = []
        for test, holds in tests:
            compared = _compared_parameter(test)
            if compared is None or compared[0] not in names:
                continue
            name, value, equal, truth = compared
            if len(self.facts.scopes.scopes[func].bindings.get(name, ())) != 1:
                continue  # reassigned before the test: not the argument any more
            position = positional.index(name) if name in positional else -1
            guards.append(Guard(name, position, value, equal == holds, truth))
        return tuple(guards)

    def _left_before(self, node: ast.AST) -> list[ast.expr]:
        """Tests of earlier ``if``/``elif`` arms (in the blocks around ``node``, within its
        function) that leave the function when they hold: ``node`` runs only when they fail."""
        tests: list[ast.expr] = []
        child, current = node, self.lookups.parents.get(node)
        while current is not None and not isinstance(child, (*FUNCTION_NODES, ast.Module)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(current, field, None)
                if isinstance(block, list) and child in block:
                    for stmt in block[: block.index(child)]:
                        while isinstance(stmt, ast.If) and stmt.body and ends_the_path(stmt.body[-1]):
                            tests.append(stmt.test)
                            stmt = stmt.orelse[0] if len(stmt.orelse) == 1 else None  # elif
            if isinstance(current, FUNCTION_NODES):
                break
            child, current = current, self.lookups.parents.get(current)
        return tests

    def returned_element(self, container: ast.AST, index: Element, state: FlowState, rest: Path = ()) -> list[Use] | None:
        """``return train_loader, val_loader``: each caller decides what happens to the
        element (``train, val = get_loaders()``), in this file or, through the project's
        summaries, in others; a caller that does something else with the container keeps it
        unclaimed. A framework hook's container of loaders (``return {"a": dl_a, "b":
        dl_b}`` from ``train_dataloader``): the framework iterates each of them."""
        func = state.scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func is state.question.summarizing:
            return None

        via = state.via
        here = state.loops + self.lookups.enclosing_loops(container, state.scope)
        hook = hook_of(self.facts, func)
        if hook is not None:
            if rest:
                return None  # the framework iterates the entries, not what they hold
            return [hook_iterates(hook, container, here, via)]
        back = self._handed_back(func, via)
        if back is not None:  # handed back to the call that passed the loader in
            outer = self._entry_loops.get((back, via[:-1]), ())
            return self.flow.containers.uses_of_element(back, index, state.leaving(self.facts.scopes.scope_of(back), outer), rest)
        uses = [] if rest else self._stored_for_hooks(func, container, here, via)
        stored = bool(uses)
        guards = self.return_guards(container, func)
        callers = self.lookups.callers(func)
        for call in callers:
            if not admitted(guards, constant_args(call)):
                continue
            call_scope = self.facts.scopes.scope_of(call)
            found = self.flow.containers.uses_of_element(call, index, state.through(call, call_scope), rest)
            if found is None:
                found = [Use(Move.ESCAPE, call, (), via + (call,), How.UNCLAIMED)]
            uses += self.fresh_at(call, call_scope, here, found)
        remote = self._element_elsewhere(func, container, index, rest, here, via, guards)
        if remote:
            uses += remote
        if not callers and remote is None and not stored:
            uses.append(self._nobody_claims(func, container, here, via))
        return uses

    def _element_elsewhere(
        self, func: ast.AST, container: ast.AST, index: Element, rest: Path, here: Loops, via: Via, guards: tuple[Guard, ...]
    ) -> list[Use] | None:
        """What other files' callers do with the element; summaries record parts of dict
        entries only (another part of an element elsewhere is kept: unclaimed)."""
        if rest and not isinstance(index, DictKey):
            project = self.facts.project
            return [Use(Move.ESCAPE, container, here, via, How.UNCLAIMED)] if project is not None and not project.summarizing else None
        return self._callers_elsewhere(func, container, here, via, path_key((index, *rest)) if rest else index, guards)


def _compared_parameter(test: ast.expr) -> tuple[str, Constant, bool, bool] | None:
    """``name == constant`` (or ``!=``, either side): (name, constant, whether ``==``, False);
    ``name`` / ``not name`` tested for truth (``if train:``): (name, None, whether not negated, True)."""
    if isinstance(test, ast.Name):
        return test.id, None, True, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id, None, False, True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    sides = (test.left, test.comparators[0])
    name = next((n for n in sides if isinstance(n, ast.Name)), None)
    constant = next((c for c in sides if isinstance(c, ast.Constant)), None)
    if name is None or constant is None:
        return None
    return name.id, constant.value, isinstance(test.ops[0], ast.Eq), False


def _on_request(func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.AST | None) -> bool:
    """A method whose name says it builds a loader on request (``get_data_loader``,
    ``get_eval_dataloader``) for a trainer outside the project that calls it when it needs a
    loader, in a class whose base is not a trainer that keeps it. A module-level
    ``get_train_loader`` with no caller is an ordinary factory: evidently a training loader
    when shuffled (the rule catalog, DL201)."""
    name = func.name.lower()
    if not (name.startswith("get_") and "loader" in name) or not isinstance(owner, ast.ClassDef):
        return False
    return not any("trainer" in (dotted_name(base) or "").lower() for base in owner.bases)
