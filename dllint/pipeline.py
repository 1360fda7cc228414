"""The run pipeline: every way of running dllint goes through :func:`run`.

    paths -> discover -> read (size limit) -> input adapter -> lint -> (fix) -> write -> outcome

Checking, ``--fix``, ``--diff``, ``--fix-only`` and standard input all take this
path; the CLI parses options, calls :func:`run` and renders the :class:`RunOutcome`.
Files are checked or fixed by the runner (:mod:`dllint.runner`: cache, process pool),
one file by :mod:`dllint.per_file` (:func:`~dllint.per_file.lint`, which is also what
the probe's static lint and the language server call, with their project index);
what may be written is decided here, and the exit code too
(:mod:`dllint.exit_codes`).

Fixing never writes through a symbolic link found inside a directory given on
the command line to a file outside every directory given (black skips such
links too, "is a symbolic link that points outside"): the file is checked, not
fixed, and a note says so. A file named on the command line is the user's
choice and is written through its link.
"""

from __future__ import annotations

import os
from typing import Callable, Literal, NamedTuple, Sequence

from dllint import exit_codes
from dllint.config import Settings
from dllint.discovery import discover, find_project_root
from dllint.engine import Linter
from dllint.findings import Finding
from dllint.paths import without_dot
from dllint.per_file import FileOutcome, fix, lint, read_file, too_large
from dllint.runner import CHECK, Progress, Task, run_files

Mode = Literal["check", "fix", "diff", "fix-only"]
__all__ = ["FileOutcome", "RunOptions", "RunOutcome", "conflict", "run"]
STDIN = "-"


class RunOptions(NamedTuple):
    mode: Mode = "check"
    unsafe_fixes: bool = False
    jobs: int | None = None  # None: the runner's default
    cache_dir: str | None = None  # None: .dllint_cache in the project root (see cache_for)
    no_cache: bool = False
    stdin_filename: str | None = None  # the path reported for '-'
    exit_zero: bool = False
    project_root: str | None = None  # None: the nearest directory above the paths with a project marker, else theirs
    fix_edits: bool = False  # the report shows each fix's edits (JSON): findings with a fix are linted anew, not served from the cache

    @property
    def fixing(self) -> bool:
        return self.mode != "check"


class RunOutcome:
    """What a run found, fixed and could not write (a class, not a dataclass: see :mod:`dllint.deps`)."""

    def __init__(
        self, files: list[FileOutcome], missing: list[Finding], warnings: list[str], options: RunOptions, stdin_output: bytes | None = None
    ) -> None:
        self.files = files  # one per file checked, stdin first
        self.missing = missing  # DL000s of paths that do not exist
        self.warnings = warnings  # said on stderr: directories without files, excluded paths
        self.options = options
        self.stdin_output = stdin_output  # fix modes on '-': the source to print (fixed, or as it was)
        self.write_errors: list[str] = []

    @property
    def findings(self) -> list[Finding]:
        """What remains to report, sorted (missing paths included)."""
        found = self.missing + [f for outcome in self.files for f in outcome.findings]
        found.sort(key=lambda f: f.sort_key)
        return found

    @property
    def errors(self) -> list[str]:
        """Internal errors and failed writes: exit 2."""
        return [e for outcome in self.files for e in outcome.errors] + self.write_errors

    @property
    def fixed(self) -> int:
        return sum(len(outcome.fixed) for outcome in self.files)

    @property
    def introduced(self) -> int:
        """Of the findings that remain, how many the fixes brought in."""
        return sum(len(outcome.introduced) for outcome in self.files)

    @property
    def failed(self) -> int:
        return sum(len(outcome.failed) for outcome in self.files)

    @property
    def changed(self) -> bool:
        return any(outcome.changed for outcome in self.files)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return exit_codes.ERROR
        mode = self.options.mode
        if mode == "diff":
            return exit_codes.FINDINGS if self.changed else exit_codes.CLEAN
        if mode == "fix-only":
            return exit_codes.FINDINGS if self.failed else exit_codes.CLEAN
        return exit_codes.FINDINGS if self.findings and not self.options.exit_zero else exit_codes.CLEAN


def conflict(mode: Mode, probe: bool = False, fix_only_and_diff: bool = False) -> str | None:
    """Why options cannot go together (a usage error, exit 2), or None."""
    if probe and mode != "check":
        return f"--probe cannot be combined with --{mode} (the probe runs the script; it fixes nothing)"
    if fix_only_and_diff:
        return "--diff cannot be combined with --fix-only (--diff writes nothing; --fix-only writes without a report)"
    return None


def cache_for(settings: Settings, linter: Linter, options: RunOptions, root: str | None = None):
    """The run's cache (None with ``--no-cache``); imported only when used. It lives in the
    project root (the directory of the paths given when no marker is above them), never in the
    current directory when the project is elsewhere, as ruff keeps ``.ruff_cache``."""
    if options.no_cache:
        return None
    from dllint.cache import DEFAULT_CACHE_DIR, Cache

    base = root if root is not None else settings.project_root if settings.config_path else os.getcwd()
    directory = options.cache_dir if options.cache_dir else os.path.join(base, DEFAULT_CACHE_DIR)
    return Cache(directory, settings, linter.codes)


def run(
    paths: Sequence[str],
    settings: Settings,
    options: RunOptions = RunOptions(),
    stdin: bytes | None = None,
    *,
    linter: Linter | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Check or fix ``paths`` ('-' is ``stdin``) and write what the mode writes.

    ``warn`` hears discovery warnings as they come (they are also in ``RunOutcome.warnings``).
    """
    linter = linter or Linter(settings)
    files: list[FileOutcome] = []
    stdin_output = None
    if STDIN in paths:
        data = stdin if stdin is not None else b""
        read = _stdin(linter, options.stdin_filename or STDIN, data, options)
        files.append(read)
        if options.mode in ("fix", "fix-only"):
            # The source is the output (an editor or `dllint --fix - < f > f.new` replaces the file
            # with it): unchanged whenever it could not be fixed, never empty.
            stdin_output = read.new_bytes if read.new_bytes is not None else data
    found = discover([p for p in paths if p != STDIN], settings)
    warnings: list[str] = []

    def say(message: str) -> None:
        warnings.append(message)
        if warn is not None:
            warn(message)

    missing = found.report(say)
    outcome = RunOutcome(files, missing, warnings, options, stdin_output)
    if not found.files:
        return outcome
    root = options.project_root or find_project_root([p for p in paths if p != STDIN])  # None: stdin only
    cache = cache_for(settings, linter, options, root)
    task = Task(fix=options.fixing, unsafe=options.unsafe_fixes, edits=options.fix_edits)
    outside = _links_out_of_roots(found.files, paths) if options.fixing else set()
    if outside:
        inside = [p for p in found.files if p not in outside]
        by_path = {o.path: o for o in run_files(inside, settings, task, options.jobs, cache, progress, linter, root)}
        for o in run_files(sorted(outside), settings, CHECK, options.jobs, cache, progress, linter, root):
            o.notes.append(f"{o.path}: not fixed: a symbolic link to {os.path.realpath(o.path)}, outside the paths given")
            by_path[o.path] = o
        results = [by_path[p] for p in found.files]
    else:
        results = run_files(found.files, settings, task, options.jobs, cache, progress, linter, root)
    if cache is not None and cache.untrusted is not None:
        say(cache.untrusted)
    files.extend(results)
    if options.mode in ("fix", "fix-only"):
        outcome.write_errors = _write(results, linter)
    return outcome


def _stdin(linter: Linter, path: str, data: bytes, options: RunOptions) -> FileOutcome:
    limit = linter.settings.max_file_size
    if len(data) > limit:
        # read only to the limit plus one byte (dllint.files.read_stream): its size is not known
        return FileOutcome(path, linter.filter_findings(path, "", [too_large(path, None, limit)]))
    try:
        if options.fixing:
            outcome = fix(linter, path, data, options.unsafe_fixes)
        else:
            outcome = lint(linter, path, data)
    except Exception as exc:  # noqa: BLE001 - reported as an internal error, never a traceback
        outcome = FileOutcome(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])
    if options.fixing and not outcome.changed:
        unreadable = [f for f in outcome.findings if f.code == "DL000"]
        if unreadable:
            outcome.notes.append(f"{path}: not fixed, printed as it was: {unreadable[0].message}")
    return outcome


def _links_out_of_roots(files: list[str], paths: Sequence[str]) -> set[str]:
    """Discovered files that are symbolic links to a file outside every directory given."""
    named = {without_dot(p) for p in paths if p != STDIN and not os.path.isdir(p)}
    roots = [os.path.realpath(p) for p in paths if p != STDIN and os.path.isdir(p)]
    outside = set()
    for path in files:
        if path in named or not os.path.islink(path):
            continue
        target = os.path.realpath(path)
        if not any(os.path.commonpath([root, target]) == root for root in roots):
            outside.add(path)
    return outside


def _write(results: list[FileOutcome], linter: Linter) -> list[str]:
    """Write each fixed file in one step; the errors, one line each. A file that could not be
    written is left as it was, and its fixes are counted as failed, never as fixed."""
    from dllint.atomic import write_fixed  # only a run that writes pays for it

    errors = []
    for outcome in results:
        if outcome.new_bytes is None:
            continue
        assert outcome.read_digest is not None  # the runner sets it with new_bytes
        try:  # only if it still holds what the fixes were computed from (an edit saved meanwhile is kept)
            write_fixed(outcome.path, outcome.new_bytes, outcome.read_digest, linter.settings.max_file_size)
        except OSError as exc:
            reason = f"cannot write the fixed file: {exc.strerror or exc}"
            errors.append(f"{outcome.path}: {reason}")
            outcome.unwrite(reason, _relint(linter, outcome.path))
    return errors


def _relint(linter: Linter, path: str) -> list[Finding]:
    """The findings of the file as it is on disk (its fixed version could not be written)."""
    data, _ = read_file(path, linter.settings.max_file_size, False)
    if isinstance(data, Finding):
        return linter.filter_findings(path, "", [data])
    return lint(linter, path, data).findings
