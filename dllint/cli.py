"""The command line: ``dllint PATHS``, ``dllint explain CODE``, ``dllint rules``.

A thin adapter: it reads options and settings, calls the engine and renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dllint import __version__
from dllint.config import ConfigError, load_settings
from dllint.discovery import discover
from dllint.engine import FileResult, Linter
from dllint.findings import Finding
from dllint.output import FORMATS, RunSummary, render
from dllint.rules import all_rules, rule_by_code
from dllint.selection import validate_code_prefix

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DefaultCommandGroup(click.Group):
    """``dllint PATHS`` runs ``check``; ``dllint explain``/``dllint rules`` are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            if not any(a in ("--help", "-h", "--version") for a in args[:1]):
                args = ["check", *args]
        return super().parse_args(ctx, args)


def _split_codes(values: tuple[str, ...], option: str) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    for code in codes:
        problem = validate_code_prefix(code)
        if problem:
            raise click.BadParameter(problem, param_hint=option)
    return codes


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="dllint")
def main() -> None:
    """Find, fix and prove PyTorch DataLoader mistakes."""


@main.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), e.g. DL1,DL201, ALL.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Codes to enable on top of the selection.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--max-workers", type=click.IntRange(min=1), help="DL202 threshold for num_workers (default 8).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Use this pyproject.toml/dllint.toml.")
@click.option("--statistics", is_flag=True, help="Count findings per rule.")
@click.option("--stdin-filename", help="The path to report for source read from '-'.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (or, without --fix, offer) fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if there is a diff).")
@click.option("--fix-only", is_flag=True, help="Apply fixes without reporting what remains; exit 0 unless a fix failed.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: the usable cores; 1: no workers).")
@click.option("--no-cache", is_flag=True, help="Lint every file afresh; neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Where to keep the cache (default: .dllint_cache).")
@click.option("--probe", "probe_target", metavar="SCRIPT|MODULE:FUNCTION", help="Run the loader for real and confirm each finding; arguments after -- go to the script.")
@click.option("--probe-timeout", type=click.FloatRange(min=0, min_open=True), default=120, show_default=True, help="Seconds for the whole probe run.")
@click.option("--probe-batches", type=click.IntRange(min=1), help="Batches per measurement.")
@click.option("--probe-report", type=click.Path(dir_okay=False), help="Write everything the probe measured as JSON.")
@click.option("--nproc-per-node", type=click.IntRange(min=1), help="With --probe: run the script on N ranks as torchrun does (CPU, gloo), probing every rank.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    fmt: str,
    max_workers: int | None,
    config_path: str | None,
    statistics: bool,
    stdin_filename: str | None,
    exit_zero: bool,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    fix_only: bool = False,
    jobs: int | None = None,
    no_cache: bool = False,
    cache_dir: str | None = None,
    probe_target: str | None = None,
    probe_timeout: float = 120,
    probe_batches: int | None = None,
    probe_report: str | None = None,
    nproc_per_node: int | None = None,
) -> None:
    """Lint PATHS (files and directories; '-' reads standard input).

    With --probe, PATHS are the probed script's own arguments (put them after --).
    """
    script_args = list(paths)
    paths = paths if probe_target is None else (probe_target,)
    paths = paths or (".",)
    try:
        start = Path(stdin_filename or paths[0])
        settings = load_settings(config_path, start if start.exists() else Path.cwd())
    except ConfigError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    settings = settings.with_overrides(
        select=_split_codes(select, "--select"),
        ignore=_split_codes(ignore, "--ignore"),
        extend_select=_split_codes(extend_select, "--extend-select"),
        max_workers=max_workers,
    )
    linter = Linter(settings)
    if probe_target is not None:
        from dllint.probe.command import ProbeOptions, run_probe_command

        options = ProbeOptions(timeout=probe_timeout, batches=probe_batches, report_path=probe_report,
                               nproc_per_node=nproc_per_node)
        sys.exit(run_probe_command(probe_target, script_args, linter, fmt, options))
    if fix or diff or fix_only:
        from dllint.fixes.command import FixOptions, run_fix_command

        options = FixOptions(unsafe=unsafe_fixes, diff=diff, fix_only=fix_only)
        sys.exit(run_fix_command(paths, stdin_filename, linter, fmt, statistics, exit_zero, options))
    results: list[FileResult] = []
    files_checked = 0
    file_paths = [p for p in paths if p != "-"]
    if "-" in paths:
        data = sys.stdin.buffer.read()
        results.append(linter.lint_bytes(stdin_filename or "-", data))
        files_checked += 1
    found = discover(file_paths, settings)
    missing = found.report(lambda message: click.echo(message, err=True))
    results.extend(_run_files(found.files, settings, linter, fmt, jobs, no_cache, cache_dir))
    files_checked += len(found.files)
    findings: list[Finding] = missing + [f for r in results for f in r.findings]
    findings.sort(key=lambda f: f.sort_key)
    errors = [e for r in results for e in r.errors]
    for error in errors:
        click.echo(f"dllint: {error}", err=True)
    summary = RunSummary(findings, files_checked=files_checked, statistics=statistics, extra={"unsafe_fixes": unsafe_fixes})
    click.echo(render(fmt, summary))
    if errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _run_files(
    files: list[str], settings, linter: Linter, fmt: str, jobs: int | None, no_cache: bool, cache_dir: str | None
) -> list[FileResult]:
    """Lint discovered files through the runner: cache, worker pool, progress line (see dllint.runner)."""
    from dllint.cache import DEFAULT_CACHE_DIR, Cache
    from dllint.progress import ProgressLine
    from dllint.runner import run_lint

    cache = None
    if not no_cache and files:
        root = Path(settings.project_root) if settings.config_path else Path.cwd()
        directory = Path(cache_dir) if cache_dir else root / DEFAULT_CACHE_DIR
        cache = Cache(directory, settings, tuple(sorted(r.code for r in linter.rules)))
    progress = ProgressLine.for_run(fmt)
    try:
        return run_lint(files, settings, jobs=jobs, cache=cache, progress=progress, linter=linter)
    finally:
        if progress is not None:
            progress.finish()


@main.command("explain")
@click.argument("code")
def explain(code: str) -> None:
    """Show a rule's documentation."""
    rule = rule_by_code(code)
    if rule is None:
        click.echo(f"dllint: error: unknown rule code '{code}' (see 'dllint rules')", err=True)
        sys.exit(EXIT_ERROR)
    default = "on by default" if rule.default_enabled else "off by default (enable with --select " + rule.code + ")"
    click.echo(f"{rule.code} ({rule.name}): {rule.summary}\n\nFix: {rule.fix_safety}. {default.capitalize()}.\n")
    click.echo(rule.docs())


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List every rule: code, name, default on/off, fix safety."""
    if fmt == "json":
        import json

        click.echo(json.dumps([r.metadata() for r in all_rules()], indent=2))
        return
    rows = [(r.code, r.name, "on" if r.default_enabled else "off", r.fix_safety) for r in all_rules()]
    widths = [max(len(row[i]) for row in rows + [("code", "name", "default", "fix")]) for i in range(4)]
    header = ("code", "name", "default", "fix")
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


if __name__ == "__main__":  # pragma: no cover
    main()
