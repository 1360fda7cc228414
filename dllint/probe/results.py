"""What a probe check hands back: a verdict for one rule code at some place.

Results travel from the harness (child process) to the runner (parent) as
JSON, so everything here is plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
NOT_REACHED = "not reached"
INCONCLUSIVE = "inconclusive"  # measured, but the spread between repeats is larger than the effect


def inconclusive(spread: float, gain: float) -> str:
    """``inconclusive (spread 35% > gain 11%)``: the noise, then the effect it hides (fractions)."""
    return f"{INCONCLUSIVE} (spread {spread * 100:.0f}% > gain {abs(gain) * 100:.0f}%)"


def not_confirmed(reason: str) -> str:
    """``not confirmed (saves 10 µs per batch)``: measured, real, but too small to act on."""
    return f"{NOT_CONFIRMED} ({reason})"


def skipped(reason: str) -> str:
    return f"skipped ({reason})"


# How strongly a verdict speaks when several results answer one finding: a measurement that
# decided beats one the noise left open, which beats none.
VERDICT_RANK = {CONFIRMED: 4, NOT_CONFIRMED: 3}


def verdict_rank(verdict: str) -> int:
    if verdict.startswith(NOT_CONFIRMED):
        return VERDICT_RANK[NOT_CONFIRMED]
    if verdict.startswith(INCONCLUSIVE):
        return 2
    return VERDICT_RANK.get(verdict, 1 if verdict.startswith("skipped") else 0)


@dataclass(frozen=True)
class Anchor:
    """A span of lines a result speaks about: the loader call, a lambda, a class body."""

    path: str
    first_line: int
    last_line: int

    def covers(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


WHOLE_FILE = 10**9  # last_line for an anchor that covers a whole module (DL101)


@dataclass
class Result:
    """One rule code's verdict, measured at one loader (or for the whole script)."""

    code: str
    verdict: str
    evidence: str
    measurements: dict[str, Any] = field(default_factory=dict)
    anchors: list[Anchor] = field(default_factory=list)
    loader: int | None = None  # id of the loader it was measured on
    shown: bool = True  # in its loader's text table: reported for that loader, or confirmed on it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        anchors = [Anchor(**anchor) for anchor in data.get("anchors", [])]
        return cls(
            code=data["code"],
            verdict=data["verdict"],
            evidence=data["evidence"],
            measurements=data.get("measurements", {}),
            anchors=anchors,
            loader=data.get("loader"),
        )

    def probe_dict(self) -> dict[str, Any]:
        """The shape a Finding's ``probe`` field takes."""
        return {"verdict": self.verdict, "evidence": self.evidence, "measurements": self.measurements}


@dataclass
class Table:
    """A small table shown under a loader in the text report."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    chart: list[str] = field(default_factory=list)  # pre-rendered text lines (the sweep chart)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
