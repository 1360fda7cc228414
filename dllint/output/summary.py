"""What every renderer gets: the run's findings and counts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dllint.findings import Finding


@dataclass
class RunSummary:
    """What a run reports, in every output format: its findings and counts."""

    findings: list[Finding]
    files_checked: int = 0
    fixed: int = 0  # set by --fix
    introduced: int = 0  # set by --fix: of ``findings``, how many the fixes brought in
    statistics: bool = False
    extra: dict = field(default_factory=dict)

def location(finding: Finding) -> str:
    """``path:line:col`` or, in a notebook, ``path:cell N:line:col``."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


@dataclass(frozen=True)
class RuleCount:
    """A ``--statistics`` row, with ruff's JSON keys."""

    code: str
    name: str
    count: int
    fixable: bool  # some of them: --fix (with --unsafe-fixes if given) fixes them
    fixable_count: int


def fixable_now(finding: Finding, unsafe: bool) -> bool:
    """Whether ``--fix`` fixes it in this run (unsafe fixes with ``--unsafe-fixes`` only)."""
    from dllint.rules import has_fix

    return has_fix(finding) and finding.fix is not None and (finding.fix.applicability == "safe" or unsafe)


def statistics(summary: RunSummary) -> list[RuleCount]:
    """``--statistics``: the findings counted per rule, by code."""
    unsafe = bool(summary.extra.get("unsafe_fixes"))
    names = {f.code: f.name for f in summary.findings}
    counts = Counter(f.code for f in summary.findings)
    fixable = Counter(f.code for f in summary.findings if fixable_now(f, unsafe))
    return [RuleCount(code, names[code], count, fixable[code] > 0, fixable[code]) for code, count in sorted(counts.items())]
