"""Where an import goes: the project module file a target names, looked for in Python's order
(the importing file's folder, the folder above its outermost package, each folder above up to
the project root, ``src/``, then the folders a file adds to ``sys.path``). A part of the
project index that owns what it learnt of the file system (which paths are files, each
folder's search path) and forgets it when a file appears or goes (:meth:`forget`)."""

from __future__ import annotations

import os
from typing import Callable

from dllint.facts.flow.targets import Target
from dllint.paths import under


class ModuleResolver:
    """Paths as strings (``os.path``), not ``pathlib``: importing it cost a one-file run 2 ms,
    and its objects each resolution. The paths it is given are absolute and normalized (the
    project root resolved, the walk's files, folders ``normpath``-ed), so the strings joined
    here are those ``pathlib`` made."""

    def __init__(self, root: str, added_folders: Callable[[str], list[str]]) -> None:
        self.root = root
        self._added_folders = added_folders  # the folders a file adds to sys.path (the import graph's)
        self._exists: dict[str, bool] = {}
        self._bases: dict[str, list[str]] = {}  # see _search_path

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
                for candidate in (_module_file(base, module), _join(base, *module, "__init__.py")):
                    if self._is_file(candidate) and self._inside(candidate):
                        return candidate, ".".join(parts[cut:])
        if level and parts:
            for base in bases:  # from . import name, where name is defined in __init__.py
                candidate = _join(base, "__init__.py")
                if self._is_file(candidate):
                    return candidate, ".".join(parts)
        return None

    def resolve_module(self, from_path: str, target: str, added: bool = True) -> str | None:
        """The project module file a whole target names (``"0:pkg.data"``, ``"1:"`` for
        ``from . import *``), seen from ``from_path``; None when it is no project module.
        ``added``: also in the folders ``from_path`` adds to ``sys.path``."""
        parsed = Target.parse(target)
        parts = parsed.dotted.split(".") if parsed.dotted else []
        for base in self._import_bases(from_path, parsed.level, added):
            candidates = [_module_file(base, parts)] if parts else []
            for candidate in [*candidates, _join(base, *parts, "__init__.py")]:
                if self._is_file(candidate) and self._inside(candidate):
                    return candidate
        return None

    def _import_bases(self, from_path: str, level: int, added: bool = True) -> list[str]:
        """Where a target of relative ``level`` (0: absolute) is looked for from file
        ``from_path``: Python's search path, then the folders the file (or a module it imports)
        adds to ``sys.path`` (``added``)."""
        here = _parent(from_path)
        if level:
            parents = _parents(here)
            return [parents[level - 2] if level > 1 else here] if level - 2 < len(parents) else []
        bases = self._search_path(here)
        extra = self._added_folders(from_path) if added else []
        return bases + [f for f in extra if f not in bases and self._inside(f)] if extra else bases

    def _search_path(self, here: str) -> list[str]:
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
                bases += [d for d in _parents(here) if self._inside(d)]
            bases += [self.root, _join(self.root, "src")]
            found = self._bases[here] = list(dict.fromkeys(bases))
        return found

    def _package_parent(self, directory: str) -> str:
        """The directory above the outermost package holding ``directory``."""
        while self._is_file(_join(directory, "__init__.py")) and directory != self.root:
            directory = _parent(directory)
        return directory

    def _is_file(self, path: str) -> bool:
        known = self._exists.get(path)
        if known is None:
            known = self._exists[path] = os.path.isfile(path)
        return known

    def _inside(self, path: str) -> bool:
        return under(path, self.root)


def _join(base: str, *parts: str) -> str:
    """``Path(base).joinpath(*parts)``: an empty part adds nothing."""
    return os.path.join(base, *[part for part in parts if part])


def _module_file(base: str, parts: list[str]) -> str:
    """``Path(base).joinpath(*parts).with_suffix(".py")``: the last name's suffix, if it has
    one, replaced."""
    path = _join(base, *parts)
    name = os.path.basename(path)
    dot = name.rfind(".")
    return path[: len(path) - len(name)] + (name[:dot] if 0 < dot < len(name) - 1 else name) + ".py"


def _parent(path: str) -> str:
    """``Path(path).parent`` (of an absolute path: its folder; the root's is the root)."""
    return os.path.dirname(path) or "."


def _parents(path: str) -> list[str]:
    """``Path(path).parents``: each folder above ``path``, nearest first, up to the root."""
    found: list[str] = []
    while True:
        above = _parent(path)
        if above == path:
            return found
        found.append(above)
        path = above
