"""The values every stage passes along: a finding and its optional fix."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar, Union, dataclass_transform

_T = TypeVar("_T")

Applicability = Literal["safe", "unsafe"]


# -- what a rule hands its fix: one frozen dataclass per kind of edit --------------------
# Positions are 1-based (line, column), as in a Finding. Each kind round-trips through the
# cache's JSON (``Fix.to_json``/``Fix.from_json``); ``kind`` names it there.
class _Record:
    """Equality, hash and repr over a frozen dataclass's fields, as ``@dataclass`` writes them,
    written once here rather than generated and compiled for each class (``eq=False,
    repr=False``): a frozen dataclass's six generated methods cost 3.5 M instructions to define,
    and every run, a pre-commit hook's one-file run too, defines all ten of these."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))  # type: ignore[arg-type]
        return f"{self.__class__.__qualname__}({shown})"


@dataclass_transform(eq_default=False)
def _edit(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True, eq=False, repr=False)``, spelled so that type checkers see
    the generated ``__init__`` (a decorator stored in a variable hides it from mypy)."""
    return dataclass(frozen=True, eq=False, repr=False)(cls)


@_edit
class SetArgument(_Record):
    """``name=value`` on the reported call (``value`` is Python source)."""

    kind: ClassVar[str] = "set-argument"
    name: str
    value: str


@_edit
class RemoveArguments(_Record):
    """Remove the reported argument, and the others of ``names`` on the same call."""

    kind: ClassVar[str] = "remove-arguments"
    names: tuple[str, ...]


@_edit
class HoistLambda(_Record):
    """The reported lambda becomes a module-level ``def``; ``sink`` is where it goes (``collate_fn``)."""

    kind: ClassVar[str] = "hoist-lambda"
    sink: str


@_edit
class HoistLocalDefinition(_Record):
    """The local ``def``/``class name`` becomes module-level; what it captures is bound with
    ``functools.partial``."""

    kind: ClassVar[str] = "hoist-local-definition"
    name: str


@_edit
class MoveAboveGuard(_Record):
    """The ``def``/``class name`` directly in the main guard moves to just above the guard."""

    kind: ClassVar[str] = "move-above-guard"
    name: str


@_edit
class InsertStatement(_Record):
    """``statement`` (Python source) inserted before the statement that starts at ``before``."""

    kind: ClassVar[str] = "insert-statement"
    statement: str
    before: tuple[int, int]


@_edit
class AddDistributedSampler(_Record):
    """``sampler=<sampler>`` on the reported loader call, its ``shuffle`` removed (``remove``);
    ``import_how`` says how the name gets imported: ``""`` (it already is), ``"into"`` (added to
    the ``from torch.utils.data import ...`` at ``import_at``) or ``"before"`` (a new import line
    before the statement at ``import_at``); a ``set_epoch`` statement, when not ``""``, goes before
    the statement at ``set_epoch_before`` (DL305)."""

    kind: ClassVar[str] = "add-distributed-sampler"
    sampler: str
    remove: tuple[str, ...]
    import_how: str
    import_at: tuple[int, int]
    set_epoch: str
    set_epoch_before: tuple[int, int]


@_edit
class WrapInMainGuard(_Record):
    """The script's executable module-level statements move under ``if __name__ == "__main__":``."""

    kind: ClassVar[str] = "wrap-in-main-guard"


@_edit
class ReplaceText(_Record):
    """The text from ``start`` up to ``end`` (1-based (line, column), end exclusive) replaced
    by ``text``: how a config file (YAML) is fixed, everything else kept as written."""

    kind: ClassVar[str] = "replace-text"
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@_edit
class NotKept(_Record):
    """The edit of a finding read back from the cache, which keeps findings, never code: no rule
    applies it (``--fix`` lints the file again and fixes from the text it writes)."""

    kind: ClassVar[str] = "not-kept"


Edit = Union[
    SetArgument, RemoveArguments, HoistLambda, HoistLocalDefinition, MoveAboveGuard, InsertStatement,
    AddDistributedSampler, WrapInMainGuard, ReplaceText, NotKept,
]
EDIT_KINDS: dict[str, type] = {
    cls.kind: cls
    for cls in (
        SetArgument, RemoveArguments, HoistLambda, HoistLocalDefinition, MoveAboveGuard, InsertStatement,
        AddDistributedSampler, WrapInMainGuard, ReplaceText,
    )
}


def _field_from_json(annotation: str, value: Any) -> Any:
    """A field's value from JSON, checked against its annotation (ValueError when it does not fit)."""
    if annotation == "str" and isinstance(value, str):
        return value
    if annotation == "tuple[str, ...]" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if annotation == "tuple[int, int]" and isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value):
        return tuple(value)
    raise ValueError(f"bad edit field: {annotation} = {value!r}")


@_edit
class Fix(_Record):
    """A fix a rule offers for one finding: how safe it is, what it does (one line), and the
    edit the rule's ``apply_fix`` performs (the fixer hands it back unchanged)."""

    applicability: Applicability
    message: str
    edit: Edit

    def to_json(self) -> list[Any]:
        edit: dict[str, Any] = {"kind": self.edit.kind}
        for f in fields(self.edit):
            value = getattr(self.edit, f.name)
            edit[f.name] = list(value) if isinstance(value, tuple) else value
        return [self.applicability, self.message, edit]

    @classmethod
    def from_json(cls, data: Any) -> Fix:
        """The fix ``to_json`` wrote; ValueError when ``data`` is anything else."""
        if not (isinstance(data, list) and len(data) == 3 and data[0] in ("safe", "unsafe") and isinstance(data[1], str)):
            raise ValueError("bad fix")
        edit = data[2]
        kind_name = edit.get("kind") if isinstance(edit, dict) else None
        kind = EDIT_KINDS.get(kind_name) if isinstance(kind_name, str) else None
        if kind is None:
            raise ValueError("bad fix edit")
        names = {f.name: str(f.type) for f in fields(kind)}  # a string: annotations are postponed
        if set(edit) != {"kind", *names}:
            raise ValueError("bad fix edit fields")
        return cls(data[0], data[1], kind(**{name: _field_from_json(names[name], edit[name]) for name in names}))


class ConfigKey(NamedTuple):
    """A config file's key a finding's value came from: ``train_ds.num_workers: 0`` written in
    ``conf/train.yaml:5`` (``places``: one (path, line) per file that agrees, paths as shown)."""

    key: str
    value: str  # as the config writes it
    places: tuple[tuple[str, int], ...]

    def where(self) -> str:
        return " and ".join(f"{path}:{line}" for path, line in self.places)

    def describe(self) -> str:
        return f"{self.key}: {self.value} from {self.where()}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "places": [list(place) for place in self.places]}

    @classmethod
    def from_json(cls, data: Any) -> ConfigKey:
        """ValueError when ``data`` is not what ``to_json`` writes."""
        try:
            places = tuple((str(path), int(line)) for path, line in data["places"])
            return cls(str(data["key"]), str(data["value"]), places)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError("bad config key") from error


@dataclass
class Finding:
    """One problem at one place. Lines and columns are 1-based; columns count characters."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    fix: Fix | None = None
    cell: int | None = None  # notebook cell number (1-based), lines are then cell-relative
    source: Literal["static", "runtime"] = "static"
    probe: dict[str, Any] | None = field(default=None, compare=False)
    # The config keys the values it rests on came from (the reported argument's first).
    config_keys: tuple[ConfigKey, ...] = field(default=(), compare=False)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "fix": None
            if self.fix is None
            else {"applicability": self.fix.applicability, "message": self.fix.message},
        }
        if self.cell is not None:
            data["cell"] = self.cell
        if self.source != "static":
            data["source"] = self.source
        if self.probe is not None:
            data["probe"] = self.probe
        if self.config_keys:
            data["config_keys"] = [key.to_json() for key in self.config_keys]
        return data
