"""Where a loader's value flows: which loops iterate it, which calls carry it away.
:class:`UsageAnalysis` is the engine: it owns the file's lookups and one part per way a
value moves (:mod:`dllint.facts.flow`: ``expressions``, ``arguments``, ``names``,
``containers``, ``dicts``, ``returns``, ``stores``, over the records of ``model``), each
part with its own caches and a reference to the engine to hand a value on to another part;
it answers what rules ask (how often a loader is iterated, its repeated uses).

The analysis follows a loader from its construction through names (each binding on its
own: a name bound twice to two loaders is two loaders), same-file function calls and
class constructors (parameter by parameter), closures, ``return`` (to the function's
callers: same-file, other project files through ``facts.project``, or a framework hook),
``self.X = loader`` (to the class's reads of ``self.X``), wrappers (any call whose result a
``for`` iterates is one pass over the loader) and framework calls
(:mod:`dllint.facts.frameworks`). It records each place that iterates it
(``Move.ITERATE``) or lets it escape (``Move.ESCAPE``, with ``Use.how`` saying
whether a caller could still claim it, code outside the project took it, ...), as the rule catalog's
"Following calls across the project" asks.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from dllint.facts.flow.arguments import Arguments, picked_from
from dllint.facts.flow.containers import Containers
from dllint.facts.flow.dicts import Dicts
from dllint.facts.flow.expressions import Expressions
from dllint.facts.flow.lookups import FileLookups
from dllint.facts.flow.model import Element, FlowState, How, Move, Passes, Path, Use, join, then
from dllint.facts.flow.names import Names
from dllint.facts.flow.returns import Returns
from dllint.facts.flow.stores import Stores
from dllint.facts.flow.syntax import ends_the_path, position_of
from dllint.facts.frameworks import callback_result
from dllint.facts.loops import loaded_names, names_bound_in_loop
from dllint.facts.scopes import Scope

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall


# The syntax of a pass whose body runs between two batches (another pass can start inside it).
_PASS_NODES = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class UsageAnalysis:
    """Every iteration and escape of a file's loaders (samplers, datasets): the flow engine of
    one file, its parts, and what rules ask of them. A part hands a value on to another by
    name (``self.flow.names.uses_of_name(...)``): a question starts at :meth:`loader_uses` (or
    another public method) and moves between the parts until every path ends in a ``Use``."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.lookups = FileLookups(facts)  # same-file lookups, shared by every part
        self._loader_uses: dict[ast.Call, list[Use]] = {}
        # The parts: where a value goes decides which part follows it. Each refers back to the
        # engine through a weak proxy: the engine is freed with its facts (the lint engine
        # empties them after the rules), not left in a cycle for the cyclic collector.
        engine: UsageAnalysis = weakref.proxy(self)
        self.expressions = Expressions(engine)  # the node around an expression
        self.arguments = Arguments(engine)  # passed to a call: into the callee, or its result
        self.names = Names(engine)  # bound to a name: its loads, in closures too
        self.containers = Containers(engine)  # an element of a tuple, list or record
        self.dicts = Dicts(engine)  # an entry of a dict (reads its containers part)
        self.returns = Returns(engine)  # returned: to callers here, elsewhere, to hooks
        self.stores = Stores(engine)  # stored on self: read back by the class's methods

    # -- public ---------------------------------------------------------------
    def loader_uses(self, loader: LoaderCall) -> list[Use]:
        """Every iteration and escape of the loader built by ``loader``."""
        uses = self._loader_uses.get(loader.node)
        if uses is None:
            uses = self.expressions.uses_of_expr(loader.node, FlowState.start(loader.scope))
            self._loader_uses[loader.node] = uses
        return uses

    def uses_of(self, expr: ast.AST, scope: Scope) -> list[Use]:
        """Iterations and escapes of any value built by ``expr`` (a sampler, a dataset)."""
        return self.expressions.uses_of_expr(expr, FlowState.start(scope))

    def parameter_uses(self, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[Use]:
        """What ``function`` does with its parameter ``param`` (for the project's summaries): a
        ``return`` of it is reported as such instead of being followed to callers."""
        scope = self.facts.scopes.scopes[function]
        return self.names.uses_of_name(param, FlowState.start(scope, summarizing=function), self.names.parameter_binding(param, scope))

    def imported_uses(self, local: str) -> list[Use] | None:
        """What this file does with a name it imports at module level (for the project's
        summaries: the defining file's value is decided by its importers' reads); None when
        no module-level import binds it."""
        return self.names.imported_uses(local)

    def element_uses(self, container: ast.AST, index: Element, scope: Scope) -> list[Use] | None:
        """Uses of element ``index`` (``"*"``: any element) of the tuple or list that
        ``container`` evaluates to (for the project's summaries); None: undecidable."""
        return self.containers.uses_of_element(container, index, FlowState.start(scope))

    def parameter_entry_uses(self, function: ast.AST, param: str, index: Element, rest: Path = ()) -> list[Use] | None:
        """What ``function`` does with entry ``index`` (``rest``: that part of it) of the dict
        its parameter ``param`` holds (for the project's summaries); None: undecidable."""
        scope = self.facts.scopes.scopes[function]
        state = FlowState.start(scope, summarizing=function)
        return self.containers.uses_of_container_name(param, index, state, self.names.parameter_binding(param, scope), rest)

    def result_entry_uses(self, call: ast.AST, index: Element, scope: Scope, rest: Path = ()) -> list[Use] | None:
        """The same for the dict a call returns (``data = get_data(args)``)."""
        return self.containers.uses_of_element(call, index, FlowState.start(scope), rest)

    def construction_loops(self, node: ast.AST) -> tuple[ast.AST, ...]:
        """The loops each of whose passes builds the loader at ``node`` anew, outermost first: those
        around it up to the first ``if`` around it whose other branch builds no loader, where the
        loader is iterated outside that ``if`` too. A loop above it whose passes change the test
        keeps the loader it has on the passes that skip the construction and iterates it again (``if
        epoch == unfreeze: loader = DataLoader(...)``, then ``for batch in loader``). Branches that
        each build one (``if epoch < warmup: ... else: ...``) build one every pass, as does an ``if``
        whose test no pass changes (``if do_semi:``)."""
        loops = self.lookups.enclosing_loops(node, self.facts.scopes.scope_of(node))
        guard = self._skippable_guard(node) if loops else None
        if guard is None:
            return loops
        tested = loaded_names(guard.test)  # a test no pass of a loop changes (`if do_semi:`) takes one branch on all of them
        return tuple(loop for loop in loops if self.facts.contains(guard, loop) or not tested & names_bound_in_loop(loop))

    def _skippable_guard(self, node: ast.AST) -> ast.If | None:
        """The innermost ``if`` around the construction at ``node`` (in its function) whose other
        branch builds no loader, with an iteration of the loader outside it."""
        loader = self.facts.loader_at.get(node) if isinstance(node, ast.Call) else None
        if loader is None:
            return None
        built = self.facts.loader_at
        parents = self.facts.scopes.parents
        child, above = node, parents.get(node)
        while above is not None and not isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            if isinstance(above, ast.If) and child is not above.test:
                branch = above.orelse if any(child is n for n in above.body) else above.body
                if not any(n in built for part in branch for n in ast.walk(part)):
                    iterated = [use.via[0] if use.via else use.node for use in self.loader_uses(loader) if use.kind is Move.ITERATE]
                    return above if any(not self.facts.contains(above, place) for place in iterated) else None
            child, above = above, parents.get(above)
        return None

    # -- the file's lookups, as other facts and rules ask them (flow/lookups.py) --------
    def enclosing_loops(self, node: ast.AST, scope: Scope) -> tuple[ast.AST, ...]:
        return self.lookups.enclosing_loops(node, scope)

    def loads_in(self, name: str, scope: Scope) -> list[ast.Name]:
        return self.lookups.loads_in(name, scope)

    def loads_resolving_to(self, name: str, scope: Scope) -> list[tuple[ast.Name, Scope]]:
        return self.lookups.loads_resolving_to(name, scope)

    def same_file_function(self, func: ast.expr, scope: Scope) -> ast.AST | None:
        return self.lookups.same_file_function(func, scope)

    def callers(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        return self.lookups.callers(func)

    def attributes_of_self(self, cls: ast.ClassDef) -> dict[str, list[ast.Attribute]]:
        return self.lookups.attributes_of_self(cls)

    def element_loop_target(self, node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
        return self.containers.element_loop_target(node)

    def iteration_count(self, loader: LoaderCall, training: bool | None = None) -> Passes:
        """How often one loader built here is iterated. A returned or stored loader that no
        caller in the project claims counts as re-iterated only when it is evidently a training
        loader (``training``; None: decide from the call); code outside the project adds no
        pass (unknown); an ``iter()`` renewed on ``StopIteration`` (``How.ON_STOP``) is a new
        pass each time it runs, as any other (torch starts the workers again). Uses
        of which at most one runs (:meth:`_exclusive`) join; others follow one another."""
        built_in = set(map(id, self.construction_loops(loader.node)))
        passes = Passes.NONE
        counted: list[Use] = []
        for use in self.loader_uses(loader):
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

    def unknowns(self, loader: LoaderCall) -> list[tuple[ast.AST, str]]:
        """Where the loader's flow was left unknown, and why (``"handed to fit() outside the
        project"``): the places a rule that needs to know stays silent on."""
        return [(use.node, use.why) for use in self.loader_uses(loader) if use.how is How.UNKNOWN]

    def reentries(self, loader: LoaderCall) -> list[tuple[Use, Use]]:
        """(inner, outer): iterations of the loader that start while one of its own passes is
        live: ``inner`` runs inside the ``for`` (or comprehension) of ``outer`` over the same
        loader, here or through the project's functions (an evaluation helper that draws from
        the training loader inside the training loop). Two loaders built by two calls of one
        factory are two loaders."""
        uses = [use for use in self.loader_uses(loader) if use.iterates and use.how is not How.ON_STOP]
        passes = {id(use.node): use for use in uses if isinstance(use.node, _PASS_NODES)}
        found: list[tuple[Use, Use]] = []
        for inner in uses:
            for loop in inner.loops:
                outer = passes.get(id(loop))
                if outer is not None and outer is not inner and not self._other_construction(loader, inner, outer):
                    found.append((inner, outer))
                    break
        return found or self._reentered_renewal(loader, uses)

    def _reentered_renewal(self, loader: LoaderCall, uses: list[Use]) -> list[tuple[Use, Use]]:
        """(inner, renewal): an ``iter(loader)`` renewed on ``StopIteration`` inside a step loop
        keeps a pass live across the loop's rounds; a pass over the same loader inside that loop
        (``test(loader)`` every few steps) starts while it is live."""
        renewals = [use for use in self.loader_uses(loader) if use.how is How.ON_STOP]
        for renewal in renewals:
            steps = [loop for loop in renewal.loops if isinstance(loop, (ast.For, ast.AsyncFor, ast.While))]
            if not steps:
                continue
            step = steps[-1]  # the loop that draws from the renewed iterator
            for inner in uses:
                if any(loop is step for loop in inner.loops) and not self._other_construction(loader, inner, renewal):
                    return [(inner, renewal)]
        return []

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
        if self._other_choices(first, second):
            return True
        one, other = (use.via[0] if use.via else use.node for use in (first, second))
        arms, other_arms = self.lookups.if_arms(one), self.lookups.if_arms(other)
        if any(node in other_arms and other_arms[node] != arm for node, arm in arms.items()):
            return True
        return self._leaves_before(arms, other) or self._leaves_before(other_arms, one)

    def _other_choices(self, first: Use, second: Use) -> bool:
        """The two uses went through one call of a class or function picked from a literal dict
        or list (``TRAINERS[kind](loader)``) into two different entries: one of them runs."""
        for depth, (one, other) in enumerate(zip(first.via, second.via)):
            if one is not other:
                return False
            if picked_from(self.facts, one.func, self.facts.scopes.scope_of(one)) is None:
                continue
            after = [use.via[depth + 1] if len(use.via) > depth + 1 else use.node for use in (first, second)]
            owners = [self._entered_definition(node) for node in after]
            return None not in owners and owners[0] is not owners[1]
        return False

    def _entered_definition(self, node: ast.AST) -> ast.AST | None:
        """The module-level function or class ``node`` sits in (a method: its class)."""
        function = self.facts.scopes.enclosing_function(node)
        if function is None:
            return None
        parent = self.facts.scopes.parents.get(function)
        return parent if isinstance(parent, ast.ClassDef) else function

    def _leaves_before(self, arms: dict[ast.If, str], later: ast.AST) -> bool:
        """An arm in ``arms`` ends by leaving the function, and ``later`` comes after its ``if``
        (outside it): reaching ``later`` means that arm did not run."""
        for node, arm in arms.items():
            block = node.body if arm == "body" else node.orelse
            if block and ends_the_path(block[-1]) and not self.facts.contains(node, later):
                if position_of(later) > position_of(node) and self.facts.scopes.enclosing_function(later) is self.facts.scopes.enclosing_function(node):
                    return True
        return False

    def _other_construction(self, loader: LoaderCall, first: Use, second: Use) -> bool:
        """The two uses reach the loader through two calls of the function that builds it
        (``tr = build_loader(a); va = build_loader(b)``), or under two keys of the dict
        comprehension that builds it: each call (key) builds a loader of its own."""
        if first.entry and second.entry and first.entry != second.entry:
            return True  # two keys of a dict comprehension: each key's value is built on its own
        builder = self.facts.scopes.enclosing_function(loader.node)
        if builder is None:
            return False
        if first.caller or second.caller:  # returned to calls in other files
            built = self.lookups.qualified_name(builder)
            calls = [use.caller[0] == built if use.caller else bool(use.via) and self._builds_with(use.via[0], builder) for use in (first, second)]
            return all(calls) and first.caller != second.caller
        for one, other in zip(first.via, second.via):
            if one is other:
                continue
            return all(self._builds_with(call, builder) for call in (one, other))
        return False

    def _builds_with(self, call: ast.Call, builder: ast.AST) -> bool:
        """``call`` runs ``builder`` afresh: calls it, or hands it to a higher-order utility
        (``apply_to_collection(ds, Dataset, builder)``)."""
        scope = self.facts.scopes.scope_of(call)
        if self.lookups.same_file_function(call.func, scope) is builder:
            return True

        arguments = [*call.args, *(k.value for k in call.keywords)]
        return any(
            (isinstance(a, ast.Name) and self.lookups.same_file_function(a, scope) is builder or a is builder)
            and callback_result(self.facts, a, scope) is not None
            for a in arguments
        )
