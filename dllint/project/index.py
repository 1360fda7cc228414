"""The project index: summaries of the project's files, computed lazily, and the questions
rules ask across files.

Lazy and byte-gated, so a one-file run stays fast: a file is summarized only when a rule
follows a call into it (:meth:`ProjectIndex.summary`), and "who calls ``build_loader``"
summarizes only the files whose bytes contain ``build_loader``
(:meth:`ProjectIndex.callers_of`). Summaries are kept by the content digest of their file
in a store (:class:`MemoryStore` here; the run's cache when there is one), so a warm run
re-summarizes only the files that changed.
"""

from __future__ import annotations

import ast
import os
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from dllint.discovery import ROOT_MARKERS, find_project_root  # noqa: F401 - found without the index (a one-file run)
from dllint.facts.flow.model import admitted
from dllint.facts.flow.queries import CallerEffects
from dllint.facts.flow.targets import call_target
from dllint.facts.flow.summary import (
    ClassSummary,
    Effects,
    FileSummary,
    FunctionSummary,
    LoaderSummary,
    Returned,
    NullProject,
    digest_of,
    summarize,
)

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope
    from dllint.facts.config_reads import ConfigRead
    from dllint.facts.flow.model import Constant, Element, Guard
    from dllint.findings import ConfigKey

SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist", "venv"})  # venvs, build copies
MAX_FOLLOW = 6  # project calls followed from one parameter, transitively
MAX_ANCESTORS = 16  # project classes visited from one base class
MAX_PROJECT_FILES = 50_000
MAX_KEPT_BYTES = 64 * 1024 * 1024  # file contents kept for repeated "who calls X" scans
MAX_REACH_DEPTH = 4  # calls followed from one worker-side function across files, transitively
MAX_REACH_FUNCTIONS = 32  # functions of other files looked at for one question
MAX_CANDIDATES = 8  # files defining a method named like obj.m(): more, and the name says nothing
# A ``deps`` key beside file paths: a lint that asked "who names X" depends on which files do
# (a new caller in a file it never read must invalidate it: :meth:`ProjectIndex.reconcile`).
MENTIONS = "\0mentions:"


class SummaryStore(Protocol):
    """Where summaries are kept by the content digest of their file (the run's cache has
    the same two methods)."""

    def get_summary(self, digest: str) -> Any: ...

    def put_summary(self, digest: str, value: Any) -> None: ...


class MemoryStore:
    """Summaries by content digest, for one process."""

    def __init__(self) -> None:
        self.entries: dict[str, Any] = {}

    def get_summary(self, digest: str) -> Any:
        return self.entries.get(digest)

    def put_summary(self, digest: str, value: Any) -> None:
        self.entries[digest] = value


@dataclass
class _Entry:
    stat: tuple[int, int]
    summary: FileSummary
    digest: str  # the summary's digest (what dependents record)


class ProjectIndex:
    def __init__(self, root: str | Path, settings: Settings, store: SummaryStore | None = None) -> None:
        self.root = Path(root).resolve()
        self.settings = settings
        self.store = store if store is not None else MemoryStore()
        self._entries: dict[str, _Entry] = {}
        self._exists: dict[str, bool] = {}
        self._bases: dict[Path, list[Path]] = {}  # see _search_path
        self._files: list[str] | None = None
        self._hay: tuple[bytes, list[int], list[str], list[str]] | None = None  # see _haystack
        self._offsets: dict[str, tuple[int, int]] = {}
        self._callers: dict[tuple[str, str], list[tuple[str, CallRecord]]] = {}
        self._methods: dict[str, list[str] | None] = {}  # files defining a method name (None: too many)
        self._mentions: dict[tuple[bytes, bytes | None], list[str]] = {}
        self._stat_table: dict[str, list[int]] | None = None
        self.summarized = 0  # files summarized (not found in the store): for tests and benchmarks

    def view(self, path: str) -> ProjectView:
        return ProjectView(self, str(Path(path).resolve()))

    # -- summaries -------------------------------------------------------------------
    def summary(self, path: str, data: bytes | None = None) -> tuple[FileSummary, str] | None:
        """(summary, summary digest) of a project file; None when it cannot be read."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        stat = (st.st_mtime_ns, st.st_size)
        entry = self._entries.get(path)
        if entry is not None and entry.stat == stat and data is None:
            return entry.summary, entry.digest
        if data is None:
            data = self._read(path)
            if data is None:
                return None
        import hashlib  # only once a summary is computed (see summary.digest_of)

        content = hashlib.sha256(data).hexdigest()
        if self.own_roots:  # the summary depends on them too (calls into them are recorded)
            content += "+" + ",".join(sorted(self.own_roots))
        text = self.store.get_summary(content)
        summary = None
        if isinstance(text, str):
            try:
                summary = FileSummary.from_json(text)
            except (ValueError, KeyError, TypeError):
                summary = None
        if summary is None:
            try:
                summary = summarize(path, data.decode("utf-8", "replace"), self.settings, own=self.own_roots)
            except Exception:  # noqa: BLE001 - a bug summarizing another file must not fail this one's lint
                summary = FileSummary()
            self.summarized += 1
            text = summary.to_json()
            self.store.put_summary(content, text)
        entry = _Entry(stat, summary, digest_of(text))  # the stored text is to_json's: no re-encoding
        self._entries[path] = entry
        return entry.summary, entry.digest

    @cached_property
    def own_roots(self) -> frozenset[str]:
        """Names dllint otherwise takes for outside packages (``timm``, ``accelerate``) that are
        packages or modules of this project, at its root or under ``src/``: linting timm's own
        repository, calls into ``timm.data`` are followed."""
        from dllint.facts.flow.targets import EXTERNAL_ROOTS

        found: set[str] = set()
        for base in (self.root, self.root / "src"):
            try:
                names = os.listdir(base)
            except OSError:
                continue
            for name in names:
                stem = name[:-3] if name.endswith(".py") else name
                if stem in EXTERNAL_ROOTS and (name.endswith(".py") or _holds_python(os.path.join(base, name))):
                    found.add(stem)
        return frozenset(found)

    def known_digest(self, path: str) -> str:
        """The digest of a summary this index has already read."""
        return self._entries[path].digest

    def summary_digest(self, path: str) -> str | None:
        """The current digest of a file's summary (for a cache checking its dependencies)."""
        found = self.summary(path)
        return None if found is None else found[1]

    def deps_valid(self, deps: dict[str, str]) -> bool:
        """Every summary a file's findings were computed from is still the same (a changed
        body that leaves the summary the same invalidates nothing)."""
        from dllint.project.config_values import CONFIG_DIGEST, config_digest

        for path, digest in deps.items():
            if path.startswith(MENTIONS):
                continue  # kept true by reconcile(), before any lookup
            if (config_digest(path) if digest.startswith(CONFIG_DIGEST) else self.summary_digest(path)) != digest:
                return False
        return True

    def reconcile(self, cache: Any) -> None:
        """Before a run's lookups: drop the cached findings of every file whose lint asked "who
        names X" when a file changed since the last run names X now and was not among the
        files that lint read (a new caller of a factory). A file that stops naming X changes
        its summary, which ``deps`` already holds."""
        asked = [(path, deps) for path, deps in cache.entries_deps() if any(k.startswith(MENTIONS) for k in deps)]
        if not asked:
            return  # nothing to keep true; the files' stat is taken when such findings are stored
        before, now = cache.meta(self._meta_key()), self.stat_table()
        if before == now:
            return
        cache.put_meta(self._meta_key(), now)
        if not isinstance(before, dict):
            for path, _ in asked:
                cache.drop(path)
            return
        changed = {p: self._read(p) for p, st in now.items() if before.get(p) != st}
        for path, deps in asked:
            needles = [_needles(key) for key in deps if key.startswith(MENTIONS)]
            if any(
                other != path and other not in deps and data is not None and needle in data and (gate is None or gate in data)
                for needle, gate in needles
                for other, data in changed.items()
            ):
                cache.drop(path)

    def remember_files(self, cache: Any, deps_stored: Iterable[dict[str, str]]) -> None:
        """After a run: the project's files as this run saw them, once findings that asked
        "who names X" are stored (what the next run's :meth:`reconcile` compares with)."""
        if self._stat_table is None and any(k.startswith(MENTIONS) for deps in deps_stored for k in deps):
            cache.put_meta(self._meta_key(), self.stat_table())

    def _meta_key(self) -> str:
        return f"project-files:{self.root}"

    def stat_table(self) -> dict[str, list[int]]:
        """Each project ``.py`` file's stat (mtime, size, inode), taken once per run."""
        if self._stat_table is None:
            table: dict[str, list[int]] = {}
            for path in self.project_files():
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                table[path] = [st.st_mtime_ns, st.st_size, st.st_ino]
            self._stat_table = table
        return self._stat_table

    # -- who names X -----------------------------------------------------------------------
    def mentions(self, needle: bytes, gate: bytes | None = None) -> list[str]:
        """Project files whose bytes contain ``needle`` (and ``gate``), in path order."""
        key = (needle, gate)
        found = self._mentions.get(key)
        if found is None:
            hay, starts, paths, rest = self._haystack()
            hits: list[str] = []
            at = hay.find(needle)
            while at != -1:  # one C-speed search per needle, not a Python loop over the files
                i = bisect_right(starts, at) - 1
                hits.append(paths[i])
                at = hay.find(needle, starts[i + 1] if i + 1 < len(starts) else len(hay))
            hits += [p for p in rest if (data := self._read(p)) is not None and needle in data]
            if gate is not None:
                among = set(self.mentions(gate))
                hits = [p for p in hits if p in among]
            found = self._mentions[key] = sorted(hits)
        return found

    def record_mentions(self, deps: dict[str, str], path: str, needle: bytes, gate: bytes | None = None) -> None:
        """Record in ``deps`` that ``path``'s lint asked who names ``needle``, with the summary
        of every other file that does: a change to what one of them does with it invalidates
        the findings, and :meth:`reconcile` a file that starts naming it."""
        deps[_mentions_key(needle, gate)] = ""
        for other in self.mentions(needle, gate):
            summary = self.summary(other) if other != path else None  # its own edits re-lint it anyway
            if summary is not None:
                deps[other] = summary[1]

    def _haystack(self) -> tuple[bytes, list[int], list[str], list[str]]:
        """Every project file's bytes joined by NUL (an identifier never spans two files), with
        where each starts, read once; files beyond MAX_KEPT_BYTES are listed apart, read per scan."""
        if self._hay is None:
            parts: list[bytes] = []
            starts: list[int] = []
            paths: list[str] = []
            rest: list[str] = []
            size = 0
            for path in self.project_files():
                data = self._read(path)
                if data is None:
                    continue
                if size + len(data) > MAX_KEPT_BYTES:
                    rest.append(path)
                    continue
                self._offsets[path] = (size, size + len(data))
                starts.append(size)
                paths.append(path)
                parts.append(data)
                size += len(data) + 1
            self._hay = (b"\0".join(parts), starts, paths, rest)
        return self._hay

    def _read(self, path: str) -> bytes | None:
        where = self._offsets.get(path)
        if where is not None and self._hay is not None:
            return self._hay[0][where[0] : where[1]]
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return None

    # -- modules -----------------------------------------------------------------------
    def resolve(self, from_path: str, target: str, deps: dict[str, str] | None = None) -> tuple[str, str] | None:
        """(file, name inside it) that a target names, seen from ``from_path``; follows
        re-exports (``from .data import build_loader`` in a package's ``__init__``), recording
        the summaries it reads in ``deps``."""
        for _ in range(4):
            found = self._resolve_once(from_path, target)
            if found is None:
                return None
            path, name = found
            summary = self.summary(path)
            if summary is not None and deps is not None:
                deps[path] = summary[1]
            first = name.split(".")[0]
            if summary is None or not name or first in summary[0].functions or first in summary[0].classes:
                return found
            reexport = summary[0].imports.get(first)
            if reexport is None:
                return found
            rest = name[len(first):]
            from_path, target = path, reexport + rest
        return None

    def _resolve_once(self, from_path: str, target: str) -> tuple[str, str] | None:
        level_text, _, dotted = target.rstrip("@").partition(":")
        level = int(level_text or 0)
        parts = dotted.split(".") if dotted else []
        here = Path(from_path).parent
        if level:
            bases = [here.parents[level - 2] if level > 1 else here] if level - 2 < len(here.parents) else []
        else:
            bases = self._search_path(here)
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

    def function(self, from_path: str, target: str, deps: dict[str, str] | None = None) -> tuple[str, FunctionSummary, str] | None:
        found = self.resolve(from_path, target, deps)
        if found is None:
            return None
        path, name = found
        summary = self.summary(path)
        if summary is None:
            return None
        function = summary[0].functions.get(name)
        if function is None and name in summary[0].classes:  # Cls(...): its __init__, bound
            name = f"{name}.__init__"
            function = summary[0].functions.get(name)
        return None if function is None else (path, function, name)

    def class_summary(self, from_path: str, target: str, deps: dict[str, str] | None = None) -> tuple[str, ClassSummary] | None:
        found = self.resolve(from_path, target, deps)
        if found is None:
            return None
        summary = self.summary(found[0])
        cls = summary[0].classes.get(found[1]) if summary is not None else None
        return None if cls is None else (found[0], cls)

    def ancestors(self, from_path: str, target: str, deps: dict[str, str]) -> list[ClassSummary]:
        """The project class ``target`` names and its ancestors, depth first and left to right,
        through every file their bases are in (each summary read is recorded in ``deps``);
        bases outside the project end the walk (their names stay in ``bases``)."""
        found: list[ClassSummary] = []
        seen: set[tuple[str, str]] = set()

        def visit(path: str, target: str, depth: int) -> None:
            resolved = self.resolve(path, target, deps)
            if resolved is None or resolved in seen or len(seen) >= MAX_ANCESTORS:
                return
            seen.add(resolved)
            summary = self.summary(resolved[0])
            cls = summary[0].classes.get(resolved[1]) if summary is not None else None
            if summary is None or cls is None:
                return
            deps[resolved[0]] = summary[1]
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

    # -- effects across files -------------------------------------------------------------
    def parameter_effects(self, from_path: str, target: str, argument: str, deps: dict[str, str], depth: int = 0) -> Effects | None:
        """What the project function ``target`` does with the argument, following it on
        through other project functions; None when the target is not the project's."""
        found = self._parameter(from_path, target, argument, deps)
        if found is None:
            return None
        path, function, param = found
        effects = function.effects.get(param) if param is not None else None
        return self.expand(path, effects or Effects(), deps, depth)

    def entry_effects(self, from_path: str, target: str, argument: str, entry: str, deps: dict[str, str], depth: int = 0) -> Effects | None:
        """What the project function ``target`` does with the dict entry at path ``entry`` of
        the argument (see FunctionSummary.entries); None when the target is not the project's."""
        found = self._parameter(from_path, target, argument, deps)
        if found is None:
            return None
        path, function, param = found
        entries = function.entries.get(param) if param is not None else None
        effects = entry_effects(entries, entry) if entries else Effects(stores=True)
        return self.expand(path, effects, deps, depth, entry)

    def _parameter(self, from_path: str, target: str, argument: str, deps: dict[str, str]) -> tuple[str, FunctionSummary, str | None] | None:
        """(file, summary, parameter name) of the project function ``target`` receiving
        ``argument`` (a position or keyword), its summary recorded in ``deps``."""
        found = self.function(from_path, target, deps)
        if found is None:
            return None
        path, function, name = found
        deps[path] = self.known_digest(path)
        return path, function, function.parameter(argument, target.endswith("@") or name.endswith(".__init__"))

    def expand(self, path: str, effects: Effects, deps: dict[str, str], depth: int = 0, entry: str = "") -> Effects:
        """``effects`` with its ``follow`` entries resolved (unknown where they lead outside;
        ``entry``: the dict entry a follow of a whole dict is about)."""
        if not effects.follow:
            return effects
        total = replace(effects, follow=[])
        for target, argument, in_loop, *whole in effects.follow:
            if whole:  # the dict holding it goes on: that function's entry decides
                asked = entry if whole[0] == "*" else whole[0]
                inner = self.entry_effects(path, target, argument, asked, deps, depth + 1) if depth < MAX_FOLLOW and asked else None
            else:
                inner = self.parameter_effects(path, target, argument, deps, depth + 1) if depth < MAX_FOLLOW else None
            if inner is None:
                total.unknown = True
                continue
            # What the inner function hands back is not followed further here: a summary
            # records calls by their targets only, not what its file does with their results.
            total.merge(inner, repeated=in_loop)
        return total

    def project_files(self) -> list[str]:
        """The project's ``.py`` files (hidden, virtual-environment and build folders skipped;
        at most MAX_PROJECT_FILES: a root that is a home directory must not stall a run)."""
        if self._files is None:
            files: list[str] = []
            for directory, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
                files += [os.path.join(directory, n) for n in names if n.endswith(".py")]
                if len(files) >= MAX_PROJECT_FILES:
                    break
            self._files = sorted(files[:MAX_PROJECT_FILES])
        return self._files

    def callers_of(self, path: str, name: str) -> list[tuple[str, CallRecord]]:
        """Calls of ``name`` (a function or ``Cls.method`` of file ``path``) in other project
        files, with what each caller does with the result. Only files whose bytes contain the
        name's last part are summarized."""
        key = (path, name)
        cached = self._callers.get(key)
        if cached is not None:
            return cached
        found: list[tuple[str, CallRecord]] = []
        for other in self.mentions(callee_needle(name)):
            if other == path:
                continue
            summary = self.summary(other)
            if summary is None:
                continue
            for call in summary[0].calls:
                if not call.target.rstrip("@").endswith(name.rsplit(".", 1)[-1]):
                    continue
                direct = self._resolve_once(other, call.target)
                if direct == (path, name) or direct is not None and self.resolve(other, call.target) == (path, name):
                    found.append((other, CallRecord(call.line, call.effects, call.elements, call.returned_by, call.args)))
        self._callers[key] = found
        return found

    def methods_named(self, name: str, exclude: str = "") -> list[tuple[str, str, FunctionSummary]] | None:
        """(file, ``Cls.name``, summary) of every method ``name`` of a project class outside
        ``exclude`` that is not a placeholder (only ``raise NotImplementedError``); None when
        more than MAX_CANDIDATES files define a ``name`` (too common a name to say which
        runs). Only files whose bytes contain ``def name(`` are summarized."""
        if name not in self._methods:
            mentioned = self.mentions(method_needle(name))
            self._methods[name] = mentioned if len(mentioned) <= MAX_CANDIDATES else None
        paths = self._methods[name]
        if paths is None:
            return None
        found: list[tuple[str, str, FunctionSummary]] = []
        for path in paths:
            summary = self.summary(path) if path != exclude else None
            for qualified, function in summary[0].functions.items() if summary is not None else ():
                if function.method and qualified.endswith(f".{name}") and not function.abstract:
                    found.append((path, qualified, function))
        return found

    def target_reaches(self, path: str, target: str, flag: str, deps: dict[str, str]) -> bool:
        """The project function ``target`` (called from ``path``), or what it calls on, has the
        summary flag ``flag`` (``worker_info``, ``epoch_state``)."""
        return self._target_reaches(path, target, _Question(flag, deps, path))

    def method_reaches(self, name: str, flag: str, deps: dict[str, str], origin: str) -> bool:
        """Some method ``name`` of a project file other than ``origin`` (the file asking), or
        what it calls on, has ``flag``. A name more than MAX_CANDIDATES files define is not
        followed."""
        return self._method_reaches(name, _Question(flag, deps, origin), 0)

    def _target_reaches(self, path: str, target: str, question: _Question, depth: int = 0) -> bool:
        found = self.function(path, target, question.deps)
        if found is None:
            return False
        question.deps[found[0]] = self.known_digest(found[0])
        return self._reaches(found[0], found[2], found[1], question, depth)

    def _method_reaches(self, name: str, question: _Question, depth: int) -> bool:
        candidates = self.methods_named(name, question.origin)
        self.record_method_mentions(question.deps, question.origin, name)
        for path, qualified, function in candidates or ():
            if self._reaches(path, qualified, function, question, depth):
                return True
        return False

    def _reaches(self, path: str, qualified: str, function: FunctionSummary, question: _Question, depth: int) -> bool:
        key = (path, qualified)
        if key in question.seen or len(question.seen) >= MAX_REACH_FUNCTIONS:
            return False
        question.seen.add(key)
        if getattr(function, question.flag):
            return True
        if depth >= MAX_REACH_DEPTH:
            return False
        for onward in function.onward:
            if onward.startswith("."):
                if self._method_reaches(onward[1:], question, depth + 1):
                    return True
            elif self._target_reaches(path, onward, question, depth + 1):
                return True
        return False

    def record_method_mentions(self, deps: dict[str, str], path: str, name: str) -> None:
        """Record that ``path``'s lint asked which files define a method ``name`` (a file that
        starts defining one re-lints it; see :meth:`reconcile`), with their summaries; when too
        many do to be read, the question alone."""
        needle = method_needle(name)
        if self._methods.get(name) is None:
            deps[_mentions_key(needle)] = ""
        else:
            self.record_mentions(deps, path, needle)

    def loaders_of_class(self, path: str, name: str) -> list[tuple[str, LoaderSummary]]:
        """Loaders in other project files whose dataset is ``name`` (a class of ``path``)."""
        found: list[tuple[str, LoaderSummary]] = []
        for other in self.mentions(name.encode(), LOADER_GATE):
            if other == path:
                continue
            summary = self.summary(other)
            for loader in summary[0].loaders if summary is not None else ():
                if loader.dataset.endswith(name) and self.resolve(other, loader.dataset) == (path, name):
                    found.append((other, loader))
        return found


LOADER_GATE = b"DataLoader"  # a file that builds loaders over a class names DataLoader


def _holds_python(directory: str) -> bool:
    """A package: ``__init__.py``, or (a namespace package) ``.py`` files in it or one level down."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    if any(e.name.endswith(".py") and e.is_file() for e in entries):
        return True
    for entry in entries:
        if entry.is_dir() and not entry.name.startswith("."):
            try:
                if any(name.endswith(".py") for name in os.listdir(entry.path)):
                    return True
            except OSError:
                continue
    return False


def method_needle(name: str) -> bytes:
    """What a file defining a method ``name`` contains."""
    return f"def {name}(".encode()


def callee_needle(name: str) -> bytes:
    """What a caller of ``name`` (``build`` or ``Cls.build``) must contain: its last part."""
    return name.rsplit(".", 1)[-1].encode()


def _mentions_key(needle: bytes, gate: bytes | None = None) -> str:
    """The ``deps`` key saying a lint asked who names ``needle`` (and ``gate``); :func:`_needles` reads it back."""
    return MENTIONS + needle.decode("utf-8", "surrogateescape") + ("\0" + gate.decode() if gate else "")


def _needles(key: str) -> tuple[bytes, bytes | None]:
    needle, _, gate = key[len(MENTIONS):].partition("\0")
    return needle.encode("utf-8", "surrogateescape"), gate.encode() or None


@dataclass
class _Question:
    """One question asked across files (:meth:`ProjectIndex.target_reaches`): the summary flag
    looked for, the asking lint's deps, the asking file, and the functions already looked at."""

    flag: str
    deps: dict[str, str]
    origin: str
    seen: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class CallRecord:
    line: int
    effects: Effects
    elements: dict[str, Effects] = field(default_factory=dict)  # see CallSummary.elements
    returned_by: str = ""  # see CallSummary.returned_by
    args: dict[str, Constant] = field(default_factory=dict)  # see CallSummary.args

    def element(self, index: Element) -> Effects:
        """What the caller does with one element of the returned container: kept where it
        does not take the container apart (as a returned container always was)."""
        key = str(index)
        if key.startswith("["):  # a dict's entry (looping over a dict gives its keys, not its entries)
            return entry_effects(self.elements, key)
        found = self.elements.get(key) or self.elements.get("*")
        return found if found is not None else Effects(stores=True)


def entry_effects(entries: dict[str, Effects], path: str) -> Effects:
    """What happens to the dict entry at ``path`` ("['val']", "['val'].dataloader"), from
    what a summary recorded (see FunctionSummary.entries): its own record; else, when
    nothing reads its key, what reaches any entry; else kept (undecidable)."""
    found = entries.get(path)
    if found is not None:
        return found
    met = any(path.startswith(key) and path[len(key):][:1] in ".[" for key in entries if key.startswith("["))
    if met or "?" not in entries:  # its key is read, but not this path under it: undecidable
        return Effects(stores=True)
    return entries["?"]


@dataclass
class ProjectView(NullProject):
    """What one file's facts see of the project (``facts.project``). Every summary it reads
    is recorded in ``deps`` (path -> summary digest): the file's findings depend on them."""

    index: ProjectIndex
    path: str
    deps: dict[str, str] = field(default_factory=dict)
    summarizing = False

    def _imports(self, facts: FileFacts) -> dict[str, str]:
        table = getattr(facts, "_project_imports", None)
        if table is None:
            from dllint.facts.flow.targets import project_imports

            table = project_imports(facts.tree, self.index.own_roots)
            facts._project_imports = table  # type: ignore[attr-defined]
        return table

    def target_of(self, facts: FileFacts, func: ast.expr, scope: Scope) -> str | None:
        found = call_target(facts, self._imports(facts), func, scope)
        return None if found is None else found[0] + ("@" if found[1] else "")

    # -- flow across files ---------------------------------------------------------------
    def parameter_effects(self, target: str, argument: str) -> Effects | None:
        return self.index.parameter_effects(self.path, target, argument, self.deps)

    def entry_effects(self, target: str, argument: str, entry: str) -> Effects | None:
        """What another file's function does with the dict entry at path ``entry`` of a dict
        handed to it whole."""
        return self.index.entry_effects(self.path, target, argument, entry, self.deps)

    def caller_effects(self, function: str, element: Element | None, guards: tuple[Guard, ...]) -> list[CallerEffects] | None:
        """What the project's other files do with the value ``function`` returns (with
        ``element``: with that element of the tuple or list it returns; ``guards``: the
        parameter tests under which it is returned, which a caller's constants may fail)."""
        return self._effects_by_callers(self.path, function, element, 0, guards)

    def _effects_by_callers(
        self, path: str, name: str, element: Element | None, depth: int, guards: tuple[Guard, ...] = ()
    ) -> list[CallerEffects] | None:
        """What the callers of ``name`` in other files do with its result; None when it has none
        (a caller that discards the result, or never receives it, adds nothing)."""
        found_all: list[CallerEffects] = []
        self.index.record_mentions(self.deps, path, callee_needle(name))
        callers = self.index.callers_of(path, name)
        if not callers:
            return None
        for caller, found in callers:
            if not admitted(guards, found.args):
                continue  # get_loader("finetune") never receives the "pretrain" loader
            self.deps[caller] = self.index.known_digest(caller)
            effects = found.effects if element is None else found.element(element)
            if found.returned_by and depth < MAX_FOLLOW:
                # ``def build_loader(cfg): return _build_loader(cfg)``: its callers decide
                further = self._effects_by_callers(caller, found.returned_by, element, depth + 1)
                if further is not None:
                    found_all += further
                    effects = replace(effects, stores=False)  # not kept: handed on to them
            entry = str(element) if element is not None and str(element).startswith("[") else ""
            effects = self.index.expand(caller, effects, self.deps, 0, entry)
            found_all.append(CallerEffects(f"{os.path.relpath(caller, self.index.root)}:{found.line}", effects))
        return found_all

    def loaders_elsewhere(self, facts: FileFacts, cls: ast.ClassDef) -> list[tuple[str, LoaderSummary]]:
        """Loaders in other project files built over instances of this file's class ``cls``."""
        if not isinstance(facts.scopes.parents.get(cls), ast.Module):
            return []
        self.index.record_mentions(self.deps, self.path, cls.name.encode(), LOADER_GATE)
        found = self.index.loaders_of_class(self.path, cls.name)
        for other, _ in found:
            self.deps[other] = self.index.known_digest(other)
        return [(f"{os.path.relpath(other, self.index.root)}:{loader.line}", loader) for other, loader in found]

    def returned(self, facts: FileFacts, func: ast.expr, scope: Scope) -> list[Returned]:
        """What the project function ``func`` calls returns (:class:`Returned` entries)."""
        target = self.target_of(facts, func, scope)
        if target is None:
            return []
        found = self.index.function(self.path, target, self.deps)
        return found[1].returns if found is not None else []

    def function_summary(self, facts: FileFacts, func: ast.expr, scope: Scope) -> FunctionSummary | None:
        """The summary of the project function ``func`` calls (None: not the project's)."""
        target = self.target_of(facts, func, scope)
        if target is None:
            return None
        found = self.index.function(self.path, target.rstrip("@"), self.deps)
        if found is None:
            return None
        self.deps[found[0]] = self.index.known_digest(found[0])
        return found[1]

    def reaches(self, facts: FileFacts, func: ast.expr, scope: Scope, flag: str) -> bool:
        """The project function ``func`` calls (in another module), or what it calls on, has
        the summary flag ``flag`` (``worker_info``, ``epoch_state``)."""
        target = self.target_of(facts, func, scope)
        return target is not None and self.index.target_reaches(self.path, target.rstrip("@"), flag, self.deps)

    def method_reaches(self, name: str, flag: str) -> bool:
        """A method ``name`` of another project file, or what it calls on, has ``flag``."""
        return self.index.method_reaches(name, flag, self.deps, self.path)

    def methods_named(self, name: str) -> list[str] | None:
        """Where the project's other files define a method ``name`` (placeholders left out);
        None when too many files define one to tell."""
        named = self.index.methods_named(name, exclude=self.path)
        self.index.record_method_mentions(self.deps, self.path, name)
        if named is None:
            return None
        found = [(path, qualified) for path, qualified, _ in named]
        return [f"{os.path.relpath(path, self.index.root)}:{qualified}" for path, qualified in found]

    # -- config files -------------------------------------------------------------------------
    def config_value(self, facts: FileFacts, read: ConfigRead) -> tuple[Any, ConfigKey] | None:
        """(value, :class:`~dllint.findings.ConfigKey`) of the config key ``read``
        (:class:`~dllint.facts.config_reads.ConfigRead`) in the project's config files; the
        files read become deps."""
        from dllint.project.config_values import config_value

        return config_value(read, self.path, str(self.index.root), self.deps)

    # -- classes ----------------------------------------------------------------------------
    def class_fact(self, facts: FileFacts, func: ast.expr, scope: Scope, fact: str) -> bool:
        """A fact of the project class ``func`` constructs (``endless``, ``keeps_iterator``)."""
        found = self.project_class(facts, func, scope)
        return bool(found and getattr(found, fact))

    def project_class(self, facts: FileFacts, func: ast.expr, scope: Scope) -> ClassSummary | None:
        target = self.target_of(facts, func, scope)
        if target is None or target.endswith("@"):
            return None
        found = self.index.class_summary(self.path, target, self.deps)
        if found is None:
            return None
        self.deps[found[0]] = self.index.known_digest(found[0])
        return found[1]

    def named_elsewhere(self, name: str) -> bool:
        """Another project file names ``name`` (a byte scan: it may use this file's class); a
        file that starts naming it invalidates the findings (see :meth:`ProjectIndex.reconcile`)."""
        needle = name.encode()
        self.index.record_mentions(self.deps, self.path, needle)
        return any(other != self.path for other in self.index.mentions(needle))

    def class_ancestors(self, facts: FileFacts, base: ast.expr) -> list[ClassSummary]:
        """The project class the base expression ``base`` (of a class of this file) names, and
        its ancestors in every project file (their summaries become deps)."""
        target = self.target_of(facts, base, facts.scopes.module)
        if target is None or target.endswith("@"):
            return []
        return self.index.ancestors(self.path, target, self.deps)

