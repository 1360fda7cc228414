"""The command line: ``dllint PATHS``, ``dllint explain CODE``, ``dllint rules``.

A thin adapter: it reads options and settings, calls the run pipeline
(:func:`dllint.pipeline.run`) and renders its outcome.
"""

from __future__ import annotations

import os
import sys

import click

from dllint import __version__, exit_codes
from dllint.config import ConfigError, load_settings, parse_size
from dllint.engine import Linter
from dllint.output import FORMATS, RunSummary, render
from dllint.output.text import shown_location
from dllint.rules import all_rules, rule_by_code
from dllint.selection import validate_code_prefix

# Kept for code that imported them from here; the exit codes live in dllint.exit_codes.
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = exit_codes.CLEAN, exit_codes.FINDINGS, exit_codes.ERROR


class DefaultCommandGroup(click.Group):
    """``dllint PATHS`` runs ``check``; ``dllint explain``/``dllint rules`` are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            if not any(a in ("--help", "-h", "--version") for a in args[:1]):
                args = ["check", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # click would print "Aborted!" and exit 1, which reads as "findings": 130 is what shells use.
            click.echo("\ndllint: interrupted", err=True)
            ctx.exit(exit_codes.INTERRUPTED)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [PATHS]...\n       dllint COMMAND [ARGS]...")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """``dllint --help`` shows the options of ``dllint PATHS`` (the check command) too."""
        check_command = self.commands["check"]
        check_ctx = click.Context(check_command, info_name="check", parent=ctx)
        rows = [r for r in (p.get_help_record(check_ctx) for p in check_command.params) if r]
        rows += [r for r in (p.get_help_record(ctx) for p in self.get_params(ctx)) if r]  # --version, --help
        with formatter.section("Options (dllint [OPTIONS] [PATHS]...)"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)


def _split_codes(values: tuple[str, ...], option: str) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    for code in codes:
        problem = validate_code_prefix(code)
        if problem:
            raise click.BadParameter(problem, param_hint=option)
    return codes


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    size = parse_size(int(value) if value.strip().isdigit() else value)
    if size is None:
        raise click.BadParameter(f"'{value}' is not a size (bytes, or like 8MB)")
    return size


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="dllint")
def main() -> None:
    """Find, fix and prove PyTorch DataLoader mistakes.

    dllint PATHS lints files and directories ('-' reads standard input); the options
    below are those of that command (also: dllint check --help).
    """


@main.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), e.g. DL1,DL201, ALL.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Codes to enable on top of the selection.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--max-workers", type=click.IntRange(min=1), help="DL202 threshold for num_workers (default 16).")
@click.option("--max-file-size", callback=_size, metavar="SIZE", help="Skip larger files with one DL000 (default 4MB).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Use this pyproject.toml/dllint.toml.")
@click.option("--statistics", is_flag=True, help="Count findings per rule.")
@click.option("--stdin-filename", help="The path to report for source read from '-'.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (or, without --fix, offer) fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if there is a diff).")
@click.option("--fix-only", is_flag=True, help="Apply fixes without reporting what remains; exit 0 unless a fix failed.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes that lint, this one included (default: the usable cores; a run with under 1 MB to parse stays in one process).")
@click.option("--no-cache", is_flag=True, help="Lint every file afresh; neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Where to keep the cache (default: .dllint_cache).")
@click.option("--project-root", type=click.Path(file_okay=False), help="The project the files belong to (default: the nearest directory above them with pyproject.toml, setup.cfg, setup.py or .git).")
@click.option("--probe", "probe_target", metavar="SCRIPT|MODULE:FUNCTION", help="Run the loader for real and confirm each finding; arguments after -- go to the script.")
@click.option("--probe-timeout", type=click.FloatRange(min=0, min_open=True), default=120, show_default=True, help="Seconds for the whole probe run.")
@click.option("--probe-batches", type=click.IntRange(min=1), help="Batches per epoch of the script's real training step (default 16).")
@click.option("--probe-report", type=click.Path(dir_okay=False), help="Write everything the probe measured as JSON.")
@click.option("--nproc-per-node", type=click.IntRange(min=1), help="With --probe: run the script on N ranks as torchrun does (CPU, gloo), probing every rank.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    fmt: str,
    max_workers: int | None,
    max_file_size: int | None,
    config_path: str | None,
    statistics: bool,
    stdin_filename: str | None,
    exit_zero: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    fix_only: bool,
    jobs: int | None,
    no_cache: bool,
    cache_dir: str | None,
    project_root: str | None,
    probe_target: str | None,
    probe_timeout: float,
    probe_batches: int | None,
    probe_report: str | None,
    nproc_per_node: int | None,
) -> None:
    """Lint PATHS (files and directories; '-' reads standard input).

    With --probe, PATHS are the probed script's own arguments (put them after --).
    """
    from dllint.pipeline import RunOptions, conflict, run

    mode = "diff" if diff else "fix-only" if fix_only else "fix" if fix else "check"
    problem = conflict(mode, probe=probe_target is not None, fix_only_and_diff=diff and fix_only)
    if problem:
        raise click.UsageError(problem)
    script_args = list(paths)
    paths = paths if probe_target is None else (probe_target,)
    paths = paths or (".",)
    try:
        start = stdin_filename or paths[0]
        settings = load_settings(config_path, start if os.path.exists(start or ".") else os.getcwd())
    except ConfigError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        sys.exit(exit_codes.ERROR)
    settings = settings.with_overrides(
        select=_split_codes(select, "--select"),
        ignore=_split_codes(ignore, "--ignore"),
        extend_select=_split_codes(extend_select, "--extend-select"),
        max_workers=max_workers,
        max_file_size=max_file_size,
    )
    linter = Linter(settings)
    if probe_target is not None:
        from dllint.probe.command import ProbeOptions, run_probe_command

        probe_options = ProbeOptions(
            timeout=probe_timeout, batches=probe_batches, report_path=probe_report, nproc_per_node=nproc_per_node
        )
        sys.exit(run_probe_command(probe_target, script_args, linter, fmt, probe_options))
    options = RunOptions(
        mode=mode,
        unsafe_fixes=unsafe_fixes,
        jobs=jobs,
        cache_dir=cache_dir,
        no_cache=no_cache,
        stdin_filename=stdin_filename,
        exit_zero=exit_zero,
        project_root=project_root,
    )
    stdin = sys.stdin.buffer.read() if "-" in paths else None
    progress = None
    if any(p != "-" for p in paths):
        from dllint.progress import ProgressLine

        progress = ProgressLine.for_run(fmt)
    try:
        outcome = run(paths, settings, options, stdin, linter=linter, progress=progress, warn=lambda m: click.echo(m, err=True))
    finally:
        if progress is not None:
            progress.finish()
    _report(outcome, fmt, statistics)
    sys.exit(outcome.exit_code)


def _report(outcome, fmt: str, statistics: bool) -> None:
    """Render a run: fixed sources or diffs on stdout, notes and errors on stderr, then the report."""
    options = outcome.options
    report_to_stderr = False
    if outcome.stdin_output is not None:
        # The fixed source is the output; the report goes to stderr (as ruff does).
        sys.stdout.buffer.write(outcome.stdin_output)
        sys.stdout.flush()
        report_to_stderr = True
    if options.mode == "diff":
        for file in outcome.files:
            _echo_diff(file)
    for file in outcome.files:
        for finding, reason in file.failed:
            click.echo(f"dllint: {shown_location(finding)}: {finding.code} fix not applied: {reason}", err=True)
    for file in outcome.files:
        for note in file.notes:
            click.echo(f"dllint: {note}", err=True)
    for error in outcome.errors:
        click.echo(f"dllint: {error}", err=True)
    files_checked = len(outcome.files)
    if options.mode == "check":
        summary = RunSummary(outcome.findings, files_checked=files_checked, statistics=statistics, extra={"unsafe_fixes": options.unsafe_fixes})
        click.echo(render(fmt, summary))
    elif options.mode == "diff":
        fixed = outcome.fixed
        click.echo(f"Would fix {fixed} problem{'s' if fixed != 1 else ''}." if fixed else "No fixes to apply.", err=True)
    elif options.mode == "fix":
        summary = RunSummary(
            outcome.findings,
            files_checked=files_checked,
            fixed=outcome.fixed,
            introduced=outcome.introduced,
            statistics=statistics,
            extra={"fix_mode": True, "unsafe_fixes": options.unsafe_fixes},
        )
        click.echo(render(fmt, summary), err=report_to_stderr)
    else:
        fixed, failed = outcome.fixed, outcome.failed
        click.echo(f"Fixed {fixed} problem{'s' if fixed != 1 else ''}.", err=report_to_stderr)
        if failed:
            click.echo(f"{failed} fix{'es' if failed != 1 else ''} could not be applied.", err=report_to_stderr)


def _echo_diff(file) -> None:
    if not file.changed or file.before is None or file.after is None:
        return
    import difflib

    path = file.path
    lines = difflib.unified_diff(
        file.before.splitlines(keepends=True),
        file.after.splitlines(keepends=True),
        # git-style a/ b/ prefixes for relative paths; an absolute path is shown as it is
        fromfile=path if path.startswith("/") else f"a/{path}",
        tofile=path if path.startswith("/") else f"b/{path}",
    )
    for line in lines:
        sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    sys.stdout.flush()


@main.command("explain")
@click.argument("code", metavar="CODE|NAME")
def explain(code: str) -> None:
    """Show a rule's documentation (CODE: its code, DL101, or its name, missing-main-guard)."""
    rule = rule_by_code(code.strip().upper()) or next((r for r in all_rules() if r.name == code.strip().lower()), None)
    if rule is None:
        click.echo(f"dllint: error: unknown rule code or name '{code}' (see 'dllint rules')", err=True)
        sys.exit(exit_codes.ERROR)
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
