"""A YAML config file through the engine (``lint_config_text``) and its fixes by text
edits (``fix_config_text``): what the input adapter and the per-file pipeline call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dllint.configs.edits import add_if_free, apply_text_edits
from dllint.configs.lint import read_config
from dllint.engine import FileResult
from dllint.findings import Finding, ReplaceText
from dllint.fixer import FixResult
from dllint.inputs.base import Input

if TYPE_CHECKING:
    from dllint.engine import Linter

MAX_PASSES = 4


def lint_config_text(path: str, text: str, linter: Linter) -> FileResult:
    """Lint one YAML config's text with ``linter``'s rules, through the engine's config path
    (noqa, per-file ignores and the selection as for Python)."""
    document = read_config(path, text)
    if isinstance(document, Finding):
        return FileResult(path, linter.filter_findings(path, text, [document]))
    return linter.lint_input(Input(path, "config", text, document=document, adapter="dllint.inputs.yaml"))


def text_edit(finding: Finding) -> ReplaceText | None:
    return finding.fix.edit if finding.fix is not None and isinstance(finding.fix.edit, ReplaceText) else None


def fix_config_text(path: str, text: str, linter: Linter, *, unsafe: bool = False):
    """Apply the text edits of the YAML findings' fixes, re-linting between passes, until
    nothing fixable is left. Returns the fixer's :class:`~dllint.fixer.FixResult`."""
    result = FixResult(path, text, text)
    current = text
    for _ in range(MAX_PASSES):
        linted = lint_config_text(path, current, linter)
        result.errors += linted.errors
        chosen: list[ReplaceText] = []
        applied = []
        for finding in linted.findings:
            edit = text_edit(finding)
            if edit is None or (finding.fix.applicability != "safe" and not unsafe):  # type: ignore[union-attr]
                continue
            if not add_if_free(chosen, edit):
                continue  # the next pass sees it again at its new place
            applied.append(finding)
        if not chosen:
            result.remaining = linted.findings
            break
        candidate = apply_text_edits(current, chosen)
        if isinstance(read_config(path, candidate), Finding):
            result.failed += [(f, "the edit would make the YAML unparsable; dropped") for f in applied]
            result.remaining = linted.findings
            break
        current = candidate
        result.fixed += applied
    else:
        result.remaining = lint_config_text(path, current, linter).findings
    result.text = current
    return result
