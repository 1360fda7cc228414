"""How a value moves through dicts under constant string keys: an entry read (``d["k"]``,
``d.get("k")``, ``d[split]`` in ``for split in ["train", "val"]``), each entry looped over
(``d.values()``, ``d.items()``), stored into a dict this code made (``data["train"] = loader``,
``data[split] = loader`` in such a loop), built by a dict comprehension over literal keys (one
value per key), or the dict handed whole to a function of another project file whose summary
says what it does with each entry. What any container shares
(unpacked, bound, returned, passed in this file) is :class:`~dllint.facts.flow.containers.Containers`'."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from dllint.facts.flow.model import AnyEntry, DictKey, FlowState, How, Move, Path, Use, path_key, shown, uses_from, without_loops
from dllint.facts.flow.syntax import comprehension_keys, literal_keys
from dllint.facts.scopes import Scope
from dllint.facts.values import NO_OTHER_CALLERS, project_calls, resolve

if TYPE_CHECKING:
    from dllint.facts.flow.queries import ProjectQueries
    from dllint.facts.usage import UsageAnalysis


class Dicts:
    """Entries of dicts under constant keys: read, looped over, stored into a dict this code
    made, or handed whole to another project file."""

    def __init__(self, flow: UsageAnalysis) -> None:
        self.flow = flow  # the engine: where an entry taken out goes next
        self.facts = flow.facts
        self.lookups = flow.lookups
        self.containers = flow.containers

    def entry_uses(
        self, container: ast.AST, index: DictKey | AnyEntry, state: FlowState, rest: Path
    ) -> tuple[bool, list[Use] | None]:
        """What a dict's own ways of being read do with entry ``index``: ``d["k"]``,
        ``d.get("k")``, ``for k in d`` (keys only), ``d.values()``/``d.items()`` looped over
        (each entry meets the loop once); (False, None) for what any container shares
        (returned, bound to a name, passed on)."""
        parent = self.lookups.parents.get(container)
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is container:
            return True, []  # iterating a dict gives its keys
        if isinstance(parent, ast.Subscript) and parent.value is container:
            key = self._key_of(parent.slice)
            if key is None:
                return True, self._entry_picked(parent, index, state, rest)
            if isinstance(index, AnyEntry):
                index.met.add(key)
                return True, []
            if key != index.key:
                return True, []
            if isinstance(parent.ctx, ast.Load):
                return True, self.containers.extracted(parent, state, rest)
            return True, None  # stored again or deleted: which value a later read sees is not followed
        if not isinstance(parent, ast.Attribute) or parent.value is not container:
            return False, None
        call = self.lookups.parents.get(parent)
        if not (isinstance(call, ast.Call) and call.func is parent) or call.keywords:
            return True, None  # an attribute of a dict: some other mapping (an attribute dict)
        return True, self._dict_method_uses(call, parent.attr, index, state, rest)

    def _entry_picked(self, read: ast.Subscript, index: DictKey | AnyEntry, state: FlowState, rest: Path) -> list[Use] | None:
        """``d[split]`` inside ``for split in ["train", "val"]:``: each round reads the entry of
        one literal key, so that loop does not repeat one entry's use (the loops around it do);
        an entry whose key the loop never takes is not read. None (any entry) for any other key."""
        picked = self._picking_loop(read)
        if picked is None or not isinstance(read.ctx, ast.Load):
            return None
        loop, keys = picked
        if isinstance(index, AnyEntry):
            index.met.update(keys)
            return []
        if index.key not in keys:
            return []
        uses = self.containers.extracted(read, state, rest)
        return None if uses is None else without_loops(uses, {id(loop)})

    def _picking_loop(self, read: ast.Subscript) -> tuple[ast.For | ast.AsyncFor, tuple[str, ...]] | None:
        """(the ``for`` over literal string keys whose target is ``read``'s key, those keys):
        the nearest one around ``read`` in its scope (``read`` in its body), its name bound
        nowhere else inside it."""
        name = read.slice
        if not isinstance(name, ast.Name):
            return None
        scope = self.facts.scopes.scope_of(read)
        for loop in reversed(self.lookups.enclosing_loops(read, scope)):
            if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name) and loop.target.id == name.id):
                continue
            keys = literal_keys(loop.iter)
            rebound = [b for b in scope.bindings.get(name.id, ()) if b.node is not loop and self.facts.contains(loop, b.node)]
            return None if keys is None or rebound else (loop, keys)
        return None

    def built_per_key(self, comp: ast.DictComp, state: FlowState) -> list[Use] | None:
        """``{k: DataLoader(data[k], ...) for k in ["train", "val"]}``: the value is built once
        per literal key, and each key's entry goes its own way (``loaders["val"]`` iterated
        once, ``"train"`` never): each entry's uses, marked with its key. None when the keys are
        not such literals, or an entry's fate cannot be told (the values are kept: nobody claims
        them)."""
        keys = comprehension_keys(comp)
        if keys is None:
            return None
        uses: list[Use] = []
        for key in keys:
            found = self.containers.uses_of_element(comp, DictKey(key), state)
            if found is None:
                return None
            uses += [use._replace(entry=key) for use in found]
        return uses

    def _key_of(self, position: ast.expr) -> str | None:
        """A subscript's key as a string: a literal, or a name the file resolves to one (a
        parameter every caller passes ``"train"``, a name bound once); None otherwise."""
        if isinstance(position, ast.Constant):
            return position.value if isinstance(position.value, str) else None
        if not isinstance(position, ast.Name):
            return None
        value = resolve(position, self.facts.scopes.scope_of(position), self.facts)
        if value.is_const and isinstance(value.value, str):
            return value.value
        return self._key_every_call_passes(position)

    def _key_every_call_passes(self, name: ast.Name) -> str | None:
        """The string every call in the project passes for the parameter ``name`` that has no
        default (``def extract(phase): ... loaders[phase]`` called as ``extract("train")``);
        None when they differ, or a call in another file passes it."""
        found = project_calls(name, self.facts.scopes.scope_of(name), self.facts)
        if found is None or found.elsewhere != NO_OTHER_CALLERS:
            return None  # another file calls it, or may
        keys: set[str | None] = set()
        for call in found.here:
            argument = found.argument(call, name.id)
            value = resolve(argument, self.facts.scopes.scope_of(call), self.facts) if isinstance(argument, ast.expr) else None
            keys.add(value.value if value is not None and value.is_const and isinstance(value.value, str) else None)
        return keys.pop() if len(keys) == 1 and None not in keys else None

    def _dict_method_uses(
        self, call: ast.Call, method: str, index: DictKey | AnyEntry, state: FlowState, rest: Path
    ) -> list[Use] | None:
        """``d.keys()``, ``d.get("k")``, ``d.values()``/``d.items()`` looped over (each entry
        meets the loop once); other methods (``update``, ``pop``...) are not followed."""
        if method == "keys" and not call.args:
            return []
        if method == "get" and call.args:
            return self._entry_got(call, index, state, rest)
        if method not in ("values", "items") or call.args:
            return None
        return self._entries_looped(call, method == "items", state, rest)

    def _entry_got(self, call: ast.Call, index: DictKey | AnyEntry, state: FlowState, rest: Path) -> list[Use] | None:
        """``d.get("k")``: the entry asked for (its uses), another one ([]), or undecidable (a
        key that is not a constant string). Asked for any entry, it notes the key it met."""
        key = call.args[0]
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        if isinstance(index, AnyEntry):
            index.met.add(key.value)
            return []
        return self.containers.extracted(call, state, rest) if key.value == index.key else []

    def _entries_looped(self, call: ast.Call, items: bool, state: FlowState, rest: Path) -> list[Use] | None:
        """``for dl in d.values()`` or (``items``) ``for name, dl in d.items()``: every entry,
        whichever is asked for, meets the loop once; a view kept or consumed otherwise
        (``list(d.values())``) is not followed."""
        looped = self.containers.element_loop_target(call)
        if looped is None:
            return None
        loop, target = looped
        if items:
            if not isinstance(target, ast.Tuple) or len(target.elts) != 2 or any(isinstance(e, ast.Starred) for e in target.elts):
                return None
            target = target.elts[1]
        return self.containers.met_by_loop(loop, target, state, rest)

    def stored_in_dict(
        self, statement: ast.Assign | ast.AnnAssign | ast.NamedExpr, target: ast.AST, path: Path, state: FlowState
    ) -> list[Use] | None:
        """``data["train"] = value`` into a dict this function made (``data = {}``, bound
        once): the reads of ``data`` after the store decide (with ``path``: what is asked is
        that part of the stored value). None for any other subscript store."""
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return None
        name, scope = target.value.id, state.scope
        bindings = scope.bindings.get(name, ())
        found = self.facts.scopes.lookup(name, scope)
        if len(bindings) != 1 or found is None or found[0] is not scope or not _makes_empty_or_literal_dict(bindings[0].node):
            return None
        skipped = {id(target.value)}  # the store's own target

        def reached(load: ast.Name) -> bool:  # only reads the store reaches (not those before it) decide
            return id(load) not in skipped and self.flow.names.reaches(statement, load, [])

        if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            return self.containers.element_uses_of_loads(name, reached, DictKey(target.slice.value), state, path)
        picked = self._picking_loop(target)
        if picked is None:
            return None
        # the loop's other stores by its key (``d[split] = ...`` in another arm) hold other rounds' values
        skipped |= {id(n.value) for n in ast.walk(picked[0]) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _same_name(n.slice, target.slice)}
        return self._stored_per_round(
            statement, target, picked, state, lambda key: self.containers.element_uses_of_loads(name, reached, DictKey(key), state, path)
        )

    def _stored_per_round(
        self,
        statement: ast.AST,
        target: ast.Subscript,
        picked: tuple[ast.For | ast.AsyncFor, tuple[str, ...]],
        state: FlowState,
        entry_uses: Callable[[str], list[Use] | None],
    ) -> list[Use] | None:
        """``loaders[split] = dl`` in ``for split in ["train", "val"]:``: stored under each key
        the loop takes where the store (and the binding the value came through) runs: ``if
        split == "train":`` narrows them. A value built in the loop's body is built once per
        round, one per key, each with its own fate (marked with its key); one built before the
        loop is the same value under every key."""
        loop, keys = picked
        origin = self._round_origin(statement, loop, state)
        runs = [statement] if origin is None else [statement, origin]
        uses: list[Use] = []
        for key in keys:
            if not all(self._arms_admit(node, loop, key) for node in runs):
                continue
            found = entry_uses(key)
            if found is None:
                return None
            uses += found if origin is None else [use._replace(entry=key) for use in found]
        return uses

    def _round_origin(self, statement: ast.AST, loop: ast.AST, state: FlowState) -> ast.AST | None:
        """Where the stored value was built in ``loop``'s body, if it was: the store itself
        (``d[k] = DataLoader(...)``), or the binding of the name it stores that this path came
        through (``dl = DataLoader(...)`` then ``d[k] = dl``); None when it comes from before."""
        value = getattr(statement, "value", None)
        if not isinstance(value, ast.Name):
            return statement
        followed = self.flow.names.followed_bindings(value.id, state)
        return next((b for b in followed if b is not loop and self.facts.contains(loop, b)), None)

    def _arms_admit(self, node: ast.AST, loop: ast.For | ast.AsyncFor, key: str) -> bool:
        """Whether ``node`` may run in the round of ``loop`` whose key (its target, a name) is
        ``key``: no ``if`` around it in the loop tests the key against literals (``split ==
        "train"``, ``split in ("val", "test")``) with the other outcome."""
        name = getattr(loop.target, "id", None)
        for branch, arm in self.lookups.if_arms(node).items():
            if not self.facts.contains(loop, branch):
                continue
            outcome = _key_test(branch.test, name, key) if name is not None else None
            if outcome is not None and outcome != (arm == "body"):
                return False
        return True

    def passed_elsewhere(
        self, call: ast.Call, keyword: str | None, position: int | None, index: DictKey | AnyEntry, state: FlowState, rest: Path
    ) -> list[Use] | None:
        """A dict handed whole to a function of another project file: its summary says what
        it does with each entry (``evaluate(model, data)`` reading ``data["val"]``)."""
        passed = self._passed_to_other_file(call, keyword, position, state.scope)
        if passed is None:
            return None
        project, remote, argument = passed
        via = state.via
        here = state.loops + self.lookups.enclosing_loops(call, state.scope)
        if any(isinstance(part, AnyEntry) for part in rest) or isinstance(index, AnyEntry) and rest:
            return None  # a dict of dicts handed on: not followed
        if project.summarizing:  # "*": the entry asked about, whichever it is
            entry = "*" if isinstance(index, AnyEntry) else path_key((index, *rest))
            return [Use(Move.ESCAPE, call, here, via, How.REMOTE, (remote, argument, entry))]
        if isinstance(index, AnyEntry):
            return None
        effects = project.entry_effects(remote, argument, path_key((index, *rest)))
        return None if effects is None else uses_from(effects, call, call, here, via, shown(remote))

    def _passed_to_other_file(
        self, call: ast.Call, keyword: str | None, position: int | None, scope: Scope
    ) -> tuple[ProjectQueries, str, str] | None:
        """(the project, the call's target in another project file, the argument the value
        goes in as: its keyword, or its position when no ``*args`` comes before it)."""
        project = self.facts.project
        remote = project.target_of(self.facts, call.func, scope) if project is not None else None
        if project is None or remote is None or position is not None and any(isinstance(a, ast.Starred) for a in call.args[:position]):
            return None
        return project, remote, keyword if keyword is not None else str(position)


def _same_name(first: ast.AST, second: ast.AST) -> bool:
    return isinstance(first, ast.Name) and isinstance(second, ast.Name) and first.id == second.id


def _key_test(test: ast.expr, name: str, key: str) -> bool | None:
    """The outcome of ``test`` when ``name`` holds ``key``: ``name == "k"``, ``!=``, ``in`` or
    ``not in`` a display of literals (either side for ``==``/``!=``); None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Name):
        left, right = right, left
    if not (isinstance(left, ast.Name) and left.id == name):
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return (right.value == key) == isinstance(op, ast.Eq)
    keys = literal_keys(right)
    if isinstance(op, (ast.In, ast.NotIn)) and keys is not None:
        return (key in keys) == isinstance(op, ast.In)
    return None


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
