"""Which code runs inside a loader's worker processes.

For each multi-worker loader of the file this collects the functions its
workers execute: the dataset class's ``__getitem__``/``__getitems__``/
``__iter__``/``__len__`` (looked up through same-file base classes) and the
functions passed as ``collate_fn``/``worker_init_fn``, then, transitively,
the methods they call through ``self.m()`` and the same-file functions they
call by name. The dataset class is the same-file class the ``dataset``
argument constructs, directly or through a name bound once.

Rules ask two questions of it: "does this node run in a worker, and for
which loader" (DL105, DL108) and "which loaders use this dataset class, and
what do its worker methods reach" (DL302, DL304).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, Sequence, Union

if TYPE_CHECKING:
    from dllint.facts import ClassInfo, FileFacts
    from dllint.facts.loaders import LoaderCall
    from dllint.facts.scopes import Scope

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

DATASET_ENTRY_METHODS = ("__getitem__", "__getitems__", "__iter__", "__len__")
CALLABLE_ARGUMENTS = ("collate_fn", "worker_init_fn")
PARTIAL_QUALNAMES = frozenset({"functools.partial"})
MAX_DEPTH = 8
# What code consults to split a stream among the workers (DL302).
SHARDING_NAMES = frozenset({"get_worker_info", "worker_info", "split_by_worker"})
# State a training framework advances in the main process between epochs (Lightning's
# ``current_epoch``/``global_step``, anything read through ``.trainer``): worker-side code that
# reads it sees the new value only in workers started afresh each epoch (DL201).
FRAMEWORK_EPOCH_STATE = frozenset({"current_epoch", "global_step", "trainer"})
# Methods of built-in strings, containers and files (``line.strip()``, ``d.items()``): called on
# an object of unknown class, such a name is taken to be the built-in's, not looked for in
# other project files.
BUILTIN_METHOD_NAMES = frozenset(
    name
    for kind in (str, bytes, list, dict, set, tuple, int, float)
    for name in dir(kind)
    if not name.startswith("_")
) | frozenset({"read", "readline", "readlines", "write", "close", "seek", "tell", "flush"})
LOCAL_DEPTH = 4  # same-file methods of other classes followed from one worker function


def consults_worker_info(function: ast.AST) -> bool:
    """``function`` names ``get_worker_info``/``worker_info``/``split_by_worker`` somewhere."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in SHARDING_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in SHARDING_NAMES:
            return True
    return False


def reads_epoch_state(function: ast.AST) -> bool:
    """``function`` reads ``.current_epoch``, ``.global_step`` or ``.trainer``."""
    return any(
        isinstance(node, ast.Attribute) and node.attr in FRAMEWORK_EPOCH_STATE and isinstance(node.ctx, ast.Load)
        for node in ast.walk(function)
    )


# The two questions asked across files: (test on a function's own code, its summary's flag).
WORKER_INFO = (consults_worker_info, "worker_info")
EPOCH_STATE = (reads_epoch_state, "epoch_state")


def is_abstract(function: ast.AST) -> bool:
    """A placeholder that a subclass overrides: its body is only a docstring, ``pass``,
    ``...`` and ``raise NotImplementedError``."""
    body = getattr(function, "body", None)
    if not isinstance(body, list):
        return False
    raises = False
    for stmt in body:
        if isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                raises = True
                continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and raises is False and _only_message(stmt):
            continue  # msg = f"Missing ..." before the raise
        return False
    return raises or all(isinstance(s, (ast.Pass, ast.Expr)) for s in body) and bool(body)


def _only_message(stmt: ast.AST) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, (ast.Constant, ast.JoinedStr))


class WorkerFunction(NamedTuple):
    """A function that worker processes run, and how they come to run it."""

    node: FunctionNode
    entry: str  # what workers call first: "__getitem__ of 'Ds'", "collate_fn 'pad'", ...
    loaders: list[LoaderCall]  # multi-worker loaders that run it (appended to as they are found)

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


class WorkerCode:
    """The worker-side code of every multi-worker loader in one file (computed once, on demand)."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.functions: dict[FunctionNode, WorkerFunction] = {}
        self._loaders_by_class: dict[ast.ClassDef, list[LoaderCall]] = {}
        for loader in facts.loader_calls:
            cls = self.dataset_class(loader)
            if cls is not None:
                self._loaders_by_class.setdefault(cls.node, []).append(loader)
            if not loader.may_start_workers:
                continue
            if cls is not None:
                for name in DATASET_ENTRY_METHODS:
                    method = self.find_method(cls, name)
                    if method is not None:
                        self._add(method, f"{name} of '{cls.name}'", loader, cls)
            for argument in CALLABLE_ARGUMENTS:
                arg = loader.argument(argument)
                if arg is None:
                    continue
                function, cls_of_function = self._callable_definition(arg.value, arg.scope)
                if function is not None:
                    self._add(function, f"{argument} '{getattr(function, 'name', '<lambda>')}'", loader, cls_of_function)

    # -- public ---------------------------------------------------------------------
    def dataset_class(self, loader: LoaderCall) -> ClassInfo | None:
        """The same-file class of the loader's dataset (``Ds(...)`` or a name bound once to it)."""
        arg = loader.argument("dataset")
        if arg is None:
            return None
        return self.facts.class_of_instance(arg.value, arg.scope)

    def loaders_using(self, cls: ClassInfo) -> list[LoaderCall]:
        """Every loader of the file (any ``num_workers``) whose dataset is an instance of ``cls``."""
        return self._loaders_by_class.get(cls.node, [])

    def worker_function_of(self, node: ast.AST) -> WorkerFunction | None:
        """The worker function whose body contains ``node`` (nested defs and lambdas count as
        part of the function that defines them: they run when it calls them)."""
        parents = self.facts.scopes.parents
        current = parents.get(node)
        while current is not None and not isinstance(current, (ast.ClassDef, ast.Module)):
            found = self.functions.get(current) if isinstance(current, FUNCTION_NODES) else None
            if found is not None:
                return found
            current = parents.get(current)
        return None

    def find_method(self, cls: ClassInfo, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """``cls.name`` looked up through the class and its same-file bases (depth first, as
        the MRO does for single inheritance)."""
        seen: set[str] = set()
        stack = [cls]
        while stack:
            current = stack.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            method = current.method(name)
            if method is not None:
                return method
            stack[0:0] = [self.facts.classes[b] for b in current.base_names if b in self.facts.classes]
        return None

    def reached_from(self, roots: Sequence[FunctionNode], cls: ClassInfo | None) -> list[FunctionNode]:
        """``roots`` and every function they call, transitively: ``self.m()`` resolved on
        ``cls`` and plain calls of functions defined once in the same file."""
        reached: list[FunctionNode] = []
        seen: set[int] = set()
        stack = [(root, 0) for root in roots]
        while stack:
            function, depth = stack.pop()
            if id(function) in seen:
                continue
            seen.add(id(function))
            reached.append(function)
            if depth >= MAX_DEPTH:
                continue
            for callee in self._callees(function, cls):
                stack.append((callee, depth + 1))
        return reached

    def reaches(
        self,
        roots: list[FunctionNode],
        cls: ClassInfo | None,
        question: tuple[Callable[[ast.AST], bool], str],
        depth: int = 0,
        seen: set[int] | None = None,
    ) -> bool:
        """``roots``, or code they call, answers ``question`` (:data:`WORKER_INFO`,
        :data:`EPOCH_STATE`): the functions :meth:`reached_from` finds; then, for each call in
        them, a function of another project module (through the index, transitively), and
        ``obj.m()`` on another object: the ``m`` of this file's other classes and, when the
        name is not a built-in type's, the ``m`` methods of the project's other files (a
        placeholder that only raises ``NotImplementedError`` is skipped: a subclass runs)."""
        test, flag = question
        seen = set() if seen is None else seen  # functions already asked about (each once)
        reached = [function for function in self.reached_from(roots, cls) if id(function) not in seen]
        seen.update(map(id, reached))
        if any(test(function) for function in reached):
            return True
        project = self.facts.project
        scopes = self.facts.scopes
        for function in reached:
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                if project is not None and project.reaches(self.facts, node.func, scopes.scope_of(node), flag):
                    return True
                name = self.method_on_other(node.func, cls)
                if name is None:
                    continue
                if depth < LOCAL_DEPTH:
                    for other in self.facts.classes.values():
                        method = other.method(name)
                        if other is not cls and method is not None and id(method) not in seen and not is_abstract(method):
                            if self.reaches([method], other, question, depth + 1, seen):
                                return True
                if project is not None and name not in BUILTIN_METHOD_NAMES and project.method_reaches(name, flag):
                    return True
        return False

    def method_on_other(self, func: ast.expr, cls: ClassInfo | None) -> str | None:
        """``m`` of a call ``obj.m()`` whose code this file does not pin down: ``obj`` is not
        ``self``, or ``self.m`` is found on no same-file class of the MRO (a subclass or mixin
        elsewhere defines it)."""
        if not isinstance(func, ast.Attribute):
            return None
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            return func.attr if cls is not None and self.find_method(cls, func.attr) is None else None
        if self.facts.qualname(func.value) is not None:
            return None  # mod.f(), pkg.mod.f(): an imported module's function, not a method
        return func.attr

    # -- building ---------------------------------------------------------------------
    def _add(self, root: FunctionNode, entry: str, loader: LoaderCall, cls: ClassInfo | None) -> None:
        for function in self.reached_from([root], cls):
            info = self.functions.get(function)
            if info is None:
                info = self.functions[function] = WorkerFunction(function, entry, [])
            if loader not in info.loaders:
                info.loaders.append(loader)

    def _callees(self, function: FunctionNode, cls: ClassInfo | None) -> Iterator[FunctionNode]:
        scope = self.facts.scopes.scopes.get(function)
        body: Sequence[ast.AST] = [function.body] if not isinstance(function.body, list) else function.body
        for node in (n for stmt in body for n in ast.walk(stmt)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                cls is not None
                and isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "self"
            ):
                method = self.find_method(cls, func.attr)
                if method is not None:
                    yield method
            elif isinstance(func, ast.Name) and scope is not None:
                definition = self._single_def(func.id, self.facts.scopes.scope_of(node))
                if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield definition

    def _single_def(self, name: str, scope: Scope) -> ast.AST | None:
        found = self.facts.scopes.lookup(name, scope)
        if found is None or len(found[1]) != 1 or found[1][0].kind not in ("def", "class"):
            return None
        return found[1][0].node

    def _callable_definition(self, expr: ast.expr, scope: Scope) -> tuple[FunctionNode | None, ClassInfo | None]:
        """The function a ``collate_fn``/``worker_init_fn`` value calls: a same-file ``def``
        (through names bound once and ``functools.partial``), a lambda, ``self.method`` of the
        enclosing class, or ``__call__`` of a same-file class instance."""
        for _ in range(MAX_DEPTH):
            if isinstance(expr, ast.Lambda):
                return expr, None
            if isinstance(expr, ast.Call):
                if self.facts.qualname(expr.func) in PARTIAL_QUALNAMES and expr.args:
                    expr = expr.args[0]
                    continue
                cls = self.facts.class_of_instance(expr, scope)
                if cls is not None:
                    return self.find_method(cls, "__call__"), cls
                return None, None
            if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
                cls = self._enclosing_class(scope)
                return (self.find_method(cls, expr.attr), cls) if cls is not None else (None, None)
            if isinstance(expr, ast.Name):
                found = self.facts.scopes.lookup(expr.id, scope)
                if found is None or len(found[1]) != 1:
                    return None, None
                owner, binding = found[0], found[1][0]
                if binding.kind == "def":
                    return binding.node, None  # type: ignore[return-value]
                if binding.kind == "assign" and binding.value is not None:
                    scope, expr = owner, binding.value
                    continue
            return None, None
        return None, None

    def _enclosing_class(self, scope: Scope) -> ClassInfo | None:
        current: Scope | None = scope
        while current is not None:
            if isinstance(current.node, ast.ClassDef):
                info = self.facts.classes.get(current.node.name)
                return info if info is not None and info.node is current.node else None
            current = current.parent
        return None
