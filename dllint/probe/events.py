"""The events the harness writes and the runner reads: one JSON object a line, ``{"event": KIND, ...}``.

One dataclass per kind (:data:`KINDS`), each with ``to_json``/``from_json``. The runner trusts
no line: the events file is the probe's, but the script runs in the process that writes it.
:func:`parse_event` keeps only objects whose kind, if known, has the fields the report reads,
of the types it reads them as (:meth:`Event.from_json` raises :class:`EventError` otherwise),
and shows every control character in their text as ``\\xNN``: an escape sequence in a script's
error message must not reach the terminal.

Kinds whose payload is open (a loader's summary, a step's timings, a script's ending) keep the
fields they do not name in ``extra``.
"""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

# C0 and C1 control characters but newline and tab.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class EventError(ValueError):
    """A line that is not an event of its kind."""


@dataclass(kw_only=True)
class Event:
    """One event: its kind (``KIND``), when it happened (``t``, monotonic seconds), its fields."""

    KIND: ClassVar[str] = ""
    t: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # an open kind's other fields
    OPEN: ClassVar[bool] = False  # keeps the fields it does not name

    def to_json(self) -> dict[str, Any]:
        named = {item.name: getattr(self, item.name) for item in fields(self) if item.name not in ("t", "extra")}
        timed = {"t": self.t} if self.t is not None else {}
        return {"event": self.KIND, **named, **self.extra, **timed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for item in fields(cls):
            if item.name == "extra":
                continue
            if item.name not in data:
                if item.default is MISSING and item.default_factory is MISSING:
                    raise EventError(f"{cls.KIND} without {item.name}")
                continue
            if not _accepts(hints[item.name], data[item.name]):
                raise EventError(f"{cls.KIND}'s {item.name} is not {hints[item.name]}")
            values[item.name] = data[item.name]
        if cls.OPEN:
            known = {item.name for item in fields(cls)} | {"event"}
            values["extra"] = {key: value for key, value in data.items() if key not in known}
        return cls(**values)


def _accepts(hint: Any, value: Any) -> bool:
    """Whether a JSON value is of a field's declared type (``int | None``, ``list[Any]``...)."""
    if hint is Any:
        return True
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        return any(_accepts(option, value) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    base = typing.get_origin(hint) or hint
    if isinstance(value, bool) and base is not bool:  # JSON's true is no number
        return False
    return isinstance(value, (int, float) if base is float else base)


@dataclass(kw_only=True)
class Start(Event):
    KIND: ClassVar[str] = "start"
    pid: int


@dataclass(kw_only=True)
class Ready(Event):
    """torch is imported: the probe's timeout starts."""

    KIND: ClassVar[str] = "ready"


@dataclass(kw_only=True)
class Loader(Event):
    """The script built a loader at a new call site; ``extra`` is its summary (:meth:`LoaderSite.summary`)."""

    KIND: ClassVar[str] = "loader"
    OPEN: ClassVar[bool] = True
    id: int
    call_site: str

    def summary(self) -> dict[str, Any]:
        return {key: value for key, value in self.to_json().items() if key not in ("event", "id")}


@dataclass(kw_only=True)
class LoaderError(Event):
    KIND: ClassVar[str] = "loader_error"
    loader: int
    error: str


@dataclass(kw_only=True)
class FirstBatch(Event):
    KIND: ClassVar[str] = "first_batch"
    loader: int
    seconds: float | None = None
    error: str | None = None


@dataclass(kw_only=True)
class IteratedAgain(Event):
    KIND: ClassVar[str] = "iterated_again"
    loader: int


@dataclass(kw_only=True)
class Step(Event):
    """The data wait of the script's real step so far; ``extra`` is :meth:`StepClock.summary`."""

    KIND: ClassVar[str] = "step"
    OPEN: ClassVar[bool] = True
    loader: int


@dataclass(kw_only=True)
class Epoch(Event):
    KIND: ClassVar[str] = "epoch"
    OPEN: ClassVar[bool] = True
    loader: int


@dataclass(kw_only=True)
class EpochFailed(Event):
    KIND: ClassVar[str] = "epoch_failed"
    loader: int
    error: str
    epoch: int | None = None
    batch: int | None = None
    worker_died: bool | None = None
    worker_said: str | None = None
    worker_frame: list[Any] | None = None  # [path, line]
    in_worker: bool | None = None

    def failure(self) -> dict[str, Any]:
        """What the loader's report keeps of it."""
        return {key: getattr(self, key) for key in ("epoch", "batch", "error", "worker_died", "worker_said",
                                                    "worker_frame", "in_worker")}


@dataclass(kw_only=True)
class Emptied(Event):
    KIND: ClassVar[str] = "emptied"
    OPEN: ClassVar[bool] = True
    loader: int


@dataclass(kw_only=True)
class TableEvent(Event):
    KIND: ClassVar[str] = "table"
    loader: int
    title: str
    columns: list[Any]
    rows: list[Any]
    chart: list[Any] = field(default_factory=list)


@dataclass(kw_only=True)
class Progress(Event):
    KIND: ClassVar[str] = "progress"
    step: str
    loader: int | None = None


@dataclass(kw_only=True)
class Note(Event):
    KIND: ClassVar[str] = "note"
    text: str
    loader: int | None = None


@dataclass(kw_only=True)
class ResultEvent(Event):
    """A verdict on one rule; ``extra`` holds its measurements, anchors and loader (:meth:`Result.to_dict`)."""

    KIND: ClassVar[str] = "result"
    OPEN: ClassVar[bool] = True
    code: str
    verdict: str
    evidence: str


@dataclass(kw_only=True)
class ChildLoader(Event):
    """A loader built in a Python process the probe does not hook."""

    KIND: ClassVar[str] = "child_loader"
    pid: int
    call_site: str | None = None


@dataclass(kw_only=True)
class Write(Event):
    """A file change the guard redirected or stopped."""

    KIND: ClassVar[str] = "write"
    OPEN: ClassVar[bool] = True
    handled: str  # "redirected" or "stopped"
    text: str


@dataclass(kw_only=True)
class ScriptEnd(Event):
    """How the script ended; ``extra`` holds where (:meth:`Harness.ending`)."""

    KIND: ClassVar[str] = "script_end"
    OPEN: ClassVar[bool] = True
    how: str
    detail: str


@dataclass(kw_only=True)
class Done(Event):
    """The harness reported everything: a run without it crashed."""

    KIND: ClassVar[str] = "done"


@dataclass(kw_only=True)
class RankInfo(Event):
    KIND: ClassVar[str] = "rank_info"
    OPEN: ClassVar[bool] = True
    rank: int


@dataclass(kw_only=True)
class TraceEpoch(Event):
    """--probe-trace: one epoch of the script's loop (monotonic seconds; ``marks``: per batch, next()
    called, the batch back, the loop body resumed)."""

    KIND: ClassVar[str] = "trace_epoch"
    loader: int
    epoch: int
    started: float
    ended: float
    marks: list[Any]
    replay: bool = False
    failed: bool = False
    cut: bool = False


@dataclass(kw_only=True)
class TraceBatch(Event):
    """--probe-trace: one batch a DataLoader worker loaded (written by the worker itself)."""

    KIND: ClassVar[str] = "trace_batch"
    loader: int
    worker: int
    pid: int
    start: float
    end: float
    samples: int = 1


KINDS: dict[str, type[Event]] = {kind.KIND: kind for kind in (
    Start, Ready, Loader, LoaderError, FirstBatch, IteratedAgain, Step, Epoch, EpochFailed, Emptied, TableEvent,
    Progress, Note, ResultEvent, ChildLoader, Write, ScriptEnd, Done, RankInfo, TraceEpoch, TraceBatch)}


def decode(data: dict[str, Any]) -> Event | None:
    """The typed event of a parsed line (None for a kind this version does not know)."""
    kind = KINDS.get(data.get("event", ""))
    return kind.from_json(data) if kind is not None else None


def printable(value: Any) -> Any:
    """``value`` (an event's JSON) with every control character in its strings shown as ``\\xNN``."""
    if isinstance(value, str):
        return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
    if isinstance(value, list):
        return [printable(item) for item in value]
    if isinstance(value, dict):
        return {printable(key): printable(item) for key, item in value.items()}
    return value


def parse_event(line: str) -> dict[str, Any] | None:
    """One line of the events file as an event's JSON, or None for anything that is not one: JSON
    that is not an object, an object without a kind, a known kind without the fields it must have."""
    try:
        data = json.loads(line)
        if not isinstance(data, dict) or not isinstance(data.get("event"), str):
            return None
        decode(data)
    except (ValueError, RecursionError):  # EventError is a ValueError, as JSON's own
        return None
    shown: dict[str, Any] = printable(data)
    return shown
