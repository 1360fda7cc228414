"""Applying fixes: lint -> fix -> re-lint, until nothing fixable is left (at most MAX_PASSES).

Each pass parses the text once with LibCST and asks each fixable finding's rule for its
edits (``Rule.apply_fix(ctx, finding)``, found on the rule class: no list to keep). Edits
that overlap an edit already accepted in the pass wait for the next pass, where the
re-lint reports them at their new positions; that is how a main guard (DL101) and a
hoisted lambda (DL102) in one script compose. A pass's result must parse (``ast.parse``);
a fix that breaks it is dropped and reported, never written.
"""

from __future__ import annotations

import io
import tokenize
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Sequence

import libcst as cst

from dllint.config import project_line_length
from dllint.findings import Finding
from dllint.fixes import LOCAL_EDITS, Edits, FileState, FixContext, FixUnavailable
from dllint.rules import has_fix
from dllint.source import compile_error, parse_module, same_line_endings

if TYPE_CHECKING:
    from dllint.engine import FileResult
    from dllint.rules import Rule


class FixLinter(Protocol):
    """What the fixer asks of a linter (:class:`dllint.engine.Linter`, or one that knows the input)."""

    @property
    def rules(self) -> Sequence[Rule]: ...

    def lint_text(self, path: str, text: str) -> FileResult: ...

    def filter_findings(self, path: str, text: str, findings: list[Finding]) -> list[Finding]: ...

MAX_PASSES = 8


@dataclass
class FixResult:
    path: str
    original: str
    text: str  # the fixed source (== original when nothing changed)
    fixed: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    failed: list[tuple[Finding, str]] = field(default_factory=list)  # fixes tried and dropped, and why
    remaining: list[Finding] = field(default_factory=list)  # what the fixed source still reports
    introduced: list[Finding] = field(default_factory=list)  # of ``remaining``, those the fixes brought in
    errors: list[str] = field(default_factory=list)  # internal errors (a bug in dllint)

    @property
    def changed(self) -> bool:
        return self.text != self.original


def is_selected(finding: Finding, unsafe: bool) -> bool:
    return has_fix(finding) and (finding.fix.applicability == "safe" or unsafe)  # type: ignore[union-attr]


def fix_text(
    path: str,
    text: str,
    linter: FixLinter,
    *,
    unsafe: bool = False,
    findings: list[Finding] | None = None,
    max_passes: int = MAX_PASSES,
) -> FixResult:
    """Fix one source text (a file, or a notebook cell's source) with ``linter``'s rules.

    ``findings`` are the text's findings when the caller already has them (saves a lint).
    The text is returned unchanged when it does not parse.
    """
    result = FixResult(path, text, text)
    rules = {rule.code: rule for rule in linter.rules}
    line_length = project_line_length(path, getattr(linter, "settings", None))  # --line-length wins
    given_up: set[tuple] = set()
    current = text
    original: list[Finding] | None = findings
    for _ in range(max_passes):
        if findings is None:
            linted = linter.lint_text(path, current)
            findings, result.errors = linted.findings, result.errors + linted.errors
        if original is None:
            original = findings
        if any(f.code == "DL000" for f in findings):
            break  # unparsable: never touched
        candidates = [
            f for f in findings if is_selected(f, unsafe) and f.code in rules and _key(current, f) not in given_up
        ]
        if not candidates:
            break
        if current is text:
            refused = compile_error(path, text)
            if refused is not None:  # Python would not run it: one DL000, nothing changed
                findings = linter.filter_findings(path, text, [refused])
                break
        new_text, applied, failed = _apply_pass(current, candidates, rules, line_length)
        new_text = same_line_endings(current, new_text)
        for finding, reason in failed:
            given_up.add(_key(current, finding))
            result.failed.append((finding, reason))
        if new_text == current:
            if not failed:
                break
            continue  # the failures are recorded; nothing else to do this pass... try the rest
        result.fixed += applied
        current = new_text
        findings = None
    else:
        findings = None
    if findings is None:
        linted = linter.lint_text(path, current)
        findings, result.errors = linted.findings, result.errors + linted.errors
    # No final ``ast.parse`` of ``current``: every text a pass hands back was parsed by ``_render``.
    result.text = current
    result.remaining = findings
    if current != text:
        result.introduced = introduced_by_fixes(text, original or [], current, findings, result.fixed)
    return result


def introduced_by_fixes(before_text: str, before: list[Finding], after_text: str, after: list[Finding], fixed: list[Finding]) -> list[Finding]:
    """The findings of the fixed text that the fixes brought in: per rule, those beyond what was
    found less what was fixed (a hoisted lambda that now trips DL106, say). Positions move, so
    findings are matched by rule; within a rule, the ones whose line reads as before are kept."""
    by_code: dict[str, list[Finding]] = {}
    for finding in after:
        by_code.setdefault(finding.code, []).append(finding)
    introduced: list[Finding] = []
    for code, found in by_code.items():
        expected = sum(f.code == code for f in before) - sum(f.code == code for f in fixed)
        excess = len(found) - max(expected, 0)
        if excess <= 0:
            continue
        old_keys = {_key(before_text, f) for f in before if f.code == code}
        ranked = sorted(found, key=lambda f: (_key(after_text, f) in old_keys, f.sort_key))
        introduced += ranked[:excess]
    return sorted(introduced, key=lambda f: f.sort_key)


def _key(text: str, finding: Finding) -> tuple:
    """Identifies a finding across passes, where its position may have moved."""
    lines = text.splitlines()
    line = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
    return finding.code, finding.message, line


def _apply_pass(text: str, candidates: list[Finding], rules: dict, line_length: int = 88) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    local = all(isinstance(f.fix.edit, LOCAL_EDITS) for f in candidates)  # type: ignore[union-attr]
    try:
        state = FileState.parse(text, [f.line for f in candidates] if local else ())
    except Exception as exc:  # noqa: BLE001 - LibCST rejects some code ast accepts (ParserSyntaxError,
        # CSTValidationError on `for* x in y:`, RecursionError): the file keeps its findings, loses its fixes
        reason = f"LibCST cannot parse the file for fixing ({type(exc).__name__}: {_first_line(exc)}); fixes dropped"
        return text, [], [(f, reason) for f in candidates]
    accepted: list[tuple[Finding, Edits]] = []
    failed: list[tuple[Finding, str]] = []
    for finding in sorted(candidates, key=lambda f: f.sort_key):
        ctx = FixContext(state, line_length)
        try:
            rules[finding.code].apply_fix(ctx, finding)
        except FixUnavailable as exc:
            failed.append((finding, str(exc)))
            continue
        except Exception:  # noqa: BLE001 - a fix bug must not stop the run, nor write anything
            failed.append((finding, f"internal error: {traceback.format_exc(limit=-2).strip()}"))
            continue
        if not ctx.edits:
            failed.append((finding, "the fix found nothing to change"))
        elif not any(ctx.edits.conflicts_with(edits) for _, edits in accepted):
            accepted.append((finding, ctx.edits))
        # else: it overlaps an accepted fix and waits for the next pass
    if not accepted:
        return text, [], failed
    new_text = _render(state, accepted)
    if new_text is None:
        # Find the culprits one by one; keep what is valid on its own and together.
        good = []
        for finding, edits in accepted:
            if _render(state, [(finding, edits)]) is None:
                failed.append((finding, "the fix would produce code that does not parse; dropped"))
            else:
                good.append((finding, edits))
        new_text = _render(state, good) if good else text
        if new_text is None:
            good = good[:1]
            new_text = _render(state, good) or text
        accepted = good
    return new_text, [f for f, _ in accepted], failed


def _first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), "")


def _render(state: FileState, accepted: list[tuple[Finding, Edits]]) -> str | None:
    merged = Edits()
    for _, edits in accepted:
        merged.merge(edits)
    try:
        new_text = state.render(merged)
    except (FixUnavailable, cst.CSTValidationError, TypeError, ValueError):
        return None
    return new_text if _parses(new_text) else None


def _parses(text: str) -> bool:
    try:
        parse_module(text, "<fix>")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# -- files -------------------------------------------------------------------------------
def source_encoding(data: bytes) -> str:
    """The encoding to write a file back in: its PEP 263 one (``utf-8-sig`` keeps a BOM)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return "utf-8"

