"""Where a loader's value flows: which loops iterate it, which calls carry it away.

The analysis follows a loader from its construction through names (each binding on its
own: a name bound twice to two loaders is two loaders), same-file function calls and
class constructors (parameter by parameter), closures, ``return`` (to the function's
callers: same-file, other project files through ``facts.project``, or a framework hook),
``self.X = loader`` (to the class's reads of ``self.X``), wrappers (any call whose result a
``for`` iterates is one pass over the loader) and framework calls
(:mod:`dllint.facts.frameworks`). It records each place that iterates it
(``Move.ITERATE``) or lets it escape (``Move.ESCAPE``, with ``Use.how`` saying
whether a caller could still claim it, code outside the project took it, ...), as RULES.md's
"Following calls across the project" asks.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.frameworks import (
    assigned_hook,
    callback_result,
    framework_call,
    hook_of,
    hooks_of_stored_result,
    inherited_hooks,
)
from dllint.facts.imports import dotted_name
from dllint.facts.scopes import FUNCTION_NODES, Scope
from dllint.facts.walk import walk
from dllint.facts.flow.model import AnyEntry, Constant, DictKey, Guard, How, Move, Passes, RemoteLoop, Use, admitted, join, path_key, then
from dllint.knowledge.frameworks import Passing, Result

if TYPE_CHECKING:
    from collections.abc import Callable

    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall

# Builtins that consume an iterable on the spot.
ITERATING_BUILTINS = frozenset({"iter", "list", "tuple", "sorted", "set", "sum", "any", "all", "min", "max", "dict"})
# Calls that wrap an iterable and hand back something that iterates it.
WRAPPING_BUILTINS = frozenset({"enumerate", "zip", "map", "filter", "reversed"})
WRAPPING_QUALNAMES = frozenset(
    {
        "tqdm.tqdm",
        "tqdm.auto.tqdm",
        "tqdm.notebook.tqdm",
        "tqdm.std.tqdm",
        "itertools.islice",
        "itertools.chain",
        "itertools.cycle",
        "rich.progress.track",
    }
)
# Builtins that look at a value without iterating it.
NEUTRAL_BUILTINS = frozenset(
    {"len", "print", "isinstance", "hasattr", "getattr", "type", "id", "repr", "str", "vars", "callable", "setattr"}
)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
MAX_CALL_DEPTH = 6
MAX_STEPS = 2000  # flow steps for one question; real code needs a few dozen


def hook_iterates(hook, node: ast.AST, here: tuple, via: tuple) -> Use:
    """The framework iterates ``node``'s loader whenever it calls ``hook`` (every epoch, for a
    per-epoch hook such as ``train_dataloader``)."""
    marker = (RemoteLoop(f"the framework calling {hook.name}()", framework=True),) if hook.per_epoch else ()
    return Use(Move.ITERATE, node, here + marker, via, How.ELSEWHERE)


def _without_loops(uses: list[Use], dropped: set[int], here: tuple = ()) -> list[Use]:
    """``uses`` whose loops no longer count those in ``dropped`` (by id), under the loops ``here``."""
    return [u._replace(loops=here + tuple(loop for loop in u.loops if id(loop) not in dropped)) for u in uses]


class UsageAnalysis:
    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.parents = facts.scopes.parents
        self._loader_uses: dict[ast.Call, list[Use]] = {}
        self._entry_loops: dict[tuple, tuple] = {}  # (call, via before it) -> loops around the call's caller
        self._summarizing: ast.AST | None = None  # the function whose parameters a summary describes
        self._steps = 0  # flow steps of the current question (bounded: MAX_STEPS)
        self._reach: dict[tuple, bool] = {}
        self._resolving: dict[tuple, list] = {}
        self._loads_by_name: dict[str, list[tuple[ast.Name, Scope]]] = {}
        self._self_attributes: dict[ast.ClassDef, dict[str, list[ast.Attribute]]] = {}
        self._method_loops_of: dict[ast.AST, tuple[ast.AST, ...]] = {}
        for scope in facts.scopes.scopes.values():
            for load in scope.loads:
                self._loads_by_name.setdefault(load.id, []).append((load, scope))

    # -- public ---------------------------------------------------------------
    def loader_uses(self, loader: LoaderCall) -> list[Use]:
        """Every iteration and escape of the loader built by ``loader``."""
        uses = self._loader_uses.get(loader.node)
        if uses is None:
            self._steps = 0
            uses = self._uses_of_expr(loader.node, loader.scope, (), (), frozenset())
            self._loader_uses[loader.node] = uses
        return uses

    def uses_of(self, expr: ast.AST, scope: Scope) -> list[Use]:
        """Iterations and escapes of any value built by ``expr`` (a sampler, a dataset)."""
        self._steps = 0
        return self._uses_of_expr(expr, scope, (), (), frozenset())

    def parameter_uses(self, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[Use]:
        """What ``function`` does with its parameter ``param`` (for the project's summaries): a
        ``return`` of it is reported as such instead of being followed to callers."""
        self._summarizing = function
        self._steps = 0
        try:
            return self._uses_of_name(param, self.facts.scopes.scopes[function], (), (), frozenset())
        finally:
            self._summarizing = None

    def construction_loops(self, node: ast.AST) -> tuple[ast.AST, ...]:
        return self.enclosing_loops(node, self.facts.scopes.scope_of(node))

    def repeated_uses(self, loader: LoaderCall) -> list[Use]:
        """Uses that happen more than once per construction of the loader."""
        built_in = set(map(id, self.construction_loops(loader.node)))
        return [u for u in self.loader_uses(loader) if any(id(loop) not in built_in for loop in u.loops)]

    def iteration_count(self, loader: LoaderCall, training: bool | None = None) -> Passes:
        """How often one loader built here is iterated. A returned or stored loader that no
        caller in the project claims counts as re-iterated only when it is evidently a training
        loader (``training``; None: decide from the call); code outside the project adds no
        pass (unknown); iterations that go on the same pass (``How.ON_STOP``) add none. Uses
        of which at most one runs (:meth:`_exclusive`) join; others follow one another."""
        built_in = set(map(id, self.construction_loops(loader.node)))
        passes = Passes.NONE
        counted: list[Use] = []
        for use in self.loader_uses(loader):
            if use.how is How.ON_STOP:
                continue
            if use.kind is Move.ESCAPE:
                if use.how is How.UNCLAIMED and self._claimed_for_training(loader, use, training):
                    return Passes.PER_EPOCH
                continue
            if any(id(loop) not in built_in for loop in use.loops):
                return Passes.PER_EPOCH
            if any(use.node is other.node and use.via == other.via for other in counted):
                continue  # the same loop reached through two bindings of one name
            alone = all(self._exclusive(use, other) or self._other_construction(loader, use, other) for other in counted)
            passes = join(passes, Passes.ONCE) if alone else then(passes, Passes.ONCE)
            counted.append(use)
        return passes

    def _claimed_for_training(self, loader: LoaderCall, use: Use, training: bool | None) -> bool:
        """An unclaimed loader that is evidently a training loader (or returned by a function
        named like a framework's train-loader hook): a trainer iterates it every epoch."""
        from dllint.facts.training import TRAINING_FUNCTIONS, evidently_training

        if training is None:
            training = evidently_training(self.facts, loader)
        returned_by = getattr(self.facts.scopes.enclosing_function(use.node), "name", None)
        return training or returned_by in TRAINING_FUNCTIONS

    def _exclusive(self, first: Use, second: Use) -> bool:
        """At most one of the two uses runs: they sit in different arms of one
        ``if``/``elif``/``else``, or one sits in an arm that always leaves the function
        (ends in ``return``/``raise``) and the other comes after that ``if``."""
        one, other = (use.via[0] if use.via else use.node for use in (first, second))
        arms, other_arms = self._if_arms(one), self._if_arms(other)
        if any(node in other_arms and other_arms[node] != arm for node, arm in arms.items()):
            return True
        return self._leaves_before(arms, other) or self._leaves_before(other_arms, one)

    def _leaves_before(self, arms: dict[ast.If, str], later: ast.AST) -> bool:
        """An arm in ``arms`` ends by leaving the function, and ``later`` comes after its ``if``
        (outside it): reaching ``later`` means that arm did not run."""
        for node, arm in arms.items():
            block = node.body if arm == "body" else node.orelse
            if block and isinstance(block[-1], (ast.Return, ast.Raise)) and not self.facts.contains(node, later):
                if _position(later) > _position(node) and self.facts.scopes.enclosing_function(later) is self.facts.scopes.enclosing_function(node):
                    return True
        return False

    def _other_construction(self, loader: LoaderCall, first: Use, second: Use) -> bool:
        """The two uses reach the loader through two calls of the function that builds it
        (``tr = build_loader(a); va = build_loader(b)``): each call builds a loader of its own."""
        builder = self.facts.scopes.enclosing_function(loader.node)
        if builder is None:
            return False
        if first.caller or second.caller:  # returned to calls in other files
            built = self.qualified_name(builder)
            calls = [use.caller[0] == built if use.caller else bool(use.via) and self._builds_with(use.via[0], builder) for use in (first, second)]
            return all(calls) and first.caller != second.caller
        for one, other in zip(first.via, second.via):
            if one is other:
                continue
            return all(self._builds_with(call, builder) for call in (one, other))
        return False

    def qualified_name(self, function: ast.AST) -> str | None:
        """``f`` or ``Cls.m``: how other files' summaries name a module-level function or method."""
        parent = self.parents.get(function)
        name = getattr(function, "name", None)
        if isinstance(parent, ast.Module):
            return name
        if isinstance(parent, ast.ClassDef) and isinstance(self.parents.get(parent), ast.Module):
            return f"{parent.name}.{name}"
        return None

    def _builds_with(self, call: ast.Call, builder: ast.AST) -> bool:
        """``call`` runs ``builder`` afresh: calls it, or hands it to a higher-order utility
        (``apply_to_collection(ds, Dataset, builder)``)."""
        scope = self.facts.scopes.scope_of(call)
        if self.same_file_function(call.func, scope) is builder:
            return True

        arguments = [*call.args, *(k.value for k in call.keywords)]
        return any(
            (isinstance(a, ast.Name) and self.same_file_function(a, scope) is builder or a is builder)
            and callback_result(self.facts, a, scope) is not None
            for a in arguments
        )

    def return_guards(self, node: ast.AST, func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Guard, ...]:
        """The parameter tests (``if task == "pretrain":``, its ``else``) that must hold for
        ``node`` in ``func`` to run: a caller passing a constant that fails one never
        receives what ``node`` returns (a factory branching on a task name)."""
        positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        owner = self.parents.get(func)
        if isinstance(owner, ast.ClassDef) and not any(dotted_name(d) == "staticmethod" for d in func.decorator_list):
            positional = positional[1:]  # called bound: self is not passed
        names = {*positional, *(a.arg for a in func.args.kwonlyargs)}
        tests = [(test.test, arm == "body") for test, arm in self._if_arms(node).items()]
        tests += [(test, False) for test in self._left_before(node)]
        guards: list[Guard] = []
        for test, holds in tests:
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
                continue
            sides = (test.left, test.comparators[0])
            name = next((n for n in sides if isinstance(n, ast.Name)), None)
            constant = next((c for c in sides if isinstance(c, ast.Constant)), None)
            if name is None or constant is None or name.id not in names:
                continue
            if len(self.facts.scopes.scopes[func].bindings.get(name.id, ())) != 1:
                continue  # reassigned before the test: not the argument any more
            equal = isinstance(test.ops[0], ast.Eq) == holds
            position = positional.index(name.id) if name.id in positional else -1
            guards.append(Guard(name.id, position, constant.value, equal))
        return tuple(guards)

    def _left_before(self, node: ast.AST) -> list[ast.expr]:
        """Tests of earlier ``if``/``elif`` arms (in the blocks around ``node``, within its
        function) that leave the function when they hold: ``node`` runs only when they fail."""
        tests: list[ast.expr] = []
        child, current = node, self.parents.get(node)
        while current is not None and not isinstance(child, (*FUNCTION_NODES, ast.Module)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(current, field, None)
                if isinstance(block, list) and child in block:
                    for stmt in block[: block.index(child)]:
                        while isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                            tests.append(stmt.test)
                            stmt = stmt.orelse[0] if len(stmt.orelse) == 1 else None  # elif
            if isinstance(current, FUNCTION_NODES):
                break
            child, current = current, self.parents.get(current)
        return tests

    def _if_arms(self, node: ast.AST) -> dict[ast.If, str]:
        """For each ``if`` around ``node`` in its function: which arm holds it (body or orelse)."""
        arms: dict[ast.If, str] = {}
        child, current = node, self.parents.get(node)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, ast.If) and child is not current.test:
                arms[current] = "body" if child in current.body else "orelse"
            child, current = current, self.parents.get(current)
        return arms

    def enclosing_loops(self, node: ast.AST, scope: Scope) -> tuple[ast.AST, ...]:
        """Loops (and comprehensions) within ``scope`` that repeat ``node``, outermost first."""
        loops: list[ast.AST] = []
        child, current = node, self.parents.get(node)
        while current is not None and current is not scope.node:
            if isinstance(current, LOOPS) and child in current.body:
                loops.append(current)
            elif isinstance(current, COMPREHENSIONS) and child is not current.generators[0].iter:
                loops.append(current)
            elif isinstance(current, ast.comprehension) and child is current.iter:
                pass  # the first generator's iterable is evaluated once; handled at the comprehension
            elif isinstance(current, FUNCTION_NODES):
                break
            child, current = current, self.parents.get(current)
        return tuple(reversed(loops))

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
            index = _element_index(parent, expr)
            found = self._uses_of_element(parent, index, scope, loops, via, seen) if index is not None else None
            if found is not None:
                return found
        if isinstance(parent, ast.Lambda) and parent.body is expr:  # lambda ds: DataLoader(ds, ...)
            handed = self._handed_on(parent, expr, here, via, seen)
            if handed is not None:
                return handed
        if isinstance(parent, ast.Dict):
            key = _dict_key(parent, expr)
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

    def _returned(self, expr: ast.AST, scope: Scope, loops: tuple, via: tuple, seen: frozenset) -> list[Use]:
        """A value returned by its function: its callers decide what happens to it (the call
        site that passed it in, when it came in as an argument)."""
        here = loops + self.enclosing_loops(expr, scope)
        func = scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]
        if func is self._summarizing:
            return [Use(Move.ESCAPE, expr, here, via, How.RETURN)]
        if via and self.same_file_function(via[-1].func, self.facts.scopes.scope_of(via[-1])) is func:
            call = via[-1]  # handed back to the call that passed it in
            outer = self._entry_loops.get((call, via[:-1]), ())
            return self._uses_of_expr(call, self.facts.scopes.scope_of(call), outer, via[:-1], seen)
        key = ("return", func)
        if key in seen:
            return []
        seen = seen | {key}

        hook = hook_of(self.facts, func)
        if hook is not None:
            return [hook_iterates(hook, expr, here, via)]
        uses: list[Use] = []
        owner = self.parents.get(func)
        stored = hooks_of_stored_result(self.facts, owner, func.name) if isinstance(owner, ast.ClassDef) else None
        for hook in stored or ():  # a base class stores it for its hooks (this class overrides the factory)
            uses.append(hook_iterates(hook, expr, here, via))
        guards = self.return_guards(expr, func)
        callers = self._callers(func)
        for call in callers:
            if not admitted(guards, constant_args(call)):
                continue  # get_loader("finetune") never receives the "pretrain" loader
            call_scope = self.facts.scopes.scope_of(call)
            uses += self._fresh_at(call, call_scope, here, self._uses_of_expr(call, call_scope, (), via + (call,), seen))
        handed = self._handed_on(func, expr, here, via, seen)
        uses += handed or ()
        project = self.facts.project
        remote = project.caller_uses(self, func, expr, here, via, None, guards) if project is not None else None
        if remote:
            uses += remote
        if not callers and remote is None and not stored and handed is None:
            # ``get_data_loader()`` with no caller in the project: a trainer outside it asks for
            # a fresh loader when it needs one (coqui's calls it every epoch), which no
            # ``persistent_workers`` helps. How often the loader is iterated is unknown.
            how = How.UNKNOWN if _on_request(func, self.parents.get(func)) else How.UNCLAIMED
            uses.append(Use(Move.ESCAPE, expr, here, via, how))
        return uses

    def _handed_on(self, func: ast.AST, expr: ast.AST, here: tuple, via: tuple, seen: frozenset) -> list[Use] | None:
        """What becomes of the value ``func`` returns where ``func`` itself is handed on rather
        than called here: assigned as a framework hook onto an instance
        (``dm.train_dataloader = func``), or passed to a known higher-order utility whose result
        holds what it returns (``apply_to_collection(ds, Dataset, func)``, ``map(func, dss)``),
        from which the value is followed. None when ``func`` is handed on nowhere."""

        if isinstance(func, ast.Lambda):
            references = [(func, self.facts.scopes.scope_of(func))]
        else:
            references = self._loads_resolving_to(func.name, self.facts.scopes.scope_of(func))  # type: ignore[attr-defined]
        uses: list[Use] = []
        found = False
        for reference, scope in references:
            parent = self.parents.get(reference)
            if isinstance(parent, ast.Assign) and parent.value is reference:
                for target in parent.targets:
                    hook = assigned_hook(self.facts, target, scope)
                    if hook is not None:
                        found = True
                        uses.append(hook_iterates(hook, expr, here, via))
                continue
            handed = callback_result(self.facts, reference, scope)  # type: ignore[arg-type]
            if handed is None:
                continue
            found = True
            call, result = handed
            if result is Result.ELEMENTS:
                inner = self._callback_elements(call, scope, via + (call,), seen)
            else:
                inner = self._uses_of_expr(call, scope, (), via + (call,), seen)
            uses += self._fresh_at(call, scope, here, inner)
        return uses if found else None

    def _callback_elements(self, call: ast.Call, scope: Scope, via: tuple, seen: frozenset) -> list[Use]:
        """Uses of each value in the iterator ``call`` (``map(make_loader, datasets)``) hands
        back, also through ``list(...)``/``tuple(...)`` of it; kept (unclaimed) when undecidable."""
        container: ast.AST = call
        parent = self.parents.get(call)
        while (
            isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("list", "tuple")
            and parent.args == [container] and not parent.keywords and self.facts.scopes.lookup(parent.func.id, scope) is None
        ):
            container, parent = parent, self.parents.get(parent)
        found = self._uses_of_element(container, "*", scope, (), via, seen)
        if found is None:
            return [Use(Move.ESCAPE, container, self.enclosing_loops(container, scope), via, How.UNCLAIMED)]
        return found

    def _fresh_at(self, call: ast.Call, scope: Scope, here: tuple, uses: list[Use]) -> list[Use]:
        """``uses`` of the value ``call`` returns, seen from a frame whose loops are ``here``: the
        loops around ``call`` build a fresh value on every pass, so they repeat no use of one."""
        return _without_loops(uses, set(map(id, self.enclosing_loops(call, scope))), here)

    def callers(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """Same-file calls of ``func`` (see :meth:`_callers`)."""
        return self._callers(func)

    def _callers(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """Same-file calls of ``func``: by its name where the name means it, ``self.name(...)``
        inside its class."""
        calls: list[ast.Call] = []
        owner = self.facts.scopes.scope_of(func)
        if isinstance(owner.node, ast.ClassDef):
            for attribute in self._attributes_of_self(owner.node).get(func.name, ()):
                parent = self.parents.get(attribute)
                if isinstance(parent, ast.Call) and parent.func is attribute:
                    calls.append(parent)
            return calls
        for load, _ in self._loads_resolving_to(func.name, owner):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and parent.func is load:
                calls.append(parent)
        return calls

    # -- containers: loaders in tuples and lists --------------------------------------
    def loads_in(self, name: str, scope: Scope) -> list[ast.Name]:
        """Loads of ``name`` directly in ``scope``."""
        return [load for load, load_scope in self._loads_by_name.get(name, ()) if load_scope is scope]

    def element_uses(self, container: ast.AST, index: int | str, scope: Scope) -> list[Use] | None:
        """Uses of element ``index`` (``"*"``: any element) of the tuple or list that
        ``container`` evaluates to (for the project's summaries); None: undecidable."""
        self._steps = 0
        return self._uses_of_element(container, index, scope, (), (), frozenset())

    def _uses_of_element(
        self, container: ast.AST, index: int | str | DictKey, scope: Scope, loops: tuple, via: tuple, seen: frozenset,
        rest: tuple = (),
    ) -> list[Use] | None:
        """What happens to element ``index`` of the tuple, list, record or dict ``container``
        evaluates to: unpacked (``a, b = pair``), indexed by a constant (``pair[0]``,
        ``loaders["train"]``), looped over (``for dl in loaders``, ``zip(names, loaders)``,
        ``loaders.values()``: each element meets that loop once), bound to a name, returned
        to the callers, handed to a same-file function. ``rest``: the element is itself a
        container and what is asked is its part ``rest`` (``data["val"].dataloader``). None
        when its fate cannot be told (the caller treats the container as before: kept,
        nobody claims it)."""
        self._steps += 1
        key = ("element", container, index, rest)
        if self._steps > MAX_STEPS or key in seen:
            return None
        seen = seen | {key}
        parent = self.parents.get(container)
        if isinstance(index, (DictKey, AnyEntry)):
            handled, found = self._dict_entry_uses(container, index, scope, loops, via, seen, rest)
            if handled:
                return found
        looped = self.element_loop_target(container)
        if looped is not None:
            loop, target = looped
            if not isinstance(target, ast.Name):
                return None
            uses = self._extracted_name(target.id, scope, loops, via, seen, loop, rest)
            return None if uses is None else _without_loops(uses, {id(loop)})
        if isinstance(parent, ast.Attribute) and isinstance(index, str) and index != "*":
            if parent.attr == index:
                return self._extracted(parent, scope, loops, via, seen, rest)
            if isinstance(self.parents.get(parent), ast.Call) and self.parents[parent].func is parent:
                return None  # info.set_epoch(e): a method may use the field
            return []  # another field
        if isinstance(parent, ast.Subscript) and parent.value is container and isinstance(parent.ctx, ast.Load):
            position = parent.slice
            if not (isinstance(position, ast.Constant) and type(position.value) is int and position.value >= 0):
                return None
            if isinstance(index, str) and index != "*":
                return None  # a NamedTuple field read by position: which one is not known here
            if index == "*" or position.value == index:
                return self._extracted(parent, scope, loops, via, seen, rest)
            return []  # another element
        if isinstance(parent, (ast.Compare, ast.Expr)) or isinstance(parent, (ast.If, ast.While)) and parent.test is container:
            return []  # ``"train" in loaders``, ``if loaders:``: looks at the container only
        if isinstance(parent, ast.Assign) and parent.value is container and len(parent.targets) == 1:
            target = parent.targets[0]
            if isinstance(target, ast.Name):
                return self._uses_of_container_name(target.id, index, scope, loops, via, seen, parent, rest)
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(index, int):
                if any(isinstance(e, ast.Starred) for e in target.elts) or index >= len(target.elts):
                    return None
                element = target.elts[index]
                return self._extracted_name(element.id, scope, loops, via, seen, parent, rest) if isinstance(element, ast.Name) else None
            if self._is_self_attribute(target):
                return self._stored_element(target, container, index, scope, loops, via, seen, rest)  # type: ignore[arg-type]
            return self._stored_in_dict(parent, target, (index, *rest), scope, loops, via, seen)
        if isinstance(parent, ast.Dict):  # {"train": (loader, sampler)}: an entry of a dict in turn
            outer = _dict_key(parent, container)
            return self._uses_of_element(parent, outer, scope, loops, via, seen, (index, *rest)) if outer is not None else None
        if isinstance(parent, ast.Return) and parent.value is container:
            return self._returned_element(container, index, scope, loops, via, seen, rest)
        if isinstance(parent, ast.keyword):
            call = self.parents.get(parent)
            if isinstance(call, ast.Call):
                return self._element_passed(call, parent.arg, None, index, scope, loops, via, seen, rest)
        if isinstance(parent, ast.Call) and container in parent.args:
            return self._element_passed(parent, None, parent.args.index(container), index, scope, loops, via, seen, rest)
        return None

    def _extracted(self, expr: ast.AST, scope: Scope, loops: tuple, via: tuple, seen: frozenset, rest: tuple) -> list[Use] | None:
        """The element asked for is ``expr``'s value (or, with ``rest``, holds it)."""
        if rest:
            return self._uses_of_element(expr, rest[0], scope, loops, via, seen, rest[1:])
        return self._uses_of_expr(expr, scope, loops, via, seen)

    def _extracted_name(
        self, name: str, scope: Scope, loops: tuple, via: tuple, seen: frozenset, binding: ast.AST, rest: tuple
    ) -> list[Use] | None:
        if rest:
            return self._uses_of_container_name(name, rest[0], scope, loops, via, seen, binding, rest[1:])
        return self._uses_of_name(name, scope, loops, via, seen, binding)

    # -- dicts: loaders under constant string keys ------------------------------------
    def _dict_entry_uses(
        self, container: ast.AST, index: DictKey | AnyEntry, scope: Scope, loops: tuple, via: tuple, seen: frozenset, rest: tuple
    ) -> tuple[bool, list[Use] | None]:
        """What a dict's own ways of being read do with entry ``index``: ``d["k"]``,
        ``d.get("k")``, ``for k in d`` (keys only), ``d.values()``/``d.items()`` looped over
        (each entry meets the loop once); (False, None) for what any container shares
        (returned, bound to a name, passed on)."""
        parent = self.parents.get(container)
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is container:
            return True, []  # iterating a dict gives its keys
        if isinstance(parent, ast.Subscript) and parent.value is container:
            position = parent.slice
            if not (isinstance(position, ast.Constant) and isinstance(position.value, str)):
                return True, None  # d[name]: any entry
            if isinstance(index, AnyEntry):
                index.met.add(position.value)
                return True, []
            if position.value != index.key:
                return True, []
            if isinstance(parent.ctx, ast.Load):
                return True, self._extracted(parent, scope, loops, via, seen, rest)
            return True, None  # stored again or deleted: which value a later read sees is not followed
        if not isinstance(parent, ast.Attribute) or parent.value is not container:
            return False, None
        call = self.parents.get(parent)
        if not (isinstance(call, ast.Call) and call.func is parent) or call.keywords:
            return True, None  # an attribute of a dict: some other mapping (an attribute dict)
        if parent.attr == "keys" and not call.args:
            return True, []
        if parent.attr == "get" and call.args:
            key = call.args[0]
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return True, None
            if isinstance(index, AnyEntry):
                index.met.add(key.value)
                return True, []
            return True, self._extracted(call, scope, loops, via, seen, rest) if key.value == index.key else []
        if parent.attr in ("values", "items") and not call.args:
            looped = self.element_loop_target(call)
            if looped is None:
                return True, None  # list(d.values()), a view kept: not followed
            loop, target = looped
            if parent.attr == "items":  # for name, dl in d.items()
                if not isinstance(target, ast.Tuple) or len(target.elts) != 2 or any(isinstance(e, ast.Starred) for e in target.elts):
                    return True, None
                target = target.elts[1]
            if not isinstance(target, ast.Name):
                return True, None
            uses = self._extracted_name(target.id, scope, loops, via, seen, loop, rest)
            return True, None if uses is None else _without_loops(uses, {id(loop)})
        return True, None  # update(), pop(), setdefault(), ...: not followed

    def _stored_in_dict(
        self, statement: ast.Assign, target: ast.AST, path: tuple, scope: Scope, loops: tuple, via: tuple, seen: frozenset
    ) -> list[Use] | None:
        """``data["train"] = value`` into a dict this function made (``data = {}``, bound
        once): the reads of ``data`` after the store decide (with ``path``: what is asked is
        that part of the stored value). None for any other subscript store."""
        if not (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
        ):
            return None
        name = target.value.id
        bindings = scope.bindings.get(name, ())
        found = self.facts.scopes.lookup(name, scope)
        if len(bindings) != 1 or found is None or found[0] is not scope or not _makes_empty_or_literal_dict(bindings[0].node):
            return None
        # the store's own target aside, only reads the store reaches (not those before it) decide
        return self._element_uses_of_loads(
            name, scope, lambda load: load is not target.value and self._reaches_cached(statement, load, []),
            DictKey(target.slice.value), loops, via, seen, path,
        )

    def _stored_element(
        self, target: ast.Attribute, container: ast.AST, index, scope: Scope, loops: tuple, via: tuple, seen: frozenset, rest: tuple
    ) -> list[Use] | None:
        """``self.X = {"sv": sv_loader, ...}``: kept (nobody claims it), and each entry is
        iterated by the framework when a hook it inherits hands ``self.X`` out (Lightning
        iterates every loader of a dict or list a hook returns); reads of ``self.X`` in the
        class that can be told add their uses."""
        cls = self._enclosing_class(scope)
        here = loops + self.enclosing_loops(container, scope)
        uses = [Use(Move.ESCAPE, container, here, via, How.UNCLAIMED)]
        key = ("store-element", cls, target.attr, index, rest)
        if cls is None or key in seen or rest:
            return uses

        for hook in inherited_hooks(self.facts, cls, target.attr):
            uses.append(hook_iterates(hook, container, here, via))
        for node in self._attributes_of_self(cls).get(target.attr, ()):
            if not isinstance(node.ctx, ast.Load):
                continue
            load_scope = self.facts.scopes.scope_of(node)
            found = self._uses_of_element(node, index, load_scope, (), via, seen | {key})
            if found is None:
                continue  # kept: the unclaimed escape above stands for it
            repeat = self._method_loops(load_scope.node, 0)
            uses += [u._replace(loops=repeat + u.loops) if repeat else u for u in found]
        return uses

    def element_loop_target(self, node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
        """(the ``for``, the part of its target that takes each element) when ``node``'s
        elements are looped over, directly or through ``zip``/``enumerate``."""
        path: list[int] = []
        current = node
        while True:
            parent = self.parents.get(current)
            if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is current:
                target: ast.AST = parent.target
                for position in reversed(path):
                    if not isinstance(target, (ast.Tuple, ast.List)) or position >= len(target.elts):
                        return None
                    if any(isinstance(e, ast.Starred) for e in target.elts):
                        return None
                    target = target.elts[position]
                return parent, target
            if not (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and current in parent.args):
                return None
            if any(isinstance(a, ast.Starred) for a in parent.args):
                return None
            if self.facts.scopes.lookup(parent.func.id, self.facts.scopes.scope_of(parent)) is not None:
                return None  # a zip of the file's own
            if parent.func.id == "zip":
                path.append(parent.args.index(current))
            elif parent.func.id == "enumerate" and parent.args[0] is current:
                path.append(1)
            else:
                return None
            current = parent

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

    def _uses_of_container_name(
        self, name: str, index: int | str | DictKey, scope: Scope, loops: tuple, via: tuple, seen: frozenset,
        binding: ast.AST | None, rest: tuple = (),
    ) -> list[Use] | None:
        """Element ``index`` of the container bound to ``name``, through every load of it
        that the binding reaches; None if any of them is undecidable (or in a closure)."""
        rebound = binding is not None and len(scope.bindings.get(name, ())) > 1
        return self._element_uses_of_loads(
            name, scope, lambda load: not rebound or self._reaches_cached(binding, load, scope.bindings[name]),
            index, loops, via, seen, rest,
        )

    def _element_uses_of_loads(
        self, name: str, scope: Scope, reached: Callable[[ast.Name], bool], index: int | str | DictKey,
        loops: tuple, via: tuple, seen: frozenset, rest: tuple,
    ) -> list[Use] | None:
        """Element ``index`` through every load of ``name`` in ``scope`` that ``reached`` lets
        through; None if any of them is undecidable, or if ``name`` is read in a closure."""
        uses: list[Use] = []
        for load, load_scope in self._loads_resolving_to(name, scope):
            if load_scope is not scope:
                return None  # read in a closure: not followed
            if not reached(load):
                continue
            found = self._uses_of_element(load, index, scope, loops, via, seen, rest)
            if found is None:
                return None
            uses += found
        return uses

    def _element_passed(
        self, call: ast.Call, keyword: str | None, position: int | None, index: int | str | DictKey,
        scope: Scope, loops: tuple, via: tuple, seen: frozenset, rest: tuple = (),
    ) -> list[Use] | None:
        """A container handed to a call: ``len(loaders)`` looks at it; a same-file function
        decides through its parameter; anything else is undecidable."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in NEUTRAL_BUILTINS and self.facts.scopes.lookup(func.id, scope) is None:
            return []
        target = self.same_file_function(func, scope)
        if target is None and isinstance(index, (DictKey, AnyEntry)):
            return self._dict_passed_elsewhere(call, keyword, position, index, scope, loops, via, rest)
        if target is None or len(via) >= MAX_CALL_DEPTH:
            return None
        param = self._parameter(target, keyword, position, isinstance(func, ast.Attribute))
        if param is None:
            return None
        here = loops + self.enclosing_loops(call, scope)
        self._entry_loops[(call, via)] = loops
        callee = self.facts.scopes.scopes[target]
        return self._uses_of_container_name(param, index, callee, here, via + (call,), seen, None, rest)

    def _dict_passed_elsewhere(
        self, call: ast.Call, keyword: str | None, position: int | None, index: DictKey | AnyEntry,
        scope: Scope, loops: tuple, via: tuple, rest: tuple,
    ) -> list[Use] | None:
        """A dict handed whole to a function of another project file: its summary says what
        it does with each entry (``evaluate(model, data)`` reading ``data["val"]``)."""
        project = self.facts.project
        remote = project.target_of(self.facts, call.func, scope) if project is not None else None
        if remote is None or position is not None and any(isinstance(a, ast.Starred) for a in call.args[:position]):
            return None
        argument = keyword if keyword is not None else str(position)
        here = loops + self.enclosing_loops(call, scope)
        if any(isinstance(part, AnyEntry) for part in rest) or isinstance(index, AnyEntry) and rest:
            return None  # a dict of dicts handed on: not followed
        if project.summarizing:  # "*": the entry asked about, whichever it is
            entry = "*" if isinstance(index, AnyEntry) else path_key((index, *rest))
            return [Use(Move.ESCAPE, call, here, via, How.REMOTE, (remote, argument, entry))]
        if isinstance(index, AnyEntry):
            return None
        return project.entry_uses(self, remote, argument, path_key((index, *rest)), call, here, via)

    def parameter_entry_uses(self, function: ast.AST, param: str, index, rest: tuple = ()) -> list[Use] | None:
        """What ``function`` does with entry ``index`` (``rest``: that part of it) of the dict
        its parameter ``param`` holds (for the project's summaries); None: undecidable."""
        self._summarizing = function
        self._steps = 0
        try:
            return self._uses_of_container_name(param, index, self.facts.scopes.scopes[function], (), (), frozenset(), None, rest)
        finally:
            self._summarizing = None

    def result_entry_uses(self, call: ast.AST, index, scope: Scope, rest: tuple = ()) -> list[Use] | None:
        """The same for the dict a call returns (``data = get_data(args)``)."""
        self._steps = 0
        return self._uses_of_element(call, index, scope, (), (), frozenset(), rest)

    def _returned_element(
        self, container: ast.AST, index: int | str | DictKey, scope: Scope, loops: tuple, via: tuple, seen: frozenset,
        rest: tuple = (),
    ) -> list[Use] | None:
        """``return train_loader, val_loader``: each caller decides what happens to the
        element (``train, val = get_loaders()``), in this file or, through the project's
        summaries, in others; a caller that does something else with the container keeps it
        unclaimed. A framework hook's container of loaders (``return {"a": dl_a, "b":
        dl_b}`` from ``train_dataloader``): the framework iterates each of them."""
        func = scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func is self._summarizing:
            return None

        here = loops + self.enclosing_loops(container, scope)
        hook = hook_of(self.facts, func)
        if hook is not None:
            if rest:
                return None  # the framework iterates the entries, not what they hold
            return [hook_iterates(hook, container, here, via)]
        if via and self.same_file_function(via[-1].func, self.facts.scopes.scope_of(via[-1])) is func:
            call = via[-1]  # handed back to the call that passed the loader in
            outer = self._entry_loops.get((call, via[:-1]), ())
            return self._uses_of_element(call, index, self.facts.scopes.scope_of(call), outer, via[:-1], seen, rest)
        uses: list[Use] = []
        owner = self.parents.get(func)
        stored = hooks_of_stored_result(self.facts, owner, func.name) if isinstance(owner, ast.ClassDef) and not rest else None
        for hook in stored or ():  # a base class stores the container for its hooks
            uses.append(hook_iterates(hook, container, here, via))
        guards = self.return_guards(container, func)
        callers = self._callers(func)
        for call in callers:
            if not admitted(guards, constant_args(call)):
                continue
            call_scope = self.facts.scopes.scope_of(call)
            found = self._uses_of_element(call, index, call_scope, (), via + (call,), seen, rest)
            if found is None:
                found = [Use(Move.ESCAPE, call, (), via + (call,), How.UNCLAIMED)]
            uses += self._fresh_at(call, call_scope, here, found)
        project = self.facts.project
        if rest and not isinstance(index, DictKey):  # summaries record parts of dict entries only
            remote = [Use(Move.ESCAPE, container, here, via, How.UNCLAIMED)] if project is not None and not project.summarizing else None
        else:
            element = path_key((index, *rest)) if rest else index
            remote = project.caller_uses(self, func, container, here, via, element, guards) if project is not None else None
        if remote:
            uses += remote
        if not callers and remote is None and not stored:
            how = How.UNKNOWN if _on_request(func, self.parents.get(func)) else How.UNCLAIMED
            uses.append(Use(Move.ESCAPE, container, here, via, how))
        return uses

    def _stored(self, target: ast.Attribute, expr: ast.AST, scope: Scope, here: tuple, via: tuple, seen: frozenset) -> list[Use]:
        """``self.X = loader``: the reads of ``self.X`` in the class decide; how often their
        methods run is the callers' business, so the stored value is also unclaimed, unless
        every read hands it to the framework from one of its hooks."""
        cls = self._enclosing_class(scope)
        uses = [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]
        key = ("store", cls, target.attr)
        if cls is None or key in seen:
            return uses
        loads = [node for node in self._attributes_of_self(cls).get(target.attr, ()) if isinstance(node.ctx, ast.Load)]

        inherited = inherited_hooks(self.facts, cls, target.attr)  # a base's hook returns self.X
        if (loads or inherited) and all(self._returned_by_once_hook(node) for node in loads) and not any(h.per_epoch for h in inherited):
            uses = []  # only test/predict hooks hand it out: the framework iterates it once
            # (train/val hooks keep the escape: Lightning calls set_epoch on their samplers, DL301)
        for hook in inherited:
            uses.append(hook_iterates(hook, expr, here, via))
        built = via[-1] if via and self._same_file_init(via[-1].func, self.facts.scopes.scope_of(via[-1])) is not None else None
        for node in loads:
            load_scope = self.facts.scopes.scope_of(node)
            # the method runs in a loop of its class, or is called in a loop on this instance
            repeat = self._method_loops(load_scope.node, 0) or self._instance_loops(load_scope.node, built)
            found = self._uses_of_expr(node, load_scope, (), via, seen | {key})
            uses += [u._replace(loops=repeat + u.loops) if repeat else u for u in found]
        return uses

    def _returned_by_once_hook(self, load: ast.AST) -> bool:
        """``return self.X`` in a framework hook that iterates its loader once
        (``def test_dataloader(self): return self._test_dl``), or a read of it in a condition
        there (``if self._test_dl is not None:``)."""

        function = self.facts.scopes.enclosing_function(load)
        hook = hook_of(self.facts, function) if function is not None else None
        if hook is None or hook.per_epoch:
            return False
        parent = self.parents.get(load)
        if isinstance(parent, ast.Return):
            return True
        if isinstance(parent, ast.Compare) and all(isinstance(c, ast.Constant) and c.value is None for c in parent.comparators):
            return True  # ``self._test_dl is not None``
        return False

    def _attributes_of_self(self, cls: ast.ClassDef) -> dict[str, list[ast.Attribute]]:
        """Every ``self.X`` in the class, by ``X``: one walk per class, however many methods
        and stored attributes are asked about (a 5,000-line ``Trainer`` has hundreds)."""
        table = self._self_attributes.get(cls)
        if table is None:
            table = {}
            for node in walk(cls):  # ast.walk's order, built as a list
                if self._is_self_attribute(node):
                    table.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined]
            self._self_attributes[cls] = table
        return table

    def _method_loops(self, function: ast.AST, depth: int) -> tuple[ast.AST, ...]:
        """Loops around the calls of a method by ``self.name()`` in its class (through the
        methods that call it, a few levels up): the epoch loop of ``fit`` calling
        ``self.validate()``. Remembered per method: big classes call their methods from many
        places, and each place would otherwise be searched again from every caller."""
        if depth > 3 or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        if not isinstance(self.parents.get(function), ast.ClassDef):
            return ()
        known = self._method_loops_of.get(function)
        if known is not None:
            return known
        self._method_loops_of[function] = ()  # a method reached again through its own callers adds nothing
        found: tuple[ast.AST, ...] = ()
        for call in self._callers(function):
            scope = self.facts.scopes.scope_of(call)
            loops = tuple(loop for loop in self.enclosing_loops(call, scope) if isinstance(loop, LOOPS))
            if loops:
                found = loops
                break
            outer = self._method_loops(scope.node, depth + 1)
            if outer:
                found = outer
                break
        if depth == 0 or found:
            self._method_loops_of[function] = found
        else:
            del self._method_loops_of[function]  # cut short by depth: a shallower ask may find more
        return found

    def _instance_loops(self, method: ast.AST, built: ast.Call | None, depth: int = 0) -> tuple[ast.AST, ...]:
        """Loops around the calls of ``method`` on the one instance ``built`` made, when ``built``
        is bound once to a name (``evaluator = Evaluator(val_loader)``, then
        ``evaluator.evaluate(model)`` every epoch; ``prefetcher.reset()`` re-opening the loader
        it holds), directly or through the class's own methods that call it."""
        if built is None or depth > 3 or not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        binding = self.parents.get(built)
        if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1 and isinstance(binding.targets[0], ast.Name)):
            return ()
        name, scope = binding.targets[0].id, self.facts.scopes.scope_of(built)
        if len(scope.bindings.get(name, ())) != 1:
            return ()  # rebound: which instance a call reaches is not followed
        for obj, obj_scope in self._loads_resolving_to(name, scope):
            attribute = self.parents.get(obj)
            call = self.parents.get(attribute)
            if isinstance(attribute, ast.Attribute) and attribute.attr == method.name and isinstance(call, ast.Call) and call.func is attribute:
                loops = tuple(loop for loop in self.enclosing_loops(call, obj_scope) if isinstance(loop, LOOPS))
                if loops:
                    return loops
        for call in self._callers(method):  # self.evaluate() inside another method: its calls decide
            loops = self._instance_loops(self.facts.scopes.scope_of(call).node, built, depth + 1)
            if loops:
                return loops
        return ()

    @staticmethod
    def _is_self_attribute(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"

    def _uses_of_name(
        self, name: str, scope: Scope, loops: tuple, via: tuple, seen: frozenset, binding: ast.AST | None = None
    ) -> list[Use]:
        """Uses of every load of ``name`` bound in ``scope``, including loads in closures.
        ``binding``: the statement that bound it; loads that a later binding of the name
        always replaces first are another value's (a name bound twice to two loaders)."""
        uses: list[Use] = []
        if binding is not None:
            key = ("bound", binding, name)
            if key in seen:
                return uses  # x = f(x) in a loop: this binding's flow is already being followed
            seen = seen | {key}
        rebound = binding is not None and len(scope.bindings.get(name, ())) > 1
        for load, load_scope in self._loads_resolving_to(name, scope):
            if load_scope is scope:
                if rebound and not self._reaches_cached(binding, load, scope.bindings[name]):
                    continue
                found = self._uses_of_expr(load, scope, loops, via, seen)
                if rebound:
                    found = self._first_pass_only(found, binding, load, scope.bindings[name], scope)
                uses += found
                continue
            # A load inside a nested function: repeated as often as that function is called.
            func = self._outermost_function_below(load_scope, scope)
            key = (func, name)
            if key in seen:
                continue
            calls = self._call_sites(func, scope) if func is not None else None
            inner = self._uses_of_expr(load, load_scope, (), (), seen | {key})
            if not calls:
                marker = (func,) if func is not None else ()
                uses += [Use(u.kind, u.node, loops + marker + u.loops, via + u.via, u.how, u.remote) for u in inner]
                continue
            for call in calls:
                call_loops = loops + self.enclosing_loops(call, scope)
                repeat = (func,) if len(calls) > 1 else ()
                uses += [
                    Use(u.kind, u.node, call_loops + repeat + u.loops, via + (call,) + u.via, u.how, u.remote)
                    for u in inner
                ]
        return uses

    def _first_pass_only(self, uses: list[Use], binding: ast.AST, load: ast.Name, bindings: list, scope: Scope) -> list[Use]:
        """A loop whose body rebinds the name on every pass repeats ``load`` for other values:
        this binding's value meets it on the first pass only."""
        others = [b.node for b in bindings if b.node is not binding]
        cut = {
            id(loop)
            for loop in self.enclosing_loops(load, scope)
            if isinstance(loop, LOOPS) and not self.facts.contains(loop, binding) and any(o in loop.body for o in others)
        }
        return _without_loops(uses, cut) if cut else uses

    def _reaches_cached(self, binding: ast.AST, load: ast.Name, bindings: list) -> bool:
        key = (binding, load)
        found = self._reach.get(key)
        if found is None:
            found = self._reach[key] = self._reaches(binding, load, bindings)
        return found

    def _reaches(self, binding: ast.AST, load: ast.Name, bindings: list) -> bool:
        """The value bound by ``binding`` may still be the name's value at ``load``: it comes
        before the load (or a loop around both brings it round again) and no other binding
        between them runs on every path to the load."""
        start = _end(binding)
        at = _position(load)
        if any(self._rebound_by_loop(other.node, binding, load) for other in bindings):
            return False
        if start >= at:
            return self._in_common_loop(binding, load)
        for other in bindings:
            node = other.node
            if node is binding or not (start < _end(node) < at):
                continue
            if self._always_runs_before(node, load):
                return False
        return True

    def _rebound_by_loop(self, loop: ast.AST, binding: ast.AST, load: ast.AST) -> bool:
        """``loop`` is another binding, a ``for`` whose target binds the name at the top of
        every pass of the body that holds ``load``, and ``binding`` is outside that body:
        ``for name, test_dl in zip(names, dls)`` shadows an earlier ``test_dl``."""
        if loop is binding or not isinstance(loop, (ast.For, ast.AsyncFor)):
            return False
        in_body = self._in_body_of(loop, load)
        return in_body and not self._in_body_of(loop, binding)

    def _in_body_of(self, loop: ast.For | ast.AsyncFor, node: ast.AST) -> bool:
        child, current = node, self.parents.get(node)
        while current is not None:
            if current is loop:
                return any(child is stmt for stmt in loop.body)
            child, current = current, self.parents.get(current)
        return False

    def _always_runs_before(self, statement: ast.AST, load: ast.AST) -> bool:
        """A later statement of the block that holds ``statement`` contains ``load``."""
        holder = self.parents.get(statement)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(holder, field, None)
            if isinstance(block, list) and statement in block:
                return any(self.facts.contains(item, load) for item in block[block.index(statement) + 1:])
        return False

    def _in_common_loop(self, first: ast.AST, second: ast.AST) -> bool:
        current = self.parents.get(first)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, LOOPS) and self.facts.contains(current, second):
                return True
            current = self.parents.get(current)
        return False

    # -- helpers ---------------------------------------------------------------
    def loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        """Loads of ``name`` (in ``scope`` and the scopes nested in it) that the binding in
        ``scope`` reaches, each with the scope it is read in."""
        return self._loads_resolving_to(name, scope)

    def _loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        key = (name, scope.node)
        cached = self._resolving.get(key)
        if cached is not None:
            return cached
        found = []
        for load, candidate in self._loads_by_name.get(name, ()):
            if self._is_within(candidate, scope):
                resolved = self.facts.scopes.lookup(name, candidate)
                if resolved is not None and resolved[0] is scope:
                    found.append((load, candidate))
        self._resolving[key] = found
        return found

    @staticmethod
    def _is_within(inner: Scope, outer: Scope) -> bool:
        current: Scope | None = inner
        while current is not None:
            if current is outer:
                return True
            current = current.parent
        return False

    @staticmethod
    def _outermost_function_below(inner: Scope, outer: Scope) -> ast.AST | None:
        current, below = inner, None
        while current is not None and current is not outer:
            if current.is_function:
                below = current.node
            current = current.parent
        return below

    def _call_sites(self, func: ast.AST, scope: Scope) -> list[ast.Call] | None:
        """Calls of a nested ``def`` from ``scope``; None if it is used any other way."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        sites = []
        for load, _ in self._loads_resolving_to(func.name, scope):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and parent.func is load:
                sites.append(parent)
            else:
                return None
        return sites

    def same_file_function(self, func: ast.expr, scope: Scope) -> ast.AST | None:
        """The ``def`` a call goes to, when it is in this file: ``f(...)`` or ``self.method(...)``."""
        if isinstance(func, ast.Name):
            found = self.facts.scopes.lookup(func.id, scope)
            if found and len(found[1]) == 1 and found[1][0].kind == "def":
                return found[1][0].node
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self._enclosing_class(scope)
            if cls is not None:
                for stmt in cls.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == func.attr:
                        return stmt
        return None

    def _same_file_init(self, func: ast.expr, scope: Scope) -> ast.AST | None:
        """``__init__`` of the same-file class a call constructs (a name bound only to it)."""
        if not isinstance(func, ast.Name):
            return None
        found = self.facts.scopes.lookup(func.id, scope)
        if not found or len(found[1]) != 1 or found[1][0].kind != "class":
            return None
        for stmt in found[1][0].node.body:  # type: ignore[attr-defined]
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init__":
                return stmt
        return None

    def _enclosing_class(self, scope: Scope) -> ast.ClassDef | None:
        current: Scope | None = scope
        while current is not None:
            if isinstance(current.node, ast.ClassDef):
                return current.node
            current = current.parent
        return None

    @staticmethod
    def _parameter(func: ast.AST, keyword: str | None, index: int | None, bound_method: bool) -> str | None:
        args = func.args  # type: ignore[attr-defined]
        positional = [a.arg for a in [*args.posonlyargs, *args.args]]
        if bound_method and positional:
            positional = positional[1:]
        if keyword is not None:
            names = positional + [a.arg for a in args.kwonlyargs]
            return keyword if keyword in names else None
        if index is not None and index < len(positional):
            return positional[index]
        return None


def constant_args(call: ast.Call) -> dict[str, Constant]:
    """The JSON constants a call passes, by position ("0", "1", ...) up to a ``*starred``
    argument and by keyword (none after a ``**splat``, which may replace them)."""
    args: dict[str, Constant] = {}
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, float, bool, type(None))):
            args[str(position)] = arg.value
    if not any(k.arg is None for k in call.keywords):
        for keyword in call.keywords:
            if isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, (str, int, float, bool, type(None))):
                args[keyword.arg] = keyword.value.value  # type: ignore[index]
    return args


def _repeats_elsewhere(uses: list[Use]) -> bool:
    """Some use is repeated by a loop in another file (a helper's ``while True`` around its
    ``for``): more than the one pass a wrapper's caller sees."""
    return any(isinstance(loop, RemoteLoop) for use in uses for loop in use.loops)


def _on_request(func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.AST | None) -> bool:
    """A method whose name says it builds a loader on request (``get_data_loader``,
    ``get_eval_dataloader``) for a trainer outside the project that calls it when it needs a
    loader, in a class whose base is not a trainer that keeps it. A module-level
    ``get_train_loader`` with no caller is an ordinary factory: evidently a training loader
    when shuffled (RULES.md, DL201)."""
    name = func.name.lower()
    if not (name.startswith("get_") and "loader" in name) or not isinstance(owner, ast.ClassDef):
        return False
    return not any("trainer" in (dotted_name(base) or "").lower() for base in owner.bases)


def _dict_key(display: ast.Dict, value: ast.AST) -> DictKey | None:
    """The constant string key ``value`` is stored under in a dict display, unless a later
    entry (the same key, a ``**splat``) may replace it."""
    if value not in display.values:
        return None
    position = display.values.index(value)
    key = display.keys[position]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    for later in display.keys[position + 1:]:
        if later is None or not isinstance(later, ast.Constant) or later.value == key.value:
            return None
    return DictKey(key.value)


def _makes_empty_or_literal_dict(statement: ast.AST) -> bool:
    """``data = {}``, ``data = {"a": x}`` or ``data = dict()``: a dict this code owns."""
    if isinstance(statement, ast.AnnAssign):
        value = statement.value
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        value = statement.value
    else:
        return False
    if isinstance(value, ast.Dict):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and not value.args and not value.keywords


def _element_index(container: ast.Tuple | ast.List, element: ast.AST) -> int | None:
    """The position of ``element`` in a tuple or list display; None after a ``*starred`` one."""
    position = container.elts.index(element)
    return None if any(isinstance(e, ast.Starred) for e in container.elts[:position]) else position


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> tuple[int, int]:
    """Where a binding statement takes effect: after its value is evaluated (a ``for``'s
    target: after its iterable, before its body)."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        node = node.iter
    elif isinstance(node, ast.withitem):  # no position of its own
        node = node.context_expr
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
