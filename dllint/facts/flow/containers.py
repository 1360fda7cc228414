"""How a value moves inside containers: elements of tuples and lists, fields of records,
entries of dicts under constant keys, each followed to where it is taken out."""

from __future__ import annotations

import ast
from typing import Callable

from dllint.facts.flow.model import AnyEntry, DictKey, Element, How, Loops, Move, Path, Seen, Use, Via, hook_iterates, path_key, shown, uses_from, without_loops
from dllint.facts.frameworks import inherited_hooks
from dllint.facts.scopes import Scope


from dllint.facts.flow.base import FlowBase, MAX_CALL_DEPTH, MAX_STEPS, NEUTRAL_BUILTINS
from dllint.facts.flow.syntax import dict_key


class Unhandled:
    """A step of :meth:`ContainerFlow._uses_of_element` that does not apply (None already
    means "undecidable")."""


UNHANDLED = Unhandled()


class ContainerFlow(FlowBase):

    def element_uses(self, container: ast.AST, index: Element, scope: Scope) -> list[Use] | None:
        """Uses of element ``index`` (``"*"``: any element) of the tuple or list that
        ``container`` evaluates to (for the project's summaries); None: undecidable."""
        self._steps = 0
        return self._uses_of_element(container, index, scope, (), (), frozenset())

    def _uses_of_element(
        self, container: ast.AST, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen,
        rest: Path = (),
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
            return None if uses is None else without_loops(uses, {id(loop)})
        parent = self.parents.get(container)
        for step in (self._element_read, self._element_bound, self._element_moved):
            result = step(parent, container, index, scope, loops, via, seen, rest)
            if not isinstance(result, Unhandled):
                return result
        return None

    def _element_read(
        self, parent: ast.AST | None, container: ast.AST, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
    ) -> list[Use] | None | Unhandled:
        """``info.dataloader`` (a record's field), ``pair[0]`` (a constant position), or the
        container looked at only (``"train" in loaders``, ``if loaders:``)."""
        if isinstance(parent, ast.Attribute) and isinstance(index, str) and index != "*":
            if parent.attr == index:
                return self._extracted(parent, scope, loops, via, seen, rest)
            call = self.parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                return None  # info.set_epoch(e): a method may use the field
            return []  # another field
        if isinstance(parent, ast.Subscript) and parent.value is container and isinstance(parent.ctx, ast.Load):
            return self._element_at(parent, index, scope, loops, via, seen, rest)
        if isinstance(parent, (ast.Compare, ast.Expr)) or isinstance(parent, (ast.If, ast.While)) and parent.test is container:
            return []
        return UNHANDLED

    def _element_at(self, read: ast.Subscript, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path) -> list[Use] | None:
        """``pair[0]``: the element asked for (its uses), another one ([]), or undecidable."""
        position = read.slice
        if not (isinstance(position, ast.Constant) and type(position.value) is int and position.value >= 0):
            return None
        if isinstance(index, str) and index != "*":
            return None  # a NamedTuple field read by position: which one is not known here
        if index == "*" or position.value == index:
            return self._extracted(read, scope, loops, via, seen, rest)
        return []  # another element

    def _element_bound(
        self, parent: ast.AST | None, container: ast.AST, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
    ) -> list[Use] | None | Unhandled:
        """The container bound: to a name (its loads decide), unpacked (``a, b = pair``), to
        ``self.X``, or into a dict this code made."""
        if not (isinstance(parent, ast.Assign) and parent.value is container and len(parent.targets) == 1):
            return UNHANDLED
        target = parent.targets[0]
        if isinstance(target, ast.Name):
            return self._uses_of_container_name(target.id, index, scope, loops, via, seen, parent, rest)
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(index, int):
            if any(isinstance(e, ast.Starred) for e in target.elts) or index >= len(target.elts):
                return None
            element = target.elts[index]
            return self._extracted_name(element.id, scope, loops, via, seen, parent, rest) if isinstance(element, ast.Name) else None
        if isinstance(target, ast.Attribute) and self._is_self_attribute(target):
            return self._stored_element(target, container, index, scope, loops, via, seen, rest)
        return self._stored_in_dict(parent, target, (index, *rest), scope, loops, via, seen)

    def _element_moved(
        self, parent: ast.AST | None, container: ast.AST, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
    ) -> list[Use] | None | Unhandled:
        """The container goes on whole: an entry of a dict in turn, returned, or passed."""
        if isinstance(parent, ast.Dict):  # {"train": (loader, sampler)}: an entry of a dict in turn
            outer = dict_key(parent, container)
            return self._uses_of_element(parent, outer, scope, loops, via, seen, (index, *rest)) if outer is not None else None
        if isinstance(parent, ast.Return) and parent.value is container:
            return self._returned_element(container, index, scope, loops, via, seen, rest)
        if isinstance(parent, ast.keyword):
            call = self.parents.get(parent)
            if isinstance(call, ast.Call):
                return self._element_passed(call, parent.arg, None, index, scope, loops, via, seen, rest)
        if isinstance(parent, ast.Call) and container in parent.args:
            return self._element_passed(parent, None, parent.args.index(container), index, scope, loops, via, seen, rest)  # type: ignore[arg-type]  # in args: an expr
        return UNHANDLED

    def _extracted(self, expr: ast.AST, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path) -> list[Use] | None:
        """The element asked for is ``expr``'s value (or, with ``rest``, holds it)."""
        if rest:
            return self._uses_of_element(expr, rest[0], scope, loops, via, seen, rest[1:])
        return self._uses_of_expr(expr, scope, loops, via, seen)

    def _extracted_name(
        self, name: str, scope: Scope, loops: Loops, via: Via, seen: Seen, binding: ast.AST, rest: Path
    ) -> list[Use] | None:
        if rest:
            return self._uses_of_container_name(name, rest[0], scope, loops, via, seen, binding, rest[1:])
        return self._uses_of_name(name, scope, loops, via, seen, binding)

    # -- dicts: loaders under constant string keys ------------------------------------
    def _dict_entry_uses(
        self, container: ast.AST, index: DictKey | AnyEntry, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
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
        return True, self._dict_method_uses(call, parent.attr, index, scope, loops, via, seen, rest)

    def _dict_method_uses(
        self, call: ast.Call, method: str, index: DictKey | AnyEntry, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
    ) -> list[Use] | None:
        """``d.keys()``, ``d.get("k")``, ``d.values()``/``d.items()`` looped over (each entry
        meets the loop once); other methods (``update``, ``pop``...) are not followed."""
        if method == "keys" and not call.args:
            return []
        if method == "get" and call.args:
            key = call.args[0]
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            if isinstance(index, AnyEntry):
                index.met.add(key.value)
                return []
            return self._extracted(call, scope, loops, via, seen, rest) if key.value == index.key else []
        if method not in ("values", "items") or call.args:
            return None
        looped = self.element_loop_target(call)
        if looped is None:
            return None  # list(d.values()), a view kept: not followed
        loop, target = looped
        if method == "items":  # for name, dl in d.items()
            if not isinstance(target, ast.Tuple) or len(target.elts) != 2 or any(isinstance(e, ast.Starred) for e in target.elts):
                return None
            target = target.elts[1]
        if not isinstance(target, ast.Name):
            return None
        uses = self._extracted_name(target.id, scope, loops, via, seen, loop, rest)
        return None if uses is None else without_loops(uses, {id(loop)})

    def _stored_in_dict(
        self, statement: ast.Assign | ast.AnnAssign | ast.NamedExpr, target: ast.AST, path: Path, scope: Scope, loops: Loops, via: Via, seen: Seen
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
        self, target: ast.Attribute, container: ast.AST, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path
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
                path.append(parent.args.index(current))  # type: ignore[arg-type]  # in args: an expr
            elif parent.func.id == "enumerate" and parent.args[0] is current:
                path.append(1)
            else:
                return None
            current = parent

    def _uses_of_container_name(
        self, name: str, index: Element, scope: Scope, loops: Loops, via: Via, seen: Seen,
        binding: ast.AST | None, rest: Path = (),
    ) -> list[Use] | None:
        """Element ``index`` of the container bound to ``name``, through every load of it
        that the binding reaches; None if any of them is undecidable (or in a closure)."""
        rebound = binding if binding is not None and len(scope.bindings.get(name, ())) > 1 else None
        return self._element_uses_of_loads(
            name, scope, lambda load: rebound is None or self._reaches_cached(rebound, load, scope.bindings[name]),
            index, loops, via, seen, rest,
        )

    def _element_uses_of_loads(
        self, name: str, scope: Scope, reached: Callable[[ast.Name], bool], index: Element,
        loops: Loops, via: Via, seen: Seen, rest: Path,
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
        self, call: ast.Call, keyword: str | None, position: int | None, index: Element,
        scope: Scope, loops: Loops, via: Via, seen: Seen, rest: Path = (),
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
        scope: Scope, loops: Loops, via: Via, rest: Path,
    ) -> list[Use] | None:
        """A dict handed whole to a function of another project file: its summary says what
        it does with each entry (``evaluate(model, data)`` reading ``data["val"]``)."""
        project = self.facts.project
        remote = project.target_of(self.facts, call.func, scope) if project is not None else None
        if project is None or remote is None or position is not None and any(isinstance(a, ast.Starred) for a in call.args[:position]):
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
        effects = project.entry_effects(remote, argument, path_key((index, *rest)))
        return None if effects is None else uses_from(effects, call, call, here, via, shown(remote))

    def parameter_entry_uses(self, function: ast.AST, param: str, index: Element, rest: Path = ()) -> list[Use] | None:
        """What ``function`` does with entry ``index`` (``rest``: that part of it) of the dict
        its parameter ``param`` holds (for the project's summaries); None: undecidable."""
        self._summarizing = function
        self._steps = 0
        try:
            return self._uses_of_container_name(param, index, self.facts.scopes.scopes[function], (), (), frozenset(), None, rest)
        finally:
            self._summarizing = None

    def result_entry_uses(self, call: ast.AST, index: Element, scope: Scope, rest: Path = ()) -> list[Use] | None:
        """The same for the dict a call returns (``data = get_data(args)``)."""
        self._steps = 0
        return self._uses_of_element(call, index, scope, (), (), frozenset(), rest)


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
