"""Random generators a class stores on ``self`` in ``__init__`` and its methods draw from
(DL304, also through objects a dataset holds)."""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from dllint.facts.walk import walk_statements

GENERATORS = frozenset(
    {
        "numpy.random.default_rng",
        "numpy.random.RandomState",
        "numpy.random.Generator",
        "random.Random",
        "torch.Generator",
    }
)
# Calls on the generator that set its state rather than draw from it.
RESEEDING_METHODS = frozenset({"seed", "manual_seed", "set_state", "setstate", "bit_generator", "__setstate__"})


def stored_generators(facts, init: ast.AST) -> dict[str, tuple[ast.stmt, ast.Call]]:
    """``self.X = <generator factory>(...)`` statements directly in ``__init__``, by attribute:
    the statement and the factory call."""
    found: dict[str, tuple[ast.stmt, ast.Call]] = {}
    for node in walk_statements(init):  # assignments are statements
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        if facts.scopes.scope_of(node).node is not init:
            continue
        call = generator_factory_call(facts, node.value)
        if call is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found.setdefault(target.attr, (node, call))
    return found


def generator_factory_call(facts, value: ast.expr) -> ast.Call | None:
    """The generator-building call in ``value``: ``Factory(...)`` or ``torch.Generator().manual_seed(s)``
    (which returns the generator)."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "manual_seed" and isinstance(func.value, ast.Call):
        value = func.value
    return value if facts.qualname(value.func) in GENERATORS else None


def uses_of(functions: Sequence[ast.AST], attribute: str) -> Iterator[ast.Attribute]:
    """Loads of ``self.<attribute>`` in ``functions``."""
    for function in functions:
        for node in ast.walk(function):
            if is_self_attribute(node, attribute):
                yield node  # type: ignore[misc]


def is_self_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def draws(functions: Sequence[ast.AST], attribute: str) -> bool:
    """``self.rng.method(...)`` or ``generator=self.rng``: a draw from the stored generator."""
    return any(isinstance(use.ctx, ast.Load) for use in uses_of(functions, attribute))


def reseeds(functions: Sequence[ast.AST], attribute: str) -> bool:
    """The worker code replaces or reseeds the generator itself (e.g. from get_worker_info())."""
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and node.attr in RESEEDING_METHODS:
                base = node.value
                if is_self_attribute(base, attribute):
                    return True
    return any(isinstance(use.ctx, (ast.Store, ast.Del)) for use in uses_of(functions, attribute))


def held_generators(facts, init: ast.AST) -> dict[str, tuple[ast.stmt, str, str]]:
    """``self.X = Holder(...)`` (also in a list, tuple, dict or comprehension) in ``__init__``
    where ``Holder`` is a class of the file or of the project that stores a random generator
    its methods draw from: by attribute, the statement, the class and its generator's name."""
    found: dict[str, tuple[ast.stmt, str, str]] = {}
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign) or facts.scopes.scope_of(node).node is not init:
            continue
        targets = [t.attr for t in node.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]
        if not targets:
            continue
        scope = facts.scopes.scope_of(node)
        for call in _constructed(node.value):
            holder = _holder_generator(facts, call, scope)
            if holder is not None:
                for attribute in targets:
                    found.setdefault(attribute, (node, holder[0], holder[1]))
                break
    return found


def _constructed(value: ast.expr) -> Iterator[ast.Call]:
    """Calls whose results ``value`` holds: itself, or items of a literal/comprehension."""
    if isinstance(value, ast.Call):
        yield value
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        for elt in value.elts:
            yield from _constructed(elt)
    elif isinstance(value, ast.Dict):
        for item in value.values:
            yield from _constructed(item)
    elif isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        yield from _constructed(value.elt)


def _holder_generator(facts, call: ast.Call, scope) -> tuple[str, str] | None:
    from dllint.facts.imports import dotted_name

    name = dotted_name(call.func)
    local = facts.classes.get(name) if name else None
    if local is not None:
        init = local.method("__init__")
        if init is None:
            return None
        methods = [s for s in local.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s is not init]
        drawn = sorted(a for a in stored_generators(facts, init) if draws(methods, a))
        return (local.name, drawn[0]) if drawn else None
    if name and facts.project is not None:
        summary = facts.project.project_class(facts, call.func, scope)
        if summary is not None and summary.generators:
            return name, summary.generators[0]
    return None
