"""Config files through the rules: read, resolve, find loader blocks, ask each rule.

Rules that apply to configs define ``check_config(block)`` next to ``check(facts)``, with
one predicate behind both. This module turns what they report into findings, reads YAML
(``lint_config_text``) and Python dict configs (``python_config_blocks``), and fixes YAML
by text edits (``fix_config_text``).
"""

from __future__ import annotations

import ast
import re
import traceback
from typing import TYPE_CHECKING, Iterable

from dllint.configs.blocks import ConfigBlock, find_blocks
from dllint.configs.document import ConfigDocument, Entry, Span
from dllint.configs.edits import apply_text_edits, insert_after, overlaps, remove_entry, replace_value
from dllint.findings import Finding, Fix, RemoveArguments, ReplaceText, SetArgument

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.engine import FileResult, Linter
    from dllint.rules import Rule

# The bytes a config file must contain to hold a loader block or inherit one (the prefilter):
# a loader key or a DataLoader target; YAML also `_base_` or a Hydra defaults list.
CONFIG_TRIGGERS = (b"num_workers", b"DataLoader", b"persistent_workers", b"prefetch_factor")
YAML_TRIGGERS = CONFIG_TRIGGERS + (b"_base_", b"pin_memory", b"defaults:")
# A dict config binds values only: a module-level def, class or `if` means a script or library.
NOT_A_DICT_CONFIG = re.compile(r"^(?:def|async def|class|if)\b", re.M)
YAML_SUFFIXES = (".yaml", ".yml")
MAX_PASSES = 4


def could_be_dict_config(text: str) -> bool:
    """Before parsing: the text has no module-level definition (what ``is_dict_config`` asks)."""
    return NOT_A_DICT_CONFIG.search(text) is None


def could_be_config(data: bytes) -> bool:
    """The YAML prefilter: no trigger, no loader block, no parse."""
    return any(trigger in data for trigger in YAML_TRIGGERS)


# -- reading --------------------------------------------------------------------------------
def read_config(path: str, text: str) -> ConfigDocument | Finding:
    """A YAML file, resolved (bases, defaults, interpolation); a DL000 finding when it does
    not parse."""
    from dllint.configs.inherit import resolve_document
    from dllint.configs.yaml_reader import YamlError, read_yaml
    from dllint.source import unreadable

    document = read_yaml(path, text)
    if isinstance(document, YamlError):
        return unreadable(path, document.message, document.line, document.column)
    return resolve_document(document)


def python_config_blocks(path: str, text: str, tree: ast.Module, settings: Settings) -> list[ConfigBlock]:
    """The loader blocks of a Python dict config (none for a module that defines functions
    or classes: a script's loaders are its loader calls)."""
    from dllint.configs.inherit import resolve_document
    from dllint.configs.python_reader import is_dict_config, read_python_config

    if not is_dict_config(tree):
        return []
    document = read_python_config(path, text, tree)
    if document is None:
        return []
    return find_blocks(resolve_document(document), settings)


# -- checking -------------------------------------------------------------------------------
def config_rules(rules: Iterable[Rule]) -> list[Rule]:
    return [rule for rule in rules if callable(getattr(rule, "check_config", None))]


def check_blocks(rules: Iterable[Rule], blocks: list[ConfigBlock], errors: list[str]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in config_rules(rules):
        for block in blocks:
            try:
                findings.extend(rule.check_config(block))  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a rule bug must not stop the run
                errors.append(f"{block.path}: internal error in {rule.code}: {traceback.format_exc(limit=-3).strip()}")
    return findings


def lint_config_text(path: str, text: str, linter: Linter) -> FileResult:
    """Lint one YAML config's text with ``linter``'s rules (noqa, per-file ignores and the
    selection as for Python)."""
    from dllint.engine import FileResult
    from dllint.noqa import file_suppression

    result = FileResult(path)
    suppressed = file_suppression(text)
    if suppressed is None:
        return result
    document = read_config(path, text)
    if isinstance(document, Finding):
        result.findings = linter._filter(path, text, [document])
        return result
    findings = check_blocks(linter.rules, find_blocks(document, linter.settings), result.errors)
    if suppressed:
        findings = [f for f in findings if f.code not in suppressed]
    result.findings = linter._filter(path, text, findings)
    return result


# -- reporting ------------------------------------------------------------------------------
def config_finding(rule: Rule, block: ConfigBlock, span: Span, message: str | None = None, fix: Fix | None = None) -> Finding:
    return Finding(
        path=block.path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        code=rule.code,
        name=rule.name,
        message=message or rule.summary,
        fix=fix,
    )


def removal_fix(block: ConfigBlock, name: str) -> Fix | None:
    """Remove the key ``name``: a text edit in YAML, the argument of ``dict(...)``/``L(...)(...)``
    in Python (through the rule's ``apply_fix``)."""
    entry = block.entry(name)
    if not block.is_local(entry):
        return None
    assert entry is not None
    message = f"Remove `{name}`"
    if block.document.format == "python":
        return Fix("safe", message, RemoveArguments((name,))) if _python_keyword(block, entry) else None
    edit = remove_entry(block.document, block.mapping, entry)
    return Fix("safe", message, edit) if edit else None


def setting_fix(block: ConfigBlock, name: str, value: bool, *, after: str = "num_workers") -> Fix | None:
    """``name: true``: the written value replaced (unsafe: an explicit value may be deliberate),
    or a new line after the ``after`` key (safe)."""
    entry = block.entry(name)
    yaml_value, python_value = ("true", "True") if value else ("false", "False")
    if block.document.format == "python":
        if block.block_span is None or (entry is not None and not _python_keyword(block, entry)):
            return None
        applicability = "unsafe" if entry is not None else "safe"
        verb = "Set" if entry is not None else "Add"
        return Fix(applicability, f"{verb} `{name}={python_value}`", SetArgument(name, python_value))  # type: ignore[arg-type]
    if entry is not None:
        edit = replace_value(block.document, block.mapping, entry, yaml_value) if block.is_local(entry) else None
        return Fix("unsafe", f"Set `{name}: {yaml_value}`", edit) if edit else None
    anchor = block.entry(after)
    edit = insert_after(block.document, block.mapping, anchor, name, yaml_value) if block.is_local(anchor) else None  # type: ignore[arg-type]
    return Fix("safe", f"Add `{name}: {yaml_value}`", edit) if edit else None


def _python_keyword(block: ConfigBlock, entry: Entry) -> bool:
    """A ``name=value`` keyword of the block's own ``dict(...)``/``L(...)(...)`` call."""
    return isinstance(entry.node, ast.keyword) and isinstance(block.mapping.node, ast.Call) and block.mapping.path == block.path


# -- fixing YAML ----------------------------------------------------------------------------
def text_edit(finding: Finding) -> ReplaceText | None:
    return finding.fix.edit if finding.fix is not None and isinstance(finding.fix.edit, ReplaceText) else None


def fix_config_text(path: str, text: str, linter: Linter, *, unsafe: bool = False):
    """Apply the text edits of the YAML findings' fixes, re-linting between passes, until
    nothing fixable is left. Returns the fixer's :class:`~dllint.fixer.FixResult`."""
    from dllint.fixer import FixResult

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
            if any(overlaps(edit, other) for other in chosen):
                continue  # the next pass sees it again at its new place
            chosen.append(edit)
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


def lint_config_bytes(path: str, data: bytes, linter: Linter) -> FileResult:
    """A YAML file's bytes (UTF-8, a BOM allowed; YAML's own encodings beyond it are rare in
    configs) through :func:`lint_config_text`."""
    from dllint.engine import FileResult
    from dllint.source import unreadable

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        finding = unreadable(path, f"cannot decode file: not valid utf-8 at byte {exc.start}")
        return FileResult(path, linter._filter(path, "", [finding]))
    return lint_config_text(path, text, linter)


def fix_config_bytes(path: str, data: bytes, linter: Linter, *, unsafe: bool = False):
    """A YAML file's bytes fixed: (:class:`~dllint.fixer.FixResult`, the encoding to write back in)."""
    from dllint.fixer import FixResult

    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    if not linter.config_rules or not could_be_config(data):
        text = data.decode(encoding, "replace")
        return FixResult(path, text, text), encoding
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return FixResult(path, "", "", remaining=lint_config_bytes(path, data, linter).findings), encoding
    return fix_config_text(path, text, linter, unsafe=unsafe), encoding
