"""What a probe check hands back: a verdict for one rule code at some place.

Results travel from the harness (child process) to the runner (parent) as
JSON, so everything here is plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dllint.probe.verdicts import Judgment, Verdict

# The wire forms (the JSON report's strings); :class:`~dllint.probe.verdicts.Judgment` is the typed form.
CONFIRMED = Verdict.CONFIRMED.value
NOT_CONFIRMED = Verdict.NOT_CONFIRMED.value
NOT_REACHED = Verdict.NOT_REACHED.value
INCONCLUSIVE = Verdict.INCONCLUSIVE.value


def inconclusive(spread: float, gain: float) -> str:
    """``inconclusive (spread 35% > gain 11%)``: the noise, then the effect it hides (fractions)."""
    return str(Judgment(Verdict.INCONCLUSIVE, f"spread {spread * 100:.0f}% > gain {abs(gain) * 100:.0f}%"))


def not_confirmed(reason: str) -> str:
    """``not confirmed (saves 10 µs per batch)``: measured, real, but too small to act on."""
    return str(Judgment(Verdict.NOT_CONFIRMED, reason))


def skipped(reason: str) -> str:
    return str(Judgment(Verdict.SKIPPED, reason))


def verdict_rank(verdict: str) -> int:
    return Judgment.parse(verdict).verdict.rank


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

    @property
    def judgment(self) -> Judgment:
        return Judgment.parse(self.verdict)

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
