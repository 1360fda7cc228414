"""The project index's shared ground: its state, limits and the records its parts pass
(files' entries, callers found); the parts are ``store`` (summaries, digests, stats,
invalidation), ``search`` (who names X), ``resolve`` (module resolution) and ``queries``
(cross-file questions), composed in :mod:`dllint.project.index`."""

from __future__ import annotations

from abc import abstractmethod
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dllint.deps import Deps
from dllint.facts.flow.records import CallShape, Effects, FileSummary, FunctionSummary

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.project.class_text import ClassText
    from dllint.project.imports import ImportBinding
    from dllint.project.records import FileRecords
    from dllint.facts.flow.model import Constant, Element


SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist", "venv"})  # venvs, build copies
MAX_FOLLOW = 6  # project calls followed from one parameter, transitively
MAX_ANCESTORS = 16  # project classes visited from one base class
MAX_PROJECT_FILES = 50_000
MAX_KEPT_BYTES = 128 * 1024 * 1024  # file contents kept for repeated "who calls X" scans (beyond: re-read per scan)
MAX_REACH_DEPTH = 4  # calls followed from one worker-side function across files, transitively
MAX_REACH_FUNCTIONS = 32  # functions of other files looked at for one question
MAX_CANDIDATES = 8  # files defining a method named like obj.m(): more, and the name says nothing
# Files naming a function's call ("build_loader(") whose calls are read to decide what becomes of
# the value it returns. More, and the name is a common one (main(, train(, run(): its callers are
# not read (each would be summarized), as for a function no other file calls.
MAX_CALLER_FILES = 48
LOADER_GATE = b"DataLoader"  # a file that builds loaders over a class names DataLoader
# Summaries kept by content digest beyond their file's current entry: a file an editor changes
# back and forth (typing, undo) is not summarized again for each state.
MAX_SUMMARIES_BY_CONTENT = 256


@dataclass
class _Entry:
    stat: tuple[int, int]
    summary: FileSummary | None  # summarized when first asked for
    digest: str  # the file's content digest (what dependents record)


@dataclass
class CallRecord:
    line: int
    effects: Effects
    elements: dict[str, Effects] = field(default_factory=dict)  # see CallSummary.elements
    returned_by: str = ""  # see CallSummary.returned_by
    args: dict[str, Constant] = field(default_factory=dict)  # see CallSummary.args
    shape: CallShape = CallShape()  # see CallSummary.shape
    cpu_counts: tuple[str, ...] = ()  # see CallSummary.cpu_counts
    cuda_devices: dict[str, str] = field(default_factory=dict)  # see CallSummary.cuda_devices
    options: dict[str, str] = field(default_factory=dict)  # see CallSummary.options

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


class IndexBase:
    """State shared by the index's parts, and the entry points each part implements."""

    def __init__(self, root: str | Path, settings: Settings) -> None:
        self.root = Path(root).resolve()
        self.settings = settings
        self._entries: dict[str, _Entry] = {}
        self._by_digest: OrderedDict[str, FileSummary] = OrderedDict()  # see MAX_SUMMARIES_BY_CONTENT
        self._files: list[str] | None = None
        self._hay: tuple[bytes, list[int], list[str], list[str]] | None = None  # see _haystack
        self._offsets: dict[str, tuple[int, int]] = {}
        self._callers: dict[tuple[str, str], list[tuple[str, CallRecord]]] = {}
        self._methods: dict[str, list[str] | None] = {}  # files defining a method name (None: too many)
        self._mentions: dict[tuple[bytes, bytes | None], list[str]] = {}
        self._classes: ClassText | None = None  # see SearchIndex._class_text
        self._class_names: frozenset[bytes] | None = None  # see SearchIndex.class_names
        self._joined_classes: tuple[bytes, ClassText] | None = None  # (the joined text, its classes)
        self._loader_classes: tuple[frozenset[bytes], str] | None = None  # see SearchIndex.loader_class_names
        self._stat_table: dict[str, list[int]] | None = None
        self.records: FileRecords | None = None  # kept between runs by a cache (see use_records)
        self._records_fresh = False  # see SearchIndex._refreshed_records
        self.summarized = 0  # files summarized: for tests and benchmarks
        from dllint.project.imports import ImportGraph
        from dllint.project.modules import ModuleResolver

        self.modules = ModuleResolver(self.root, lambda path: self.imports.added_folders(path))
        self.imports = ImportGraph(
            self._import_files,
            self._span,
            self._recorded_bindings,
            self.modules.resolve_once,
            self.modules.resolve_module,
            self.mentions,
            self._path_adding_files,
        )

    def forget(self, path: str, rejoin: bool = True) -> None:
        """Drop what was learnt from ``path``'s old text (it changed). Each part forgets its own
        state and calls on (``super()``); ``rejoin``: whether ``path`` goes back into the joined
        text that answers "who names X" (False: an editor buffer, searched on its own)."""
        self.imports.forget(path)

    # -- implemented by the parts -------------------------------------------------------
    @abstractmethod
    def _read(self, path: str) -> bytes | None:
        ...

    @abstractmethod
    def stat_table(self) -> dict[str, list[int]]:
        ...

    @abstractmethod
    def project_files(self) -> list[str]:
        ...

    @abstractmethod
    def _import_files(self) -> list[str]:
        ...

    @abstractmethod
    def _keyed_files(self, key: str) -> list[str]:
        ...

    @abstractmethod
    def _path_adding_files(self) -> list[str]:
        ...

    @abstractmethod
    def _recorded_bindings(self, path: str) -> list[ImportBinding] | None:
        ...

    @abstractmethod
    def mentions(self, needle: bytes, gate: bytes | None = None) -> list[str]:
        ...

    @abstractmethod
    def _span(self, path: str) -> tuple[bytes, int, int] | None:
        ...

    @abstractmethod
    def resolve(self, from_path: str, target: str, deps: Deps | None = None) -> tuple[str, str] | None:
        ...

    @abstractmethod
    def summary(self, path: str) -> tuple[FileSummary, str] | None:
        ...

    @abstractmethod
    def class_names(self) -> frozenset[bytes]:
        ...

    @abstractmethod
    def loader_class_names(self) -> tuple[frozenset[bytes], str]:
        ...

    @abstractmethod
    def digest(self, path: str) -> str | None:
        ...

    @abstractmethod
    def function(self, from_path: str, target: str, deps: Deps | None = None) -> tuple[str, FunctionSummary, str] | None:
        ...

    @abstractmethod
    def known_digest(self, path: str) -> str:
        ...

    @abstractmethod
    def methods_named(self, name: str, exclude: str = "") -> list[tuple[str, str, FunctionSummary]] | None:
        ...

    @abstractmethod
    def record_method_mentions(self, deps: Deps, path: str, name: str) -> None:
        ...
