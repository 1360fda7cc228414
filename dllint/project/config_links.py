"""Which config blocks the project's code hands to a ``DataLoader`` whole.

A fix that adds a key to a YAML block (``persistent_workers: true``) helps only where the code
passes the block's keys on wholesale: ``DataLoader(ds, **cfg.train.loader)`` (also through
``dict(...)``, ``vars(...)``, ``OmegaConf.to_container(...)``). Code that reads the keys one by
one (``num_workers=config.train.dataloader.num_workers``, yacs, a dict read key by key) never
reads a key it does not name, and yacs' ``merge_from_file`` rejects one its defaults lack
(``KeyError: 'Non-existent config key'``): there the code site's finding is the one.

The evidence is looked for by the block's key path: a splatted expression whose keys end with
it (``cfg.loader`` for the block ``train: loader:``). The files asked are those whose bytes name
the block's last key, ``**`` and ``DataLoader``; each becomes a dep of the config's findings
(:class:`~dllint.deps.CallersDep` for a file that starts naming it, a
:class:`~dllint.deps.SummaryDep` for each that does), so the cache lints the config again when
one of them changes.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from dllint.configs.code_keys import key_chain
from dllint.deps import CallersDep, Deps, SummaryDep

if TYPE_CHECKING:
    from dllint.project.search import TextIndex
    from dllint.project.summaries import Summaries

# One-argument calls that hand their argument's keys on unchanged (``**dict(cfg.loader)``).
KEY_COPIES = frozenset({"dict", "vars", "to_container", "asdict"})
SPLAT = b"**"
LOADER_NAME = "DataLoader"
MAX_CHAIN = 8  # keys followed from a splatted expression down to its root name
MAX_FILES = 256  # files parsed for one key: more, and the question is left unknown (silent)


def splat_keys(expr: ast.expr) -> tuple[str, ...] | None:
    """The keys of ``cfg.train.loader`` / ``cfg["train"]["loader"]`` (the root name left out),
    outermost first; None for anything else (a bare name, a call's result, a computed key)."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords and _called_name(expr.func) in KEY_COPIES:
        expr = expr.args[0]
    chain = key_chain(expr)
    return chain[1] if chain is not None and len(chain[1]) <= MAX_CHAIN else None


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def loader_splats(tree: ast.Module) -> set[tuple[str, ...]]:
    """The key paths a module splats into a ``DataLoader(...)`` call."""
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node.func) == LOADER_NAME:
            for keyword in node.keywords:
                keys = splat_keys(keyword.value) if keyword.arg is None else None
                if keys:
                    found.add(keys)
    return found


class ConfigLinks:
    """The answers for one project index: each file's splatted key paths, by content digest."""

    def __init__(self, text: TextIndex, summaries: Summaries) -> None:
        self.text, self.summaries = text, summaries
        self._splats: dict[str, tuple[str, frozenset[tuple[str, ...]]]] = {}  # path: (digest, key paths)
        self._files: dict[bytes, list[str]] = {}  # a key: the files that may splat it (asked by every block named so)

    def forget(self, path: str) -> None:
        self._splats.pop(path, None)
        self._files.clear()

    def handed_whole(self, key_path: tuple[str, ...], deps: Deps) -> bool:
        """Some project file splats a mapping whose keys end with ``key_path`` into a DataLoader."""
        if not key_path or any(key.startswith("[") for key in key_path):
            return False  # the file itself, or an item of a list: no expression names it
        needle = key_path[-1].encode()
        deps.add(CallersDep(needle, SPLAT))
        files = self._candidates(needle)
        if len(files) > MAX_FILES:
            return False
        found = False
        for path in files:
            digest = self.summaries.digest(path)
            if digest is None:
                continue
            deps.add(SummaryDep(path, digest))
            found = found or any(key_path[-len(keys) :] == keys for keys in self._file_splats(path, digest) if len(keys) <= len(key_path))
        return found

    def _candidates(self, needle: bytes) -> list[str]:
        """The files that name ``needle`` after a ``**`` on one line, and name DataLoader."""
        found = self._files.get(needle)
        if found is None:
            splat = re.compile(rb"\*\*[^,;\n]*\b" + re.escape(needle) + rb"\b")
            found = self._files[needle] = [
                path for path in self.text.mentions(needle, SPLAT)
                if self.text.names(path, LOADER_NAME.encode()) and splat.search(self.text.read(path) or b"")
            ]
        return found

    def _file_splats(self, path: str, digest: str) -> frozenset[tuple[str, ...]]:
        kept = self._splats.get(path)
        if kept is not None and kept[0] == digest:
            return kept[1]
        try:
            tree = ast.parse(self.text.read(path) or b"", path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = ast.Module(body=[], type_ignores=[])  # a file that does not parse hands nothing on
        found = frozenset(loader_splats(tree))
        self._splats[path] = (digest, found)
        return found
