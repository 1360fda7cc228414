"""The project's import graph: which files bind a name to which definition, as Python does.

"The callers of ``make``" are the files whose import bindings resolve to *that* ``make``
(``from .helpers import make``, ``import pkg.helpers as h`` then ``h.make``, ``from
pkg.helpers import *``), never the files whose text names it: a course repository that copies
``make`` into every chapter has one ``make`` per chapter, each with its own callers.

Read from each project file's import statements (a byte search for ``import``, each statement
read by a small anchored pattern: no file is parsed). The first questions read only the files
whose bytes hold the name asked (every importer names it: one search of the project's bytes per
name), so a one-file run reads few; past LAZY_SEARCHES names, every file's imports are read once
and resolved lazily, one imported name at a time, each binding once: a question is then a
dictionary look-up, so a project of N files with N helpers costs O(N), not O(N²).

The scan reads import statements wherever they stand (functions, ``try:`` blocks), and also
in strings that look like them: a binding too many makes a file an importer that calls
nothing, which keeps the answers that need every caller unknown (silent), never wrong.
"""

from __future__ import annotations

import functools
import os
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Callable, NamedTuple

from dllint.project.sources import python_text
from dllint.project.syspath import path_additions

if TYPE_CHECKING:
    from collections.abc import Iterable

# One import statement from the start of its line: ``from .m import a, b as c`` (parenthesised
# over several lines, or continued by backslashes) or ``import a.b as c, d``.
_STATEMENT = re.compile(
    rb"[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n#;\\]|\\\r?\n)*)"
    rb"|import[ \t]+((?:[^\n#;\\]|\\\r?\n)*))"
)
_ALIAS = re.compile(r"^([\w.]+|\*)(?:\s+as\s+(\w+))?$")
MAX_REEXPORTS = 4  # re-exports followed from one binding (``from .data import *`` in __init__ ...)
# Names answered one by one (a search of the project's bytes for each, then the imports of the
# files that hold it) before every file's imports are read once: a one-file run asks a few names,
# a project run hundreds. Reading every file's imports costs about 14 such searches (the corpus:
# 0.30 s against 22 ms per search), so the table is built once about half of that is spent.
LAZY_SEARCHES = 8


class ImportBinding(NamedTuple):
    """One name an import statement binds in ``file``: ``local`` (``"*"`` for a star import)
    to ``target`` (:class:`~dllint.facts.flow.targets.Target` text, ``"1:data.make"``)."""

    file: str
    local: str
    target: str

    @property
    def key(self) -> str:
        """The last part of what it imports: the name a question about a definition asks by."""
        return binding_key(self.target)


def binding_key(target: str) -> str:
    """The last part of what a binding's ``target`` imports (Target.parse's dotted, without a Target)."""
    return target.rstrip("@").partition(":")[2].rsplit(".", 1)[-1]


def scan(path: str, data: bytes, start: int = 0, end: int | None = None) -> list[ImportBinding]:
    """The import bindings in ``data[start:end]`` (one file's bytes), in their order."""
    end = len(data) if end is None else end
    found: list[ImportBinding] = []
    consumed = start
    find, rfind, statement_at = data.find, data.rfind, _STATEMENT.match
    at = find(b"import", start, end)
    known = _STATEMENTS.get
    while at != -1:  # (once per "import" of every project file: bound methods, no helper calls but one)
        if at >= consumed:
            match = statement_at(data, rfind(b"\n", start, at) + 1 or start, end)
            if match is not None:
                stop = match.end()
                if stop > at:
                    groups = match.groups()
                    pairs = known(groups)
                    if pairs is None:
                        pairs = _statement(groups)
                    for local, target in pairs:
                        found.append(_binding(ImportBinding, (path, local, target)))
                    consumed = stop
        at = find(b"import", at + 6, end)
    return found


_binding = tuple.__new__  # an ImportBinding made without NamedTuple's __new__, a Python function (77 k bindings on the corpus)
# A statement's (local, target) pairs by what the pattern read of it: the same statements recur
# across a project's files (49 k statements, 13 k distinct on the benchmark corpus), each read
# once. Emptied when full (an editor session reads the statements of every keystroke's text).
_STATEMENTS: dict[tuple[bytes | None, ...], tuple[tuple[str, str], ...]] = {}
MAX_STATEMENTS = 1 << 16


def _statement(groups: tuple[bytes | None, ...]) -> tuple[tuple[str, str], ...]:
    """The (local, target) pairs of the statement whose pattern groups are ``groups``, kept."""
    if len(_STATEMENTS) >= MAX_STATEMENTS:
        _STATEMENTS.clear()
    pairs = _STATEMENTS[groups] = tuple(_pairs(*groups))
    return pairs


def _pairs(level: bytes | None, module_bytes: bytes | None, names: bytes | None, plain: bytes | None) -> list[tuple[str, str]]:
    """What a statement binds, read from its pattern groups: each (local, target)."""
    found: list[tuple[str, str]] = []
    if plain is not None:  # import a.b.c as d, e
        for dotted, asname in _aliases(plain.decode("utf-8", "replace")):
            if dotted != "*":
                found.append((asname or dotted.partition(".")[0], "0:" + dotted))
        return found
    module = module_bytes.decode("utf-8", "replace") if module_bytes else ""
    depth = f"{len(level)}:" if level else "0:"
    prefix = f"{depth}{module}." if module else depth
    for dotted, asname in _aliases(names.decode("utf-8", "replace").strip("()") if names else ""):
        if dotted == "*":
            found.append(("*", depth + module))
        else:
            found.append((asname or dotted, prefix + dotted))
    return found


def _aliases(text: str) -> list[tuple[str, str | None]]:
    if "\\" in text:
        text = text.replace("\\\n", " ").replace("\\\r\n", " ")
    found: list[tuple[str, str | None]] = []
    for part in text.split(","):
        word = part.strip()
        # Most parts are one plain (dotted) name: what _ALIAS reads them as, without the regex
        # (an ASCII identifier once its dots are letters: [\w.]+ matches it whole).
        if word.isascii() and word.replace(".", "x").isidentifier():
            found.append((word, None))
            continue
        match = _ALIAS.match(" ".join(part.split("#", 1)[0].split()))
        if match is not None:
            found.append((match.group(1), match.group(2)))
    return found


class Importer(NamedTuple):
    """A file that binds a definition: ``local`` names it there (``"*"``: through a star
    import, or an attribute of the module it binds: the file names the definition itself)."""

    file: str
    local: str


class ImportGraph:
    """Who imports what, for one project: an owned part of the index, with its own caches and
    :meth:`forget`. It asks the index only for the project's files, their bytes and where a
    module target lies (the index's resolution, in Python's order)."""

    def __init__(
        self,
        files: Callable[[], Iterable[str]],
        span: Callable[[str], tuple[bytes, int, int] | None],
        recorded: Callable[[str], list[ImportBinding] | None],
        locate: Callable[[str, str], tuple[str, str] | None],
        module_file: Callable[[str, str, bool], str | None],
        mentions: Callable[[bytes], list[str]],
        path_adding: Callable[[], list[str]],
    ) -> None:
        self._files = files  # every project file
        self._span = span  # (bytes, start, end) where a file's bytes lie, None: unreadable
        self._recorded = recorded  # a file's bindings as an earlier run read them (None: not kept)
        self._locate = locate  # (file, target) -> (file, name inside it): no re-export followed
        self._module_file = module_file  # (file, target, with sys.path additions) -> the module file a whole target names
        self._mentions = mentions  # the project files whose bytes hold a needle
        self._path_adding = path_adding  # the project files that name sys.path or addsitedir
        self.lazy_searches = LAZY_SEARCHES  # 0 where the table is read from records (ProjectIndex.use_records)
        # The files binding an import key, where records answer it (ProjectIndex.use_records): a
        # key's bindings are then read from those files alone, never the whole table.
        self.keyed_files: Callable[[str], list[str]] | None = None
        self._scanned: dict[str, list[ImportBinding]] = {}  # file -> its bindings
        self._by_key: dict[str, list[ImportBinding]] | None = None  # every file's, by key (once built)
        self._importers: dict[tuple[str, str], list[Importer]] = {}  # (file, name) -> its importers
        self._lazy_searches = 0  # names searched for before the whole table was read
        self._stale: set[str] = set()
        self._names: dict[str, dict[tuple[str, str], list[Importer]]] = {}  # key -> definition -> importers
        self._modules: dict[str, dict[str, list[ImportBinding]]] = {}  # key -> module file -> bindings
        self._defines: dict[tuple[str, str], bool] = {}
        self._adders: dict[str, list[str]] | None = None  # module key -> files that add to sys.path
        self._added: dict[str, list[str]] = {}  # file -> folders it (or a module it imports) adds
        self._own_folders: dict[str, list[str]] = {}  # file -> folders it adds itself

    # -- questions -------------------------------------------------------------------------
    def importers(self, path: str, name: str) -> list[Importer]:
        """The other files whose bindings resolve to ``name`` (a module-level function or class
        of ``path``; ``Cls.method``: its class), directly or through the module that holds it.
        Every such file names it: until the whole table is read (:meth:`_table`), only the files
        whose bytes hold the name are read, for at most LAZY_SEARCHES names."""
        first = name.split(".", 1)[0]
        key = (path, first)
        found = self._importers.get(key)
        if found is None:
            if self._by_key is None and self._lazy_searches < self.lazy_searches:
                self._lazy_searches += 1
                mentions = set(self._mentions(first.encode()))
                if path.endswith("__init__.py"):  # a package's importers name the package (its names may come by stars)
                    mentions.update(self._mentions(module_key(path).encode()))
                candidates = sorted(f for f in mentions if f != path)
                found = self._importers_among(candidates, path, first)
            else:
                found = self._importers_from_table(path, first)
            self._importers[key] = found  # (before the packages' own: a cycle of star imports ends here)
            found.extend(self._through_packages(path, first, found))
        return found

    def _through_packages(self, path: str, name: str, found: list[Importer]) -> list[Importer]:
        """A package's ``__init__.py`` that star-imports the module re-exports ``name``: the
        files importing the package bind it too (``import pkg; pkg.load(...)`` with
        ``from .data import *`` there and ``from .loaders import *`` in ``data/__init__.py``)."""
        more: list[Importer] = []
        for importer in found:
            if importer.local == "*" and importer.file.endswith("__init__.py"):
                more.extend(i for i in self.importers(importer.file, name) if i.file != path and i not in found and i not in more)
        return more

    def importer_files(self, path: str, name: str) -> list[str]:
        """The files of :meth:`importers`, each once, in path order."""
        return sorted({importer.file for importer in self.importers(path, name)})

    def _importers_among(self, files: list[str], path: str, name: str) -> list[Importer]:
        found: list[Importer] = []
        stem = module_key(path)
        for file in files:
            for binding in self.bindings(file):
                if binding.key == name and binding.local != "*" and self._definition(file, binding.target) == (path, name):
                    found.append(Importer(file, binding.local))
                elif binding.key == stem and self._module_file(file, binding.target, True) == path and self._names_module(file, name, binding):
                    found.append(Importer(file, _read_as(binding, name)))
        return sorted(set(found))

    def _importers_from_table(self, path: str, name: str) -> list[Importer]:
        found = [i for i in self._named(name).get((path, name), ()) if i.file != path]
        for binding in self._by_module(module_key(path)).get(path, ()):
            if binding.file != path and self._names_module(binding.file, name, binding):
                found.append(Importer(binding.file, _read_as(binding, name)))
        return sorted(set(found))

    def added_folders(self, path: str) -> list[str]:
        """The folders ``path`` adds to ``sys.path`` before its imports run: its own
        ``sys.path.insert``/``append`` calls, and those of the project modules it imports (the
        ``import _init_paths`` idiom), see :mod:`dllint.project.syspath`."""
        found = self._added.get(path)
        if found is None:
            adders = self._path_adders()
            files = [path] if path in adders.get(module_key(path), ()) else []
            for binding in self.bindings(path):
                if adders.get(binding.key):
                    module = self._module_file(binding.file, binding.target, False)
                    if module is not None and module in adders[binding.key] and module not in files:
                        files.append(module)
            found = self._added[path] = list(dict.fromkeys(f for file in files for f in self._folders_of(file)))
        return found

    def _path_adders(self) -> dict[str, list[str]]:
        if self._adders is None:
            adders: dict[str, list[str]] = defaultdict(list)
            for path in self._path_adding():
                adders[module_key(path)].append(path)
            self._adders = dict(adders)
        return self._adders

    def _folders_of(self, path: str) -> list[str]:
        """The folders ``path`` itself adds (parsed once: a module adding to ``sys.path`` is
        imported by many files, each asking)."""
        found = self._own_folders.get(path)
        if found is None:
            span = self._span(path)
            found = self._own_folders[path] = path_additions(path, span[0][span[1]:span[2]]) if span is not None else []
        return found

    def bindings(self, path: str) -> list[ImportBinding]:
        """``path``'s own import bindings."""
        found = self._scanned.get(path)
        if found is None:
            found = self._recorded(path)
        if found is None:
            span = self._span(path)
            found = scan_file(path, *span) if span is not None else []
        self._scanned[path] = found
        return found

    def prepare(self) -> None:
        """Read every file's imports, and find the files that add to ``sys.path``, now (before
        forking workers that then share them: each process of a pool otherwise searched the
        project's bytes for ``sys.path`` and ``addsitedir`` again, 55 ms on the benchmark corpus)."""
        if self.keyed_files is not None:
            self.keyed_files("")
        else:
            self._table()
        self._path_adders()

    # -- upkeep ----------------------------------------------------------------------------
    def forget(self, path: str) -> None:
        """``path``'s text changed (or it appeared or went away): its bindings are read again
        and every resolution is made anew (a module may now exist or define another name)."""
        old = self._scanned.pop(path, None)
        self._importers.clear()
        if self._by_key is not None and path not in self._stale:
            self._stale.add(path)
            for binding in old or ():  # its bindings leave the table now; read again at the next question
                self._by_key[binding.key].remove(binding)
        self._names.clear()
        self._modules.clear()
        self._defines.clear()
        self._added.clear()
        self._own_folders.pop(path, None)
        self._adders = None

    # -- the table -------------------------------------------------------------------------
    def _table(self) -> dict[str, list[ImportBinding]]:
        """Every file's bindings by key, read once (then kept up to date file by file)."""
        if self._by_key is None:
            for path in self._files():
                self.bindings(path)
            self._by_key = _keyed(self._scanned.values())
            self._stale.clear()
        elif self._stale:
            for path in self._stale:
                for binding in self.bindings(path):
                    self._by_key.setdefault(binding.key, []).append(binding)
            self._stale.clear()
        return self._by_key

    def _keyed_bindings(self, key: str) -> list[ImportBinding]:
        if self.keyed_files is not None:
            return [b for path in self.keyed_files(key) for b in self.bindings(path) if b.key == key]
        return self._table().get(key, [])

    def _named(self, key: str) -> dict[tuple[str, str], list[Importer]]:
        """Every binding that imports a name ``key``, grouped by the definition it resolves to."""
        found = self._names.get(key)
        if found is None:
            grouped: dict[tuple[str, str], list[Importer]] = defaultdict(list)
            for binding in self._keyed_bindings(key):
                if binding.local == "*":
                    continue
                where = self._definition(binding.file, binding.target)
                if where is not None:
                    grouped[where].append(Importer(binding.file, binding.local))
            found = self._names[key] = dict(grouped)
        return found

    def _by_module(self, key: str) -> dict[str, list[ImportBinding]]:
        """Every binding whose whole target is a module named ``key``, grouped by its file."""
        found = self._modules.get(key)
        if found is None:
            grouped: dict[str, list[ImportBinding]] = defaultdict(list)
            for binding in self._keyed_bindings(key):
                module = self._module_file(binding.file, binding.target, True)
                if module is not None:
                    grouped[module].append(binding)
            found = self._modules[key] = dict(grouped)
        return found

    def _definition(self, file: str, target: str, depth: int = 0) -> tuple[str, str] | None:
        """(file, name) where the name ``target`` imports in ``file`` is defined: re-exports
        followed (``from .data import make`` or ``from .data import *`` in ``__init__.py``)."""
        found = self._locate(file, target)
        if found is None or depth >= MAX_REEXPORTS:
            return found
        where, name = found
        first = name.split(".", 1)[0]
        if not first or self._defined(where, first):
            return where, first
        bindings = self.bindings(where)
        for binding in reversed(bindings):  # the last binding of a name wins
            if binding.local == first:
                return self._definition(where, binding.target, depth + 1)
        for binding in bindings:
            if binding.local == "*":
                module = self._module_file(where, binding.target, True)
                if module is not None and self._defined(module, first):
                    return module, first
        return where, first

    def _defined(self, path: str, name: str) -> bool:
        """``path`` defines ``name`` at module level (``def``, ``class`` or an assignment)."""
        key = (path, name)
        known = self._defines.get(key)
        if known is None:
            span = self._span(path)
            known = self._defines[key] = span is not None and _definition_of(name).search(*span) is not None
        return known

    def _names_module(self, path: str, name: str, binding: ImportBinding) -> bool:
        """A file binding a module may use its ``name``: it names it, or it is a package's
        ``__init__.py`` re-exporting the module's names by a star import."""
        return binding.local == "*" and path.endswith("__init__.py") or self._names_word(path, name)

    def _names_word(self, path: str, name: str) -> bool:
        span = self._span(path)
        return span is not None and _word(name).search(*span) is not None


def scan_file(path: str, data: bytes, start: int, end: int) -> list[ImportBinding]:
    """A project file's bindings; a notebook's from its code cells (its JSON text holds them in
    strings, where no statement starts a line)."""
    if path.endswith(".ipynb"):
        text = python_text(path, data[start:end]).encode()
        return scan(path, text)
    return scan(path, data, start, end)


@functools.lru_cache(maxsize=1024)
def _definition_of(name: str) -> re.Pattern[bytes]:
    """A module-level ``def``, ``class`` or assignment of ``name``."""
    word = re.escape(name.encode())
    return re.compile(rb"(?m)^(?:(?:async[ \t]+)?def|class)[ \t]+" + word + rb"\b|^" + word + rb"[ \t]*(?::[^=\n]*)?=(?!=)")


@functools.lru_cache(maxsize=1024)
def _word(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"(?<!\w)" + re.escape(name.encode()) + rb"(?!\w)")


def _keyed(tables: Iterable[list[ImportBinding]]) -> dict[str, list[ImportBinding]]:
    found: dict[str, list[ImportBinding]] = defaultdict(list)
    keys: dict[str, str] = {}  # target -> its binding_key (77 k bindings, 18 k targets on the benchmark corpus)
    for bindings in tables:
        for binding in bindings:
            target = binding[2]
            key = keys.get(target)
            if key is None:
                key = keys[target] = binding_key(target)
            found[key].append(binding)
    return dict(found)


def _read_as(binding: ImportBinding, name: str) -> str:
    """How a file binding a module reads its ``name``: ``"*"`` (a star import), ``data.name``
    (``import data``, ``from . import data``, ``import pkg.data as data``), ``pkg.data.name``
    (``import pkg.data`` binds ``pkg``)."""
    if binding.local == "*":
        return "*"
    depth, _, dotted = binding.target.partition(":")
    plain = depth == "0" and dotted.partition(".")[0] == binding.local  # import pkg.data
    return f"{dotted if plain else binding.local}.{name}"


def module_key(path: str) -> str:
    """The name a module file is imported by: its stem, or its package's for ``__init__.py``."""
    folder, name = os.path.split(path)
    if name == "__init__.py":
        return os.path.basename(folder)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name  # (Path.stem's)
