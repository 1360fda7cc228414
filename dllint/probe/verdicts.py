"""A probe verdict as a value: its kind (:class:`Verdict`) and its reason.

Verdicts travel from the harness to the runner, and out in the JSON report, as one string each
(``"confirmed"``, ``"not confirmed (saves 10 µs per batch)"``, ``"inconclusive (spread 35% > gain
11%)"``, ``"skipped (no runtime check for DL101)"``, ``"not reached"``): that is the public form.
:class:`Judgment` is the typed form: :meth:`Judgment.parse` is the one place that reads the
string, and ``str()`` writes it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Verdict(Enum):
    """What a measurement says about a rule code at one place."""

    CONFIRMED = "confirmed"
    NOT_CONFIRMED = "not confirmed"  # measured, and absent or too small to act on
    INCONCLUSIVE = "inconclusive"  # measured, but the spread between repeats is larger than the effect
    SKIPPED = "skipped"  # not measured, for a reason
    NOT_REACHED = "not reached"  # the script never got there

    @property
    def rank(self) -> int:
        """How strongly it speaks when several results answer one finding: a measurement that
        decided beats one the noise left open, which beats none."""
        return _RANKS[self]


_RANKS = {Verdict.CONFIRMED: 4, Verdict.NOT_CONFIRMED: 3, Verdict.INCONCLUSIVE: 2, Verdict.SKIPPED: 1,
          Verdict.NOT_REACHED: 0}


@dataclass(frozen=True)
class Judgment:
    """A verdict with its reason: ``Judgment(Verdict.NOT_CONFIRMED, "saves 10 µs per batch")``."""

    verdict: Verdict
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.verdict.value} ({self.reason})" if self.reason else self.verdict.value

    @classmethod
    def parse(cls, text: str) -> Judgment:
        """The wire form read back; an unknown word is ``not reached`` with the text as its reason."""
        for verdict in Verdict:
            if text == verdict.value:
                return cls(verdict)
            if text.startswith(f"{verdict.value} (") and text.endswith(")"):
                return cls(verdict, text[len(verdict.value) + 2:-1])
        return cls(Verdict.NOT_REACHED, text)

    @property
    def confirmed(self) -> bool:
        return self.verdict is Verdict.CONFIRMED


class BlockVerdict(Enum):
    """One loader's settings block against the script's own settings, from whole epochs
    (``loaders[i].recommendation.verdict`` in the JSON report)."""

    BETTER = "better"  # faster beyond the spread of the pairs and the floors
    KEEP_YOURS = "keep yours"  # not faster beyond the noise (or its run failed)
    INCONCLUSIVE = "inconclusive"  # the spread hides the difference within the budget of runs
