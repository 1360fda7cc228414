"""Where an import goes: the project module file a target names, looked for in Python's order
(the importing file's folder, the folder above its outermost package, each folder above up to
the project root, ``src/``, then the folders a file adds to ``sys.path``). A part of the
project index that owns what it learnt of the file system (which paths are files, each
folder's search path) and forgets it when a file appears or goes (:meth:`forget`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from dllint.facts.flow.targets import Target


class ModuleResolver:
    def __init__(self, root: Path, added_folders: Callable[[str], list[str]]) -> None:
        self.root = root
        self._added_folders = added_folders  # the folders a file adds to sys.path (the import graph's)
        self._exists: dict[str, bool] = {}
        self._bases: dict[Path, list[Path]] = {}  # see _search_path

    def forget(self, path: str) -> None:
        """``path`` changed, appeared or went away: every module found or not found may be
        another now."""
        self._exists.clear()

    def resolve_once(self, from_path: str, target: str) -> tuple[str, str] | None:
        """(module file, the rest of the target) for the longest module a target starts with,
        seen from ``from_path`` (re-exports are the index's to follow); None: no project module."""
        parsed = Target.parse(target)
        level = parsed.level
        parts = parsed.dotted.split(".") if parsed.dotted else []
        bases = self._import_bases(from_path, level)
        for cut in range(len(parts) - 1, 0, -1):
            module = parts[:cut]
            for base in bases:
                for candidate in (base.joinpath(*module).with_suffix(".py"), base.joinpath(*module, "__init__.py")):
                    if self._is_file(candidate) and self._inside(candidate):
                        return str(candidate), ".".join(parts[cut:])
        if level and parts:
            for base in bases:  # from . import name, where name is defined in __init__.py
                candidate = base / "__init__.py"
                if self._is_file(candidate):
                    return str(candidate), ".".join(parts)
        return None

    def resolve_module(self, from_path: str, target: str, added: bool = True) -> str | None:
        """The project module file a whole target names (``"0:pkg.data"``, ``"1:"`` for
        ``from . import *``), seen from ``from_path``; None when it is no project module.
        ``added``: also in the folders ``from_path`` adds to ``sys.path``."""
        parsed = Target.parse(target)
        parts = parsed.dotted.split(".") if parsed.dotted else []
        for base in self._import_bases(from_path, parsed.level, added):
            candidates = [base.joinpath(*parts).with_suffix(".py")] if parts else []
            for candidate in [*candidates, base.joinpath(*parts, "__init__.py")]:
                if self._is_file(candidate) and self._inside(candidate):
                    return str(candidate)
        return None

    def _import_bases(self, from_path: str, level: int, added: bool = True) -> list[Path]:
        """Where a target of relative ``level`` (0: absolute) is looked for from file
        ``from_path``: Python's search path, then the folders the file (or a module it imports)
        adds to ``sys.path`` (``added``)."""
        here = Path(from_path).parent
        if level:
            return [here.parents[level - 2] if level > 1 else here] if level - 2 < len(here.parents) else []
        bases = self._search_path(here)
        extra = [Path(f) for f in self._added_folders(from_path)] if added else []
        return bases + [f for f in extra if f not in bases and self._inside(f)] if extra else bases

    def _search_path(self, here: Path) -> list[Path]:
        """Where an absolute import made in directory ``here`` is looked for, in Python's
        order: ``here`` itself (``python train.py`` puts the script's directory first on
        ``sys.path``), the directory above the outermost package holding ``here`` (where the
        program runs from, ``python -m pkg.train``), then each directory above, nearest first,
        up to the project root, then ``src/`` (a src layout installed in development mode).
        Nearest first: in a repository of several projects, each with its own
        ``data_provider``, an import resolves to the importing project's package, not to a
        top-level package of the same name elsewhere."""
        found = self._bases.get(here)
        if found is None:
            bases = [here, self._package_parent(here)]
            if self._inside(here):
                bases += [d for d in here.parents if self._inside(d)]
            bases += [self.root, self.root / "src"]
            found = self._bases[here] = list(dict.fromkeys(bases))
        return found

    def _package_parent(self, directory: Path) -> Path:
        """The directory above the outermost package holding ``directory``."""
        while self._is_file(directory / "__init__.py") and directory != self.root:
            directory = directory.parent
        return directory

    def _is_file(self, path: Path) -> bool:
        key = str(path)
        known = self._exists.get(key)
        if known is None:
            known = self._exists[key] = path.is_file()
        return known

    def _inside(self, path: Path) -> bool:
        return self.root == path or self.root in path.parents
