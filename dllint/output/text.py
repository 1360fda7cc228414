from __future__ import annotations

from collections import Counter

from dllint.output import RunSummary, location


def render_text(summary: RunSummary) -> str:
    unsafe = bool(summary.extra.get("unsafe_fixes"))
    lines = []
    for f in summary.findings:
        runtime = "(runtime) " if f.source == "runtime" else ""
        lines.append(f"{location(f)}: {f.code} {runtime}{_fix_marker(f, unsafe)}{f.message}")
        if f.probe:
            evidence = f": {f.probe['evidence']}" if f.probe.get("evidence") else ""
            lines.append(f"    probe: {f.probe['verdict']}{evidence}")
    total = len(summary.findings)
    if summary.statistics and total:
        lines.append("")
        names = {f.code: f.name for f in summary.findings}
        for code, count in sorted(Counter(f.code for f in summary.findings).items()):
            lines.append(f"{count:>5}  {code}  {names[code]}")
    if summary.extra.get("fix_mode") and (total or summary.fixed):
        remaining = total - summary.introduced  # of the problems found before fixing
        found = remaining + summary.fixed
        new = f", {summary.introduced} new" if summary.introduced else ""
        lines += _fix_hints(summary, unsafe, fix_mode=True)
        lines.append(f"Found {found} problem{'s' if found != 1 else ''} ({summary.fixed} fixed, {remaining} remaining{new}).")
    elif total:
        files = len({f.path for f in summary.findings})
        problems = "problem" if total == 1 else "problems"
        lines += _fix_hints(summary, unsafe, fix_mode=False)  # before: the "Found" line stays last
        lines.append(f"Found {total} {problems} in {files} file{'s' if files != 1 else ''}.")
    else:
        lines.append(f"All checks passed! ({summary.files_checked} file{'s' if summary.files_checked != 1 else ''} checked)")
    return "\n".join(lines)


def _fix_marker(finding, unsafe: bool) -> str:
    """``[*]``: ``--fix`` fixes it; ``[-]``: only ``--fix --unsafe-fixes`` does."""
    from dllint.rules import has_fix

    if not has_fix(finding):
        return ""
    return "[*] " if finding.fix.applicability == "safe" or unsafe else "[-] "


def _fix_hints(summary: RunSummary, unsafe: bool, fix_mode: bool) -> list[str]:
    from dllint.rules import has_fix

    fixable = [f for f in summary.findings if has_fix(f)]
    now = sum(1 for f in fixable if f.fix.applicability == "safe" or unsafe)
    hidden = len(fixable) - now
    hints = []
    if now and not fix_mode:
        hints.append(f"[*] {now} fixable with `--fix`.")
    if hidden:
        option = "`--fix --unsafe-fixes`" if fix_mode else "`--unsafe-fixes`"
        hints.append(f"[-] {hidden} more fixable with {option} (unsafe: check the result).")
    return hints
