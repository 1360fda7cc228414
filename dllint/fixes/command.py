"""``dllint --fix`` / ``--diff`` / ``--fix-only``: fix files (or stdin), write or show the result."""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass

import click

from dllint.discovery import discover
from dllint.engine import Linter
from dllint.findings import Finding
from dllint.fixer import FixResult, fix_text, source_encoding, write_atomic
from dllint.output import RunSummary, location, render
from dllint.source import decode, read_source

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class FixOptions:
    unsafe: bool = False
    diff: bool = False  # show, write nothing
    fix_only: bool = False  # do not report what remains


def fix_bytes(path: str, data: bytes, linter: Linter, unsafe: bool) -> tuple[FixResult, str]:
    """Fix one file's bytes; returns the result and the encoding to write it back in."""
    if path.endswith((".yaml", ".yml")):
        from dllint.configs.lint import fix_config_bytes

        return fix_config_bytes(path, data, linter, unsafe=unsafe)
    if path.endswith(".ipynb"):
        from dllint.notebook import fix_notebook

        return fix_notebook(path, data, linter, unsafe=unsafe), "utf-8"
    decoded = decode(path, data)
    if decoded.error is not None:
        text = ""
        return FixResult(path, text, text, remaining=[decoded.error]), "utf-8"
    text = decoded.text or ""
    if not linter.could_have_findings(data):
        return FixResult(path, text, text), source_encoding(data)
    return fix_text(path, text, linter, unsafe=unsafe), source_encoding(data)


def run_fix_command(
    paths: tuple[str, ...],
    stdin_filename: str | None,
    linter: Linter,
    fmt: str,
    statistics: bool,
    exit_zero: bool,
    options: FixOptions,
) -> int:
    results: list[FixResult] = []
    errors: list[str] = []
    changed_any = False
    report_to_stderr = False
    if "-" in paths:
        path = stdin_filename or "-"
        result, encoding = fix_bytes(path, sys.stdin.buffer.read(), linter, options.unsafe)
        results.append(result)
        changed_any |= result.changed
        if options.diff:
            _echo_diff(result)
        else:
            # The fixed source is the output; the report goes to stderr (as ruff does).
            sys.stdout.buffer.write(result.text.encode(encoding))
            sys.stdout.flush()
            report_to_stderr = True
    found = discover([p for p in paths if p != "-"], linter.settings)
    missing = found.report(lambda message: click.echo(message, err=True))
    for path in found.files:
        data = read_source(path)
        if isinstance(data, Finding):
            missing.append(data)
            continue
        result, encoding = fix_bytes(path, data, linter, options.unsafe)
        results.append(result)
        if not result.changed:
            continue
        changed_any = True
        if options.diff:
            _echo_diff(result)
            continue
        try:
            write_atomic(path, result.text, encoding)
        except (OSError, UnicodeEncodeError) as exc:
            errors.append(f"{path}: cannot write the fixed file: {exc}")
    for result in results:
        errors += result.errors
        for finding, reason in result.failed:
            click.echo(f"dllint: {location(finding)}: {finding.code} fix not applied: {reason}", err=True)
    for error in errors:
        click.echo(f"dllint: {error}", err=True)

    remaining: list[Finding] = missing + [f for r in results for f in r.remaining]
    remaining.sort(key=lambda f: f.sort_key)
    fixed = sum(len(r.fixed) for r in results)
    failed = sum(len(r.failed) for r in results)
    files_checked = len(results)
    if options.diff:
        verb = "Would fix" if fixed else "No fixes to apply"
        click.echo(f"{verb} {fixed} problem{'s' if fixed != 1 else ''}." if fixed else f"{verb}.", err=True)
    elif not options.fix_only:
        summary = RunSummary(
            remaining,
            files_checked=files_checked,
            fixed=fixed,
            statistics=statistics,
            extra={"fix_mode": True, "unsafe_fixes": options.unsafe},
        )
        click.echo(render(fmt, summary), err=report_to_stderr)
    else:
        click.echo(f"Fixed {fixed} problem{'s' if fixed != 1 else ''}.", err=report_to_stderr)
        if failed:
            click.echo(f"{failed} fix{'es' if failed != 1 else ''} could not be applied.", err=report_to_stderr)
    if errors:
        return EXIT_ERROR
    if options.diff:
        return EXIT_FINDINGS if changed_any else EXIT_CLEAN
    if options.fix_only:
        return EXIT_FINDINGS if failed else EXIT_CLEAN
    return EXIT_FINDINGS if remaining and not exit_zero else EXIT_CLEAN


def _echo_diff(result: FixResult) -> None:
    if not result.changed:
        return
    lines = difflib.unified_diff(
        result.original.splitlines(keepends=True),
        result.text.splitlines(keepends=True),
        # git-style a/ b/ prefixes for relative paths; an absolute path is shown as it is
        fromfile=result.path if result.path.startswith("/") else f"a/{result.path}",
        tofile=result.path if result.path.startswith("/") else f"b/{result.path}",
    )
    for line in lines:
        sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    sys.stdout.flush()
