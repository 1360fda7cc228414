"""How a value moves inside containers: elements of tuples and lists and fields of records,
each followed to where it is taken out (unpacked, indexed, looped over, bound, returned,
passed on). Entries of dicts under constant keys build on this in :mod:`.dicts`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from dllint.facts.flow.arguments import picked_from
from dllint.facts.flow.base import MAX_CALL_DEPTH, MAX_STEPS, NEUTRAL_BUILTINS
from dllint.facts.flow.lookups import is_self_attribute
from dllint.facts.flow.model import AnyEntry, DictKey, Element, FlowState, How, Loops, Move, Path, Use, hook_iterates, without_loops
from dllint.facts.flow.syntax import dict_key, element_index, parameter_for
from dllint.facts.frameworks import inherited_hooks
from dllint.facts.scopes import Scope

if TYPE_CHECKING:
    from dllint.facts.usage import UsageAnalysis


# A list's methods that put elements in and hand none out.
ADDING_METHODS = frozenset({"append", "extend", "insert"})



class Unhandled:
    """A step of :meth:`Containers.uses_of_element` that does not apply (None already
    means "undecidable")."""


UNHANDLED = Unhandled()


class Containers:
    """Elements of tuples and lists and fields of records, followed to where they are taken
    out; a dict's own ways of being read are :class:`~dllint.facts.flow.dicts.Dicts`'."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where an element taken out goes next
        self.facts = flow.facts
        self.lookups = flow.lookups

    def uses_of_element(self, container: ast.AST, index: Element, state: FlowState, rest: Path = ()) -> list[Use] | None:
        """What happens to element ``index`` of the tuple, list, record or dict ``container``
        evaluates to: unpacked (``a, b = pair``), indexed by a constant (``pair[0]``,
        ``loaders["train"]``), looped over (``for dl in loaders``, ``zip(names, loaders)``,
        ``loaders.values()``: each element meets that loop once), bound to a name, returned
        to the callers, handed to a same-file function. ``rest``: the element is itself a
        container and what is asked is its part ``rest`` (``data["val"].dataloader``). None
        when its fate cannot be told (the caller treats the container as before: kept,
        nobody claims it)."""
        question = state.question
        question.steps += 1
        key = ("element", container, index, rest)
        if question.steps > MAX_STEPS or key in state.seen:
            return None
        state = state.marked(key)
        if isinstance(index, (DictKey, AnyEntry)):
            handled, found = self.flow.dicts.entry_uses(container, index, state, rest)
            if handled:
                return found
        looped = self.element_loop_target(container)
        if looped is not None:
            return self.met_by_loop(*looped, state, rest)
        parent = self.lookups.parents.get(container)
        for step in (self._element_read, self._element_bound, self._element_moved):
            result = step(parent, container, index, state, rest)
            if not isinstance(result, Unhandled):
                return result
        return None

    def _element_read(
        self, parent: ast.AST | None, container: ast.AST, index: Element, state: FlowState, rest: Path
    ) -> list[Use] | None | Unhandled:
        """``info.dataloader`` (a record's field), ``pair[0]`` (a constant position), or the
        container looked at only (``"train" in loaders``, ``if loaders:``)."""
        if isinstance(parent, ast.Attribute) and parent.attr in ADDING_METHODS and isinstance(self.lookups.parents.get(parent), ast.Call):
            return []  # loaders.append(other): adds an element, takes none out
        if isinstance(parent, ast.Attribute) and isinstance(index, str) and index != "*":
            if parent.attr == index:
                return self.extracted(parent, state, rest)
            call = self.lookups.parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                return None  # info.set_epoch(e): a method may use the field
            return []  # another field
        if isinstance(parent, ast.Subscript) and parent.value is container and isinstance(parent.ctx, ast.Load):
            return self._element_at(parent, index, state, rest)
        if isinstance(parent, (ast.Compare, ast.Expr)) or isinstance(parent, (ast.If, ast.While)) and parent.test is container:
            return []
        return UNHANDLED

    def _element_at(self, read: ast.Subscript, index: Element, state: FlowState, rest: Path) -> list[Use] | None:
        """``pair[0]``: the element asked for (its uses), another one ([]), or undecidable."""
        position = read.slice
        if index == "*" and not isinstance(position, ast.Slice):  # any element: whichever position is read
            uses = self.extracted(read, state, rest)
            picking = self._picking_loops(read, position, state.scope)
            return without_loops(uses, picking) if uses is not None and picking else uses
        if not (isinstance(position, ast.Constant) and type(position.value) is int and position.value >= 0):
            return None
        if isinstance(index, str) and index != "*":
            return None  # a NamedTuple field read by position: which one is not known here
        if index == "*" or position.value == index:
            return self.extracted(read, state, rest)
        return []  # another element

    def _picking_loops(self, read: ast.Subscript, position: ast.expr, scope: Scope) -> set[int]:
        """The loops around ``read`` that bind the names its position is computed from
        (``for i in range(n): iter(loaders[i])``): each round reads another element, so they
        do not repeat one element's use."""
        names = {n.id for n in ast.walk(position) if isinstance(n, ast.Name)}
        picking: set[int] = set()
        for loop in self.lookups.enclosing_loops(read, scope):
            targets = [loop.target] if isinstance(loop, (ast.For, ast.AsyncFor)) else [g.target for g in getattr(loop, "generators", ())]
            if any(isinstance(n, ast.Name) and n.id in names for t in targets for n in ast.walk(t)):
                picking.add(id(loop))
        return picking

    def _element_bound(
        self, parent: ast.AST | None, container: ast.AST, index: Element, state: FlowState, rest: Path
    ) -> list[Use] | None | Unhandled:
        """The container bound: to a name (its loads decide), unpacked (``a, b = pair``), to
        ``self.X``, or into a dict this code made."""
        if not (isinstance(parent, ast.Assign) and parent.value is container and len(parent.targets) == 1):
            return UNHANDLED
        target = parent.targets[0]
        if isinstance(target, ast.Name):
            return self.uses_of_container_name(target.id, index, state, parent, rest)
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(index, int):
            part = _unpacked_part(target, (index, *rest))
            if part is None:
                return None
            if isinstance(part[0], ast.Name):
                return self._extracted_name(part[0].id, state, parent, part[1])
            if isinstance(part[0], ast.Attribute):  # ``self.train_loader, self.val_loader = make(...)``
                if part[1]:
                    return None  # a part of what ``self.x`` holds: not followed
                here = state.loops + self.lookups.enclosing_loops(container, state.scope)
                return self.flow.stores.stored(part[0], container, state.inside(here))
            # ``loaders["src"], loaders["val"] = load_train()``: each part stored in a dict
            return self.flow.dicts.stored_in_dict(parent, part[0], part[1], state)
        if isinstance(target, ast.Attribute) and is_self_attribute(target):
            return self._stored_element(target, container, index, state, rest)
        return self.flow.dicts.stored_in_dict(parent, target, (index, *rest), state)

    def _element_moved(
        self, parent: ast.AST | None, container: ast.AST, index: Element, state: FlowState, rest: Path
    ) -> list[Use] | None | Unhandled:
        """The container goes on whole: an element of a tuple or list, or an entry of a dict,
        in turn; returned, or passed."""
        if isinstance(parent, ast.Dict):  # {"train": (loader, sampler)}: an entry of a dict in turn
            outer = dict_key(parent, container)
            return self.uses_of_element(parent, outer, state, (index, *rest)) if outer is not None else None
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):  # ((train, val), (it_t, it_v))
            position = element_index(parent, container)
            return self.uses_of_element(parent, position, state, (index, *rest)) if position is not None else None
        if isinstance(parent, ast.Return) and parent.value is container:
            return self.flow.returns.returned_element(container, index, state, rest)
        if isinstance(parent, ast.keyword):
            call = self.lookups.parents.get(parent)
            if isinstance(call, ast.Call):
                return self._element_passed(call, parent.arg, None, index, state, rest)
        if isinstance(parent, ast.Call) and container in parent.args:
            return self._element_passed(parent, None, parent.args.index(container), index, state, rest)  # type: ignore[arg-type]  # in args: an expr
        return UNHANDLED

    def extracted(self, expr: ast.AST, state: FlowState, rest: Path) -> list[Use] | None:
        """The element asked for is ``expr``'s value (or, with ``rest``, holds it)."""
        if rest:
            return self.uses_of_element(expr, rest[0], state, rest[1:])
        return self.flow.expressions.uses_of_expr(expr, state)

    def _extracted_name(self, name: str, state: FlowState, binding: ast.AST, rest: Path) -> list[Use] | None:
        if rest:
            return self.uses_of_container_name(name, rest[0], state, binding, rest[1:])
        return self.flow.names.uses_of_name(name, state, binding)

    def _stored_element(
        self, target: ast.Attribute, container: ast.AST, index: Element, state: FlowState, rest: Path
    ) -> list[Use] | None:
        """``self.X = {"sv": sv_loader, ...}``: kept (nobody claims it), and each entry is
        iterated by the framework when a hook it inherits hands ``self.X`` out (Lightning
        iterates every loader of a dict or list a hook returns); reads of ``self.X`` in the
        class that can be told add their uses."""
        via = state.via
        cls = self.lookups.enclosing_class(state.scope)
        here = state.loops + self.lookups.enclosing_loops(container, state.scope)
        uses = [Use(Move.ESCAPE, container, here, via, How.UNCLAIMED)]
        key = ("store-element", cls, target.attr, index, rest)
        if cls is None or key in state.seen or rest:
            return uses
        state = state.marked(key)

        for hook in inherited_hooks(self.facts, cls, target.attr):
            uses.append(hook_iterates(hook, container, here, via))
        for node in self.lookups.attributes_of_self(cls).get(target.attr, ()):
            if not isinstance(node.ctx, ast.Load):
                continue
            load_scope = self.facts.scopes.scope_of(node)
            found = self.uses_of_element(node, index, state.at(load_scope))
            if found is None:
                continue  # kept: the unclaimed escape above stands for it
            repeat = self.flow.stores.method_loops(load_scope.node, 0)
            uses += [u._replace(loops=repeat + u.loops) if repeat else u for u in found]
        return uses

    def element_loop_target(self, node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
        """(the ``for``, the part of its target that takes each element) when ``node``'s
        elements are looped over, directly or through ``zip``/``enumerate``."""
        path: list[int] = []  # where the element sits in each wrapper's items, innermost first
        current = node
        while True:
            parent = self.lookups.parents.get(current)
            if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is current:
                target = _unpacked(parent.target, path)
                return None if target is None else (parent, target)
            if not isinstance(parent, ast.Call):
                return None
            position = self._position_in_wrapper(parent, current)
            if position is None:
                return None
            path.append(position)
            current = parent

    def _position_in_wrapper(self, call: ast.Call, argument: ast.AST) -> int | None:
        """Where the items of ``argument`` sit in the items of the builtin ``zip(...)`` (its
        position) or ``enumerate(...)`` (1, after the count) it is handed to; None for any
        other call, a ``*args`` among them, or a ``zip`` of the file's own."""
        func = call.func
        if not (isinstance(func, ast.Name) and argument in call.args):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if self.facts.scopes.lookup(func.id, self.facts.scopes.scope_of(call)) is not None:
            return None  # a zip of the file's own
        if func.id == "zip":
            return call.args.index(argument)  # type: ignore[arg-type]  # in args: an expr
        if func.id == "enumerate" and call.args[0] is argument:
            return 1
        return None

    def met_by_loop(self, loop: ast.AST, target: ast.AST, state: FlowState, rest: Path) -> list[Use] | None:
        """Each element in turn bound to the name ``target`` of ``loop``: that name's uses,
        which the loop does not repeat (it meets each element once); None for a target that
        is not a name."""
        if not isinstance(target, ast.Name):
            return None
        uses = self._extracted_name(target.id, state, loop, rest)
        return None if uses is None else without_loops(uses, {id(loop)})

    def uses_of_container_name(
        self, name: str, index: Element, state: FlowState, binding: ast.AST | None, rest: Path = ()
    ) -> list[Use] | None:
        """Element ``index`` of the container bound to ``name``, through every load of it
        that the binding reaches; None if any of them is undecidable (or in a closure)."""
        scope = state.scope
        rebound = binding if binding is not None and len(scope.bindings.get(name, ())) > 1 else None
        return self.element_uses_of_loads(
            name, lambda load: rebound is None or self.flow.names.reaches(rebound, load, scope.bindings[name]), index, state, rest
        )

    def element_uses_of_loads(
        self, name: str, reached: Callable[[ast.Name], bool], index: Element, state: FlowState, rest: Path
    ) -> list[Use] | None:
        """Element ``index`` through every load of ``name`` in ``state.scope`` that ``reached``
        lets through, and in the functions nested there (``for b in loaders[phase]`` in a
        function the module calls), as often as they are called; None if any of them is
        undecidable."""
        uses: list[Use] = []
        for load, load_scope in self.lookups.loads_resolving_to(name, state.scope):
            if load_scope is not state.scope:
                found = self.flow.names.closure_uses(load_scope, (name, index, rest), state, lambda inner: self.uses_of_element(load, index, inner, rest))
            elif reached(load):
                found = self.uses_of_element(load, index, state, rest)
            else:
                continue
            if found is None:
                return None
            uses += found
        return uses

    def _element_passed(
        self, call: ast.Call, keyword: str | None, position: int | None, index: Element, state: FlowState, rest: Path = ()
    ) -> list[Use] | None:
        """A container handed to a call: ``len(loaders)`` looks at it; a same-file function
        decides through its parameter; anything else is undecidable."""
        func, scope = call.func, state.scope
        if isinstance(func, ast.Name) and func.id in NEUTRAL_BUILTINS and self.facts.scopes.lookup(func.id, scope) is None:
            return []
        if keyword is None and position is None and isinstance(index, DictKey):
            return self._entry_splatted(call, index, state, rest)
        target = self.lookups.same_file_function(func, scope)
        if target is None and isinstance(index, (DictKey, AnyEntry)):
            return self.flow.dicts.passed_elsewhere(call, keyword, position, index, state, rest)
        if target is None or len(state.via) >= MAX_CALL_DEPTH:
            return None
        param = parameter_for(target, keyword, position, isinstance(func, ast.Attribute))
        here = state.loops + self.lookups.enclosing_loops(call, scope)
        return self._container_into_parameter(call, target, param, (index, *rest), state, here)

    def _entry_splatted(self, call: ast.Call, index: DictKey, state: FlowState, rest: Path) -> list[Use] | None:
        """``f(**args)``: the entry lands in ``f``'s parameter named by its key, for a function
        of this file or each function of one picked from a literal dict (``EPOCHS[kind](**args)``);
        None for anything else (undecidable)."""
        func, scope = call.func, state.scope
        one = self.lookups.same_file_function(func, scope)
        picks: list[ast.AST | None] = [one] if one is not None else [self.lookups.same_file_function(c, scope) for c in picked_from(self.facts, func, scope) or ()]
        choices = [target for target in picks if target is not None]
        if not choices or len(choices) < len(picks) or len(state.via) >= MAX_CALL_DEPTH:
            return None
        here = state.loops + self.lookups.enclosing_loops(call, scope)
        uses: list[Use] = []
        for target in choices:
            param = parameter_for(target, index.key, None, isinstance(func, ast.Attribute))
            if rest:  # the entry holds the value: its part ``rest`` in the parameter
                found = self._container_into_parameter(call, target, param, rest, state, here)
            else:
                found = self.flow.arguments.into_parameter(call, target, param, state, here)
            if found is None:
                return None
            uses += found
        return uses

    def _container_into_parameter(
        self, call: ast.Call, function: ast.AST, param: str | None, index: Path, state: FlowState, here: Loops
    ) -> list[Use] | None:
        """Part ``index`` of the container that ``call`` hands to ``function``'s ``param``."""
        if param is None:
            return None
        self.flow.returns.entered(call, state.via, state.loops)
        callee = self.facts.scopes.scopes[function]
        binding = self.flow.names.parameter_binding(param, callee)
        return self.uses_of_container_name(param, index[0], state.through(call, callee, here), binding, index[1:])


def _unpacked_part(target: ast.Name | ast.Tuple | ast.List, path: Path) -> tuple[ast.Name | ast.Subscript | ast.Attribute, Path] | None:
    """The name (or ``d[key]`` item, or ``self.x``) of an assignment's target that takes the
    element at ``path`` (outermost first), and the rest of ``path`` inside it: ``(train, val),
    (t_it, v_it) = f()`` gives ``train`` for (0, 0); ``loaders, iters = f()`` gives ``loaders``
    and (0,); ``d["src"], d["val"] = f()`` gives ``d["val"]`` for (1,). Nested targets follow
    positions as Python unpacks them. None where they do not line up: a ``*starred`` part, a
    position beyond the target, a part that is none of those (``obj.x``)."""
    part: ast.AST = target
    while isinstance(part, (ast.Tuple, ast.List)):
        if not path or not isinstance(path[0], int) or _unpacked(part, [path[0]]) is None:
            return None
        part, path = part.elts[path[0]], path[1:]
    return (part, path) if isinstance(part, (ast.Name, ast.Subscript)) or is_self_attribute(part) else None  # type: ignore[return-value]  # an Attribute


def _unpacked(target: ast.AST, path: list[int]) -> ast.AST | None:
    """The part of a ``for`` target that takes the element at ``path`` (positions in the
    wrappers' items, innermost first): ``for i, (x, dl) in enumerate(zip(xs, loaders))``
    gives ``dl`` for the loaders; None when the target does not unpack that far."""
    for position in reversed(path):
        if not isinstance(target, (ast.Tuple, ast.List)) or position >= len(target.elts):
            return None
        if any(isinstance(e, ast.Starred) for e in target.elts):
            return None
        target = target.elts[position]
    return target
