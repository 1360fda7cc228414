"""Distributed samplers: which loaders each one feeds, whether it leaves the file, and
whether anything in the file may call its ``set_epoch`` (DL301).

The sampler's value is followed with the same flow as loaders
(:meth:`UsageAnalysis.uses_of`): names, same-file calls, closures. Where it lands in a
loader's ``sampler=`` (or in a ``BatchSampler`` given as ``batch_sampler=``) it feeds that
loader; anywhere else outside the file's view it may get ``set_epoch`` called on it. Returned
to the project's other files, it goes where their loaders take it (their summaries say how
often, and whether that file may call ``set_epoch``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from dllint.facts.flow.model import How, RemoteLoop
from dllint.facts.imports import dotted_name, has_star_import
from dllint.facts.values import ABSENT, Value

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

DISTRIBUTED_SAMPLERS = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
# DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False)
SHUFFLE_INDEX = 3
LOADER_SAMPLER_INDEX = 3
MAX_DEPTH = 8


@dataclass
class SamplerCall:
    """A sampler construction in the file, and the loaders it feeds."""

    node: ast.Call
    scope: Scope
    shuffle: Value
    feeds: list[tuple[LoaderCall, str]] = field(default_factory=list)  # (loader, "sampler"|"batch_sampler")
    escapes: bool = False  # reaches code outside the file, which may call set_epoch
    # Passes over it every epoch in other files of the project (a factory returns it; its callers'
    # loaders take it), where none calls set_epoch: what they are, for the message.
    epochs_elsewhere: list[str] = field(default_factory=list)


class SamplerAnalysis:
    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self._loaders = facts.loader_at
        self.distributed: list[SamplerCall] = [
            self._build(call) for call in facts.calls if facts.qualname(call.func) in DISTRIBUTED_SAMPLERS
        ]

    def _build(self, call: ast.Call) -> SamplerCall:
        scope = self.facts.scopes.scope_of(call)
        shuffle = ABSENT
        if len(call.args) > SHUFFLE_INDEX:
            shuffle = self.facts.resolve(call.args[SHUFFLE_INDEX], scope)
        for keyword in call.keywords:
            if keyword.arg == "shuffle":
                shuffle = self.facts.resolve(keyword.value, scope)
            elif keyword.arg is None:
                shuffle = Value("dynamic")  # **kwargs may hold shuffle=False
        if any(isinstance(a, ast.Starred) for a in call.args):
            shuffle = Value("dynamic")
        sampler = SamplerCall(call, scope, shuffle)
        self._follow(sampler, call, scope, depth=0)
        return sampler

    def _follow(self, sampler: SamplerCall, expr: ast.AST, scope: Scope, depth: int, slot: str = "sampler") -> None:
        """Record where the value of ``expr`` lands: in a loader's ``slot`` argument, or elsewhere."""
        index = LOADER_SAMPLER_INDEX if slot == "sampler" else LOADER_SAMPLER_INDEX + 1
        parents = self.facts.scopes.parents
        for use in self.facts.usage.uses_of(expr, scope):
            if use.iterates:
                remote = [loop.where for loop in use.loops if isinstance(loop, RemoteLoop) and not loop.framework]
                if use.how is How.ELSEWHERE and remote:  # returned to callers that pass over it every epoch
                    sampler.epochs_elsewhere += remote
                continue  # iterating a sampler by hand does not take it out of the file
            node = use.node
            parent = parents.get(node)
            call = parents.get(parent) if isinstance(parent, ast.keyword) else parent
            loader = self._loaders.get(call) if isinstance(call, ast.Call) else None
            if loader is not None:
                if isinstance(parent, ast.keyword) and parent.arg == slot:
                    sampler.feeds.append((loader, slot))
                    continue
                if (
                    not loader.keywords_only
                    and parent is call
                    and isinstance(call, ast.Call)  # (it is: a loader was found for it)
                    and index < len(call.args)
                    and call.args[index] is node
                ):
                    sampler.feeds.append((loader, slot))
                    continue
            elif (
                isinstance(call, ast.Call)
                and (dotted_name(call.func) or "").endswith("BatchSampler")
                and depth < MAX_DEPTH
            ):
                self._follow(sampler, call, self.facts.scopes.scope_of(call), depth + 1, "batch_sampler")
                continue
            sampler.escapes = True

    @cached_property
    def _star_import(self) -> bool:
        return has_star_import(self.facts.import_statements)

    # -- set_epoch --------------------------------------------------------------
    def set_epoch_may_be_called(self, sampler: SamplerCall) -> bool:
        """Some ``X.set_epoch(...)`` in the file may reach ``sampler``: X is bound to it, is a
        parameter (anyone may pass it in), or is a loader's ``.sampler`` that is not provably
        another loader's."""
        for call in self.facts.calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "set_epoch":
                if self._may_be(func.value, self.facts.scopes.scope_of(call), sampler, 0):
                    return True
        return False

    def _may_be(self, expr: ast.expr, scope: Scope, sampler: SamplerCall, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return True
        if isinstance(expr, ast.Call):
            return expr is sampler.node
        if isinstance(expr, ast.Constant):
            return False
        if isinstance(expr, ast.IfExp):
            return any(self._may_be(e, scope, sampler, depth + 1) for e in (expr.body, expr.orelse))
        if isinstance(expr, ast.BoolOp):
            return any(self._may_be(e, scope, sampler, depth + 1) for e in expr.values)
        if isinstance(expr, ast.Attribute) and expr.attr in ("sampler", "batch_sampler"):
            return self._loader_may_hold(expr.value, scope, sampler)
        if isinstance(expr, ast.Name):
            found = self.facts.scopes.lookup(expr.id, scope)
            if found is None:
                return self._star_import  # unbound here: only a star import could make it ours
            owner, bindings = found
            for binding in bindings:
                if binding.kind in ("def", "class", "import"):
                    continue
                if binding.kind == "param":
                    if self._parameter_may_be(owner, expr.id, sampler, depth):
                        return True
                    continue
                if binding.kind != "assign" or binding.value is None:
                    return True  # a loop target, a with-target: may be this sampler
                if self._may_be(binding.value, owner, sampler, depth + 1):
                    return True
            return False
        if isinstance(expr, ast.Attribute):
            # self.train_sampler: the sampler stored on an object escapes, and is never reported;
            # stream.dataset.set_epoch is another object.
            return "sampler" in expr.attr
        return True  # samplers[i], get_sampler(): not provably another object

    def _parameter_may_be(self, function_scope: Scope, param: str, sampler: SamplerCall, depth: int) -> bool:
        """Some call of the function passes ``sampler`` as ``param``; or it is called from outside."""
        func = function_scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        is_method = isinstance(self.facts.scopes.parents.get(func), ast.ClassDef)
        sites = [
            call
            for call in self.facts.calls
            if (isinstance(call.func, ast.Name) and call.func.id == func.name)
            or (is_method and isinstance(call.func, ast.Attribute) and call.func.attr == func.name)
        ]
        if not sites:
            # Only callers elsewhere: the sampler (or its loader) would have to leave the file to
            # reach them, and a sampler that does is never reported.
            return False
        for call in sites:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return True
            offset = 1 if is_method and isinstance(call.func, ast.Attribute) else 0
            args = {positional[i + offset]: a for i, a in enumerate(call.args) if i + offset < len(positional)}
            args.update({k.arg: k.value for k in call.keywords if k.arg})
            passed = args.get(param)
            if passed is not None and self._may_be(passed, self.facts.scopes.scope_of(call), sampler, depth + 1):
                return True
        return False

    def _loader_may_hold(self, expr: ast.expr, scope: Scope, sampler: SamplerCall) -> bool:
        """``expr.sampler`` may be ``sampler``: unless ``expr`` is a name bound once to a loader
        call that this sampler does not feed."""
        if isinstance(expr, ast.Attribute) and expr.attr == "batch_sampler":
            expr = expr.value  # loader.batch_sampler.sampler
        if isinstance(expr, ast.Name):
            found = self.facts.scopes.single_value(expr.id, scope)
            if found is not None and found[1].value is not None:
                value = found[1].value
                if value in self._loaders:
                    return any(loader.node is value for loader, _ in sampler.feeds)
        return True
