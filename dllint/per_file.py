"""One file through the pipeline: read (size limit) -> input adapter -> lint -> (fix).

What the runner does for each file, in-process or in a worker, in every mode: the
check (:func:`lint`) and the fix (:func:`fix`) of a file are one function each, so
``--fix`` gets the runner's pool and cache as checking does. :func:`lint` is also the
one call for a file's bytes outside a run (the probe's static lint, the language server). Writing files is not done here: the fixed bytes
go back to the caller (:mod:`dllint.pipeline`), which decides what may be written.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from dllint.engine import FileResult, Linter
from dllint.prefilter import _Gate
from dllint.files import TooLarge, Unreadable, read_with_stat
from dllint.findings import Finding
from dllint.inputs import WriteBackError, load, write_back
from dllint.source import unreadable

if TYPE_CHECKING:
    from dllint.deps import Deps
    from dllint.facts.flow.queries import ProjectQueries


class Fingerprint(NamedTuple):
    """A file as it was stat-ed just before it was read, and the hash of the bytes read."""

    mtime_ns: int
    size: int
    ctime_ns: int
    inode: int
    digest: str


class FileOutcome(FileResult):
    """A file's result in any mode: ``findings`` are what remains (after fixing, in fix modes)."""

    def __init__(
        self, path: str, findings: list[Finding] | None = None, errors: list[str] | None = None, skipped: bool = False, deps: Deps | None = None
    ) -> None:
        super().__init__(path, findings, errors, skipped, deps)
        self.fixed: list[Finding] = []  # findings whose fix was applied
        self.failed: list[tuple[Finding, str]] = []  # fixes tried and dropped, and why
        self.introduced: list[Finding] = []  # of ``findings``, those the fixes brought in
        self.new_bytes: bytes | None = None  # the fixed file, when a fix changed it
        self.before: str | None = None  # the text --diff compares (when changed)
        self.after: str | None = None
        self.notes: list[str] = []  # said on stderr: why a file was left as it was
        self.read_digest: str | None = None  # SHA-256 of the bytes the fixes were computed from (when changed)

    @property
    def changed(self) -> bool:
        return self.new_bytes is not None

    def unwrite(self, reason: str, findings: list[Finding]) -> None:
        """The fixed file could not be written: it is as it was, with its ``findings``."""
        self.findings = findings
        self.failed += [(f, reason) for f in self.fixed]
        self.fixed, self.introduced, self.new_bytes = [], [], None
        self.before = self.after = None


def too_large(path: str, size: int | None, limit: int) -> Finding:
    """``size`` None: not known (standard input is read only to the limit plus one byte)."""
    how_large = f"{_megabytes(size)}, over" if size is not None else "over"
    return unreadable(path, f"file too large ({how_large} max-file-size {_megabytes(limit)}): skipped; raise `max-file-size` to lint it")


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 1024 * 1024 else f"{size} bytes"


def read_file(path: str, max_size: int, want_fingerprint: bool) -> tuple[bytes | Finding, os.stat_result | None]:
    """The file's bytes (or the DL000 that says why not) and its stat from *before* the read, so
    that an edit racing with the run makes the next run look again rather than trust stale findings.
    The size limit is checked on that stat, so a huge file is never read; only a regular file is
    read at all (:mod:`dllint.files`: a FIFO or a device is one DL000, never a hang)."""
    try:
        data, st = read_with_stat(path, max_size)
    except TooLarge as exc:
        return too_large(path, exc.size or 0, max_size), None
    except Unreadable as exc:
        return unreadable(path, f"cannot read file: {exc.reason}"), None
    return data, st if want_fingerprint else None


def fingerprint(st: os.stat_result, data: bytes) -> Fingerprint:
    from dllint.cache import content_hash

    return Fingerprint(st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino, content_hash(data))


# -- checking --------------------------------------------------------------------------
def lint(linter: Linter, path: str, data: bytes, project: ProjectQueries | None = None, live: tuple[_Gate, ...] | None = None) -> FileOutcome:
    """Lint a file's bytes in any format the adapters know (a notebook, Python source, a config).

    ``live``: the byte prefilter's answer when the caller asked it already (the runner screens a
    file before handing it to a worker): a file is screened once.
    """
    if live is None:
        live = linter.prefilter.screen(data, path)
        if live is None:
            return FileOutcome(path, skipped=True)
    loaded = load(path, data, linter.settings)
    if isinstance(loaded, Finding):
        return FileOutcome(path, linter.filter_findings(path, "", [loaded]))
    result = linter.lint(loaded, project, live=live)
    return FileOutcome(result.path, result.findings, result.errors, result.skipped, result.deps)


# -- fixing ----------------------------------------------------------------------------
def wants_fix(finding: Finding, unsafe: bool) -> bool:
    """Whether this run would try the finding's fix (its rule implements it; safe, or unsafe allowed)."""
    if finding.fix is None or not (finding.fix.applicability == "safe" or unsafe):
        return False
    from dllint.rules import has_fix

    return has_fix(finding)


def fix(
    linter: Linter,
    path: str,
    data: bytes,
    unsafe: bool,
    project: ProjectQueries | None = None,
    findings: list[Finding] | None = None,
) -> FileOutcome:
    """Fix one file's bytes; ``new_bytes`` is the fixed file when a fix changed it.

    ``findings``: the file's current findings when the caller has them (its cache), saving a lint.
    """
    if linter.prefilter.screen(data, path) is None:
        return FileOutcome(path, skipped=True)
    loaded = load(path, data, linter.settings)
    if isinstance(loaded, Finding):
        return FileOutcome(path, linter.filter_findings(path, "", [loaded]))
    from dllint.fixer import fix_text

    plain = loaded.positions is None and not loaded.errors
    result = fix_text(
        path, loaded.text, linter, unsafe=unsafe, findings=findings if plain else None, input=loaded, project=project
    )
    to_file = loaded.positions.to_file if loaded.positions is not None else (lambda f: f)
    outcome = FileOutcome(path, errors=list(result.errors))
    outcome.failed = [(to_file(f), reason) for f, reason in result.failed]
    if not result.changed:
        outcome.findings = _remaining(linter, loaded.path, loaded.errors, [to_file(f) for f in result.remaining])
        return outcome
    try:
        new_bytes = write_back(loaded, result.text)
    except WriteBackError as exc:
        outcome.failed += [(to_file(f), str(exc)) for f in result.fixed]
        outcome.findings = lint(linter, path, data, project).findings
        return outcome
    outcome.fixed = [to_file(f) for f in result.fixed]
    outcome.introduced = [to_file(f) for f in result.introduced]
    outcome.new_bytes = new_bytes
    if plain:
        outcome.before, outcome.after = result.original, result.text
        outcome.findings = result.remaining
    else:  # the file's own text, and its findings at the file's new positions
        outcome.before = _text_of(data)
        outcome.after = _text_of(new_bytes)
        outcome.findings = lint(linter, path, new_bytes, project).findings
    return outcome


def _remaining(linter: Linter, path: str, errors: list[Finding], findings: list[Finding]) -> list[Finding]:
    if not errors:
        return findings
    return linter.filter_findings(path, "", errors) + findings


def _text_of(data: bytes) -> str:
    return data.decode("utf-8-sig", "replace")
