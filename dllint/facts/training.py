"""Is a loader evidently a training loader? Asked of a loader that is returned or stored
where no caller in the project decides how often it is iterated (RULES.md, DL201)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.imports import dotted_name
from dllint.facts.values import follow
from dllint.knowledge.frameworks import RANDOM_SAMPLERS

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall

TRAINING_FUNCTIONS = frozenset({"train_dataloader", "get_train_dataloader"})


def evidently_training(facts: FileFacts, loader: LoaderCall) -> bool:
    """Shuffled, given a random or distributed sampler, or built in ``train_dataloader``."""
    if loader.value("shuffle").truthy() is True:
        return True
    for name in ("sampler", "batch_sampler"):
        arg = loader.argument(name)
        if arg is not None and _random_sampler(facts, arg.value, arg.scope, 0):
            return True
    function = facts.scopes.enclosing_function(loader.node)
    return getattr(function, "name", None) in TRAINING_FUNCTIONS


def _random_sampler(facts: FileFacts, expr: ast.expr, scope, depth: int) -> bool:
    expr, scope = follow(expr, scope, facts)
    if not isinstance(expr, ast.Call) or depth > 4:
        return False
    name = (facts.qualname(expr.func) or dotted_name(expr.func) or "").rsplit(".", 1)[-1]
    if name in RANDOM_SAMPLERS:
        return True
    if facts.project is not None and any(r.kind == "sampler" and r.random for r in facts.project.returned(facts, expr.func, scope)):
        return True  # build_sampler(...) of another project file returns a random/distributed sampler
    if name == "BatchSampler" and expr.args:  # BatchSampler(RandomSampler(ds), ...)
        return _random_sampler(facts, expr.args[0], scope, depth + 1)
    return False
