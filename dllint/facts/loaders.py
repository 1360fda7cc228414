"""Loader calls and their arguments, mapped onto torch's DataLoader signature."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.values import ABSENT, Value, dynamic, option_of, resolve

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

LOADER_QUALNAMES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

POSITIONAL_PARAMS = (
    "dataset",
    "batch_size",
    "shuffle",
    "sampler",
    "batch_sampler",
    "num_workers",
    "collate_fn",
    "pin_memory",
    "drop_last",
    "timeout",
    "worker_init_fn",
    "multiprocessing_context",
    "generator",
)
KEYWORD_ONLY_PARAMS = ("prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")
ALL_PARAMS = frozenset(POSITIONAL_PARAMS + KEYWORD_ONLY_PARAMS)


class Argument(NamedTuple):
    name: str
    value: ast.expr  # the expression passed
    node: ast.AST  # where to report: the keyword (``name=value``) or the positional expression
    scope: Scope  # where ``value`` is evaluated
    keyword: ast.keyword | None = None  # None for positional or splat-provided arguments
    from_splat: bool = False


@dataclass
class LoaderCall:
    node: ast.Call
    scope: Scope
    facts: FileFacts = field(repr=False)
    keywords_only: bool = False
    arguments: dict[str, Argument] = field(default_factory=dict)
    unknown_splat: bool = False  # an unresolvable ``*args``/``**kwargs``: absent arguments are unknown

    def argument(self, name: str) -> Argument | None:
        return self.arguments.get(name)

    def value(self, name: str) -> Value:
        """The resolved value of parameter ``name``: absent, const, cpu_count or dynamic."""
        arg = self.arguments.get(name)
        if arg is None:
            return dynamic() if self.unknown_splat else ABSENT
        return resolve(arg.value, arg.scope, self.facts)

    def given(self, name: str) -> bool:
        """Passed with a value that is not (provably) ``None``."""
        arg = self.arguments.get(name)
        if arg is None:
            return False
        value = resolve(arg.value, arg.scope, self.facts)
        return not (value.is_const and value.value is None)

    @property
    def num_workers(self) -> Value:
        return self.value("num_workers")

    @property
    def is_multi_worker(self) -> bool:
        """``num_workers`` not provably 0."""
        return not self.num_workers.is_zero_or_absent()

    @property
    def workers_option(self) -> str | None:
        """The command-line option (or config key) ``num_workers`` comes from when only its
        default (0) keeps the loader single-process: the option exists to be raised."""
        arg = self.arguments.get("num_workers")
        if arg is None or self.is_multi_worker:
            return None
        option = option_of(arg.value, arg.scope, self.facts)
        if option is None and self.num_workers.config is not None:
            return self.num_workers.config.key  # a config key set to 0, as a machine's profile may (train_ds.num_workers)
        return option

    @property
    def may_start_workers(self) -> bool:
        """For the crash rules (DL1xx): multi-worker, or ``num_workers`` from a command-line
        option whose default is 0 (RULES.md: "Worker counts from the command line")."""
        return self.is_multi_worker or self.workers_option is not None

    def when_workers(self) -> str:
        """The message suffix naming the option, for a loader that starts workers only once it is raised."""
        option = None if self.is_multi_worker else self.workers_option
        return f" (when {option} > 0)" if option else ""

    @property
    def dataset(self) -> ast.expr | None:
        arg = self.arguments.get("dataset")
        return arg.value if arg else None


def collect_loader_calls(facts: FileFacts, calls: list[ast.Call]) -> list[LoaderCall]:
    loaders = []
    for call in calls:
        is_loader, keywords_only = facts.is_loader_class_name(call.func)
        if is_loader:
            loaders.append(_build(facts, call, keywords_only))
    return loaders


def _build(facts: FileFacts, call: ast.Call, keywords_only: bool) -> LoaderCall:
    scope = facts.scopes.scope_of(call)
    loader = LoaderCall(call, scope, facts, keywords_only)
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            loader.unknown_splat = True
            break
        if keywords_only and index > 0:
            break  # a custom loader's positional parameters beyond the dataset are unknown
        if index < len(POSITIONAL_PARAMS):
            name = POSITIONAL_PARAMS[index]
            loader.arguments[name] = Argument(name, arg, arg, scope)
    for keyword in call.keywords:
        if keyword.arg is None:
            entries = _splat_entries(facts, keyword.value, scope)
            if entries is None:
                loader.unknown_splat = True
                continue
            for name, (value, value_scope) in entries.items():
                loader.arguments.setdefault(name, Argument(name, value, keyword, value_scope, None, True))
        else:
            loader.arguments[keyword.arg] = Argument(keyword.arg, keyword.value, keyword, scope, keyword)
    return loader


def _splat_entries(facts: FileFacts, expr: ast.expr, scope: Scope) -> dict[str, tuple[ast.expr, Scope]] | None:
    """Entries of a ``**`` splat that is a dict literal / ``dict(...)`` call, directly or via a
    name bound once and never mutated; None when it cannot be resolved."""
    if isinstance(expr, ast.Name):
        found = facts.scopes.single_value(expr.id, scope)
        if found is None or found[1].value is None or _is_mutated(facts, expr.id, found[0]):
            return None
        scope, expr = found[0], found[1].value
    entries: dict[str, tuple[ast.expr, Scope]] = {}
    if isinstance(expr, ast.Dict):
        for key, value in zip(expr.keys, expr.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None  # ``**`` inside the literal or a computed key
            entries[key.value] = (value, scope)
        return entries
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args:
        for keyword in expr.keywords:
            if keyword.arg is None:
                return None
            entries[keyword.arg] = (keyword.value, scope)
        return entries
    return None


def _is_mutated(facts: FileFacts, name: str, owner: Scope) -> bool:
    """Any use of the dict other than as a ``**`` splat may change it (``.update``, item assignment)."""
    parents = facts.scopes.parents
    for scope in facts.scopes.scopes.values():
        for load in scope.loads:
            if load.id != name:
                continue
            if facts.scopes.lookup(name, scope) is None or facts.scopes.lookup(name, scope)[0] is not owner:
                continue
            parent = parents.get(load)
            if isinstance(parent, ast.keyword) and parent.arg is None:
                continue
            return True
    # item assignment stores through a Subscript whose value is a Load of the name: covered above
    return False
