"""No import cycles in ``dllint/``, counting imports inside functions (they run too), not those
under ``if TYPE_CHECKING:`` (they never run). A cycle means two layers know each other."""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dllint"


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in modules:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def cycles(graph: Mapping[str, AbstractSet[str]]) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@functools.cache
def package_graph() -> dict[str, frozenset[str]]:
    """Each module of ``dllint/`` and the modules it imports: parsed once for the tests below."""
    modules = module_names()
    return {name: frozenset(imports_of(name, path, modules)) for name, path in modules.items()}


def test_no_import_cycles():
    assert cycles(package_graph()) == []


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    modules = {"dllint": PACKAGE / "__init__.py", "dllint.engine": PACKAGE / "engine.py", "dllint.config": PACKAGE / "config.py"}
    assert "dllint.config" in imports_of("dllint.engine", PACKAGE / "engine.py", modules)


def test_layers_import_downwards():
    """``knowledge/`` is pure data (nothing of dllint below it); ``facts/`` never imports
    ``project/`` (the project answers the facts' typed queries, never the other way round)."""
    upward = {
        (name, target)
        for name, targets in package_graph().items()
        for target in targets
        if name.startswith("dllint.knowledge") and not target.startswith("dllint.knowledge")
        or name.startswith("dllint.facts") and target.startswith("dllint.project")
    }
    assert upward == set()
