"""The values every stage passes along: a finding and its optional fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Applicability = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class Fix:
    """A fix a rule offers for one finding.

    ``data`` carries what the rule's ``apply_fix`` needs (which argument to
    remove, which name to hoist); the fixer hands it back unchanged.
    """

    applicability: Applicability
    message: str
    data: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.data).get(key, default)


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
        return data
