"""The text report: one line per finding, ``path:line:col: CODE message``, then a summary."""

from __future__ import annotations


from dllint.findings import Finding
from dllint.output.summary import RunSummary, fixable_now, location, statistics
from dllint.patterns import LazyPattern

_CONTROL = LazyPattern(r"[\x00-\x1f\x7f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown_path(path: str) -> str:
    """``path`` with control characters escaped (``\\n``, ``\\x1b``): a file name with a newline
    must not forge a second report line, nor an escape sequence recolour the terminal."""
    if not _CONTROL.search(path):
        return path
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}"), path)


def shown_location(finding: Finding) -> str:
    """:func:`~dllint.output.summary.location` with the path as :func:`shown_path` shows it."""
    text = location(finding)
    return shown_path(finding.path) + text[len(finding.path) :]


def render_text(summary: RunSummary, source_lines: bool = False) -> str:
    """The report; ``source_lines``: the ``full`` format, each finding with its source line and
    a caret under the range (ruff's ``full``). ``--statistics`` prints its table alone, and
    ``extra["quiet"]`` (``-q``) the findings alone, as in ruff."""
    unsafe = bool(summary.extra.get("unsafe_fixes"))
    paint = _paint if summary.extra.get("color") else _plain
    if summary.statistics:
        return _statistics(summary, unsafe)
    lines = []
    sources = _Sources() if source_lines else None
    for f in summary.findings:
        runtime = "(runtime) " if f.source == "runtime" else ""
        where, code = paint(shown_location(f), bold=True), paint(f.code, fg="red", bold=True)
        lines.append(f"{where}: {code} {runtime}{_fix_marker(f, unsafe)}{f.message}")
        if f.probe:
            evidence = f": {f.probe['evidence']}" if f.probe.get("evidence") else ""
            lines.append(f"    probe: {f.probe['verdict']}{evidence}")
        if sources is not None:
            lines += sources.snippet(f)
    if summary.extra.get("quiet"):
        return "\n".join(lines)
    total = len(summary.findings)
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


def _paint(text: str, **style: object) -> str:
    """``--color``: ruff's colours (bold locations, bold red codes)."""
    import click

    return click.style(text, **style)  # type: ignore[arg-type]


def _plain(text: str, **style: object) -> str:
    return text


def _fix_marker(finding, unsafe: bool) -> str:
    """``[*]``: ``--fix`` fixes it; ``[-]``: only ``--fix --unsafe-fixes`` does."""
    from dllint.rules import has_fix

    if not has_fix(finding):
        return ""
    return "[*] " if finding.fix.applicability == "safe" or unsafe else "[-] "


def _fix_hints(summary: RunSummary, unsafe: bool, fix_mode: bool) -> list[str]:
    """What ``--fix`` would fix, with the command that does it: with ``--unsafe-fixes`` given,
    the unsafe fixes count too, and the command names both options."""
    from dllint.rules import has_fix

    fixable = [f for f in summary.findings if has_fix(f)]
    now = sum(1 for f in fixable if fixable_now(f, unsafe))
    hidden = len(fixable) - now
    hints = []
    if now and not fix_mode:
        command = "--fix --unsafe-fixes" if unsafe and any(f.fix.applicability == "unsafe" for f in fixable if f.fix) else "--fix"
        hints.append(f"[*] {now} fixable with `{command}`.")
    if hidden:
        # `--unsafe-fixes` alone fixes nothing (it only offers): both modes name the pair.
        hints.append(f"[-] {hidden} more fixable with `--fix --unsafe-fixes` (unsafe: check the result).")
    return hints


def _statistics(summary: RunSummary, unsafe: bool) -> str:
    """``--statistics``: findings counted per rule, ``[*]`` where ``--fix`` fixes some (ruff's
    table), then the total and the fix hints (none with ``-q``)."""
    rows = statistics(summary)
    lines = [f"{row.count:>5}  {row.code}  {'[*]' if row.fixable else '   '} {row.name}" for row in rows]
    if summary.extra.get("quiet") or not rows:
        return "\n".join(lines)
    total = len(summary.findings)
    lines.append(f"Found {total} problem{'s' if total != 1 else ''}.")
    return "\n".join(lines + _fix_hints(summary, unsafe, fix_mode=bool(summary.extra.get("fix_mode"))))


class _Sources:
    """Source lines for the ``full`` format, each file read once (a notebook's cells from its JSON)."""

    def __init__(self) -> None:
        self.files: dict[str, list[str] | None] = {}  # path -> its lines
        self.cells: dict[str, list[list[str]] | None] = {}  # notebook path -> each cell's lines

    def snippet(self, finding: Finding) -> list[str]:
        lines = self._lines(finding.path, finding.cell)
        if not lines or not 1 <= finding.line <= len(lines):
            return []
        text = lines[finding.line - 1].expandtabs(1)
        start = max(finding.column - 1, 0)
        end = finding.end_column - 1 if finding.end_line == finding.line and finding.end_column > finding.column else len(text)
        width = len(str(finding.line))
        gutter = " " * width
        caret = "^" * max(1, min(end, len(text)) - start)
        return [
            f"{gutter} |",
            f"{finding.line} | {shown_path(text)}",
            f"{gutter} | {' ' * start}{caret} {finding.code}",
            f"{gutter} |",
            "",
        ]

    def _lines(self, path: str, cell: int | None) -> list[str] | None:
        if cell is None:
            if path not in self.files:
                text = _read_text(path)
                self.files[path] = None if text is None else text.splitlines()
            return self.files[path]
        if path not in self.cells:
            from dllint.inputs.notebook import cell_sources

            text = _read_text(path)
            sources = None if text is None else cell_sources(text)
            self.cells[path] = None if sources is None else [source.splitlines() for source in sources]
        cells = self.cells[path]
        return cells[cell - 1] if cells is not None and 1 <= cell <= len(cells) else None


def _read_text(path: str) -> str | None:
    from dllint.files import Unreadable, read_bytes

    try:
        data = read_bytes(path)  # a regular file, within max-file-size: never a FIFO that blocks
    except Unreadable:
        return None
    return data.decode("utf-8-sig", errors="replace")
