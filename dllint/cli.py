"""The command line: ``dllint PATHS``, ``dllint explain CODE``, ``dllint rules``.

A thin adapter: it reads options and settings, calls the run pipeline
(:func:`dllint.pipeline.run`) and renders its outcome.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Sequence

import click

from dllint import __version__, exit_codes
from dllint.config import ConfigError, Settings, load_settings, parse_size
from dllint.engine import Linter
from dllint.output import FORMATS, RunSummary, render
from dllint.output.text import shown_location, shown_path
from dllint.rules import all_rules, rule_by_code
from dllint.selection import validate_code_prefix

if TYPE_CHECKING:
    from dllint.pipeline import Mode, RunOptions

# Kept for code that imported them from here; the exit codes live in dllint.exit_codes.
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = exit_codes.CLEAN, exit_codes.FINDINGS, exit_codes.ERROR


# This process is the ``dllint`` program (the console script, ``python -m dllint``), which exits
# after its one command; not a caller that invokes the command in its own process and goes on
# (click's test runner, a script), where the collector must run again after the run.
_one_run = False


class DefaultCommandGroup(click.Group):
    """``dllint PATHS`` runs ``check``; ``dllint explain``/``dllint rules`` are subcommands."""

    def main(self, args: Sequence[str] | None = None, *more: Any, **options: Any) -> Any:
        global _one_run
        _one_run = args is None and not more and options.get("standalone_mode", True)  # (click reads sys.argv)
        return super().main(args, *more, **options)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            if not any(a in ("--help", "-h", "--version") for a in args[:1]):
                args = ["check", *args]
        try:
            return super().parse_args(ctx, args)
        except OSError as exc:  # --help or --version written to a full device
            _environment_error(exc)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # click would print "Aborted!" and exit 1, which reads as "findings": 130 is what shells use.
            click.echo("\ndllint: interrupted", err=True)
            ctx.exit(exit_codes.INTERRUPTED)
        except BrokenPipeError:  # `dllint explain DL201 | head -1`: the reader had enough
            _quiet_exit()
        except OSError as exc:  # the environment, not a file: stdout on a full device, a deleted cwd
            _environment_error(exc)

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


def _positive_seconds(ctx: click.Context, value: float) -> float:
    """``--probe-timeout``: a finite number of seconds above 0 (nan would turn the timeout off)."""
    if not 0 < value < float("inf"):
        click.echo(f"dllint: error: --probe-timeout must be a positive, finite number of seconds, got {value}", err=True)
        ctx.exit(exit_codes.ERROR)
    return value


def _quiet_exit() -> NoReturn:
    """Exit 0 without a word, as ruff and ``cat`` do when the reader closed the pipe; stdout is
    dropped first so that the interpreter's last flush does not raise again."""
    _drop_stdout()
    sys.exit(exit_codes.CLEAN)


def _drop_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _environment_error(exc: OSError) -> NoReturn:
    """One error line and exit 2 where a traceback would be; stdout is dropped first, as it may be
    what failed (a full device), so that the interpreter's last flush cannot fail again."""
    _drop_stdout()
    if isinstance(exc, FileNotFoundError) and exc.filename is None:
        message = "the current directory no longer exists" if not _cwd_exists() else str(exc)
    elif exc.errno == errno.ENOSPC:
        message = "cannot write the output: no space left on device"
    else:
        message = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    try:
        click.echo(f"dllint: error: {message}", err=True)
    except OSError:
        pass
    sys.exit(exit_codes.ERROR)


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except OSError:
        return False
    return True


def _split_codes(values: tuple[str, ...], option: str) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    for code in codes:
        problem = validate_code_prefix(code)
        if problem:
            raise click.BadParameter(problem, param_hint=option)
    return codes


def _split_patterns(values: tuple[str, ...]) -> tuple[str, ...] | None:
    """``--exclude a,b --exclude c`` as ruff reads it: (a, b, c); None when not given."""
    patterns = tuple(p.strip() for v in values for p in v.split(",") if p.strip())
    return patterns or None


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    size = parse_size(value)  # a string of digits too: never int() of 5,000 digits
    if size is None:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise click.BadParameter(f"'{shown}' is not a size (bytes, or like 8MB, up to 1TB)")
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
@click.option("--exclude", multiple=True, metavar="PATTERN", help="Paths to exclude (comma-separated globs); replaces `exclude` of the config.")
@click.option("--extend-exclude", multiple=True, metavar="PATTERN", help="Paths to exclude on top of `exclude` (comma-separated globs).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files that .gitignore, .ignore, .git/info/exclude or git's global excludes ignore (default: respect them).")
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--max-workers", type=click.IntRange(min=1), help="DL202 threshold for num_workers (default 16).")
@click.option("--max-file-size", callback=_size, metavar="SIZE", help="Skip larger files with one DL000 (default 4MB).")
@click.option("--extend-ignore", multiple=True, help="Codes to disable on top of `ignore`.")
@click.option("--per-file-ignores", multiple=True, metavar="GLOB:CODES", help="Codes to disable in matching files (e.g. 'tests/*:DL2'); replaces `per-file-ignores` of the config.")
@click.option("--extend-per-file-ignores", multiple=True, metavar="GLOB:CODES", help="Like --per-file-ignores, on top of the config's.")
@click.option("--line-length", type=click.IntRange(1, 320), help="The line length fixed lines keep to (default: line-length of the project's ruff or black config, else 88).")
@click.option("--config", "config_options", multiple=True, metavar="PATH|KEY=VALUE", help="A pyproject.toml/dllint.toml to use (default: the nearest .dllint.toml, dllint.toml or pyproject.toml with [tool.dllint]), or a TOML `KEY = VALUE` setting that wins over it (e.g. --config 'max-workers = 4').")
@click.option("--statistics", is_flag=True, help="Print only a count of findings per rule (text or json).")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to the line of each finding (merged into an existing noqa comment).")
@click.option("--show-settings", is_flag=True, help="Print the settings the first file is linted with, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, and exit.")
@click.option("--watch", "-w", is_flag=True, help="Lint again whenever a file or the config changes (Ctrl-C stops).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour the text report (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), help="Write the report to this file instead of standard output.")
@click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else (no summary, hints or warnings).")
@click.option("--silent", "-s", is_flag=True, help="Print nothing; the exit code says what was found.")
@click.option("--stdin-filename", help="The path to report for source read from '-'.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--show-fixes", is_flag=True, help="With --fix: list the fixes applied, per file and rule.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="With --fix: exit 1 when a file was fixed, even if nothing remains.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (or, without --fix, offer) fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if there is a diff).")
@click.option("--fix-only", is_flag=True, help="Apply fixes without reporting what remains; exit 0 unless a fix failed.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes that lint, this one included (default: the usable cores; a run with under 1 MB to parse stays in one process).")
@click.option("--no-cache", is_flag=True, help="Lint every file afresh; neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Where to keep the cache (default: .dllint_cache in the project root).")
@click.option("--project-root", type=click.Path(file_okay=False), help="The project the files belong to (default: the nearest directory above them with pyproject.toml, setup.cfg, setup.py or .git, else their own directory).")
@click.option("--probe", "probe_target", metavar="SCRIPT|MODULE:FUNCTION", help="Run the loader for real and confirm each finding; arguments after -- go to the script.")
@click.option("--probe-timeout", type=float, default=120, show_default=True, callback=lambda ctx, param, value: _positive_seconds(ctx, value), help="Seconds for the whole probe run.")
@click.option("--probe-batches", type=click.IntRange(min=1), help="Batches per epoch of the script's real training step (default 16).")
@click.option("--probe-report", type=click.Path(dir_okay=False), help="Write everything the probe measured as JSON.")
@click.option("--probe-trace", type=click.Path(dir_okay=False), help="Write the probe's run as a Chrome trace (open it in Perfetto or chrome://tracing): per loader, each epoch's data waits and steps, each worker's batches.")
@click.option("--nproc-per-node", type=click.IntRange(min=1), help="With --probe: run the script on N ranks with the real torchrun (--standalone), probing every rank.")
@click.option("--launcher", metavar="COMMAND", help="With --probe: run the script with your launcher, as is (e.g. \"torchrun --nnodes 2 --node-rank 0 --rdzv-endpoint host:29400 --nproc-per-node 8\", \"accelerate launch\", \"srun -n 4\"); the script and its arguments go after it.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    respect_gitignore: bool | None,
    fmt: str,
    max_workers: int | None,
    max_file_size: int | None,
    extend_ignore: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    extend_per_file_ignores: tuple[str, ...],
    line_length: int | None,
    config_options: tuple[str, ...],
    statistics: bool,
    add_noqa: bool,
    show_settings: bool,
    show_files: bool,
    watch: bool,
    color: str,
    output_file: str | None,
    quiet: bool,
    silent: bool,
    stdin_filename: str | None,
    exit_zero: bool,
    fix: bool,
    show_fixes: bool,
    exit_non_zero_on_fix: bool,
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
    probe_trace: str | None,
    nproc_per_node: int | None,
    launcher: str | None,
) -> None:
    """Lint PATHS (files and directories; '-' reads standard input).

    With --probe, PATHS are the probed script's own arguments (put them after --).
    """
    from dllint.pipeline import RunOptions, conflict

    mode: Mode = "diff" if diff else "fix-only" if fix_only else "fix" if fix else "check"
    problem = conflict(mode, probe=probe_target is not None, fix_only_and_diff=diff and fix_only) or _conflict(
        mode, fmt, statistics=statistics, add_noqa=add_noqa, watch=watch, probe=probe_target is not None
    )
    if problem:
        raise click.UsageError(problem)
    script_args = list(paths)
    paths = paths if probe_target is None else (probe_target,)
    paths = paths or (".",)
    if watch and "-" in paths:
        raise click.UsageError("--watch cannot read standard input ('-')")
    config_path, overrides = _config_options(config_options)
    try:
        start = stdin_filename or paths[0]
        settings = load_settings(config_path, start if os.path.exists(start or ".") else os.getcwd(), overrides)
    except ConfigError as exc:
        click.echo(f"dllint: error: {exc}", err=True)
        sys.exit(exit_codes.ERROR)
    ignored = _split_codes(ignore, "--ignore")
    if extend_ignore:
        ignored = (settings.ignore if ignored is None else ignored) + (_split_codes(extend_ignore, "--extend-ignore") or ())
    file_ignores = _per_file_codes(per_file_ignores, "--per-file-ignores")
    if extend_per_file_ignores:
        extra_ignores = _per_file_codes(extend_per_file_ignores, "--extend-per-file-ignores") or ()
        file_ignores = (settings.per_file_ignores if file_ignores is None else file_ignores) + extra_ignores
    settings = settings.with_overrides(
        select=_split_codes(select, "--select"),
        ignore=ignored,
        extend_select=_split_codes(extend_select, "--extend-select"),
        per_file_ignores=file_ignores,
        max_workers=max_workers,
        max_file_size=max_file_size,
        line_length=line_length,
        exclude=_split_patterns(exclude),
        extend_exclude=settings.extend_exclude + (_split_patterns(extend_exclude) or ()) if extend_exclude else None,
        respect_gitignore=respect_gitignore,
    )
    if show_settings or show_files:
        from dllint.show import show_files as list_files, show_settings as describe

        click.echo(describe(paths, settings) if show_settings else list_files(paths, settings))
        sys.exit(exit_codes.CLEAN)
    linter = Linter(settings)
    if probe_target is None and (launcher is not None or nproc_per_node is not None):
        raise click.UsageError("--launcher and --nproc-per-node go with --probe")
    if probe_target is None and probe_trace is not None:
        raise click.UsageError("--probe-trace goes with --probe")
    if probe_target is not None:
        from dllint.probe.command import ProbeOptions, run_probe_command

        probe_options = ProbeOptions(
            timeout=probe_timeout, batches=probe_batches, report_path=probe_report, nproc_per_node=nproc_per_node,
            launcher=launcher, trace_path=probe_trace,
        )
        probe_fmt = "text" if fmt in ("full", "concise") else fmt  # the probe's report has one text form
        sys.exit(run_probe_command(probe_target, script_args, linter, probe_fmt, probe_options))
    options = RunOptions(
        mode=mode,
        unsafe_fixes=unsafe_fixes,
        jobs=jobs,
        cache_dir=cache_dir,
        no_cache=no_cache,
        stdin_filename=stdin_filename,
        exit_zero=exit_zero,
        project_root=project_root,
        fix_edits=fmt == "json" and not statistics,
    )
    stdin = _read_stdin(settings.max_file_size) if "-" in paths else None
    reporting = Reporting(output_file, quiet, silent, show_fixes, _wants_color(color, output_file))
    once = _Run(paths, settings, options, stdin, linter, fmt, statistics, reporting, add_noqa, exit_non_zero_on_fix)
    if watch:
        from dllint.watch import watch as watch_paths

        watch_paths(paths, settings, once)
    if _one_run:
        # The run is all this process does: the cyclic collector stays off to its exit. What the run
        # leaves (the project index, its cycles) goes back with the process; turned back on by the
        # runner, its first collection walked all of it (0.08 s of a cold corpus run).
        gc.disable()
    sys.exit(once())


def _conflict(mode: Mode, fmt: str, *, statistics: bool, add_noqa: bool, watch: bool, probe: bool) -> str | None:
    """Why this CLI's own options cannot go together (as ruff refuses them), or None."""
    if statistics and fmt in ("sarif", "github"):
        return f"--statistics is printed as text or json, not {fmt} (ruff refuses it too)"
    if add_noqa and (mode != "check" or probe):
        return "--add-noqa cannot be combined with --fix, --fix-only, --diff or --probe"
    if watch and (mode == "diff" or probe):
        return "--watch cannot be combined with --diff or --probe"
    return None


def _config_options(values: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """``--config``'s file (at most one) and its ``KEY = VALUE`` settings, told apart as ruff
    does: an existing file, or text with ``=`` in it, is a setting; anything else is a path."""
    paths = [v for v in values if os.path.isfile(v) or "=" not in v]
    if len(paths) > 1:
        raise click.UsageError(f"--config names {len(paths)} files ({', '.join(paths)}); give one")
    return (paths[0] if paths else None), tuple(v for v in values if v not in paths)


def _per_file_codes(values: tuple[str, ...], option: str) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``--per-file-ignores 'tests/*:DL2,DL101'`` (ruff's form) as per-file-ignores entries."""
    if not values:
        return None
    entries = []
    for value in values:
        pattern, colon, codes = value.rpartition(":")
        if not colon or not pattern.strip() or not codes.strip():
            raise click.BadParameter(f"'{value}' is not GLOB:CODES (e.g. 'tests/*:DL2')", param_hint=option)
        entries.append((pattern.strip(), _split_codes((codes,), option) or ()))
    return tuple(entries)


def _wants_color(color: str, output_file: str | None) -> bool:
    if color != "auto":
        return color == "always"
    if output_file is not None or os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or (sys.stdout is not None and sys.stdout.isatty())


@dataclass(frozen=True)
class _Run:
    """One run of ``dllint PATHS`` with its options, reported; called again by ``--watch``."""

    paths: tuple[str, ...]
    settings: Settings
    options: RunOptions
    stdin: bytes | None
    linter: Linter
    fmt: str
    statistics: bool
    reporting: Reporting
    add_noqa: bool
    exit_non_zero_on_fix: bool

    def __call__(self) -> int:
        from dllint.pipeline import run

        progress = None
        quiet = self.reporting.quiet or self.reporting.silent
        if any(p != "-" for p in self.paths) and not quiet:
            from dllint.progress import ProgressLine

            progress = ProgressLine.for_run(self.fmt)
        try:
            warn = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
            outcome = run(self.paths, self.settings, self.options, self.stdin, linter=self.linter, progress=progress, warn=warn)
        finally:
            if progress is not None:
                progress.finish()
        if self.add_noqa:
            return _add_noqa(outcome, self.reporting)
        _report(outcome, self.fmt, self.statistics, self.reporting)
        code = outcome.exit_code
        if self.exit_non_zero_on_fix and code == exit_codes.CLEAN and outcome.fixed and self.options.mode != "diff":
            return exit_codes.FINDINGS
        return code


def _add_noqa(outcome, reporting: Reporting) -> int:
    """``--add-noqa``: comment every finding's line; exit 0 as ruff does, 2 when a file could not be written."""
    from dllint.add_noqa import add_noqa

    errors = list(outcome.errors)
    added = add_noqa(outcome.findings, errors)
    for error in errors:
        click.echo(f"dllint: {error}", err=True)
    if not reporting.quiet:
        reporting.echo(f"Added {added.total} noqa directive{'s' if added.total != 1 else ''}.", err=True)
    return exit_codes.ERROR if errors else exit_codes.CLEAN


class Reporting(NamedTuple):
    """Where and how much of the report goes: ruff's ``--output-file``, ``-q``, ``-s``,
    ``--show-fixes`` and ``--color``."""

    output_file: str | None = None
    quiet: bool = False  # the findings alone
    silent: bool = False  # nothing
    show_fixes: bool = False  # with --fix: which fixes were applied, per file and rule
    color: bool = False  # the text report is styled (and kept styled when not on a terminal)

    def echo(self, text: str, err: bool = False) -> None:
        if self.silent:
            return
        if self.output_file is None or err:
            if not err and sys.stdout is None:  # started with stdout closed: the report would be lost
                _fail("cannot write the report: standard output is closed")
            if text:  # -q with nothing found prints nothing, not an empty line
                click.echo(text, err=err, color=True if self.color and not err else None)
            return
        try:
            with open(self.output_file, "w", encoding="utf-8") as handle:
                handle.write(text + "\n" if text else "")
        except OSError as exc:
            click.echo(f"dllint: error: cannot write {self.output_file}: {exc.strerror}", err=True)
            sys.exit(exit_codes.ERROR)


def _read_stdin(limit: int) -> bytes:
    """Standard input, read to its end or to ``limit`` plus one byte (``- < /dev/zero`` stops)."""
    from dllint.files import Unreadable, read_stream

    if sys.stdin is None:
        _fail("cannot read standard input: it is closed")
    try:
        return read_stream(sys.stdin.buffer, limit)  # over the limit: the pipeline's DL000 says so
    except Unreadable as exc:
        _fail(f"cannot read standard input: {exc.reason}")


def _fail(message: str) -> NoReturn:
    click.echo(f"dllint: error: {message}", err=True)
    sys.exit(exit_codes.ERROR)


def _report(outcome, fmt: str, statistics: bool, reporting: Reporting = Reporting()) -> None:
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
    extra = {"unsafe_fixes": options.unsafe_fixes, "quiet": reporting.quiet, "color": reporting.color}
    if options.mode == "check":
        summary = RunSummary(outcome.findings, files_checked=files_checked, statistics=statistics, extra=extra)
        reporting.echo(render(fmt, summary))
    elif options.mode == "diff":
        fixed = outcome.fixed
        if not reporting.quiet:
            reporting.echo(f"Would fix {fixed} problem{'s' if fixed != 1 else ''}." if fixed else "No fixes to apply.", err=True)
    elif options.mode == "fix":
        if reporting.show_fixes and fmt in ("text", "full", "concise") and not reporting.quiet:
            reporting.echo(_fixes_applied(outcome.files), err=report_to_stderr)
        summary = RunSummary(
            outcome.findings,
            files_checked=files_checked,
            fixed=outcome.fixed,
            introduced=outcome.introduced,
            statistics=statistics,
            extra={**extra, "fix_mode": True},
        )
        reporting.echo(render(fmt, summary), err=report_to_stderr)
    elif not reporting.quiet:
        fixed, failed = outcome.fixed, outcome.failed
        reporting.echo(f"Fixed {fixed} problem{'s' if fixed != 1 else ''}.", err=report_to_stderr)
        if failed:
            reporting.echo(f"{failed} fix{'es' if failed != 1 else ''} could not be applied.", err=report_to_stderr)


def _fixes_applied(files) -> str:
    """``--show-fixes``: ruff's enumeration, ``Fixed 2 problems:`` then per file ``N × CODE (name)``."""
    from collections import Counter

    fixed = [(file.path, Counter((f.code, f.name) for f in file.fixed)) for file in files if file.fixed]
    total = sum(sum(counts.values()) for _, counts in fixed)
    if not total:
        return "No fixes applied."
    lines = [f"Fixed {total} problem{'s' if total != 1 else ''}:"]
    for path, counts in fixed:
        lines.append(f"- {shown_path(path)}:")
        lines += [f"    {count} × {code} ({name})" for (code, name), count in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def _echo_diff(file) -> None:
    if not file.changed or file.before is None or file.after is None:
        return
    from dllint.output.diff import file_diff

    for line in file_diff(file.path, file.before, file.after):
        sys.stdout.write(line)
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


@main.command("server")
def server() -> None:
    """Run the language server over stdio (for editors; needs `pip install dllint[server]`)."""
    try:
        from dllint.server.app import main as serve
    except ImportError as exc:
        click.echo(f"dllint: error: the language server needs pygls and lsprotocol ({exc}): pip install 'dllint[server]'", err=True)
        sys.exit(exit_codes.ERROR)
    serve()


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
