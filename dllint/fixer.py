"""Applying fixes: lint -> fix -> re-lint, until nothing fixable is left (at most MAX_PASSES).

One loop for every input (:func:`fix_text`); how a pass edits is the input's
:class:`EditApplier`. Python text (:class:`CSTEdits`): each pass parses the text once with
LibCST and records each fixable finding's edits: argument edits by their type
(:func:`apply_edit`), others by the rule's ``apply_fix(ctx, finding)`` (found on the rule
class: no list to keep). Config files (:class:`TextEdits`): each fix's
text edit is spliced in at its span. Edits that overlap an edit already accepted in the
pass wait for the next pass, where the re-lint reports them at their new positions; that
is how a main guard (DL101) and a hoisted lambda (DL102) in one script compose. A pass's
result must parse (``ast.parse``, or the config reader); a fix that breaks it is dropped
and reported, never written. Either way the loop computes what the fixes introduced.
"""

from __future__ import annotations

import io
import tokenize
import traceback
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, Sequence

import libcst as cst

from dllint.config import project_line_length
from dllint.configs.edits import add_if_free, apply_text_edits
from dllint.configs.read import read_config
from dllint.findings import Finding, RemoveArguments, ReplaceText, SetArgument
from dllint.fixes import LOCAL_EDITS, Edits, FileState, FixContext, FixUnavailable
from dllint.fixes.arguments import remove_reported_argument, set_reported_argument
from dllint.inputs.base import Input
from dllint.rules import has_fix
from dllint.source import compile_error, parse_module, same_line_endings

if TYPE_CHECKING:
    from dllint.engine import FileResult
    from dllint.rules import Rule


class FixLinter(Protocol):
    """What the fixer asks of a linter (:class:`dllint.engine.Linter`)."""

    @property
    def rules(self) -> Sequence[Rule]: ...

    def lint(self, input: Input, project: Any = None) -> FileResult: ...

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
    input: Input | None = None,
    project: Any = None,
    relint: bool = True,
) -> FixResult:
    """Fix one source text (a file, or a notebook's code cells joined) with ``linter``'s rules.

    ``findings`` are the text's findings when the caller already has them (saves a lint).
    ``relint=False``: no lint of the fixed text (``remaining`` and ``introduced`` stay empty), for a
    caller that reads only the text and what was fixed.
    ``input``: what the text is (a notebook's cells: :class:`~dllint.inputs.Input`; None: a
    Python file), each re-lint of the fixed text linted as such, knowing ``project``.
    The text is returned unchanged when it does not parse.
    """
    as_input = input or Input(path, "python", text)
    edits: EditApplier = TextEdits(linter, as_input, project) if as_input.kind == "config" else CSTEdits(linter, as_input, project)
    result = FixResult(path, text, text)
    given_up: set[tuple] = set()
    current = text
    original: list[Finding] | None = findings
    for _ in range(min(max_passes, edits.max_passes)):
        if findings is None:
            linted = edits.lint(current)
            findings, result.errors = linted.findings, result.errors + linted.errors
        if original is None:
            original = findings
        if any(f.code == "DL000" for f in findings):
            break  # unparsable: never touched
        candidates = [f for f in findings if edits.selects(f, unsafe) and _key(current, f) not in given_up]
        if not candidates:
            break
        if current is text:
            refused = edits.refuses(text)
            if refused is not None:  # Python would not run it: one DL000, nothing changed
                findings = linter.filter_findings(path, text, [refused])
                break
        new_text, applied, failed = edits.apply(current, candidates)
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
    if not relint:
        result.text = current
        return result
    if findings is None:
        linted = edits.lint(current)
        findings, result.errors = linted.findings, result.errors + linted.errors
    # No final parse of ``current``: every text a pass hands back was parsed (``_render``, ``TextEdits``).
    result.text = current
    result.remaining = findings
    if current != text:
        result.introduced = introduced_by_fixes(text, original or [], current, findings, result.fixed)
    return result


class EditApplier(Protocol):
    """How one kind of input is fixed, for :func:`fix_text`'s loop: which findings' fixes it
    applies, whether it refuses the text, one pass of edits, and a re-lint of the new text."""

    max_passes: int

    def selects(self, finding: Finding, unsafe: bool) -> bool: ...

    def refuses(self, text: str) -> Finding | None: ...

    def apply(self, text: str, candidates: list[Finding]) -> tuple[str, list[Finding], list[tuple[Finding, str]]]: ...

    def lint(self, text: str) -> FileResult: ...


class CSTEdits:
    """Python text (a file, a notebook's cells joined): each rule's ``apply_fix`` edits a LibCST
    tree of the text; a pass's result must parse."""

    max_passes = MAX_PASSES

    def __init__(self, linter: FixLinter, input: Input, project: Any) -> None:
        self.linter, self.input, self.project = linter, input, project
        self.rules = {rule.code: rule for rule in linter.rules}
        self.line_length = project_line_length(input.path, getattr(linter, "settings", None))  # --line-length wins

    def selects(self, finding: Finding, unsafe: bool) -> bool:
        return is_selected(finding, unsafe) and finding.code in self.rules

    def refuses(self, text: str) -> Finding | None:
        return compile_error(self.input.path, text)

    def apply(self, text: str, candidates: list[Finding]) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
        new_text, applied, failed = _apply_pass(text, candidates, self.rules, self.line_length)
        return same_line_endings(text, new_text), applied, failed

    def lint(self, text: str) -> FileResult:
        return self.linter.lint(replace(self.input, text=text, positions=None, errors=[]), self.project)


class TextEdits:
    """The fixer's edits for a config file (:class:`~dllint.fixer.EditApplier`): each fix's
    :class:`~dllint.findings.ReplaceText` spliced into the text, those that overlap an edit already
    taken left for the next pass; a pass whose result is no longer a config the reader accepts
    is dropped. Re-linted as the input adapter reads a config (:func:`read_config`)."""

    max_passes = 4

    def __init__(self, linter: FixLinter, input: Input, project: Any = None) -> None:
        self.linter, self.path, self.project = linter, input.path, project  # the project: what code hands on whole

    def selects(self, finding: Finding, unsafe: bool) -> bool:
        return _text_edit(finding) is not None and (unsafe or finding.fix.applicability == "safe")  # type: ignore[union-attr]

    def refuses(self, text: str) -> Finding | None:
        return None  # the reader already said what it cannot read (a DL000 the loop stops at)

    def apply(self, text: str, candidates: list[Finding]) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
        chosen: list[ReplaceText] = []
        applied = [f for f in candidates if add_if_free(chosen, _text_edit(f))]  # type: ignore[arg-type]
        new_text = apply_text_edits(text, chosen)
        if isinstance(read_config(self.path, new_text), Finding):
            return text, [], [(f, "the edit would make the YAML unparsable; dropped") for f in applied]
        return new_text, applied, []

    def lint(self, text: str) -> FileResult:
        """``text`` linted as the config file ``path`` (through the engine's config path: noqa,
        per-file ignores and the selection as for Python)."""
        from dllint.engine import FileResult

        document = read_config(self.path, text)
        if isinstance(document, Finding):
            return FileResult(self.path, self.linter.filter_findings(self.path, text, [document]))
        return self.linter.lint(Input(self.path, "config", text, document=document, adapter="dllint.inputs.yaml"), self.project)


def _text_edit(finding: Finding) -> ReplaceText | None:
    return finding.fix.edit if finding.fix is not None and isinstance(finding.fix.edit, ReplaceText) else None


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


def apply_edit(rule: Rule, ctx: FixContext, finding: Finding) -> None:
    """Record the finding's edits in ``ctx``: by the edit's type for the argument edits any rule
    may offer (:data:`dllint.rules.FIXER_EDITS`), else by the rule's own ``apply_fix``."""
    edit = finding.fix.edit if finding.fix is not None else None
    if isinstance(edit, SetArgument):
        set_reported_argument(ctx, finding, at_argument=rule.fix_at_argument)
    elif isinstance(edit, RemoveArguments):
        remove_reported_argument(ctx, finding)
    else:
        rule.apply_fix(ctx, finding)  # type: ignore[attr-defined]  # has_fix: it has one


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
            apply_edit(rules[finding.code], ctx, finding)
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
        parse_module(text)
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

