"""What every rule asks about a file, answered once: :class:`FileFacts`.

``FileFacts`` is built once per parsed file. What nearly every rule asks (imports, classes,
loader calls, the main guard) is computed with it, in one pass over the nodes; the rest (scopes,
argparse defaults, lines, the iteration analysis) on first use, so files whose rules never ask
for it never pay for it.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dllint.facts.argparse_defaults import ArgparseDefaults
from dllint.facts.imports import build_import_table, dotted_name, has_star_import, qualified_name, unbound_reads
from dllint.facts.loaders import LOADER_QUALNAMES, LoaderCall, collect_loader_calls, collect_loader_settings, mentions_pin_memory
from dllint.facts.scopes import Binding, Scope, ScopeTable
from dllint.facts.values import Value, default_callee, defaults_of, resolve
from dllint.facts.walk import walk_statements, walk_with_parents
from dllint.knowledge.loaders import (
    LIBRARY_LOADER_NAMES,
    LOADER_SETTINGS_NAMES,
    FrameworkLoaderSettings,
    LibraryLoader,
    library_loader,
    loader_settings,
)
from dllint.source import line_starts, split_lines

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.facts.flow.queries import ProjectQueries
    from dllint.facts.loops import LoopAnalysis
    from dllint.facts.processes import ProcessStart
    from dllint.facts.samplers import SamplerAnalysis
    from dllint.facts.training import TrainingFacts
    from dllint.facts.usage import UsageAnalysis
    from dllint.facts.worker_code import WorkerCode

DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset",
        "torch.utils.data.dataset.Dataset",
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
    }
)
ITERABLE_DATASET_BASES = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
MAX_LOCAL_BASES = 8  # same-file base classes followed up to torch's DataLoader


@dataclass
class ClassInfo:
    """A class the file defines, with its bases resolved: a dataset, an iterable dataset, a loader."""

    node: ast.ClassDef
    base_names: list[str]  # qualified names of bases (or local class names)
    is_dataset: bool = False
    is_iterable_dataset: bool = False
    is_loader: bool = False

    @property
    def name(self) -> str:
        return self.node.name

    def method(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for stmt in self.node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return stmt
        return None


@dataclass
class FileFacts:
    """What the rules read of one parsed file, each part computed once, most on first use."""

    path: str
    source: str
    tree: ast.Module
    settings: Settings
    is_notebook: bool = False  # code cells of a .ipynb joined into one module
    project: ProjectQueries | None = None  # the rest of the project as this file sees it (dllint.project), None: this file alone
    # walk_with_parents(tree), if the caller has it: the one walk the facts below share
    nodes: list[ast.AST] = field(default=None, repr=False, compare=False)  # type: ignore[arg-type]  # None only until __post_init__
    parent_index: list[int] | None = field(default=None, repr=False, compare=False)
    imports: dict[str, str] = field(init=False)
    classes: dict[str, ClassInfo] = field(init=False)  # every class in the file by name
    loader_calls: list[LoaderCall] = field(init=False)
    main_guard: ast.If | None = field(init=False)
    # expressions read from config files, by id: (expression, its Value or None) (dllint.facts.values.config_value)
    config_values: dict[int, tuple[ast.expr, Any]] = field(init=False, default_factory=dict, repr=False)
    _project_loaders: dict[str, bool] = field(init=False, default_factory=dict, repr=False)  # see _project_loader

    def __post_init__(self) -> None:
        if self.nodes is None or self.parent_index is None:
            # every node in ast.walk order, and each one's parent: one walk shared by the facts below
            self.nodes, self.parent_index = walk_with_parents(self.tree)
        calls: list[ast.Call] = []
        class_nodes: list[ast.ClassDef] = []
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        import_statements: list[ast.Import | ast.ImportFrom] = []
        # Exact classes (a parsed tree holds no subclasses): one comparison per node, not two
        # calls; and one pass for what the import table, the star imports and the callable
        # parameters look for, rather than a pass over every node for each (0.045 s of the
        # benchmark corpus's lint).
        Call, ClassDef, FunctionDef, AsyncFunctionDef = ast.Call, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef
        Import, ImportFrom = ast.Import, ast.ImportFrom
        for node in self.nodes:
            cls = node.__class__
            # the exact-class tests narrow, but mypy cannot see that through node.__class__
            if cls is Call:
                calls.append(node)  # type: ignore[arg-type]
            elif cls is ClassDef:
                class_nodes.append(node)  # type: ignore[arg-type]
            elif cls is FunctionDef or cls is AsyncFunctionDef:
                functions.append(node)  # type: ignore[arg-type]
            elif cls is Import or cls is ImportFrom:
                import_statements.append(node)  # type: ignore[arg-type]
        self.imports = build_import_table(self.tree, self.nodes, import_statements)
        self.calls = calls
        self.functions = functions  # every def in walk order
        self.import_statements = import_statements  # every import statement in walk order
        self._star_bound_loader_roots()
        self.classes = self._classify(class_nodes)
        self.main_guard = find_main_guard(self.tree)
        self.loader_calls = collect_loader_calls(self, calls)

    def _star_bound_loader_roots(self) -> None:
        """Add to the import table the names that project modules bind through this file's star
        imports (L3: ``from nets import *``, nets ``from blocks import *``, blocks ``import
        torch.utils.data as data``), asked only for the unbound roots of calls of a loader
        class's name (``data.DataLoader(...)``, ``DataLoader(...)``): the only calls the answer
        can change, and most files with a star import make none."""
        if self.project is None or not has_star_import(self.import_statements):
            return
        last_names = {q.rsplit(".", 1)[-1] for q in (*LOADER_QUALNAMES, *self.settings.extend_loader_classes)} | LIBRARY_LOADER_NAMES
        roots = set()
        for call in self.calls:  # ``data.DataLoader(...)``, or ``DataLoader(...)`` itself
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in last_names or isinstance(func, ast.Name) and func.id in last_names:
                while isinstance(func, ast.Attribute):
                    func = func.value
                if isinstance(func, ast.Name) and func.id not in self.imports:
                    roots.add(func.id)
        wanted = roots & unbound_reads(self.nodes, self.imports) if roots else frozenset()
        if wanted:
            for name, dotted in self.project.star_imported(frozenset(wanted)).items():
                self.imports.setdefault(name, dotted)

    @cached_property
    def argparse(self) -> ArgparseDefaults:
        """Built on first use, from the calls and assignments in walk order: only a loader argument
        read from a namespace (``args.workers``) asks, and most files parsed have no loader call."""
        found = ArgparseDefaults()
        Call, Assign, AugAssign, AnnAssign = ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign
        for node in self.nodes:
            cls = node.__class__
            # the exact-class tests narrow, but mypy cannot see that through node.__class__
            if cls is Call:
                found.add_call(node)  # type: ignore[arg-type]
            elif cls is Assign:
                found.add_namespace(node)  # type: ignore[arg-type]
                found.add_assignment(node)  # type: ignore[arg-type]
            elif cls is AugAssign or cls is AnnAssign:
                found.add_assignment(node)  # type: ignore[arg-type]
        return found

    @cached_property
    def attribute_stores(self) -> dict[str, list[ast.AST]]:
        """Every attribute store of the file by attribute name (:mod:`dllint.facts.attributes`)."""
        from dllint.facts.attributes import attribute_stores

        return attribute_stores(self.nodes)

    @cached_property
    def _callable_parameters(self) -> frozenset[str]:
        """Parameters whose default is a name (``klass=DataLoader``): the only calls of a
        parameter :func:`~dllint.facts.values.default_callee` may take for a loader call."""
        found: set[str] = set()
        for node in self.functions:
            defaults = defaults_of(node)
            found.update(name for name, default in defaults.items() if isinstance(default, (ast.Name, ast.Attribute)))
        return frozenset(found)

    @cached_property
    def scopes(self) -> ScopeTable:
        """Built on first use: a file whose rules stop at "no loader call, no dataset class" never
        needs it (most files that pass the prefilter, on a corpus of training code)."""
        return ScopeTable(self.tree, self.nodes, self.parent_index)

    @cached_property
    def lines(self) -> list[str]:
        """The source's lines as ``ast`` numbers them, split on first use: only reporting needs them."""
        return split_lines(self.source)

    @cached_property
    def _line_starts(self) -> list[int]:
        """Where each line starts in ``source`` (character offsets), for segments without splitting."""
        return line_starts(self.source)

    def source_segment(self, node: ast.AST) -> str | None:
        """``ast.get_source_segment(self.source, node)`` without its cost: that splits the whole
        file, character by character in Python, on every call (a quadratic run for a file with
        a quoted expression per loader: 64 s for 2,000 of them in 0.2 MB)."""
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if line is None or end_line is None or end_col is None or end_line > len(self._line_starts):
            return None
        start = self._line_starts[line - 1] + self.column(line, node.col_offset) - 1  # type: ignore[attr-defined]
        end = self._line_starts[end_line - 1] + self.column(end_line, end_col) - 1
        return self.source[start:end]

    # -- names ----------------------------------------------------------------
    def qualname(self, node: ast.AST) -> str | None:
        return qualified_name(node, self.imports)

    @cached_property
    def _loader_callees(self) -> frozenset[str]:
        """The last names a loader's callee can end in here: a loader class's own name, a name it
        is imported as, a custom loader class's, a local subclass's. A call of any other name is
        no loader, and its name is not resolved (most calls of a file)."""
        extra = self.settings.extend_loader_classes
        names = {qualname.rsplit(".", 1)[-1] for qualname in (*LOADER_QUALNAMES, *extra)} | LIBRARY_LOADER_NAMES
        names.update(
            local
            for local, qualname in self.imports.items()
            if qualname in LOADER_QUALNAMES or qualname in extra or library_loader(qualname) is not None
        )
        names.update(name for name, info in self.classes.items() if info.is_loader)
        return frozenset(names)

    @cached_property
    def loader_at(self) -> dict[ast.Call, LoaderCall]:
        """The file's loader calls by their node."""
        return {loader.node: loader for loader in self.loader_calls}

    def loader_kind(self, func: ast.expr) -> bool | LibraryLoader | None:
        """What the callee of a call is: None, no loader; a library's loader class (its entry in
        the table of library knowledge); True, a custom loader class (keywords only); False,
        torch's DataLoader."""
        cls = func.__class__
        last = func.attr if cls is ast.Attribute else func.id if cls is ast.Name else None  # type: ignore[attr-defined]
        if last is None:
            return None
        if last not in self._loader_callees:
            if self._project_loader(func, last):
                return True
            wrapped = cls is ast.Name and self.project is not None and last in self._callable_parameters
            default = default_callee(func, self) if wrapped else None
            return self.loader_kind(default) if default is not None else None  # klass(...), klass=DataLoader
        name = self.qualname(func)
        if name in LOADER_QUALNAMES:
            return False
        library = library_loader(name)
        if library is not None:
            return library
        dotted = dotted_name(func)
        if dotted is None:
            return None
        extra = self.settings.extend_loader_classes
        if extra and (name in extra or dotted in extra or dotted.rsplit(".", 1)[-1] in extra):
            return True
        local = self.classes.get(dotted)
        if local is not None and local.is_loader:
            return True
        return True if local is None and self._project_loader(func, last) else None

    def _project_loader(self, func: ast.expr, last: str) -> bool:
        """A class imported from another project module that subclasses DataLoader there
        (docs/internals.md, "Loader subclasses in other files": keywords only). Asked only for
        a capitalized name this file imports (or reaches through an imported module)."""
        if self.project is None or not last[:1].isupper():
            return False
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in self.imports:
            return False
        key = dotted_name(func) or last
        known = self._project_loaders.get(key)
        if known is None:
            known = self._project_loaders[key] = self.project.loader_class(self, func)
        return known

    def custom_loader_may_pin(self, func: ast.expr) -> bool:
        """A custom loader class (keywords only) may pin by default, unless its code and its
        bases' up to torch's DataLoader (this file's, the project's) never name ``pin_memory``:
        then it keeps torch's default, ``False``. Classes of the settings are not read."""
        dotted = dotted_name(func) or ""
        local = self.classes.get(dotted)
        if local is not None:
            return self._local_may_pin(local, 0)
        if self._project_loaders.get(dotted) and self.project is not None:
            return self.project.loader_class_may_pin(self, func)
        return True

    def custom_loader_takes(self, func: ast.expr, keyword: str) -> bool | None:
        """A custom loader class's constructor accepts ``keyword``: the nearest ``__init__`` along
        this file's classes names it or takes ``**kwargs``, or none is defined before torch's
        DataLoader (True); that ``__init__`` takes neither (False: adding it raises TypeError);
        a class or base read elsewhere (None)."""
        info = self.classes.get(dotted_name(func) or "")
        for _ in range(MAX_LOCAL_BASES):
            if info is None:
                return None
            init = info.method("__init__")
            if init is not None:
                params = init.args
                named = {a.arg for a in (*params.args, *params.kwonlyargs)}
                return keyword in named or params.kwarg is not None
            local = [self.classes.get(base) for base in info.base_names]
            if not any(local) and any(b in LOADER_QUALNAMES or library_loader(b) is not None for b in info.base_names):
                return True
            info = next((c for c in local if c is not None and c.is_loader), None)
        return None

    def _local_may_pin(self, info: ClassInfo, depth: int) -> bool:
        if mentions_pin_memory(info.node) or depth > MAX_LOCAL_BASES:
            return True
        for base in info.base_names:
            parent = self.classes.get(base)
            if base not in LOADER_QUALNAMES and (parent is None or self._local_may_pin(parent, depth + 1)):
                return True
        return False

    def loader_settings_kind(self, func: ast.expr) -> FrameworkLoaderSettings | None:
        """The framework settings class a call builds (``TrainingArguments``), if any."""
        cls = func.__class__
        last = func.attr if cls is ast.Attribute else func.id if cls is ast.Name else None  # type: ignore[attr-defined]
        if last is None or not (last in LOADER_SETTINGS_NAMES or self.imports.get(last, "").rsplit(".", 1)[-1] in LOADER_SETTINGS_NAMES):
            return None
        return loader_settings(self.qualname(func))

    @cached_property
    def other_positions(self) -> bool:
        """Some loader call here binds its positional arguments otherwise than torch's would."""
        return any(not loader.torch_positions for loader in self.loader_calls)

    @cached_property
    def loader_settings(self) -> list[LoaderCall]:
        """Framework settings calls standing for the loaders their framework builds
        (``TrainingArguments(dataloader_num_workers=4)``): DL201, DL202 and DL206 read them."""
        if not any(name in self.source for name in LOADER_SETTINGS_NAMES):
            return []
        return collect_loader_settings(self, self.calls)

    # -- classes --------------------------------------------------------------
    def _classify(self, nodes: list[ast.ClassDef]) -> dict[str, ClassInfo]:
        classes = {}
        for node in nodes:
            bases = []
            for base in node.bases:
                qual = self.qualname(base) or dotted_name(base)
                if qual:
                    bases.append(qual)
            classes[node.name] = ClassInfo(node, bases)
        # Resolve inheritance within the file to a fixed point (chains of local subclasses).
        changed = True
        while changed:
            changed = False
            for info in classes.values():
                dataset = iterable = loader = False
                for base_name in info.base_names:
                    parent = classes.get(base_name)
                    dataset |= base_name in DATASET_BASES or bool(parent and parent.is_dataset)
                    iterable |= base_name in ITERABLE_DATASET_BASES or bool(parent and parent.is_iterable_dataset)
                    loader |= (base_name in LOADER_QUALNAMES or library_loader(base_name) is not None
                               or bool(parent and parent.is_loader))
                if (dataset, iterable, loader) != (info.is_dataset, info.is_iterable_dataset, info.is_loader):
                    info.is_dataset, info.is_iterable_dataset, info.is_loader = dataset, iterable, loader
                    changed = True
        return classes

    @cached_property
    def dataset_classes(self) -> list[ClassInfo]:
        """The file's Dataset subclasses: through its own classes, and through project bases of
        other modules (``class LSUNClass(VisionDataset)`` with ``from .vision import
        VisionDataset``, a ``Dataset`` subclass there: the rule catalog's classes as Python
        sees them). A base from outside the project is unknown: not a dataset."""
        found = {name for name, info in self.classes.items() if info.is_dataset or self._dataset_elsewhere(info)}
        changed = True
        while changed:  # local subclasses of those
            changed = False
            for name, info in self.classes.items():
                if name not in found and any(base in found for base in info.base_names):
                    found.add(name)
                    changed = True
        return [info for name, info in self.classes.items() if name in found]

    def _dataset_elsewhere(self, info: ClassInfo) -> bool:
        """A base of the class is a project class of another module whose ancestors include
        torch's Dataset."""
        project = self.project
        if project is None or project.summarizing:
            return False
        return any(
            base_name in DATASET_BASES
            for base in info.node.bases
            if not (isinstance(base, ast.Name) and base.id in self.classes)
            for summary in project.class_ancestors(self, base)
            for base_name in summary.bases
        )

    def class_of_instance(self, expr: ast.expr, scope: Scope) -> ClassInfo | None:
        """The same-file class that ``expr`` constructs (``Ds(...)`` or a name bound once to it)."""
        for _ in range(8):
            if isinstance(expr, ast.Call):
                name = dotted_name(expr.func)
                return self.classes.get(name) if name else None
            if isinstance(expr, ast.Name):
                found = self.scopes.single_value(expr.id, scope)
                if found is None or found[1].value is None:
                    return None
                scope, expr = found[0], found[1].value
                continue
            return None
        return None

    # -- values ---------------------------------------------------------------
    def resolve(self, expr: ast.expr, scope: Scope | None = None) -> Value:
        return resolve(expr, scope or self.scopes.scope_of(expr), self)

    # -- analyses computed on demand -----------------------------------------------
    @cached_property
    def usage(self) -> UsageAnalysis:
        from dllint.facts.usage import UsageAnalysis

        return UsageAnalysis(self)

    @cached_property
    def worker_code(self) -> WorkerCode:
        """Which functions run inside the workers of each multi-worker loader."""
        from dllint.facts.worker_code import WorkerCode

        return WorkerCode(self)

    @cached_property
    def loops(self) -> LoopAnalysis:
        """Epoch loops around each loader's iterations, and what their bodies change."""
        from dllint.facts.loops import LoopAnalysis

        return LoopAnalysis(self)

    @cached_property
    def training(self) -> TrainingFacts:
        """What each loader's passes are for (evaluation only: DL301)."""
        from dllint.facts.training import TrainingFacts

        return TrainingFacts(self)

    @cached_property
    def samplers(self) -> SamplerAnalysis:
        """DistributedSampler calls: the loaders they feed, escapes, set_epoch calls."""
        from dllint.facts.samplers import SamplerAnalysis

        return SamplerAnalysis(self)

    def dataset_mutated_in_loop(self, loader: LoaderCall) -> bool:
        """The file changes this loader's dataset inside a loop that re-iterates the loader
        (what persistent workers would never see: DL303)."""
        return bool(self.loops.dataset_mutations(loader))

    @cached_property
    def process_starts(self) -> list[ProcessStart]:
        """Pools, ``spawn`` calls, ``Process(...).start()`` and process executors in the file."""
        from dllint.facts.processes import find_process_starts

        return find_process_starts(self)

    @cached_property
    def is_distributed(self) -> bool:
        """A distributed script: init_process_group, DistributedSampler, or LOCAL_RANK/LOCAL_WORLD_SIZE read."""
        # A call's name ends in what the file spells (its own names, its imports' paths): without
        # either word in the text, no call's does, and no call needs resolving (most files).
        if "init_process_group" in self.source or "DistributedSampler" in self.source:
            for call in self.calls:
                name = self.qualname(call.func) or dotted_name(call.func) or ""
                if name.endswith(("init_process_group", "DistributedSampler")):
                    return True
        return "LOCAL_RANK" in self.source or "LOCAL_WORLD_SIZE" in self.source

    @cached_property
    def _module_statements(self) -> frozenset[ast.AST]:
        return frozenset(self.tree.body)

    def memo(self, name: str) -> dict[Any, Any]:
        """The per-file cache a facts module keeps under ``name``, made at its first use: what a
        question costs is paid once per file, however often the rules ask it."""
        return self.__dict__.setdefault("_memo_" + name, {})

    def contains(self, ancestor: ast.AST, node: ast.AST) -> bool:
        """``node`` is ``ancestor`` or lies inside it (by the parent links of the scope table)."""
        parents = self.scopes.parents
        current: ast.AST | None = node
        while current is not None:
            if current is ancestor:
                return True
            current = parents.get(current)
        return False

    def own_returns(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
        """``function``'s ``return`` statements, not those of functions nested in it (a walk of its
        statements only: a return is never inside an expression)."""
        enclosing = self.scopes.enclosing_function
        return [n for n in walk_statements(function) if isinstance(n, ast.Return) and enclosing(n) is function]

    def statement_of(self, node: ast.AST | None) -> ast.stmt | None:
        """The innermost statement that contains ``node`` (itself, if it is one)."""
        parents = self.scopes.parents
        while node is not None and not isinstance(node, ast.stmt):
            node = parents.get(node)
        return node

    def reaching_value(self, name: str, scope: Scope, at: ast.AST | None) -> tuple[Scope, Binding] | None:
        """The binding of ``name`` read at ``at``: its one binding; or, for a module-level name
        bound several times, the assignment that reaches ``at`` where ``at`` and every binding
        before it are statements of the module body (no branch, loop or function between: a
        notebook's cells rebinding ``kwargs``): the last one before it, as Python runs them."""
        found = self.scopes.lookup(name, scope)
        if found is None:
            return None
        owner, bindings = found
        if len(bindings) == 1:
            return owner, bindings[0]
        used_at = self.statement_of(at) if at is not None else None
        if used_at is None or not owner.is_module or used_at not in self.tree.body:
            return None
        before: list[tuple[int, Binding]] = []
        for binding in bindings:
            top = self.module_statement_of(binding.node)
            if top is None or top.lineno >= used_at.lineno:
                continue  # runs after the read
            if binding.kind != "assign" or self.statement_of(binding.node) is not top:
                return None  # bound in a branch, a loop or a function before the read: either may reach it
            before.append((top.lineno, binding))
        return (owner, max(before, key=lambda pair: pair[0])[1]) if before else None

    def module_statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The module-level statement that contains ``node``."""
        parents = self.scopes.parents
        current: ast.AST | None = node
        while current is not None and current not in self._module_statements:
            current = parents.get(current)
        return current  # type: ignore[return-value]

    # -- positions --------------------------------------------------------------
    def column(self, line: int, byte_offset: int) -> int:
        """1-based character column for an ast byte offset on a 1-based line."""
        if 0 < line <= len(self.lines):
            return self._columns.column(line, byte_offset)
        return byte_offset + 1

    @cached_property
    def _columns(self) -> ColumnMap:
        return ColumnMap(self.lines)

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        line = node.lineno  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        return (
            line,
            self.column(line, node.col_offset),  # type: ignore[attr-defined]
            end_line,
            self.column(end_line, end_col) if end_col is not None else self.column(line, node.col_offset),  # type: ignore[attr-defined]
        )


class ColumnMap:
    """Byte offsets (what ``ast`` reports) to character columns. A finding's column on a huge
    generated line must not cost a pass over the line: a non-ASCII line gets, once, the byte
    offset of every BLOCK-th character, and a column then decodes at most one block."""

    BLOCK = 4096  # characters between checkpoints: a few kB to decode per column, L / 4096 ints kept

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._checkpoints: dict[int, list[int] | None] = {}  # per line: None when ASCII

    def column(self, line: int, byte_offset: int) -> int:
        if line not in self._checkpoints:
            self._checkpoints[line] = self._byte_offsets(self.lines[line - 1])
        checkpoints = self._checkpoints[line]
        if checkpoints is None:
            return byte_offset + 1
        block = bisect.bisect_right(checkpoints, byte_offset) - 1
        first = block * self.BLOCK
        piece = self.lines[line - 1][first : first + self.BLOCK].encode("utf-8", "surrogatepass")
        return first + len(piece[: byte_offset - checkpoints[block]].decode("utf-8", "replace")) + 1

    @classmethod
    def _byte_offsets(cls, text: str) -> list[int] | None:
        """The byte offset of characters 0, BLOCK, 2 * BLOCK, ... of the line."""
        if text.isascii():
            return None
        offsets = [0]
        for first in range(cls.BLOCK, len(text), cls.BLOCK):
            offsets.append(offsets[-1] + len(text[first - cls.BLOCK : first].encode("utf-8", "surrogatepass")))
        return offsets


def is_main_guard(node: ast.AST) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def find_main_guard(tree: ast.Module) -> ast.If | None:
    for stmt in tree.body:
        if is_main_guard(stmt):
            return stmt  # type: ignore[return-value]
    return None


__all__ = ["FileFacts", "ClassInfo", "LoaderCall", "Value", "Scope", "find_main_guard", "is_main_guard"]
