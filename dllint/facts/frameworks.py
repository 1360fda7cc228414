"""Applying the framework table (:mod:`dllint.knowledge.frameworks`) to one file: which
call of a framework takes a loader and what it does with it, which methods are framework
hooks (defined, inherited from project bases in other files, bound in the class or assigned
from outside), and which functions a higher-order utility calls.

- Lightning (``LightningDataModule``/``LightningModule``): a hook may be inherited from a
  base class in another project file, or bound in the class
  (``self.train_dataloader = self._train_dataloader``); ``trainer.fit`` of a
  ``Trainer(max_epochs=1)`` iterates once.
- Training engines (PyTorch-Ignite's ``Engine.run(loader, max_epochs=N)``, MONAI's
  ``SupervisedTrainer(max_epochs=N, train_data_loader=loader)``): every epoch of a count known
  to be more than one; a handler of an Ignite event fired once a run
  (``@trainer.on(Events.COMPLETED)``) runs once.
- Hooks assigned onto an instance from outside its class: ``dm.train_dataloader = f``
  where ``dm`` is built by ``cls(...)`` in a classmethod of a Lightning class (Lightning's
  own ``LightningDataModule.from_datasets``), by a call of a class deriving from one, or is
  ``self`` in a method of one: ``f`` is that hook.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.imports import dotted_name
from dllint.knowledge.frameworks import (
    CALLS,
    ENGINE_RUNS,
    ONCE_EVENTS,
    FIT_MODULES,
    HOOK_CALLERS,
    HIGHER_ORDER,
    HOOKS,
    LIGHTNING_BASES,
    SAME_FUNCTIONS,
    Hook,
    Passing,
    Result,
)

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope


def framework_call(facts: FileFacts, call: ast.Call, keyword: str | None, index: int | None, scope: Scope) -> Passing | None:
    """What a framework call does with the argument at ``keyword``/``index``."""
    func = call.func
    if facts.qualname(func) in SAME_FUNCTIONS:
        return Passing.SAME
    engine = _engine_run(facts, call, keyword, index, scope)
    if engine is not None:
        return engine
    if not isinstance(func, ast.Attribute):
        return None
    constructor = constructor_of(facts, func.value, scope)
    receiver = (dotted_name(func.value) or "").lower()
    if constructor is not None:
        receiver += " " + (dotted_name(constructor.func) or "").lower()
    for rule in CALLS:
        if rule.method != func.attr or rule.receiver not in receiver:
            continue
        if not rule.positions and not rule.keywords:
            return rule.effect
        if keyword is not None and keyword in rule.keywords or index is not None and index in rule.positions:
            if rule.effect is Passing.PER_EPOCH and constructor is not None and _one_epoch(constructor):
                return Passing.ONCE  # Trainer(max_epochs=1).fit(model, loader)
            return rule.effect
    return None


def _engine_run(facts: FileFacts, call: ast.Call, keyword: str | None, index: int | None, scope: Scope) -> Passing | None:
    """A training engine of the table (``ENGINE_RUNS``) handed the loader: every epoch where its
    epoch count is known to be more than one, once where it is one; None (not decided) where
    the count cannot be read, or this is no such call."""
    from dllint.facts.values import resolve

    func = call.func
    if isinstance(func, ast.Attribute):  # trainer.run(train_loader, max_epochs=5)
        constructor = constructor_of(facts, func.value, scope)
        built = facts.qualname(constructor.func) if constructor is not None else None
        rules = [rule for rule in ENGINE_RUNS if rule.method == func.attr and built in rule.constructors]
    else:  # SupervisedTrainer(max_epochs=5, train_data_loader=train_loader, ...)
        name = facts.qualname(func)
        rules = [rule for rule in ENGINE_RUNS if rule.method is None and name in rule.constructors]
    for rule in rules:
        if not (keyword is not None and keyword in rule.keywords or index is not None and index in rule.positions):
            continue
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            return None  # a splat may hold the count
        position, name = rule.epochs
        given = next((k.value for k in call.keywords if k.arg == name), call.args[position] if len(call.args) > position else None)
        if given is None:
            epochs = rule.default_epochs
        else:
            value = resolve(given, scope, facts)
            epochs = value.value if value.is_int() else None
        if epochs is None:
            return None
        return Passing.PER_EPOCH if epochs > 1 else Passing.ONCE
    return None


def once_event_handler(function: ast.AST) -> bool:
    """A function decorated as the handler of an event fired once a run: ``@trainer.on(Events.COMPLETED)``."""
    for decorator in getattr(function, "decorator_list", ()):
        if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and decorator.func.attr == "on" and decorator.args:
            event = decorator.args[0]
            if isinstance(event, ast.Attribute) and event.attr in ONCE_EVENTS and (dotted_name(event.value) or "").endswith("Events"):
                return True
    return False


def constructor_of(facts: FileFacts, expr: ast.expr, scope: Scope) -> ast.Call | None:
    """The call that built ``expr``'s value: ``Trainer(...).fit``, or a name bound once to a call."""
    if isinstance(expr, ast.Call):
        return expr
    if isinstance(expr, ast.Name):
        found = facts.scopes.single_value(expr.id, scope)
        if found is not None and isinstance(found[1].value, ast.Call):
            return found[1].value
    return None


def _one_epoch(constructor: ast.Call) -> bool:
    """``max_epochs=1`` written at the constructor (a ``**`` splat may override it)."""
    if any(k.arg is None for k in constructor.keywords):
        return False
    value = next((k.value for k in constructor.keywords if k.arg == "max_epochs"), None)
    return isinstance(value, ast.Constant) and type(value.value) is int and value.value <= 1


def hook_of(facts: FileFacts, function: ast.AST) -> Hook | None:
    """The framework hook ``function`` implements: a method named like one, or bound to one in
    its class (``self.train_dataloader = self._train_dataloader``), in a class whose bases
    (through the project's classes, in any file) include the framework's. A Lightning
    module whose every instance in its file is fit by a ``Trainer(max_epochs=1)`` iterates
    its loaders once."""
    name = getattr(function, "name", "")
    owner = facts.scopes.parents.get(function)
    if not isinstance(owner, ast.ClassDef):
        return None
    hook = HOOKS.get(name)
    if hook is None:
        bound = [h for h, method in _bound_hooks(facts, owner).items() if method == name]
        hook = HOOKS[bound[0]] if bound else None
    if hook is None or not derives_from(facts, owner, hook.bases):
        return None
    return _once_if_fit_for_one_epoch(facts, owner, hook)


def inherited_hooks(facts: FileFacts, cls: ast.ClassDef, attribute: str) -> list[Hook]:
    """Hooks ``cls`` inherits from its bases (in this file or another project file) that
    return ``self.<attribute>``: ``ModelPT.train_dataloader`` returning ``self._train_dl``
    for a subclass that stores its loader there. A hook the class (or a nearer base)
    defines itself hides the base's."""
    return _hooks_returning(facts, cls, attribute, own=False)


def hooks_of_stored_result(facts: FileFacts, cls: ast.ClassDef, method: str) -> list[Hook] | None:
    """Where a base class of ``cls`` stores what ``self.<method>(...)`` returns
    (``self._train_dl = self._setup_dataloader_from_config(cfg)`` in a base, ``cls``
    overriding the factory), the hooks (of ``cls`` or its bases) that return that attribute;
    None when no base stores it."""
    if method.startswith("__") and not method.endswith("__"):
        return None  # self.__m in a base is that base's own (name mangling): never this class's
    lineage = _lineage(facts, cls)
    attributes = sorted({a for *_, stores in lineage[1:] for a in stores.get(method, ())})
    if not attributes:
        return None
    return [hook for attribute in attributes for hook in _hooks_returning(facts, cls, attribute, own=True)]


def _hooks_returning(facts: FileFacts, cls: ast.ClassDef, attribute: str, own: bool) -> list[Hook]:
    lineage = _lineage(facts, cls)
    defined: set[str] = set()
    found: list[Hook] = []
    for position, (_, hooks, _) in enumerate(lineage):
        for name, attributes in hooks.items():
            if name not in defined and attribute in attributes and (own or position > 0):
                found.append(HOOKS[name])
            defined.add(name)
    return [_once_if_fit_for_one_epoch(facts, cls, hook) for hook in found if _derives(lineage, hook.bases)]


def derives_from(facts: FileFacts, cls: ast.ClassDef, bases: tuple[str, ...]) -> bool:
    """``cls``'s bases, followed through the project's classes, include one of ``bases``
    (last components: ``LightningModule``; any ``*DataModule`` for Lightning's)."""
    return _derives(_lineage(facts, cls), bases)


Lineage = list[tuple[list[str], dict[str, list[str]], dict[str, list[str]]]]


def _derives(lineage: Lineage, bases: tuple[str, ...]) -> bool:
    for base_names, _, _ in lineage:
        for name in base_names:
            last = name.rsplit(".", 1)[-1]
            if last in bases or last.endswith("DataModule") and "LightningDataModule" in bases:
                return True
    return False


MAX_LINEAGE = 8  # levels of bases followed


def _lineage(facts: FileFacts, cls: ast.ClassDef) -> Lineage:
    """(base names, hooks, stores) of ``cls`` and then of its ancestors, depth first and left to right
    (Python's MRO for single inheritance): same-file classes from the tree, classes of other
    project files from their summaries (read through ``facts.project``, which records them as
    dependencies)."""
    cache: dict[ast.ClassDef, Lineage] = facts.memo("lineages")
    found = cache.get(cls)
    if found is None:
        found = cache[cls] = []
        _visit(facts, cls, found, {id(cls)}, 0)
    return found


def _visit(facts: FileFacts, cls: ast.ClassDef, out: Lineage, seen: set[int], depth: int) -> None:
    names = [facts.qualname(base) or dotted_name(base) or "" for base in cls.bases]
    out.append((names, class_hooks(facts, cls), class_stores(cls)))
    if depth >= MAX_LINEAGE:
        return
    project = facts.project
    for base, name in zip(cls.bases, names):
        local = facts.classes.get(name)
        if local is not None:
            if id(local.node) not in seen:
                seen.add(id(local.node))
                _visit(facts, local.node, out, seen, depth + 1)
        elif project is not None and not project.summarizing:
            out.extend((summary.bases, summary.hooks, summary.stores) for summary in project.class_ancestors(facts, base))


def class_hooks(facts: FileFacts, cls: ast.ClassDef) -> dict[str, list[str]]:
    """Hook name -> the ``self.X`` attributes it returns, for every hook ``cls`` defines
    (a method named like one, or one bound in the class: ``self.train_dataloader = self._m``)."""
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    hooks = {name: _returned_attributes(method) for name, method in methods.items() if name in HOOKS}
    for hook, name in _bound_hooks(facts, cls).items():
        if hook not in hooks and name in methods:
            hooks[hook] = _returned_attributes(methods[name])
    return hooks


def class_stores(cls: ast.ClassDef) -> dict[str, list[str]]:
    """Method name -> the attributes its result is stored in, for every
    ``self.X = self.<method>(...)`` in the methods of ``cls``."""
    stores: dict[str, set[str]] = {}
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in _statements(method.body):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
                    attribute = _self_attribute(node.targets[0])
                    called = _self_attribute(node.value.func)
                    if attribute is not None and called is not None:
                        stores.setdefault(called, set()).add(attribute)
    return {name: sorted(attributes) for name, attributes in stores.items()}


def _returned_attributes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """``X`` of every ``return self.X`` in ``function`` (not in functions nested in it)."""
    return sorted({a for node in _statements(function.body) if isinstance(node, ast.Return) and (a := _self_attribute(node.value))})


def _bound_hooks(facts: FileFacts, cls: ast.ClassDef) -> dict[str, str]:
    """Hook name -> method name, for ``self.<hook> = self.<method>`` (or
    ``functools.partial(self.<method>, ...)``) in a method of ``cls``."""
    cache: dict[ast.ClassDef, dict[str, str]] = facts.memo("bound_hooks")
    known = cache.get(cls)
    if known is not None:
        return known
    found: dict[str, str] = {}
    cache[cls] = found
    if "dataloader" not in facts.source:  # every hook name says it
        return found
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in _statements(method.body):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            hook = _self_attribute(node.targets[0])
            if hook is None or hook not in HOOKS:
                continue
            value = node.value
            if isinstance(value, ast.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "partial" and value.args:
                value = value.args[0]
            bound = _self_attribute(value)
            if bound is not None:
                found.setdefault(hook, bound)
    return found


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body`` and the blocks nested in it (not in nested functions or
    classes): assignments and returns without walking every expression."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))
        for handler in getattr(node, "handlers", ()):
            stack.extend(reversed(handler.body))
        for case in getattr(node, "cases", ()):
            stack.extend(reversed(case.body))


def _self_attribute(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _once_if_fit_for_one_epoch(facts: FileFacts, cls: ast.ClassDef, hook: Hook) -> Hook:
    """A per-epoch Lightning hook of a module whose every instance built in this file is a name
    handed to ``trainer.fit`` of a ``Trainer(max_epochs=1)`` only, and that no other project
    file names: one pass (``model = Llama3(); L.Trainer(max_epochs=1).fit(model)``)."""
    if not hook.per_epoch or hook.bases != LIGHTNING_BASES:
        return hook
    return Hook(hook.name, False, hook.bases) if _fit_for_one_epoch(facts, cls) else hook


def _fit_for_one_epoch(facts: FileFacts, cls: ast.ClassDef) -> bool:
    cache: dict[ast.ClassDef, bool] = facts.memo("one_epoch_modules")
    if cls in cache:
        return cache[cls]
    cache[cls] = False
    constructions = [call for call in facts.calls if builds(facts, call, cls)]
    if not constructions:
        return False
    if not all(_bound_and_fit_once(facts, call) for call in constructions):
        return False
    project = facts.project
    if project is not None and project.named_elsewhere(cls.name):
        return False  # another project file may import the module and fit it for longer
    cache[cls] = True
    return True


def _bound_and_fit_once(facts: FileFacts, call: ast.Call) -> bool:
    """``model = Module(...)`` whose every read in its scope is ``trainer.fit(model)`` of a
    ``Trainer(max_epochs=1)`` (or an attribute of the module), with at least one such fit."""
    binding = facts.scopes.parents.get(call)
    if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1 and isinstance(binding.targets[0], ast.Name)):
        return False
    name = binding.targets[0].id
    scope = facts.scopes.scope_of(call)
    fits = 0
    for node in ast.walk(scope.node):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        if facts.scopes.scope_of(node) is not scope:
            return False  # read in a nested function: used in ways not followed here
        parent = facts.scopes.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            continue  # model.parameters(), model.device: the module's own attributes
        if isinstance(parent, ast.keyword):
            parent = facts.scopes.parents.get(parent)
        if not _one_epoch_fit(facts, parent, node, scope):
            return False
        fits += 1
    return fits > 0


def _one_epoch_fit(facts: FileFacts, call: ast.AST | None, argument: ast.expr, scope: Scope) -> bool:
    """``call`` is ``trainer.fit(argument, ...)`` on a ``Trainer(max_epochs=1)``."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr != "fit":
        return False
    # fit(model, train_dataloaders=None, val_dataloaders=None, datamodule=None): a data module
    # goes in as ``datamodule=`` or in place of the train loaders
    if not (argument in call.args[:2] or any(k.arg in FIT_MODULES and k.value is argument for k in call.keywords)):
        return False
    constructor = constructor_of(facts, call.func.value, scope)
    if constructor is None:
        return False
    return is_trainer(call.func.value, constructor) and _one_epoch(constructor)


def builds(facts: FileFacts, call: ast.Call, cls: ast.ClassDef) -> bool:
    """``call`` constructs the class ``cls`` of this file."""
    named = facts.classes.get(facts.qualname(call.func) or dotted_name(call.func) or "")
    return named is not None and named.node is cls


def is_trainer(receiver: ast.expr, constructor: ast.Call | None) -> bool:
    """A framework trainer by its name or its constructor's (``trainer.fit``, ``pl.Trainer(...).fit``)."""
    names = (dotted_name(receiver) or "") + " " + (dotted_name(constructor.func) or "" if constructor is not None else "")
    return "trainer" in names.lower()


def hook_callers(facts: FileFacts, function: ast.AST) -> list[ast.Call]:
    """The calls of this file that make a trainer call ``function``, a Lightning hook of its class:
    ``trainer.fit(model, dm)`` with ``dm`` (or ``model``) an instance of that class, built here
    (``Digits()``, or a name bound once to one), for ``train_dataloader``."""
    cls = facts.scopes.parents.get(function)
    hook = hook_of(facts, function) if isinstance(cls, ast.ClassDef) else None
    methods = HOOK_CALLERS.get(hook.name, ()) if hook is not None else ()
    if not methods or not isinstance(cls, ast.ClassDef):  # (cls: a class wherever there are methods)
        return []
    found = []
    for call in facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in methods):
            continue
        scope = facts.scopes.scope_of(call)
        if is_trainer(func.value, constructor_of(facts, func.value, scope)) and any(
            made is not None and builds(facts, made, cls)
            for made in (constructor_of(facts, a, scope) for a in (*call.args, *(k.value for k in call.keywords)))
        ):
            found.append(call)
    return found


# -- functions handed on: callbacks of higher-order utilities, hooks assigned from outside --
def callback_result(facts: FileFacts, function: ast.expr, scope: Scope) -> tuple[ast.Call, Result] | None:
    """(the call, its ``result`` kind) when ``function`` is passed, as the function it calls,
    to a known higher-order utility (:data:`HIGHER_ORDER`)."""
    parent = facts.scopes.parents.get(function)
    keyword = None
    if isinstance(parent, ast.keyword):
        keyword, parent = parent.arg, facts.scopes.parents.get(parent)
    if not isinstance(parent, ast.Call) or function is parent.func:
        return None
    func = parent.func
    for utility in HIGHER_ORDER:
        if keyword is not None:
            if keyword != utility.keyword:
                continue
        else:
            position = parent.args.index(function)
            if position != utility.position or any(isinstance(a, ast.Starred) for a in parent.args[:position]):
                continue
        if not utility.roots:
            if isinstance(func, ast.Name) and func.id == utility.name and facts.scopes.lookup(func.id, scope) is None:
                return parent, utility.result
            continue
        qualname = facts.qualname(func) or ""
        if qualname.rsplit(".", 1)[-1] == utility.name and qualname.split(".", 1)[0] in utility.roots:
            return parent, utility.result
    return None


def assigned_hook(facts: FileFacts, target: ast.expr, scope: Scope) -> Hook | None:
    """The hook a function becomes by ``obj.<hook> = function`` (``target``, in ``scope``),
    when ``obj`` is an instance of a class of the hook's framework: ``self`` in a method of
    one, or a name bound once to ``cls(...)`` in a classmethod of one, or to a call of one
    (a class of the project deriving from the framework's, or named like them)."""
    if not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name):
        return None
    hook = HOOKS.get(target.attr)
    if hook is None:
        return None
    name = target.value.id
    cls = _method_of_first_parameter(facts, name, scope, None)  # self
    if cls is not None:
        return _framework_instance_hook(facts, cls, hook)
    found = facts.scopes.single_value(name, scope)
    built = found[1].value if found is not None else None
    if not isinstance(built, ast.Call):
        return None
    constructor = built.func
    if isinstance(constructor, ast.Name):
        cls = _method_of_first_parameter(facts, constructor.id, found[0], "classmethod")  # type: ignore[index]
        if cls is not None:
            return _framework_instance_hook(facts, cls, hook)
    named = facts.qualname(constructor) or dotted_name(constructor) or ""
    local = facts.classes.get(named)
    if local is not None:
        return _framework_instance_hook(facts, local.node, hook)
    project = facts.project
    if project is not None and not project.summarizing and isinstance(constructor, (ast.Name, ast.Attribute)):
        ancestors = project.class_ancestors(facts, constructor)
        if ancestors:  # a class of the project: its bases decide, not its name
            return hook if any(_named_like(base, hook.bases) for summary in ancestors for base in summary.bases) else None
    return hook if _named_like(named, hook.bases) else None


def _framework_instance_hook(facts: FileFacts, cls: ast.ClassDef, hook: Hook) -> Hook | None:
    if not (cls.name in hook.bases or derives_from(facts, cls, hook.bases)):
        return None
    return _once_if_fit_for_one_epoch(facts, cls, hook)


def _named_like(name: str, bases: tuple[str, ...]) -> bool:
    """A class name (any dotted form) that is one of ``bases``, or a ``*DataModule`` for Lightning's."""
    last = name.rsplit(".", 1)[-1]
    return last in bases or last.endswith("DataModule") and "LightningDataModule" in bases


def _method_of_first_parameter(facts: FileFacts, name: str, scope: Scope, decorator: str | None) -> ast.ClassDef | None:
    """The class when ``name`` (seen from ``scope``) is the first parameter of one of its
    methods (``self``), decorated with ``decorator`` when given (``cls`` of a ``@classmethod``)."""
    found = facts.scopes.lookup(name, scope)
    if found is None or len(found[1]) != 1 or found[1][0].kind != "param":
        return None
    method = found[0].node
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    owner = facts.scopes.parents.get(method)
    positional = [*method.args.posonlyargs, *method.args.args]
    if not isinstance(owner, ast.ClassDef) or not positional or positional[0].arg != name:
        return None
    names = {(dotted_name(d) or "").rsplit(".", 1)[-1] for d in method.decorator_list}
    if decorator is None and names & {"classmethod", "staticmethod"} or decorator is not None and decorator not in names:
        return None
    return owner
