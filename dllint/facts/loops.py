"""Loop structure around a loader: the epoch loops that repeat its iteration, and what
their bodies do to its dataset.

Built on :mod:`dllint.facts.usage`: a loader's ``iterate`` uses already carry the loops
that repeat them across same-file calls. This module narrows those to statement loops
(``for``/``while``: an epoch loop, not a comprehension or a "may be called again"
marker) and reads the loop bodies: which names they rebind (DL204) and whether they
mutate the loader's dataset (DL303, and DL201's fix).
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Iterator

from dllint.facts.imports import dotted_name
from dllint.facts.walk import NESTED_SCOPES, walk_body
from dllint.facts.flow.model import EPOCH_LOOPS, Loop, Move, RemoteLoop, Use
from dllint.facts.flow.base import WRAPPING_BUILTINS, WRAPPING_QUALNAMES
from dllint.facts.flow.syntax import position_of

if TYPE_CHECKING:
    from dllint.facts import ClassInfo, FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

STATEMENT_LOOPS = (ast.For, ast.AsyncFor, ast.While)
MAX_METHOD_DEPTH = 4



def loop_body_nodes(loop: ast.AST) -> Iterator[ast.AST]:
    """The nodes a loop repeats: its body (and a ``while`` test), not its ``else`` or iterable."""
    parts = list(loop.body)  # type: ignore[attr-defined]
    if isinstance(loop, ast.While):
        parts.append(loop.test)
    for part in parts:
        yield part
        if not isinstance(part, NESTED_SCOPES):
            yield from walk_body(part)


def names_bound_in_loop(loop: ast.AST) -> set[str]:
    """Names the loop rebinds on each pass: its target and whatever its body assigns."""
    bound: set[str] = set()
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        bound |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for node in loop_body_nodes(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound


def loaded_names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def unwrap_iterable(facts: FileFacts, expr: ast.expr) -> ast.expr:
    """``enumerate(tqdm(loader))`` -> ``loader``: strip the wrappers usage analysis sees through."""
    for _ in range(8):
        if not (isinstance(expr, ast.Call) and expr.args):
            return expr
        func = expr.func
        if isinstance(func, ast.Name) and func.id in WRAPPING_BUILTINS or facts.qualname(func) in WRAPPING_QUALNAMES:
            expr = expr.args[0]
        else:
            return expr
    return expr


class LoopAnalysis:
    """Epoch loops of each loader and the dataset mutations inside them."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.usage = facts.usage
        self._mutations: dict[tuple[ast.Call, bool], list[ast.AST]] = {}

    # -- epoch loops -------------------------------------------------------------
    def iterations(self, loader: LoaderCall) -> list[Use]:
        return [u for u in self.usage.loader_uses(loader) if u.kind is Move.ITERATE]

    def escapes(self, loader: LoaderCall) -> bool:
        return any(u.kind is Move.ESCAPE for u in self.usage.loader_uses(loader))

    @staticmethod
    def epoch_loops(use: Use) -> tuple[Loop, ...]:
        """The ``for``/``while`` loops around an iteration (and epoch loops elsewhere), outermost
        first, across call frames."""
        return tuple(loop for loop in use.loops if isinstance(loop, EPOCH_LOOPS))

    def repeating_loops(self, loader: LoaderCall, use: Use) -> tuple[Loop, ...]:
        """Epoch loops that iterate the *same* loader object again (not ones that rebuild it)."""
        built = set(map(id, self.usage.construction_loops(loader.node)))
        return tuple(loop for loop in self.epoch_loops(use) if id(loop) not in built)

    def epoch_iteration(self, loader: LoaderCall, *, same_object: bool = False) -> Use | None:
        """The first iteration of ``loader`` that an epoch loop repeats, if any."""
        for use in self.iterations(loader):
            loops = self.repeating_loops(loader, use) if same_object else self.epoch_loops(use)
            if loops:
                return use
        return None

    # -- names that refer to the loader and its dataset ----------------------------
    def loader_names(self, loader: LoaderCall, use: Use, scope: Scope, may: bool = False) -> set[str]:
        """Names that hold this loader inside ``scope``: bound to it there, or the name the
        iterating ``for`` reads when that ``for`` runs in ``scope`` (a parameter). With ``may``,
        also names that hold it by one of their bindings (``loader`` rebuilt in the epoch loop)."""
        refers = self.may_refer_to if may else self.refers_to
        names = {
            name
            for name in self._possible_names(loader.node)
            if self._is_visible(name, scope) and refers(name, scope, loader.node)
        }
        if isinstance(use.node, (ast.For, ast.AsyncFor)) and self.facts.scopes.scope_of(use.node) is scope:
            inner = unwrap_iterable(self.facts, use.node.iter)
            if isinstance(inner, ast.Name):
                names.add(inner.id)
        return names

    def _possible_names(self, target: ast.AST) -> set[str]:
        """Names that some binding chain ``a = b``, ``b = target`` could lead to ``target``: a superset
        of the names that refer to it, found from the target (was: every visible name tried for every
        loader, quadratic in a file of many loaders)."""
        names = set(self._bound_to.get(id(target), ()))
        frontier = set(names)
        for _ in range(8):  # as deep as refers_to follows
            frontier = {alias for name in frontier for alias in self._aliases.get(name, ())} - names
            if not frontier:
                break
            names |= frontier
        return names

    @cached_property
    def _bound_to(self) -> dict[int, set[str]]:
        """id of a bound expression -> the names assigned to it, in any scope."""
        index: dict[int, set[str]] = {}
        for scope in self.facts.scopes.scopes.values():
            for name, bindings in scope.bindings.items():
                for binding in bindings:
                    if binding.value is not None:
                        index.setdefault(id(binding.value), set()).add(name)
        return index

    @cached_property
    def _aliases(self) -> dict[str, set[str]]:
        """name -> the names assigned from it (``alias = name``), in any scope."""
        index: dict[str, set[str]] = {}
        for scope in self.facts.scopes.scopes.values():
            for name, bindings in scope.bindings.items():
                for binding in bindings:
                    if isinstance(binding.value, ast.Name):
                        index.setdefault(binding.value.id, set()).add(name)
        return index

    @staticmethod
    def _is_visible(name: str, scope: Scope) -> bool:
        """``name`` is bound in ``scope`` or a scope around it (without collecting all their names
        per loader: that was quadratic in a file of many loaders)."""
        current: Scope | None = scope
        while current is not None:
            if name in current.bindings:
                return True
            current = current.parent
        return False

    def refers_to(self, name: str, scope: Scope, target: ast.AST) -> bool:
        """``name`` (seen from ``scope``) is bound once, through names, to ``target``."""
        for _ in range(8):
            found = self.facts.scopes.single_value(name, scope)
            if found is None or found[1].value is None:
                return False
            scope, value = found[0], found[1].value
            if value is target:
                return True
            if not isinstance(value, ast.Name):
                return False
            name = value.id
        return False

    def may_refer_to(self, name: str, scope: Scope, target: ast.AST) -> bool:
        """One of the bindings of ``name`` (seen from ``scope``) leads, through names, to ``target``."""
        frontier = [(name, scope)]
        for _ in range(8):  # as deep as refers_to follows
            following = []
            for each, where in frontier:
                found = self.facts.scopes.lookup(each, where)
                for binding in found[1] if found is not None else ():
                    if binding.value is target:
                        return True
                    if isinstance(binding.value, ast.Name):
                        following.append((binding.value.id, found[0]))  # type: ignore[index]  # (found is set here)
            if not following:
                break
            frontier = following
        return False

    # -- dataset mutations --------------------------------------------------------
    def dataset_mutations(self, loader: LoaderCall, unknown: bool = False) -> list[ast.AST]:
        """Statements/calls inside the loops that re-iterate ``loader`` which change its dataset
        in the main process: ``loader.dataset.x = ...``, ``ds.x = ...``, ``ds.method(...)`` for a
        same-file method that assigns ``self.*`` or changes one in place, ``setattr(ds, ...)``;
        with ``unknown``, also a method call on a dataset whose class this file cannot read (a
        rule that is silent on a change counts it; one that fires on a change does not)."""
        cached = self._mutations.get((loader.node, unknown))
        if cached is not None:
            return cached
        found: list[ast.AST] = []
        seen: set[int] = set()
        dataset_arg = loader.argument("dataset")
        dataset_class = (
            self.facts.class_of_instance(dataset_arg.value, dataset_arg.scope) if dataset_arg is not None else None
        )
        for use in self.iterations(loader):
            for loop in self.repeating_loops(loader, use):
                if id(loop) in seen or isinstance(loop, RemoteLoop):
                    continue  # a loop elsewhere: its body is not in this file
                seen.add(id(loop))
                scope = self.facts.scopes.scope_of(loop)
                loaders = self.loader_names(loader, use, scope, may=unknown)
                datasets = self._dataset_bindings(dataset_arg, scope)
                for node in loop_body_nodes(loop):
                    if self._mutates(node, loaders, datasets, dataset_class, unknown) and node not in found:
                        found.append(node)
            if use.via:  # iterated in a function the loop calls: that function's body runs each pass too
                function = self.facts.scopes.enclosing_function(use.node)
                if function is not None and id(function) not in seen:
                    seen.add(id(function))
                    scope = self.facts.scopes.scopes[function]
                    loaders = self.loader_names(loader, use, scope, may=unknown) | self._received_as(loader, use, function, unknown)
                    for node in walk_body(function):
                        if self._mutates(node, loaders, set(), dataset_class, unknown) and node not in found:
                            found.append(node)
        found.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        self._mutations[(loader.node, unknown)] = found
        return found

    def mutations_between_passes(self, loader: LoaderCall, unknown: bool = False) -> list[ast.AST]:
        """Dataset changes (as :meth:`dataset_mutations` finds them) between passes that follow
        one another in one scope, no loop repeating them: ``for b in loader: ...``, then
        ``loader.dataset.set_stage(1)``, then ``for b in loader: ...`` again. Each change that
        runs after the first pass starts and before the last one starts is seen by that later
        pass's new workers only."""
        dataset_arg = loader.argument("dataset")
        dataset_class = self.facts.class_of_instance(dataset_arg.value, dataset_arg.scope) if dataset_arg is not None else None
        by_scope: dict[int, list[tuple[ast.AST, Use]]] = {}
        for use in self.iterations(loader):
            if self.repeating_loops(loader, use):
                continue  # a loop repeats it: dataset_mutations reads that loop's body
            anchor = use.via[0] if use.via else use.node  # where the pass starts in the outermost frame
            by_scope.setdefault(id(self.facts.scopes.scope_of(anchor)), []).append((anchor, use))
        found: list[ast.AST] = []
        for anchors in by_scope.values():
            if len(anchors) < 2:
                continue
            anchors.sort(key=lambda pair: position_of(pair[0]))
            start, end = position_of(anchors[0][0]), position_of(anchors[-1][0])
            scope = self.facts.scopes.scope_of(anchors[0][0])
            loaders = self.loader_names(loader, anchors[0][1], scope, may=unknown)
            datasets = self._dataset_bindings(dataset_arg, scope)
            for node in walk_body(scope.node):
                if start < position_of(node) < end and self._mutates(node, loaders, datasets, dataset_class, unknown):
                    found.append(node)
        found.sort(key=position_of)
        return found

    def _received_as(self, loader: LoaderCall, use: Use, function: ast.AST, unknown: bool) -> set[str]:
        """The parameters of ``function`` that the last call on ``use``'s way hands the loader
        to (``self.train_epoch(epoch, train_dl)``: ``train_dl``). Where the name passed cannot
        be told to hold it (``train_dl = self.init_train_dl()``), with ``unknown`` every name
        passed may (an over-approximation: a rule silent on a change stays silent)."""
        from dllint.facts.flow.syntax import parameter_for

        call = use.via[-1]
        where = self.facts.scopes.scope_of(call)
        if self.facts.usage.same_file_function(call.func, where) is not function:
            return set()
        held = self.loader_names(loader, use, where, may=unknown)
        passed = [(None, i, a) for i, a in enumerate(call.args)] + [(k.arg, None, k.value) for k in call.keywords if k.arg]
        found = {
            parameter_for(function, keyword, index, isinstance(call.func, ast.Attribute))
            for keyword, index, argument in passed
            if isinstance(argument, ast.Name) and (argument.id in held or unknown and not held)
        }
        return {name for name in found if name is not None}

    def _dataset_bindings(self, dataset_arg, scope: Scope) -> set[str]:
        """Names in ``scope`` bound to the same object as the loader's ``dataset`` argument."""
        if dataset_arg is None or not isinstance(dataset_arg.value, ast.Name):
            return set()
        name = dataset_arg.value.id
        here = self.facts.scopes.lookup(name, scope)
        there = self.facts.scopes.lookup(name, dataset_arg.scope)
        if here is None or there is None or here[0] is not there[0]:
            return set()
        return {name}

    def _is_dataset(self, expr: ast.expr, loaders: set[str], datasets: set[str]) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in datasets
        return (
            isinstance(expr, ast.Attribute)
            and expr.attr == "dataset"
            and isinstance(expr.value, ast.Name)
            and expr.value.id in loaders
        )

    def _changes_dataset_state(self, target: ast.expr, loaders: set[str], datasets: set[str]) -> bool:
        """``target`` writes into the dataset: ``ds.x``, ``ds.x[i]``, ``loader.dataset.x.y``."""
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            if self._is_dataset(target.value, loaders, datasets):
                return True
            target = target.value
        return False

    def _mutates(self, node, loaders, datasets, dataset_class: ClassInfo | None, unknown: bool) -> bool:
        if not loaders and not datasets:
            return False
        if isinstance(node, ast.Assign):
            return any(self._changes_dataset_state(t, loaders, datasets) for t in node.targets)
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            return self._changes_dataset_state(node.target, loaders, datasets)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "setattr" and node.args:
                return self._is_dataset(node.args[0], loaders, datasets)
            if isinstance(func, ast.Attribute) and self._is_dataset(func.value, loaders, datasets):
                if dataset_class is None:
                    # A class this file cannot read: a method called for its effect (its result
                    # unused, `ds.reshuffle()`) may change it; one whose value is used
                    # (`ds.decode_target(t)`) is taken for a query.
                    return unknown and isinstance(self.facts.scopes.parents.get(node), ast.Expr)
                return self.method_assigns_self(dataset_class, func.attr)
        return False

    def method_assigns_self(self, cls: ClassInfo, method: str, depth: int = 0) -> bool:
        """A method of a same-file class (or its same-file bases) that assigns ``self.*`` or
        changes one in place (``random.shuffle(self.items)``), directly or through other
        ``self.method()`` calls."""
        if depth > MAX_METHOD_DEPTH:
            return False
        func = self._find_method(cls, method)
        if func is None:
            return False
        for node in walk_body(func):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call):
                callee = node.func
                if mutated_self_attribute(node) is not None:
                    return True  # random.shuffle(self.items), self.items.sort()
                if isinstance(callee, ast.Name) and callee.id == "setattr" and node.args:
                    if isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
                        return True
                if (
                    isinstance(callee, ast.Attribute)
                    and isinstance(callee.value, ast.Name)
                    and callee.value.id == "self"
                    and callee.attr != method
                    and self.method_assigns_self(cls, callee.attr, depth + 1)
                ):
                    return True
            for target in targets:
                root = target
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if root is not target and isinstance(root, ast.Name) and root.id == "self":
                    return True
        return False

    def _find_method(self, cls: ClassInfo, method: str, depth: int = 0):
        found = cls.method(method)
        if found is not None or depth > MAX_METHOD_DEPTH:
            return found
        for base in cls.base_names:
            parent = self.facts.classes.get(base)
            if parent is not None and parent is not cls:
                found = self._find_method(parent, method, depth + 1)
                if found is not None:
                    return found
        return None


# Calls that change their first argument in place, and methods that change their object.
IN_PLACE_FUNCTIONS = frozenset({"random.shuffle", "numpy.random.shuffle", "np.random.shuffle"})
IN_PLACE_METHODS = frozenset({
    "shuffle", "sort", "reverse", "append", "extend", "insert", "clear", "update", "pop", "popitem",
    "remove", "discard", "add", "setdefault", "fill_", "zero_", "copy_", "random_", "uniform_", "normal_",
})


def mutated_self_attribute(call: ast.Call) -> str | None:
    """``X`` of ``self.X`` that ``call`` changes in place: ``random.shuffle(self.X)``,
    ``self.X.sort()``, ``self.X[i].append(...)``; None otherwise."""
    func = call.func
    target: ast.expr | None = None
    if call.args and dotted_name(func) in IN_PLACE_FUNCTIONS:
        target = call.args[0]
    elif isinstance(func, ast.Attribute) and func.attr in IN_PLACE_METHODS:
        target = func.value
    while isinstance(target, ast.Subscript):
        target = target.value
    while isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
        target = target.value
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr
    return None
