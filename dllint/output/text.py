from __future__ import annotations

from collections import Counter

from dllint.output import RunSummary, location


def render_text(summary: RunSummary) -> str:
    lines = [f"{location(f)}: {f.code} {f.message}" for f in summary.findings]
    total = len(summary.findings)
    if summary.statistics and total:
        lines.append("")
        names = {f.code: f.name for f in summary.findings}
        for code, count in sorted(Counter(f.code for f in summary.findings).items()):
            lines.append(f"{count:>5}  {code}  {names[code]}")
    if total:
        files = len({f.path for f in summary.findings})
        problems = "problem" if total == 1 else "problems"
        lines.append(f"Found {total} {problems} in {files} file{'s' if files != 1 else ''}.")
    else:
        lines.append(f"All checks passed! ({summary.files_checked} file{'s' if summary.files_checked != 1 else ''} checked)")
    return "\n".join(lines)
