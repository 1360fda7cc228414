"""What every renderer gets: the run's findings and counts."""

from __future__ import annotations

from dataclasses import dataclass, field

from dllint.findings import Finding


@dataclass
class RunSummary:
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
