"""What a loader's passes are for: evidently training (a returned or stored loader no caller in
the project decides about: DL201), evaluation only (DL301), or run by a framework whose settings
configure it (``TrainingArguments``: DL201, DL206); and the names bound before a statement."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.model import How
from dllint.facts.imports import dotted_name
from dllint.facts.values import ABSENT, Value, follow
from dllint.knowledge.frameworks import RANDOM_SAMPLERS

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope
    from dllint.facts.flow.model import Use

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


# -- evaluation-only loaders (the rule catalog "Evaluation-only loaders") ------------------------------
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
# Words that name a validation or testing function or hook (``validate``, ``evaluate``,
# ``validation_step``, ``run_test``, ``predict``), as the first letters of a word of its name.
EVALUATION_WORDS = ("val", "eval", "test", "infer", "predict")
OPTIMIZER_WORDS = ("optim", "opt", "scaler", "solver")


class TrainingFacts:
    """Per-file answers about what a loader's passes are for, computed once per loader."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self._evaluation_only: dict[int, bool] = {}

    def evaluation_only(self, loader: LoaderCall) -> bool:
        """Every pass over ``loader`` is an evaluation pass: it runs under ``torch.no_grad()`` /
        ``torch.inference_mode()`` or in a function or hook for validation or testing (the
        iterating function, or one the loader was handed to on its way there), and its loop
        never calls ``.backward()`` or an optimizer's ``step()``. Its samples feed an average,
        so their order does not matter. A pass in another module is one where that module's
        summary says every pass it makes is (``Use.evaluation``)."""
        key = id(loader.node)
        if key not in self._evaluation_only:
            uses = self.facts.usage.loader_uses(loader)
            iterations = [u for u in uses if u.iterates]
            self._evaluation_only[key] = bool(iterations) and all(
                self.evaluation_pass(u) for u in iterations
            )
        return self._evaluation_only[key]

    def evaluation_pass(self, use: Use) -> bool:
        """One pass that evaluates: it runs without gradients or in a function or hook for
        validation or testing, and its loop never trains; in another module, as its summary says."""
        if use.how is How.ELSEWHERE:
            return use.evaluation
        if self._trains(use.node):
            return False
        return any(self._in_evaluation(node) for node in (use.node, *use.via))

    def _in_evaluation(self, node: ast.AST) -> bool:
        """``node`` runs without gradients, or in a function whose name says it evaluates."""
        facts = self.facts
        parents = facts.scopes.parents
        current = parents.get(node)
        while current is not None:
            if isinstance(current, (ast.With, ast.AsyncWith)) and any(self._no_grad(item.context_expr) for item in current.items):
                return True
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return evaluation_name(current.name) or any(self._no_grad(d) for d in current.decorator_list)
            current = parents.get(current)
        return False

    def _no_grad(self, expr: ast.expr) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        return self.facts.qualname(target) in NO_GRAD_CONTEXTS

    def _trains(self, node: ast.AST) -> bool:
        """The statement that iterates calls ``.backward()``, an optimizer's ``step()``, or a
        function whose name starts with ``train``."""
        statement = self.facts.statement_of(node)
        if statement is None:
            return False
        for inner in ast.walk(statement):
            if not isinstance(inner, ast.Call):
                continue
            func = inner.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "backward" or name.startswith("train"):
                return True
            if name == "step" and isinstance(func, ast.Attribute) and _names_an_optimizer(func.value):
                return True
        return False


def evaluation_name(name: str) -> bool:
    """A function or hook name for validation or testing: a word of it starts with one of
    ``EVALUATION_WORDS`` (``validate``, ``run_eval``, ``test_epoch``; not ``interval``)."""
    return any(word.startswith(EVALUATION_WORDS) for word in name.lower().split("_"))


def _names_an_optimizer(expr: ast.expr) -> bool:
    name = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
    return any(word in name.lower() for word in OPTIMIZER_WORDS)


# -- names bound before a statement (the set_epoch fixes of DL301 and DL305) -----------------------
def names_before(scope: Scope, statement: ast.AST) -> list[str]:
    """Names visible in ``scope`` that are bound before ``statement`` starts (parameters
    included; every name of an enclosing scope)."""
    names = []
    current: Scope | None = scope
    line = getattr(statement, "lineno", 0)
    while current is not None:
        for name, bindings in current.bindings.items():
            if any(b.kind == "param" or getattr(b.node, "lineno", 0) < line or current is not scope for b in bindings):
                names.append(name)
        current = current.parent
    return names


# -- framework loader settings (Hugging Face TrainingArguments) -------------------------------------
def framework_passes(facts: FileFacts, record: LoaderCall) -> int:
    """How many passes the framework makes over the loader a settings record configures: 2 (or
    more) when this file hands the settings to a receiver (``Trainer(args=...)``) whose run
    method (``.train()``) it calls, for more than one epoch and no positive step budget; 1 for
    one epoch; 0 when the file shows no such run, or the count cannot be told."""
    settings = record.settings
    if settings is None:
        return 0
    if not any(_runs(facts, receiver, settings.run_method) for receiver in _receivers(facts, record)):
        return 0
    steps = _keyword_value(facts, record, settings.steps)
    if steps is None or not steps.is_absent and not (steps.is_const and isinstance(steps.value, (int, float)) and steps.value <= 0):
        return 0  # max_steps > 0 (or unknown) decides instead of the epochs
    epochs = _keyword_value(facts, record, settings.epochs)
    if epochs is None:
        return 0
    count = settings.epochs_default if epochs.is_absent else epochs.value if epochs.is_const else None
    if not isinstance(count, (int, float)) or isinstance(count, bool):
        return 0
    return 2 if count > 1 else 1


def _keyword_value(facts: FileFacts, record: LoaderCall, name: str) -> Value | None:
    """A settings keyword's value; None where a splat may hold it."""
    if any(k.arg is None for k in record.node.keywords):
        return None
    keyword = next((k for k in record.node.keywords if k.arg == name), None)
    return facts.resolve(keyword.value, record.scope) if keyword is not None else ABSENT


def _receivers(facts: FileFacts, record: LoaderCall) -> list[ast.Call]:
    """The receiver calls (``Trainer(model, args=training_args)``) that get this record."""
    settings = record.settings
    assert settings is not None
    found = []
    for call in facts.calls:
        name = facts.qualname(call.func) or dotted_name(call.func) or ""
        local = facts.classes.get(name)
        if name not in settings.receivers and not (local and any(b in settings.receivers for b in local.base_names)):
            continue
        given = next((k.value for k in call.keywords if k.arg == settings.receiver_keyword), None)
        if given is None and len(call.args) > settings.receiver_position:
            given = call.args[settings.receiver_position]
        if given is not None and _is_record(facts, given, record):
            found.append(call)
    return found


def _is_record(facts: FileFacts, expr: ast.expr, record: LoaderCall) -> bool:
    if expr is record.node:
        return True
    return isinstance(expr, ast.Name) and facts.loops.refers_to(expr.id, facts.scopes.scope_of(expr), record.node)


def _runs(facts: FileFacts, receiver: ast.Call, method: str) -> bool:
    """``Trainer(...).train()``, or ``trainer = Trainer(...)`` then ``trainer.train()``."""
    parent = facts.scopes.parents.get(receiver)
    if isinstance(parent, ast.Attribute) and parent.attr == method:
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    for call in facts.calls:
        func = call.func
        if (
            isinstance(func, ast.Attribute) and func.attr == method and isinstance(func.value, ast.Name)
            and func.value.id == name and facts.loops.refers_to(name, facts.scopes.scope_of(call), receiver)
        ):
            return True
    return False
