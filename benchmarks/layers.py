"""Imports that run up the layers of ``dllint/`` (DESIGN.md: inputs -> facts -> project index ->
rules -> fixes -> outputs, a lower layer never imports a higher one).

    python benchmarks/layers.py          # one line per import running up, then the count

A module's layer is its package's (``dllint/facts/usage.py`` is in ``facts``) or, for a top-level
module, its own; the table below places each one. Imports inside functions count (they run
too), those under ``if TYPE_CHECKING:`` do not (they never run). Moving an orchestrator above
what it calls is what lowers the count: a module cannot be relabelled here without moving it.
"""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_import_cycles import imports_of, module_names  # noqa: E402  (one reading of imports)

# Lowest first. Within the driver layers the order is who calls whom: the engine lints one
# input, per_file one file's bytes, the runner many files, the pipeline a run, the CLI the user.
LAYERS: tuple[tuple[str, ...], ...] = (
    # plain values and file access every layer may use (``dllint`` itself holds the version)
    ("__init__", "findings", "deps", "source", "paths", "files", "atomic", "exit_codes", "patterns", "gc_pause",
     "progress", "ignore_files", "config", "noqa", "severity"),
    ("knowledge",),  # library behaviour as data, below the facts
    ("configs.document", "configs.yaml_reader", "configs.python_reader", "configs.inherit", "configs.read",
     "configs.code_keys"),  # config readers; a key path as code reads it
    ("inputs", "notebook", "discovery"),  # adapters that read a file into an input; which files
    ("facts", "configs.blocks"),
    ("project",),
    ("fixes", "configs.edits"),  # the edits a rule's fix is made of: LibCST fixes, config text edits
    ("rules", "configs.lint", "configs"),
    ("docs", "selection"),  # the rules' pages, which rules run
    ("prefilter",),
    ("engine",),
    ("fixer",),
    ("cache",),
    ("per_file",),
    ("runner",),
    ("pipeline", "fixing", "add_noqa", "show", "watch"),  # what a run does with the files
    ("output",),
    ("probe",),
    ("cli", "flake8_plugin", "server", "__main__"),
)


def layer_of(module: str) -> int:
    parts = module.split(".")[1:] or ["__init__"]
    for length in (2, 1):  # the longest entry that names it: ``configs.lint`` before ``configs``
        key = ".".join(parts[:length])
        for rank, names in enumerate(LAYERS):
            if key in names:
                return rank
    raise SystemExit(f"{module}: no layer in benchmarks/layers.py's LAYERS; place it there")


def up_imports() -> list[tuple[str, str, bool]]:
    """(importer, imported, whether any such import is at module level) for each pair running up."""
    modules = module_names()
    found = []
    for name, path in sorted(modules.items()):
        top = top_level_imports(name, path, modules)
        for target in sorted(imports_of(name, path, modules)):
            if layer_of(target) > layer_of(name):
                found.append((name, target, target in top))
    return found


def top_level_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The imports of ``path`` that run when it is imported (not those inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Pass()]
    with tempfile.TemporaryDirectory() as scratch:
        shell = Path(scratch) / path.name  # the same name: ``__init__.py`` resolves relative imports
        shell.write_text(ast.unparse(tree), encoding="utf-8")
        return imports_of(name, shell, modules)


def main() -> None:
    found = up_imports()
    for name, target, top in found:
        print(f"{name} -> {target}{'' if top else '  (inside a function)'}")
    print(f"{len(found)} imports running up the layers, {sum(top for *_, top in found)} of them at module level")


if __name__ == "__main__":
    main()
