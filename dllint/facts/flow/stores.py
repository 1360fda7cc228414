"""How a value moves through an attribute of ``self``: ``self.X = loader`` is read back by
the class's methods, which run as often as their callers run them (a loop of the class
calling ``self.validate()``, or a loop calling ``evaluator.evaluate()`` on the one instance
that holds the value; for a class of another module, the methods its summary names:
:meth:`Stores.passes_by_methods`), or handed to a framework from one of its hooks."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.lookups import LOOPS
from dllint.facts.flow.model import FlowState, How, Move, RemoteLoop, Use, Via, hook_iterates
from dllint.facts.frameworks import builds, constructor_of, hook_of, inherited_hooks
from dllint.facts.handed_wrappers import passes_elsewhere
from dllint.facts.inherited_loops import inherited_loops
from dllint.facts.scopes import Scope
from dllint.knowledge.frameworks import Hook

if TYPE_CHECKING:
    from dllint.facts.flow.records import Effects
    from dllint.facts.usage import UsageAnalysis


class Stores:
    """Values stored on ``self``: followed to the reads of the attribute in the class, under
    the loops that run the reading methods (which it remembers per method)."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where a read value goes next
        self.facts = flow.facts
        self.lookups = flow.lookups
        self._method_loops_of: dict[ast.AST, tuple[ast.AST, ...]] = {}

    def stored(self, target: ast.Attribute, expr: ast.AST, state: FlowState) -> list[Use]:
        """``self.X = loader``: the reads of ``self.X`` in the class decide; how often their
        methods run is the callers' business, so the stored value is also unclaimed, unless
        every read hands it to the framework from one of its hooks. ``state.loops``: the loops
        around the store."""
        here, via = state.loops, state.via
        cls = self.lookups.enclosing_class(state.scope)
        uses = [Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED)]
        key = ("store", cls, target.attr)
        if cls is None or key in state.seen:
            return uses
        loads = [node for node in self.lookups.attributes_of_self(cls).get(target.attr, ()) if isinstance(node.ctx, ast.Load)]

        inherited = inherited_hooks(self.facts, cls, target.attr)  # a base's hook returns self.X
        if self._handed_out_once(loads, inherited):
            uses = []  # only test/predict hooks hand it out: the framework iterates it once
            # (train/val hooks keep the escape: Lightning calls set_epoch on their samplers, DL301)
        for hook in inherited:
            uses.append(hook_iterates(hook, expr, here, via))
        built = self._constructed_by(via) or self._set_on_instance(via, cls, state.scope)
        instance = built if built is not None else self._only_construction(cls, target.attr, state.scope)
        for node in loads:
            uses += self._read_back(node, instance, state.marked(key), fresh=built is None)
        if built is None:
            uses += self._read_on_instances(target, cls, state.marked(key))
        return uses

    def _only_construction(self, cls: ast.ClassDef, attribute: str, scope: Scope) -> ast.Call | None:
        """The one construction of ``cls`` in this file (``trainer = Trainer(args)``) when the
        value is stored by ``cls``'s own ``__init__`` (``scope``), in the class's one store of
        ``self.attribute``: every instance stores its own value, so the calls of a method on
        that instance repeat the method's reads (tenth audit K10: ``self.val_loader`` read by
        ``validation()``, called every epoch on the trainer). None where the class is built
        twice or used other than by calling it (which instance a call reaches is not
        followed), or another method stores the attribute again (its reads may see that one)."""
        init = scope.node
        if not (isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)) and init.name == "__init__"):
            return None
        if self.lookups.parents.get(init) is not cls:
            return None
        stores = [node for node in self.lookups.attributes_of_self(cls).get(attribute, ()) if not isinstance(node.ctx, ast.Load)]
        if len(stores) != 1:
            return None
        sites = self.lookups.call_sites(cls, self.facts.scopes.scope_of(cls))
        return sites[0] if sites is not None and len(sites) == 1 else None

    def _read_on_instances(self, target: ast.Attribute, cls: ast.ClassDef, state: FlowState) -> list[Use]:
        """``self.train = DataLoader(...)`` in ``__init__``: every construction of the class
        in this file (``Loaders(workers=2)``) holds the value as its field ``train``, followed
        where the instance goes (``for batch in dls.train`` in the function it is handed to);
        a loop around a construction builds a fresh value each time. None followed where the
        class is used other than by calling it (the stored value stays unclaimed)."""
        init = state.scope.node
        if not (isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)) and init.name == "__init__"):
            return []
        if self.lookups.parents.get(init) is not cls:
            return []
        uses: list[Use] = []
        for call in self.lookups.call_sites(cls, self.facts.scopes.scope_of(cls)) or ():
            call_scope = self.facts.scopes.scope_of(call)
            found = self.flow.containers.uses_of_element(call, target.attr, state.through(call, call_scope))
            if found is not None:
                uses += self.flow.returns.fresh_at(call, call_scope, state.loops, found)
        return uses

    def _handed_out_once(self, loads: list[ast.Attribute], inherited: list[Hook]) -> bool:
        """Every read of the stored value (there is one, or a base's hook) hands it to a
        framework hook that iterates it once, and no inherited hook iterates it per epoch."""
        return bool(
            (loads or inherited) and all(self._returned_by_once_hook(node) for node in loads) and not any(h.per_epoch for h in inherited)
        )

    def _constructed_by(self, via: Via) -> ast.Call | None:
        """The same-file constructor call the value came in through (``Evaluator(val_loader)``):
        calls of a method on that one instance repeat the method's reads."""
        if via and self.lookups.same_file_init(via[-1].func, self.facts.scopes.scope_of(via[-1])) is not None:
            return via[-1]
        return None

    def _set_on_instance(self, via: Via, cls: ast.ClassDef, scope: Scope) -> ast.Call | None:
        """The construction of the one instance a setter stores the value on: ``trainer =
        Trainer()``, then ``trainer.set_loader(loader)`` (``scope``: the setter, a method of
        ``cls`` that stores it): calls of a method on that instance repeat the method's reads,
        as for a value handed to its constructor (TorchSSL's ``set_data_loader``)."""
        method = scope.node
        call = via[-1] if via else None
        if call is None or not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == method.name and isinstance(func.value, ast.Name)):
            return None
        made = constructor_of(self.facts, func.value, self.facts.scopes.scope_of(call))
        return made if made is not None and builds(self.facts, made, cls) else None

    def _read_back(self, node: ast.Attribute, built: ast.Call | None, state: FlowState, fresh: bool = False) -> list[Use]:
        """The uses of one read of ``self.X``, under the loops that run its method: a loop of
        its class, or (``built``) a loop calling it on the instance that holds the value.
        ``fresh``: the value is made by the instance's own ``__init__``, so a loop around
        ``built`` makes a new one each round and repeats none of its reads."""
        load_scope = self.facts.scopes.scope_of(node)
        repeat: tuple[ast.AST | RemoteLoop, ...] = self.method_loops(load_scope.node, 0) \
            or self._instance_loops(load_scope.node, built) \
            or passes_elsewhere(self.facts, load_scope.node)  # a wrapper another module iterates (K13)
        if fresh and built is not None and repeat:
            around = set(map(id, self.lookups.enclosing_loops(built, self.facts.scopes.scope_of(built))))
            repeat = tuple(loop for loop in repeat if id(loop) not in around)
        found = self.flow.expressions.uses_of_expr(node, state.at(load_scope))
        if repeat:
            return [u._replace(loops=repeat + u.loops) for u in found]
        method = load_scope.node
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name != "__init__" \
                and isinstance(self.lookups.parents.get(method), ast.ClassDef):
            return [u._replace(method=method.name) for u in found]  # once per call: the instance's callers decide
        return found

    def _returned_by_once_hook(self, load: ast.AST) -> bool:
        """``return self.X`` in a framework hook that iterates its loader once
        (``def test_dataloader(self): return self._test_dl``), or a read of it in a condition
        there (``if self._test_dl is not None:``)."""

        function = self.facts.scopes.enclosing_function(load)
        hook = hook_of(self.facts, function) if function is not None else None
        if hook is None or hook.per_epoch:
            return False
        parent = self.lookups.parents.get(load)
        if isinstance(parent, ast.Return):
            return True
        if isinstance(parent, ast.Compare) and all(isinstance(c, ast.Constant) and c.value is None for c in parent.comparators):
            return True  # ``self._test_dl is not None``
        return False

    def method_loops(self, function: ast.AST, depth: int) -> tuple[ast.AST, ...]:
        """Loops around the calls of a method by ``self.name()`` in its class (through the
        methods that call it, a few levels up): the epoch loop of ``fit`` calling
        ``self.validate()``. Remembered per method: big classes call their methods from many
        places, and each place would otherwise be searched again from every caller."""
        if depth > 3 or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        if not isinstance(self.lookups.parents.get(function), ast.ClassDef):
            return ()
        known = self._method_loops_of.get(function)
        if known is not None:
            return known
        self._method_loops_of[function] = ()  # a method reached again through its own callers adds nothing
        found: tuple[ast.AST, ...] = ()
        for call in self.lookups.callers(function):
            scope = self.facts.scopes.scope_of(call)
            loops = tuple(loop for loop in self.lookups.enclosing_loops(call, scope) if isinstance(loop, LOOPS))
            if loops:
                found = loops
                break
            outer = self.method_loops(scope.node, depth + 1)
            if outer:
                found = outer
                break
        if not found:  # a base's loop calling self.<name>() (facts/inherited_loops.py)
            found = inherited_loops(self.facts, function)  # type: ignore[assignment]
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
        instance = self._bound_once(built) if built is not None and depth <= 3 else None
        if instance is None or not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        around = self._loops_around_calls_on(instance, method.name)
        if around:
            return around
        for call in self.lookups.callers(method):  # self.evaluate() inside another method: its calls decide
            loops = self._instance_loops(self.facts.scopes.scope_of(call).node, built, depth + 1)
            if loops:
                return loops
        return ()

    def _loops_around_calls_on(self, instance: tuple[str, Scope], method: str) -> tuple[ast.AST, ...]:
        """The loops around the first call ``obj.method(...)`` on the instance bound to ``obj``
        (in ``instance``'s scope) that a loop repeats; () when no loop repeats one."""
        found = self._repeated_call_on(instance, method)
        return found[1] if found is not None else ()

    def _repeated_call_on(self, instance: tuple[str, Scope], method: str) -> tuple[ast.Call, tuple[ast.AST, ...]] | None:
        """The first call ``obj.method(...)`` on the instance bound to ``obj`` that a loop
        repeats, and the loops around it."""
        name, scope = instance
        for obj, obj_scope in self.lookups.loads_resolving_to(name, scope):
            attribute = self.lookups.parents.get(obj)
            call = self.lookups.parents.get(attribute) if attribute is not None else None
            if isinstance(attribute, ast.Attribute) and attribute.attr == method and isinstance(call, ast.Call) and call.func is attribute:
                around = tuple(loop for loop in self.lookups.enclosing_loops(call, obj_scope) if isinstance(loop, LOOPS))
                if around:
                    return call, around
        return None

    def passes_by_methods(self, built: ast.Call, effects: Effects, state: FlowState) -> list[Use]:
        """``val = Test(model, loader)``, a class of another module that keeps the loader on
        ``self`` and passes over it once per call of some of its methods (``effects.methods``):
        a call ``val.run_epoch()`` that a loop repeats is such a pass, under that loop (D2)."""
        instance = self._bound_once(built) if effects.methods else None
        if instance is None:
            return []
        here = {id(loop) for loop in state.loops}
        uses: list[Use] = []
        for method in effects.methods:
            found = self._repeated_call_on(instance, method)
            if found is not None:
                call, around = found
                loops = state.loops + tuple(loop for loop in around if id(loop) not in here)
                uses.append(Use(Move.ITERATE, call, loops, state.via, How.ELSEWHERE, evaluation=effects.evaluation))
        return uses

    def _bound_once(self, built: ast.Call) -> tuple[str, Scope] | None:
        """(name, scope) when ``built``'s value is bound to a name bound nowhere else there
        (rebound: which instance a call reaches is not followed)."""
        binding = self.lookups.parents.get(built)
        if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1 and isinstance(binding.targets[0], ast.Name)):
            return None
        name, scope = binding.targets[0].id, self.facts.scopes.scope_of(built)
        return (name, scope) if len(scope.bindings.get(name, ())) == 1 else None
