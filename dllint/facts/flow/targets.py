"""Calls into other modules of the project, named the way the calling file imports them.

A *target* is ``"<level>:<dotted>"``: ``"0:pkg.data.build_loader"`` for ``from pkg.data
import build_loader`` (or ``import pkg.data as d; d.build_loader``), ``"1:data.build_loader"``
for ``from .data import build_loader``. Which part of the dotted name is the module is
decided only when the index looks for the file (:meth:`Definitions.resolve`), so a file's
summary depends on its own text alone.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from typing import NamedTuple

from dllint.facts.imports import dotted_name
from dllint.facts.walk import walk_statements

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

STAR = "*"  # the import table's key for ``from m import *``: its value is the module's target

# Modules that are never the project's own: calls into them are not followed.
EXTERNAL_ROOTS = frozenset(sys.stdlib_module_names) | frozenset(
    {
        "torch", "torchvision", "torchaudio", "torchtext", "numpy", "np", "pandas", "scipy", "sklearn",
        "tqdm", "PIL", "cv2", "matplotlib", "transformers", "datasets", "accelerate", "lightning",
        "pytorch_lightning", "tensorflow", "jax", "wandb", "yaml", "h5py", "einops", "timm", "hydra",
        "omegaconf", "deepspeed", "apex", "psutil", "rich", "click", "tensorboard", "tensorboardX",
    }
)


def project_imports(tree: ast.Module, own: frozenset[str] = frozenset(), nodes: list[ast.AST] | None = None) -> dict[str, str]:
    """Local name -> target for every import of the module body (relative ones included).
    ``own``: roots of EXTERNAL_ROOTS that are the project's own packages (linting timm's
    repository, ``timm.data`` is the project's); ``nodes``: the file's one shared walk, if at hand."""
    table: dict[str, str] = {}
    Import, ImportFrom = ast.Import, ast.ImportFrom
    for node in walk_statements(tree) if nodes is None else nodes:
        if node.__class__ is not Import and node.__class__ is not ImportFrom:
            continue  # exact classes: a parsed tree holds no subclasses
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            table.update(_imported_names(node))
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            table.pop(stmt.name, None)
    return {name: target for name, target in table.items() if not _external(target + ".x" if name == STAR else target, own)}


def _imported_names(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str]]:
    """(local name, target) for each name one import statement binds, in its order (a later
    binding of the same name wins): ``import a.b`` binds ``a``; ``from m import *`` the
    module under :data:`STAR`."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            root = alias.name.split(".")[0]
            yield (alias.asname, f"0:{alias.name}") if alias.asname else (root, f"0:{root}")
        return
    base = node.module or ""
    for alias in node.names:
        if alias.name != "*":
            dotted = f"{base}.{alias.name}" if base else alias.name
            yield alias.asname or alias.name, f"{node.level}:{dotted}"
        else:  # the module a name bound nowhere in the file may come from (the last one wins)
            yield STAR, f"{node.level}:{base}"


class Target(NamedTuple):
    """A call into another project module, as its text (``"1:data.fit@"``) says: the import's
    relative ``level``, the ``dotted`` name after it, and whether the call is ``bound`` (a
    method called on an instance: its first parameter is that instance). Summaries and
    ``facts.project`` carry the text; this is the one place that reads and writes it."""

    level: int
    dotted: str
    bound: bool = False

    @classmethod
    def parse(cls, text: str) -> Target:
        level, _, dotted = text.rstrip("@").partition(":")
        return cls(int(level or 0), dotted, text.endswith("@"))

    def __str__(self) -> str:
        return f"{self.level}:{self.dotted}" + ("@" if self.bound else "")

    @property
    def unbound(self) -> str:
        """The text without the bound mark: the function itself (``"1:data.fit"``)."""
        return f"{self.level}:{self.dotted}"

    def shown(self) -> str:
        """As the user wrote it: ``"1:data.fit@"`` -> ``".data.fit()"``."""
        return "." * self.level + self.dotted + "()"


def _external(target: str, own: frozenset[str]) -> bool:
    parsed = Target.parse(target)
    root = parsed.dotted.split(".")[0]
    return parsed.level == 0 and root in EXTERNAL_ROOTS and root not in own


def _inherited_constructor(facts: FileFacts, table: dict[str, str], cls: ast.AST, scope: Scope) -> tuple[str, bool] | None:
    """``Trainer(loader)`` of a class of this file that defines no ``__init__`` of its own:
    the constructor it inherits from its first base imported from another project module
    (Python's MRO, as far as the bases written here tell), e.g. ``"0:base.BaseTrainer"``."""
    if not isinstance(cls, ast.ClassDef) or any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ("__init__", "__new__", "__post_init__")
        for stmt in cls.body
    ) or cls.decorator_list:
        return None
    for base in cls.bases:
        found = call_target(facts, table, base, scope)
        if found is not None:
            return found
        if dotted_name(base) not in (None, "object", "Generic") and not isinstance(base, ast.Subscript):
            return None  # a base of this file or outside the project comes first: its constructor runs
    return None


def target_text(found: tuple[str, bool] | None) -> str | None:
    """The text of :func:`call_target`'s (target, bound)."""
    return None if found is None else str(Target.parse(found[0])._replace(bound=found[1]))


def call_target(facts: FileFacts, table: dict[str, str], func: ast.expr, scope: Scope) -> tuple[str, bool] | None:
    """(target, bound) of a call into another project module: ``f(...)``, ``mod.f(...)``, or
    ``obj.m(...)`` where ``obj`` is a name bound once to ``Cls(...)`` of an imported class
    (``bound``: the method's first parameter is ``obj``)."""
    dotted = dotted_name(func)
    if dotted is None:
        return None
    root, _, rest = dotted.partition(".")
    found = facts.scopes.lookup(root, scope)
    if root in table and (found is None or all(b.kind == "import" for b in found[1])):
        target = table[root]
        return (f"{target}.{rest}" if rest else target), False
    if found is None and STAR in table:  # bound by ``from m import *`` (or a builtin: m decides)
        module = table[STAR]
        return f"{module}.{dotted}" if not module.endswith(":") else f"{module}{dotted}", False
    if not rest and found is not None and len(found[1]) == 1 and found[1][0].kind == "class":
        return _inherited_constructor(facts, table, found[1][0].node, found[0])
    if rest and "." not in rest and found is not None and len(found[1]) == 1:
        value = found[1][0].value
        if isinstance(value, ast.Call):
            cls = call_target(facts, table, value.func, found[0])
            if cls is not None and not cls[1]:
                return f"{cls[0]}.{rest}", True
    return None
