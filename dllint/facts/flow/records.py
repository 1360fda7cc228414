"""The records a file's summary is made of: the flow engine's result for a file, what the
project index answers other files' questions from."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:
    from dllint.facts.flow.model import Constant


class Copies(NamedTuple):
    """How a value's batches are copied to CUDA somewhere (a function of another file, one a
    batch is handed to): ``kind`` "cuda" always, "maybe" (CUDA if available), "" not at all;
    ``non_blocking``: some copy asks to be asynchronous (pageable memory makes it synchronous)."""

    kind: str = ""
    non_blocking: bool = False

    def __bool__(self) -> bool:
        return bool(self.kind)

    def join(self, other: Copies) -> Copies:
        """Both places' copies: "cuda" wins over "maybe"; asynchronous if either asks."""
        kind = "cuda" if "cuda" in (self.kind, other.kind) else self.kind or other.kind
        return Copies(kind, self.non_blocking or other.non_blocking)


@dataclass
class Effects:
    """What code does with one value it receives (a parameter, or a call's result)."""

    iterations: int = 0  # 0, 1, 2 = more than once
    per_epoch: bool = False  # iterated inside a loop that repeats it
    stores: bool = False  # kept (self.X, a container) or returned with nobody to claim it
    returns: bool = False  # handed back to the caller (a parameter only)
    unknown: bool = False  # passed to code outside the project
    set_epoch: bool = False  # set_epoch may be called on it (or on its sampler)
    cuda_copy: Copies = Copies()  # how its batches are copied to CUDA
    # parameters of its function naming the device its batches are copied to (``X.to(device)``,
    # ``device`` handed in by callers of other files: each call's own CUDA devices decide)
    copy_devices: list[str] = field(default_factory=list)
    # [target, argument, in_loop]: project calls it goes on to; a fourth item: a dict holding it
    # is what goes on, and the callee's entry at that path ("['val'].dataloader"; "*": the one
    # asked about) decides (see FunctionSummary.entries); a trailing dict: the CUDA devices the
    # call passes (see CallSummary.cuda_devices), for the callee's ``copy_devices``
    follow: list[list[Any]] = field(default_factory=list)
    # what the loops that re-iterate it change on its dataset between passes: "X" for
    # ``loader.dataset.X = ...``, "m()" for ``loader.dataset.m(...)`` (the dataset's class,
    # in the loader's file, says whether its workers read it: DL201 is silent then)
    dataset_changes: list[str] = field(default_factory=list)
    # [base target, method, overriding methods]: a pass in a method a base of another module may
    # loop over (facts/inherited_loops.py: resolved where the project answers)
    inherited: list[list[Any]] = field(default_factory=list)
    evaluation: bool = False  # every pass is an evaluation pass (no gradients, no step): its order does not matter (DL301)
    draws: bool = False  # every pass draws one batch (``next(iter(loader))``): a sample, not an epoch (DL203)
    # methods of the class a constructor keeps the value on (``self.loader = loader``) that pass
    # over it once per call, no loop of the class repeating them: the caller's loops around its
    # calls on the instance (``val = Test(model, loader)``, ``val.run_epoch()``) decide (D2)
    methods: list[str] = field(default_factory=list)

    def merge(self, other: Effects, repeated: bool = False) -> None:
        """Add what ``other`` does (``repeated``: it runs once per pass of a loop here)."""
        if other.iterations:
            self.evaluation = other.evaluation and (self.evaluation or not self.iterations)
            self.draws = other.draws and (self.draws or not self.iterations)
        self.iterations = min(2, self.iterations + other.iterations)
        self.per_epoch |= other.per_epoch or repeated and other.iterations > 0
        self.stores |= other.stores
        self.unknown |= other.unknown
        self.set_epoch |= other.set_epoch
        self.cuda_copy = self.cuda_copy.join(other.cuda_copy)
        self.dataset_changes += [c for c in other.dataset_changes if c not in self.dataset_changes]
        self.inherited += [i for i in other.inherited if i not in self.inherited]
        self.methods += [m for m in other.methods if m not in self.methods]

    @property
    def empty(self) -> bool:
        return self == Effects()


@dataclass
class Returned:
    """A loader, sampler or dataset a function returns, with what is known of its arguments."""

    kind: str  # "loader", "sampler", "dataset", "instance" (of a class of the same file)
    name: str  # the class as the file names it (qualified through its imports)
    args: dict[str, Any] = field(default_factory=dict)  # arguments that resolve to JSON constants
    random: bool = False  # a random or distributed sampler (a training loader's)
    endless: bool = False  # a sampler that never ends


@dataclass
class FunctionSummary:
    """What a project function does with its parameters and returns, as other files' lints see it."""

    params: list[str]  # positional parameters, ``self`` included for methods
    kwonly: list[str]
    method: bool
    effects: dict[str, Effects]
    returns: list[Returned] = field(default_factory=list)
    worker_info: bool = False  # it, or a same-file function it calls, consults get_worker_info() (DL302)
    epoch_state: bool = False  # it, or a same-file function it calls, reads current_epoch/global_step/.trainer (DL201)
    abstract: bool = False  # only raises NotImplementedError: a subclass's override runs instead
    # What the index follows on from it: targets of calls into other modules ("0:pkg.f") and
    # ".m" for obj.m() on an object of unknown class (see WorkerCode.method_on_other).
    onward: list[str] = field(default_factory=list)
    # Parameters that hold dicts read under constant keys: what happens to each entry, by
    # path ("['val']", "['val'].dataloader"); "?": what reaches any entry (the dict handed on
    # to another file, a values() loop). A key read but a path under it not recorded, or
    # no "?" (the dict escapes where it cannot be followed): undecidable.
    entries: dict[str, dict[str, Effects]] = field(default_factory=dict)
    # Parameters whose value (a batch handed in: itself, its items, fields, views) is copied to
    # CUDA here or in a same-file function it goes to; and the calls into other modules it goes
    # on to, [target, argument] (".m" for obj.m() of unknown class).
    copies: dict[str, Copies] = field(default_factory=dict)
    copy_onward: dict[str, list[list[str]]] = field(default_factory=dict)

    def parameter(self, argument: str, bound: bool) -> str | None:
        """The parameter an argument lands in: ``"0"`` (position) or a keyword."""
        if argument.isdigit():
            positional = self.params[1:] if bound and self.method else self.params
            index = int(argument)
            return positional[index] if index < len(positional) else None
        return argument if argument in self.params or argument in self.kwonly else None


class CallShape(NamedTuple):
    """What a call passes, whatever the values: how many positional arguments, which keywords,
    and whether a ``*starred`` or ``**splat`` hides more (then the rest is unknown)."""

    positional: int = 0
    keywords: tuple[str, ...] = ()
    hidden: bool = True

    def passes(self, position: int | None, keyword: str) -> bool | None:
        """Whether the call passes the parameter at ``position`` (None: keyword-only) named
        ``keyword``; None when a splat hides it."""
        if keyword in self.keywords or position is not None and position < self.positional:
            return True
        return None if self.hidden else False


@dataclass
class CallSummary:
    """A call a project file makes to a project function, and what the caller does with its result."""

    target: str
    line: int
    effects: Effects
    # The result taken apart as a tuple or list (``train, val = build_loaders()``, ``for dl
    # in get_loaders()``): what happens to each element, by position ("*": every element),
    # record field ("dataloader") or dict key ("['train']", see usage.DictKey).
    elements: dict[str, Effects] = field(default_factory=dict)
    # ``return other.build_loader(cfg)`` in a function of this file ("f", "Cls.m"): what
    # happens to the result is for that function's callers to say.
    returned_by: str = ""
    # The JSON constants the call passes (as its file resolves them: literals, names bound
    # once, argparse defaults, dict literals' entries), by position ("0") and keyword: a factory returning
    # under ``if task == "pretrain":`` reaches this caller only if its constants admit it.
    args: dict[str, Constant] = field(default_factory=dict)
    shape: CallShape = CallShape()
    cpu_counts: tuple[str, ...] = ()  # arguments (position "0", keyword) that are the CPU count
    # arguments that are CUDA devices: "cuda" (always) or "maybe" (cuda if available), by key
    cuda_devices: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)  # arguments a command-line option sets: key -> "--workers"
    # arguments that are dict literals of JSON constants (``kwargs = {"num_workers": 1}``), by
    # key: one dict per branch of ``{...} if cond else {}`` (loader options a factory splats)
    dicts: dict[str, list[dict[str, Constant]]] = field(default_factory=dict)
    # the line of the call in a loop that builds the result anew and makes one pass over it each
    # pass (this call, or a call of a function here that hands it back: facts/rebuilt.py); 0: none
    rebuilt: int = 0


@dataclass
class ClassSummary:
    """A project class as other files' lints see it: its bases and what it is (a loader, a sampler)."""

    bases: list[str]
    endless: bool = False  # __iter__ never ends (a sampler)
    keeps_iterator: bool = False  # a loader subclass that keeps one iterator
    loader: bool = False  # a DataLoader subclass as its own file sees it (torch's, a library's, a local one's)
    own_iter: bool = False  # defines __iter__ that never reaches torch's iterator (a thread-pool loader)
    names_pin: bool = False  # its code names pin_memory (a loader subclass may then pin by default)
    generators: list[str] = field(default_factory=list)  # self.X random generators its methods draw from
    stored_generators: list[str] = field(default_factory=list)  # self.X random generators its __init__ stores
    hooks: dict[str, list[str]] = field(default_factory=dict)  # framework hook it defines -> self.X it returns
    stores: dict[str, list[str]] = field(default_factory=dict)  # method m -> X of self.X = self.m(...) in its methods
    devices: dict[str, str] = field(default_factory=dict)  # self.X its methods store -> its device kind (inherited_devices)
    loop_calls: dict[str, list[str]] = field(default_factory=dict)  # method -> self.m() it calls in its loops (inherited_loops)


@dataclass
class LoaderSummary:
    """A loader of this file whose dataset is built by a call into another module."""

    dataset: str  # the target constructing the dataset
    line: int
    multi_worker: bool  # num_workers not provably 0
    worker_init: bool  # worker_init_fn given (or maybe given through a splat)


class ImportedUse(NamedTuple):
    """What a file does with a module-level name it imports from another project module
    (``from data import train_loader``, or ``data.train_loader`` of ``import data``): the
    ``effects`` of every read of it, its own functions run as a same-file module-level
    value's are (see :meth:`FileSummary.imported`); ``line``: the first line that iterates it
    (one that repeats a pass first), 0 where none does."""

    line: int
    effects: Effects


class FileSummary:
    """The flow engine's result for one file, as other files' lints ask for it. Its parts are
    computed when first asked for (see :func:`dllint.facts.flow.summary.summarize`): a query
    names one function, or the calls of one name into other modules, not all of them."""

    def __init__(
        self,
        functions: Mapping[str, FunctionSummary] | None = None,
        calls: Callable[[str | None], list[CallSummary]] | None = None,
        classes: Mapping[str, ClassSummary] | None = None,
        loaders: list[LoaderSummary] | Callable[[], list[LoaderSummary]] | None = None,
        imports: dict[str, str] | None = None,
        set_epoch: bool = False,
        imported: Callable[[str], ImportedUse | None] | None = None,
    ) -> None:
        self.functions: Mapping[str, FunctionSummary] = functions if functions is not None else {}
        self._calls = calls
        self._calls_by_name: dict[str | None, list[CallSummary]] = {} if calls is not None else {None: []}
        self.classes: Mapping[str, ClassSummary] = classes if classes is not None else {}
        self._loaders = loaders if loaders is not None else []
        self.imports = imports if imports is not None else {}
        self.set_epoch = set_epoch
        self._imported = imported
        self._imported_by_name: dict[str, ImportedUse | None] = {}

    def imported(self, local: str) -> ImportedUse | None:
        """What the file does with the imported name ``local`` (``"train_loader"``, or
        ``"data.train_loader"`` read off a module it imports); None when the file binds no such
        name at module level (an import inside a function: unknown)."""
        if local not in self._imported_by_name:
            self._imported_by_name[local] = self._imported(local) if self._imported is not None else None
        return self._imported_by_name[local]

    @property
    def loaders(self) -> list[LoaderSummary]:
        """Loaders whose dataset is built by a call into another module (found when first asked for)."""
        if callable(self._loaders):
            self._loaders = self._loaders()
        return self._loaders

    @property
    def calls(self) -> list[CallSummary]:
        """Calls into other modules whose result the file uses, and what it does with it."""
        return self.calls_named(None)

    def calls_named(self, last: str | None) -> list[CallSummary]:
        """:attr:`calls` of targets whose dotted name ends with ``last`` (None: all)."""
        found = self._calls_by_name.get(last)
        if found is None:
            every = self._calls_by_name.get(None)
            if every is not None:
                found = [call for call in every if call.target.rstrip("@").endswith(last or "")]
            else:
                assert self._calls is not None
                found = self._calls(last)
            self._calls_by_name[last] = found
        return found


_Summary = TypeVar("_Summary")


class Deferred(Mapping[str, _Summary], Generic[_Summary]):
    """A file's function (or class) summaries by name, each computed the first time it is asked
    for: a query names one function (``build_loader``) or class, and summarizing every one of a
    big module costs most of a cross-file lint (transformers' ``trainer.py`` has hundreds)."""

    def __init__(self, names: dict[str, None], summarize: Callable[[str], _Summary]) -> None:
        self._names = names
        self._summarize = summarize
        self._done: dict[str, _Summary] = {}

    def __getitem__(self, name: str) -> _Summary:
        found = self._done.get(name)
        if found is None:
            if name not in self._names:
                raise KeyError(name)
            found = self._done[name] = self._summarize(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names
