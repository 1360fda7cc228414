"""The flow engine's model: the records a loader's (or sampler's, dataset's) flow is told in.

A value is followed from its creation site; each place it reaches is a :class:`Use`: it is
iterated there (:attr:`Move.ITERATE`) or escapes where this file cannot follow it
(:attr:`Move.ESCAPE`), and :class:`How` says which of the ways a value moves ended there.
``Use.loops`` are the loops that repeat the use, across call frames: syntax loops of this
file, or a :class:`RemoteLoop` standing for an epoch loop in another file or a framework.
How often a value is iterated per construction is a :class:`Passes`, whose :func:`join`
(two paths of which one runs) and :func:`then` (one after the other) are explicit. One
question threads one immutable :class:`FlowState` through its steps. See docs/design/flow.md.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum, IntEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Hashable, Mapping, NamedTuple, Union

from dllint.facts.flow.records import Copies

if TYPE_CHECKING:
    from dllint.facts.flow.records import Effects
    from dllint.facts.scopes import Scope
    from dllint.knowledge.frameworks import Hook


class Move(Enum):
    """What happens to the value at a use."""

    ITERATE = "iterate"  # a pass over it starts here (a for, a comprehension, iter(), a framework's loop)
    ESCAPE = "escape"  # it goes where this analysis stops following


class How(Enum):
    """How the value reached the use: for an iteration, who iterates; for an escape, who
    may still decide what becomes of it."""

    HERE = "here"  # iterated by this file's code
    ON_STOP = "on-stop"  # re-``iter``ed on StopIteration: a new pass once the last one ended
    ELSEWHERE = "elsewhere"  # iterated by another project module or a framework
    UNCLAIMED = "unclaimed"  # returned or stored with no caller in view that decides
    UNKNOWN = "unknown"  # handed to code outside the project
    REMOTE = "remote"  # handed to a project function of another file (summaries record the target)
    SET_EPOCH = "set-epoch"  # a caller may call set_epoch on it (or its sampler)
    RETURN = "return"  # a parameter handed back to the caller (summaries only)


@dataclass(frozen=True, eq=False)
class RemoteLoop:
    """An epoch loop outside this file (a caller in another module, a framework's fit loop):
    it repeats an iteration like a ``while`` here would, but has no body in this file.
    ``framework``: a framework's own epoch loop (Lightning's fit loop, Hugging Face's
    ``Trainer``), which calls ``set_epoch`` on the loader's sampler itself."""

    where: str  # shown in messages: "train()", "the framework calling train_dataloader()"
    framework: bool = False
    dataset_changes: tuple[str, ...] = ()  # what it changes on the dataset between passes (Effects.dataset_changes)


Loop = Union[ast.AST, RemoteLoop]
SYNTAX_LOOPS = (ast.For, ast.AsyncFor, ast.While)
EPOCH_LOOPS = (*SYNTAX_LOOPS, RemoteLoop)  # loops that may be an epoch loop (not comprehensions)


class Use(NamedTuple):
    """One place a followed value reaches."""

    kind: Move
    node: ast.AST  # the iterating For/comprehension/call, or the escaping expression
    loops: tuple[Loop, ...]  # loops that repeat this use, outermost first, across call frames
    via: tuple[ast.Call, ...] = ()  # same-file calls the value went through, outermost first
    how: How = How.HERE
    # How.REMOTE: ("pkg.mod.func" target, "0" | "name" argument); a third item, a dict holding
    # the value is what is handed on ("*": the entry asked about; else the entry's path).
    remote: tuple[str, ...] | None = None
    copies: Copies = Copies()  # How.ELSEWHERE: how its batches are copied to CUDA there
    # Returned to a call in another file: (the returning function, "file:line" of the call).
    # Two calls of the function that builds the value build two values (see iteration_count).
    caller: tuple[str, str] | None = None
    # How.UNKNOWN: why this place was left unknown (rules stay silent on it), in words a
    # message or a test can show: "handed to external.fit() outside the project".
    why: str = ""
    # How.REMOTE: the arguments of the call that are CUDA devices (see CallSummary.cuda_devices)
    devices: Mapping[str, str] = MappingProxyType({})
    # Built under this key of a dict comprehension over literal keys (``{k: DataLoader(...) for
    # k in ["train", "val"]}``): one call builds one value per key, each with its own fate.
    entry: str = ""
    # Returned to a call in another file that a loop there makes anew each pass and iterates
    # once: "file:line" of the looping call (CallerEffects.rebuilt; DL204 across modules).
    rebuilt: str = ""
    # How.ELSEWHERE: every pass the other file makes is an evaluation pass (Effects.evaluation)
    evaluation: bool = False
    # How.ELSEWHERE: every pass the other file makes draws one batch (Effects.draws)
    draws: bool = False
    # Made by a file that imports the module-level name the value is bound to ("file:line";
    # Names._importers_uses): after this module ran, so no statement of it starts the pass.
    importer: str = ""
    # A pass in this method of the class that keeps the value on ``self``, once per call of it,
    # no loop of the class repeating it: the calls on the instance decide (Effects.methods).
    method: str = ""

    @property
    def iterates(self) -> bool:
        return self.kind is Move.ITERATE


class Passes(IntEnum):
    """How often one constructed value is iterated. Ordered: the :func:`join` of exclusive
    alternatives is the most either does. An endless pass (a stream re-``iter``ed on
    StopIteration, an endless sampler) is ONCE: one pass that never ends; code outside the
    project contributes NONE (unknown, so nothing is claimed about it)."""

    NONE = 0
    ONCE = 1
    PER_EPOCH = 2  # more than once: in a loop, or two passes one after the other


def join(first: Passes, second: Passes) -> Passes:
    """Two paths of which at most one runs (``if``/``else`` arms, a branch that returns)."""
    return max(first, second)


def then(first: Passes, second: Passes) -> Passes:
    """One path after the other: two single passes are two passes."""
    return Passes(min(Passes.PER_EPOCH, first + second))


class DictKey(NamedTuple):
    """An entry of a dict under a constant string key (``d["train"]``): told apart from a
    record's field of the same name, and shown in summaries as ``['train']``."""

    key: str

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class AnyEntry:
    """Stands for "an entry of a dict under a key not known yet" while a summary records
    what a function does with a whole dict: reads under constant keys are noted in ``met``
    (and followed on their own), what reaches every entry (``values()`` loops, the dict
    handed on to another file) is kept."""

    def __init__(self) -> None:
        self.met: set[str] = set()

    def __str__(self) -> str:
        return "?"


Element = Union[int, str, DictKey, AnyEntry]  # a part of a container: position, field, "*" (any), entry
Path = tuple[Element, ...]  # a part of a part: ``data["val"].dataloader``

Loops = tuple[Loop, ...]  # loops that repeat the value's uses so far, outermost first, across call frames
Via = tuple[ast.Call, ...]  # same-file calls the value went through, outermost first
Seen = frozenset[Hashable]  # the steps already taken on this path (a recursion guard)


class Question:
    """What one flow question (one ``loader_uses``, ``parameter_uses``... call) shares across
    all its paths: the steps taken so far (bounded by ``MAX_STEPS``: a value fanning out through
    many calls is given up on) and, for a summary, the function whose parameter it describes
    (a ``return`` of the value there is reported, not followed to callers)."""

    __slots__ = ("steps", "summarizing")

    def __init__(self, summarizing: ast.AST | None = None) -> None:
        self.steps = 0
        self.summarizing = summarizing


class FlowState(NamedTuple):
    """Where one path of a flow question stands: the scope it reads names in, the loops
    around it so far, the same-file calls the value came through, the steps this path has
    taken (a recursion guard) and the question it belongs to. Immutable: a step that moves
    on builds the next state with the helpers below (a NamedTuple: cheap to build, and this
    recursion runs ~100k times on big files)."""

    scope: Scope
    loops: Loops
    via: Via
    seen: Seen
    question: Question

    @classmethod
    def start(cls, scope: Scope, summarizing: ast.AST | None = None) -> FlowState:
        """A new question, asked in ``scope``."""
        return cls(scope, (), (), frozenset(), Question(summarizing))

    def marked(self, key: Hashable) -> FlowState:
        """This path has now taken step ``key``."""
        return FlowState(self.scope, self.loops, self.via, self.seen | {key}, self.question)

    def inside(self, loops: Loops) -> FlowState:
        """The same place under the loops ``loops`` (those around the node, say)."""
        return FlowState(self.scope, loops, self.via, self.seen, self.question)

    def at(self, scope: Scope, loops: Loops = ()) -> FlowState:
        """The same value read in another frame of this call path (``self.X`` in a method)."""
        return FlowState(scope, loops, self.via, self.seen, self.question)

    def through(self, call: ast.Call, scope: Scope, loops: Loops = (), key: Hashable | None = None) -> FlowState:
        """Past the same-file ``call`` (into the function it calls, or out to it from there),
        in ``scope`` under ``loops``; ``key``: the step taken by going through."""
        seen = self.seen if key is None else self.seen | {key}
        return FlowState(scope, loops, self.via + (call,), seen, self.question)

    def leaving(self, scope: Scope, loops: Loops) -> FlowState:
        """Back out of the last call of ``via`` (the function hands the value back to it)."""
        return FlowState(scope, loops, self.via[:-1], self.seen, self.question)


def path_key(parts: tuple[Element, ...]) -> str:
    """An element path as summaries write it: ``0``, ``dataloader``, ``['val']``,
    ``['val'].dataloader``."""
    text = str(parts[0])
    for part in parts[1:]:
        text += str(part) if isinstance(part, DictKey) else f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


Constant = Union[str, int, float, bool, None]  # a JSON constant an argument is written as


class Guard(NamedTuple):
    """A returned value is reached only when parameter ``name`` (at ``position``) equals
    ``value`` (``equal``) or differs from it: ``if task == "pretrain": return loader_a``. A
    caller passing a constant for the parameter that fails the guard never receives it."""

    name: str
    position: int
    value: Constant
    equal: bool
    truth: bool = False  # ``if train:`` (``equal``: the arm runs when it is truthy); ``value`` unused

    def admits(self, args: dict[str, Constant]) -> bool:
        """Whether a call passing the constants ``args`` (by position "0", "1"... and keyword)
        may receive the value; a parameter it passes no constant for may hold anything."""
        for key in (self.name, str(self.position)):
            if key in args:
                passed = args[key]
                if self.truth:
                    return bool(passed) == self.equal
                return (passed == self.value and type(passed) is type(self.value)) == self.equal
        return True


def admitted(guards: tuple[Guard, ...], args: dict[str, Constant]) -> bool:
    return all(guard.admits(args) for guard in guards)


# -- building uses -------------------------------------------------------------------
def hook_iterates(hook: Hook, node: ast.AST, here: Loops, via: Via) -> Use:
    """The framework iterates ``node``'s loader whenever it calls ``hook`` (every epoch, for a
    per-epoch hook such as ``train_dataloader``)."""
    marker = (RemoteLoop(f"the framework calling {hook.name}()", framework=True),) if hook.per_epoch else ()
    return Use(Move.ITERATE, node, here + marker, via, How.ELSEWHERE)


def without_loops(uses: list[Use], dropped: set[int], here: Loops = ()) -> list[Use]:
    """``uses`` whose loops no longer count those in ``dropped`` (by id), under the loops ``here``."""
    return [u._replace(loops=here + tuple(loop for loop in u.loops if id(loop) not in dropped)) for u in uses]


def shown(target: str) -> str:
    """``"1:data.fit@"`` -> ``"data.fit()"``: a target as the user wrote it."""
    from dllint.facts.flow.targets import Target

    return Target.parse(target).shown()


def uses_from(effects: Effects, node: ast.AST, expr: ast.AST, here: Loops, via: Via, where: str) -> list[Use]:
    """Uses standing for what another file does with a value (``where``: shown in messages),
    the inverse of :func:`effects_of`."""
    uses: list[Use] = []
    if effects.iterations:
        repeated = effects.per_epoch or effects.iterations > 1
        marker: Loops = (RemoteLoop(where, dataset_changes=tuple(effects.dataset_changes)),) if repeated else ()
        uses.append(Use(Move.ITERATE, node, here + marker, via, How.ELSEWHERE, copies=effects.cuda_copy,
                        evaluation=effects.evaluation, draws=effects.draws))
    if effects.stores:
        uses.append(Use(Move.ESCAPE, expr, here, via, How.UNCLAIMED))
    if effects.unknown:
        uses.append(Use(Move.ESCAPE, expr, here, via, How.UNKNOWN, why=f"handed on by {where} to code outside the project"))
    if effects.set_epoch:
        uses.append(Use(Move.ESCAPE, expr, here, via, How.SET_EPOCH))
    return uses
