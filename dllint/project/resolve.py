"""What a target names: the definition behind an import (the module resolver's file, then
re-exports followed as Python binds them), the function or class there, a class's project
ancestors. A part of the project index that keeps nothing of its own (what it reads, the
summaries and the module resolver keep)."""

from __future__ import annotations

from dllint.facts.flow.records import ClassSummary, FileSummary, FunctionSummary
from dllint.facts.flow.targets import STAR, Target
from dllint.deps import CallersDep, Deps, SummaryDep
from dllint.project.base import MAX_ANCESTORS
from dllint.project.imports import ImportGraph
from dllint.project.modules import ModuleResolver
from dllint.project.search import TextIndex
from dllint.project.summaries import Summaries


class Definitions:
    def __init__(self, summaries: Summaries, modules: ModuleResolver, imports: ImportGraph, text: TextIndex) -> None:
        self.summaries = summaries
        self.modules = modules
        self.imports = imports
        self.text = text  # the names that may be project classes

    def resolve(self, from_path: str, target: str, deps: Deps | None = None, depth: int = 0) -> tuple[str, str] | None:
        """(file, name inside it) that a target names, seen from ``from_path``; follows
        re-exports (``from .data import build_loader`` in a package's ``__init__``, or each of
        its ``from .data import *``, nested ones too), recording
        the summaries it reads in ``deps``."""
        for _ in range(4 - depth):
            found = self.modules.resolve_once(from_path, target)
            if found is None:
                return None
            path, name = found
            summary = self.summaries.summary(path)
            if summary is not None and deps is not None:
                deps.add(SummaryDep(path, summary[1]))
            first = name.split(".")[0]
            if summary is None or not name or first in summary[0].functions or first in summary[0].classes:
                return found
            reexport = summary[0].imports.get(first)
            rest = name[len(first):]
            if reexport is None and STAR in summary[0].imports:  # ``from .utils import *`` in __init__.py
                return self._through_stars(path, first, rest, deps, depth) or found
            if reexport is None:
                return found
            from_path, target = path, reexport + rest
        return None

    def _through_stars(self, path: str, first: str, rest: str, deps: Deps | None, depth: int) -> tuple[str, str] | None:
        """Where ``first`` (then ``rest``) is defined behind the star imports of ``path``: the
        last star import whose module defines it, or binds it through its own stars
        (``from .data import *`` then ``from .loaders import *``), wins, as Python binds it."""
        stars = [b.target for b in self.imports.bindings(path) if b.local == "*"]
        for star in reversed(stars):
            target = (f"{star}{first}" if star.endswith(":") else f"{star}.{first}") + rest
            found = self.resolve(path, target, deps, depth + 1)
            summary = self.summaries.summary(found[0]) if found is not None else None
            if found is not None and summary is not None and found[1].split(".")[0] in (*summary[0].functions, *summary[0].classes):
                return found
        return None

    def function(self, from_path: str, target: str, deps: Deps | None = None) -> tuple[str, FunctionSummary, str] | None:
        found = self.resolve(from_path, target, deps)
        if found is None:
            return None
        path, name = found
        summary = self.summaries.summary(path)
        if summary is None:
            return None
        function = summary[0].functions.get(name)
        if function is None and name in summary[0].classes:  # Cls(...): its __init__, bound
            inherited = self._inherited_init(path, summary[0], name, deps)
            if inherited is not None:
                return inherited
            name = f"{name}.__init__"
            function = summary[0].functions.get(name)
        elif function is None and "." in name:  # get_backend().distribute: the method of what it returns
            head, _, method = name.partition(".")
            inherited = self._inherited_init(path, summary[0], head, deps, method=method) if "." not in method else None
            if inherited is not None:  # Sub.train_one_epoch defined on a project base (tenth audit K12)
                return inherited
            name = _method_of_returned(summary[0], name)
            function = summary[0].functions.get(name)
        return None if function is None else (path, function, name)

    def _inherited_init(
        self, path: str, summary: FileSummary, name: str, deps: Deps | None, depth: int = 0, method: str = "__init__"
    ) -> tuple[str, FunctionSummary, str] | None:
        """The ``__init__`` (or another ``method``) class ``name`` of ``path`` runs when it defines
        none: its first base's that has one (Python's MRO, as far as single bases tell), through
        this file and others. None when it defines its own, or no project base has one."""
        cls = summary.classes.get(name)
        if cls is None or f"{name}.{method}" in summary.functions or depth >= MAX_ANCESTORS:
            return None
        for base in cls.bases:
            if ":" in base:  # a class imported from another project module
                found = self.function(path, base if method == "__init__" else f"{base}.{method}", deps)
                if found is not None:
                    return found
            elif base in summary.classes:
                own = summary.functions.get(f"{base}.{method}")
                if own is not None:
                    return path, own, f"{base}.{method}"
                found = self._inherited_init(path, summary, base, deps, depth + 1, method)
                if found is not None:
                    return found
        return None

    def class_summary(self, from_path: str, target: str, deps: Deps | None = None) -> tuple[str, ClassSummary] | None:
        found = self.resolve(from_path, target, deps)
        if found is None:
            return None
        summary = self.summaries.summary(found[0])
        cls = summary[0].classes.get(found[1]) if summary is not None else None
        return None if cls is None else (found[0], cls)

    def ancestors(self, from_path: str, target: str, deps: Deps) -> list[ClassSummary]:
        """The project class ``target`` names and its ancestors, depth first and left to right,
        through every file their bases are in (each summary read is recorded in ``deps``);
        bases outside the project end the walk (their names stay in ``bases``). A name no project
        file defines as a class or imports a class as (``class Name``, ``as Name``: one byte scan)
        has none, and nothing is resolved (most names a file imports from the project are
        functions); a file that starts defining one re-lints it (see :meth:`reconcile`)."""
        name = Target.parse(target).dotted.rsplit(".", 1)[-1].encode()
        if not self.text.is_class_name(name):
            deps.add(CallersDep(b"class " + name))
            deps.add(CallersDep(b" as " + name))
            return []
        found: list[ClassSummary] = []
        seen: set[tuple[str, str]] = set()

        def visit(path: str, target: str, depth: int) -> None:
            resolved = self.resolve(path, target, deps)
            if resolved is None or resolved in seen or len(seen) >= MAX_ANCESTORS:
                return
            seen.add(resolved)
            summary = self.summaries.summary(resolved[0])
            cls = summary[0].classes.get(resolved[1]) if summary is not None else None
            if summary is None or cls is None:
                return
            deps.add(SummaryDep(resolved[0], summary[1]))
            found.append(cls)
            for base in cls.bases if depth < MAX_ANCESTORS else ():
                if ":" in base:  # a class imported from another project module
                    visit(resolved[0], base, depth + 1)
                elif base in summary[0].classes:  # a class of the same file
                    visit_local(resolved[0], summary[0], base, depth + 1)

        def visit_local(path: str, summary: FileSummary, name: str, depth: int) -> None:
            if (path, name) in seen or len(seen) >= MAX_ANCESTORS:
                return
            seen.add((path, name))
            cls = summary.classes[name]
            found.append(cls)
            for base in cls.bases if depth < MAX_ANCESTORS else ():
                if ":" in base:
                    visit(path, base, depth + 1)
                elif base in summary.classes:
                    visit_local(path, summary, base, depth + 1)

        visit(from_path, target, 0)
        return found


def _method_of_returned(summary: FileSummary, name: str) -> str:
    """``"Cls.m"`` for ``"f.m"`` where the module's function ``f`` returns an instance of its
    own class ``Cls`` that defines ``m`` (one such class); ``name`` otherwise."""
    head, _, method = name.partition(".")
    factory = summary.functions.get(head) if "." not in method else None
    classes = {r.name for r in factory.returns if r.kind == "instance"} if factory is not None else set()
    owners = [cls for cls in classes if f"{cls}.{method}" in summary.functions]
    return f"{owners[0]}.{method}" if len(owners) == 1 else name
