"""How a value moves through names: each binding on its own (a name bound twice to two
loaders is two loaders), loads in closures repeated as often as the closure is called."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Mapping

from dllint.facts.frameworks import once_event_handler
from dllint.facts.flow.lookups import LOOPS, outermost_function_below, written_value
from dllint.facts.flow.model import FlowState, Loops, Use, uses_from, without_loops
from dllint.facts.flow.syntax import end_of, position_of
from dllint.facts.scopes import FUNCTION_NODES, Scope

if TYPE_CHECKING:
    from dllint.facts.scopes import Binding
    from dllint.facts.usage import UsageAnalysis


class Names:
    """Values bound to names: followed to the loads each binding reaches (which it remembers
    per binding and load), in the scope or in closures."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where a loaded value goes next
        self.facts = flow.facts
        self.lookups = flow.lookups
        self._reach: dict[tuple[ast.AST, ast.Name | ast.Call], bool] = {}

    def uses_of_name(self, name: str, state: FlowState, binding: ast.AST | None = None) -> list[Use]:
        """Uses of every load of ``name`` bound in ``state.scope``, including loads in closures.
        ``binding``: the statement that bound it; loads that a later binding of the name
        always replaces first are another value's (a name bound twice to two loaders)."""
        uses: list[Use] = []
        if binding is not None:
            key = ("bound", binding, name)
            if key in state.seen:
                return uses  # x = f(x) in a loop: this binding's flow is already being followed
            state = state.marked(key)
        scope = state.scope
        rebound = binding if binding is not None and len(scope.bindings.get(name, ())) > 1 else None
        for load, load_scope in self.lookups.loads_resolving_to(name, scope):
            if load_scope is scope:
                if rebound is not None and not self.reaches(rebound, load, scope.bindings[name]):
                    continue
                found = self.flow.expressions.uses_of_expr(load, state)
                if rebound is not None:
                    found = self._first_pass_only(found, rebound, load, scope.bindings[name], scope)
                uses += found
                continue
            if rebound is not None and not self._reaches_closure(rebound, load_scope, scope, scope.bindings[name]):
                continue
            uses += self.closure_uses(load_scope, name, state, lambda inner: self.flow.expressions.uses_of_expr(load, inner)) or []
        if binding is not None and scope.is_module:
            uses += self._importers_uses(name, binding, state)
        return uses

    def _importers_uses(self, name: str, binding: ast.AST, state: FlowState) -> list[Use]:
        """What the files importing the module-level ``name`` do with the value ``binding``
        gives it, as uses at the binding (each file's reads, through its own functions, run
        as a same-file module-level value's are): the value they see when the module has run,
        so none for a binding always replaced later, or made only when run as a script."""
        if not isinstance(binding, (ast.Assign, ast.AnnAssign)) or self._unseen_by_importers(name, binding):
            return []
        here = state.loops + self.lookups.enclosing_loops(binding, state.scope)
        project = self.facts.project
        uses: list[Use] = []
        for caller in (project.importer_effects(name) if project is not None else None) or ():
            found = [u._replace(importer=caller.where) for u in uses_from(caller.effects, binding, binding, here, state.via, caller.where)]
            if caller.effects.iterations > 1 and not caller.effects.per_epoch:
                # passes one after another in no loop (a peek, then an evaluation): two passes, as
                # in one file, but no epoch loop (DL203 asks for one); the second at the target
                target = binding.targets[0] if isinstance(binding, ast.Assign) else binding.target
                first = [u._replace(loops=here) if u.iterates else u for u in found]
                found = first + [u._replace(node=target) for u in first if u.iterates]
            uses += found
        return uses

    def _unseen_by_importers(self, name: str, binding: ast.AST) -> bool:
        """An importer never sees the value: a binding in the script's ``if __name__ ==
        "__main__":`` block, or one a later module-level binding always replaces."""
        guard = self.facts.main_guard
        if guard is not None and self.facts.contains(guard, binding):
            return True
        bindings = self.facts.scopes.module.bindings.get(name, [])
        return any(other.node is not binding and self._always_runs_after(other.node, binding) for other in bindings)

    def imported_uses(self, local: str) -> list[Use] | None:
        """Uses of the module-level import binding ``local`` (a name, or ``module.name`` read off
        an imported module: ``data.train_loader``; a name bound nowhere in the file: by a star
        import), as a module-level value's are followed: loads in functions repeat as often as
        those are called here (any number of times when they are not called here). None when
        no module-level import binds it."""
        module = self.facts.scopes.module
        root, _, rest = local.partition(".")
        bindings = module.bindings.get(root, ())
        binding = next((b.node for b in bindings if b.kind == "import"), None)
        state = FlowState.start(module)
        if binding is not None and not rest:
            return self.uses_of_name(root, state, binding)
        reads: list[tuple[ast.expr, Scope]]
        if binding is not None:
            parents = self.lookups.parents
            reads = [(attr, scope) for load, scope in self.lookups.loads_resolving_to(root, module)
                     if (attr := _attribute_read(load, rest.split("."), parents)) is not None]
        elif not bindings and not rest and _star_imports(self.facts.tree):  # ``from data import *``
            reads = [(load, scope) for load, scope in self.lookups.unbound_loads(root)]
        else:
            return None
        uses: list[Use] = []
        for read, load_scope in reads:
            uses += self._read_uses(read, load_scope, local, state)
        return uses

    def _read_uses(self, read: ast.expr, load_scope: Scope, key: str, state: FlowState) -> list[Use]:
        """Uses of the value ``read`` evaluates to in ``load_scope``: ``state.scope``, or a
        function nested in it (then repeated as its calls there repeat)."""
        if load_scope is state.scope:
            return self.flow.expressions.uses_of_expr(read, state)
        return self.closure_uses(load_scope, key, state, lambda inner: self.flow.expressions.uses_of_expr(read, inner)) or []

    def replaced_unread(self, value: ast.expr) -> bool:
        """``name = value`` that a later binding of the name, run on every path after it (a
        later statement of its block, or one in an always-taken arm of an ``if`` there: ``if
        do_semi:`` with ``do_semi = True``), replaces before any read, here or in a function
        called meanwhile: nothing ever reads the value (tenth audit B5: a multi-worker loader
        rebound before its loop is never iterated, so its workers never start)."""
        statement = self.lookups.parents.get(value)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            return False
        name, scope = statement.targets[0].id, self.facts.scopes.scope_of(statement)
        bindings = scope.bindings.get(name, [])
        if not any(self._always_runs_after(other.node, statement) for other in bindings if other.node is not statement):
            return False
        for load, load_scope in self.lookups.loads_resolving_to(name, scope):
            if self.reaches(statement, load, bindings) if load_scope is scope else self._reaches_closure(statement, load_scope, scope, bindings):
                return False
        return True

    def _always_runs_after(self, later: ast.AST, statement: ast.AST) -> bool:
        """``later`` runs on every path that runs ``statement``, after it: a later statement of
        its block, or in an always-taken arm of an ``if`` that is."""
        holder = self.lookups.parents.get(statement)
        block = next((b for b in (getattr(holder, f, None) for f in ("body", "orelse", "finalbody")) if isinstance(b, list) and statement in b), [])
        rest = block[block.index(statement) + 1:] if block else []
        node = later
        while not any(node is item for item in rest):
            parent = self.lookups.parents.get(node)
            if not isinstance(parent, ast.If):
                return False
            arm = "body" if any(node is s for s in parent.body) else "orelse" if any(node is s for s in parent.orelse) else ""
            if not arm or not self._always_taken(parent, arm):
                return False
            node = parent
        return True

    def _reaches_closure(self, binding: ast.AST, load_scope: Scope, scope: Scope, bindings: list[Binding]) -> bool:
        """The value bound by ``binding`` may be the one a nested function reads: the function is
        used other than by calling it (it may run at any time), or the binding reaches one of its
        calls in ``scope`` (tenth audit B5: ``train_loader`` rebound under ``if do_semi:`` before
        ``main()`` is called; the first loader is never what ``main`` iterates)."""
        func = outermost_function_below(load_scope, scope)
        calls = self.lookups.call_sites(func, scope) if func is not None else None
        return not calls or any(self.reaches(binding, call, bindings) for call in calls)

    @staticmethod
    def followed_bindings(name: str, state: FlowState) -> list[ast.AST]:
        """The bindings of ``name`` whose value this path has come through (the steps
        :meth:`uses_of_name` marks): which of a name's bindings a stored value is."""
        return [key[1] for key in state.seen if isinstance(key, tuple) and len(key) == 3 and key[0] == "bound" and key[2] == name]

    def parameter_binding(self, name: str, scope: Scope) -> ast.AST | None:
        """The node that binds the parameter ``name`` of ``scope``'s function (its ``ast.arg``):
        what a caller passes reaches only the loads no rebinding replaces first (``loader =
        sample_data(loader)`` then ``next(loader)`` draws from the generator, not the loader)."""
        return next((b.node for b in scope.bindings.get(name, ()) if b.kind == "param"), None)

    def closure_uses(
        self, load_scope: Scope, key: object, state: FlowState, follow: Callable[[FlowState], list[Use] | None]
    ) -> list[Use] | None:
        """What ``follow`` finds from a load inside a nested function (``key``: what is
        followed from it, a recursion guard): repeated as often as that function is called
        (at each of its call sites in ``state.scope``; every time it may be called, when it is
        used any other way). None when ``follow`` cannot tell."""
        scope, loops, via = state.scope, state.loops, state.via
        func = outermost_function_below(load_scope, scope)
        closure = (func, key)
        if closure in state.seen:
            return []
        calls = self.lookups.call_sites(func, scope) if func is not None else None
        inner = follow(state._replace(scope=load_scope, loops=(), via=(), seen=state.seen | {closure}))
        if inner is None:
            return None
        if not calls:  # called any number of times, but a handler of an event fired once (Ignite's COMPLETED)
            marker: Loops = (func,) if func is not None and not once_event_handler(func) else ()
            return [Use(u.kind, u.node, loops + marker + u.loops, via + u.via, u.how, u.remote) for u in inner]
        uses: list[Use] = []
        for call in calls:
            call_loops = loops + self.lookups.enclosing_loops(call, scope)
            repeat: Loops = (func,) if len(calls) > 1 and func is not None else ()
            uses += [Use(u.kind, u.node, call_loops + repeat + u.loops, via + (call,) + u.via, u.how, u.remote) for u in inner]
        return uses

    def _first_pass_only(self, uses: list[Use], binding: ast.AST, load: ast.Name, bindings: list[Binding], scope: Scope) -> list[Use]:
        """A loop whose body rebinds the name on every pass repeats ``load`` for other values:
        this binding's value meets it on the first pass only. A rebinding made from the name's
        own value (``loader = tqdm(loader)``) wraps it, and carries it into the next pass."""
        others = [b.node for b in bindings if b.node is not binding and not _made_from_itself(b)]
        cut = {
            id(loop)
            for loop in self.lookups.enclosing_loops(load, scope)
            if isinstance(loop, LOOPS) and not self.facts.contains(loop, binding) and any(o in loop.body for o in others)
        }
        return without_loops(uses, cut) if cut else uses

    def reaches(self, binding: ast.AST, load: ast.Name | ast.Call, bindings: list[Binding]) -> bool:
        """:meth:`_reaches`, remembered."""
        key = (binding, load)
        found = self._reach.get(key)
        if found is None:
            found = self._reach[key] = self._reaches(binding, load, bindings)
        return found

    def _reaches(self, binding: ast.AST, load: ast.Name | ast.Call, bindings: list[Binding]) -> bool:
        """The value bound by ``binding`` may still be the name's value at ``load`` (or at a call
        of a function that reads it): it comes before the load (or a loop around both brings it
        round again) and no other binding between them runs on every path to the load."""
        start = end_of(binding)
        at = position_of(load)
        if any(self._rebound_by_loop(other.node, binding, load) for other in bindings):
            return False
        if start >= at:
            return self._in_common_loop(binding, load)
        for other in bindings:
            node = other.node
            if node is binding or not (start < end_of(node) < at):
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
        child, current = node, self.lookups.parents.get(node)
        while current is not None:
            if current is loop:
                return any(child is stmt for stmt in loop.body)
            child, current = current, self.lookups.parents.get(current)
        return False

    def _always_runs_before(self, statement: ast.AST, load: ast.AST) -> bool:
        """A later statement of the block that holds ``statement`` contains ``load``; or of a
        block around it, through the arms of ``if`` statements whose test is a known constant
        that takes that arm (``do_semi = True`` then ``if do_semi:``): such an arm runs wherever
        its ``if`` does."""
        holder = self.lookups.parents.get(statement)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(holder, field, None)
            if isinstance(block, list) and statement in block:
                if any(self.facts.contains(item, load) for item in block[block.index(statement) + 1:]):
                    return True
                return isinstance(holder, ast.If) and self._always_taken(holder, field) and self._always_runs_before(holder, load)
        return False

    def _always_taken(self, statement: ast.If, arm: str) -> bool:
        """The ``if`` always runs ``arm``: its test is a literal, or a name bound once to one
        (never a command-line option: its default is not what every run takes), truthy for the
        body, falsy for the ``else``."""
        test, _ = written_value(statement.test, self.facts.scopes.scope_of(statement), self.facts)
        return isinstance(test, ast.Constant) and bool(test.value) is (arm == "body")

    def _in_common_loop(self, first: ast.AST, second: ast.AST) -> bool:
        current = self.lookups.parents.get(first)
        while current is not None and not isinstance(current, (*FUNCTION_NODES, ast.Module)):
            if isinstance(current, LOOPS) and self.facts.contains(current, second):
                return True
            current = self.lookups.parents.get(current)
        return False


def _star_imports(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names) for s in tree.body)


def _attribute_read(load: ast.Name, attrs: list[str], parents: Mapping[ast.AST, ast.AST]) -> ast.Attribute | None:
    """The read ``load.a.b`` of the attributes ``attrs`` (``["a", "b"]``) off ``load``, if it is one."""
    node: ast.AST = load
    for attr in attrs:
        parent = parents.get(node)
        if not (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == attr and isinstance(parent.ctx, ast.Load)):
            return None
        node = parent
    return node if isinstance(node, ast.Attribute) else None


def _made_from_itself(binding: Binding) -> bool:
    """``x = tqdm(x)``: the new value is made from the name's old one (a wrapper of it)."""
    value = binding.value
    return value is not None and any(isinstance(n, ast.Name) and n.id == binding.name for n in ast.walk(value))
