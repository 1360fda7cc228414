"""The engine: bytes -> prefilter -> parse (once) -> facts -> rules -> suppression.

Analysis uses Python's ``ast``: measured on 62,752 lines of the standard
library, ``ast.parse`` took 1.5 s where ``libcst.parse_module`` took 4.9 s,
LibCST's PositionProvider another 14 s and one empty CST visit 6.8 s.
LibCST is used where it pays: rewriting code in fixes, which must keep the
file's formatting.
"""

from __future__ import annotations

import ast
import traceback
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from dllint.config import Settings
from dllint.configs.lint import (
    CONFIG_TRIGGERS,
    YAML_SUFFIXES,
    check_blocks,
    config_rules,
    could_be_config,
    could_be_dict_config,
    python_config_blocks,
)
from dllint.facts import FileFacts, split_lines
from dllint.findings import Finding
from dllint.gc_pause import collector_paused
from dllint.noqa import LineSuppressions, file_suppression
from dllint.rules import Rule, all_rules
from dllint.selection import code_matches, enabled_rules, ignored_for_path
from dllint.source import decode, read_source, syntax_error, unreadable


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors: a bug in dllint, never the user's
    skipped: bool = False  # the prefilter proved there is nothing to find


class Linter:
    """Lints sources with one fixed set of settings (and so one set of rules)."""

    def __init__(self, settings: Settings, rules: Sequence[type[Rule]] | None = None) -> None:
        self.settings = settings
        chosen = enabled_rules(settings, all_rules()) if rules is None else list(rules)
        self.rules = [rule() for rule in chosen if rule.code != "DL000"]
        self.report_unreadable = any(rule.code == "DL000" for rule in chosen)
        triggers = {t for rule in self.rules for t in rule.triggers}
        triggers.update(name.rsplit(".", 1)[-1].encode() for name in settings.extend_loader_classes)
        # Text a file must contain for a rule's `check` to fire (the rest may hold only a dict config).
        self.code_triggers = tuple(sorted(t.decode() for t in triggers))
        self.config_rules = config_rules(self.rules)  # rules that also check config files' loader blocks
        if self.config_rules:
            triggers.update(CONFIG_TRIGGERS)  # a dict config may never name DataLoader
        # A trigger containing another is implied by it (`IterableDataset` by `Dataset`): one scan fewer.
        self.triggers = tuple(sorted(t for t in triggers if not any(o != t and o in t for o in triggers)))

    def could_have_findings(self, data: bytes) -> bool:
        """The byte-level prefilter: no trigger text, no finding possible, no parse needed."""
        return any(trigger in data for trigger in self.triggers)

    def lint_bytes(self, path: str, data: bytes) -> FileResult:
        result = FileResult(path)
        if path.endswith(YAML_SUFFIXES):
            if not self.config_rules or not could_be_config(data):
                result.skipped = True
                return result
            from dllint.configs.lint import lint_config_bytes

            return lint_config_bytes(path, data, self)
        if not self.could_have_findings(data):
            result.skipped = True
            return result
        if path.endswith(".ipynb"):
            from dllint.notebook import lint_notebook

            return lint_notebook(path, data, self)
        decoded = decode(path, data)
        if decoded.error is not None:
            result.findings = self._filter(path, "", [decoded.error])
            return result
        return self.lint_text(path, decoded.text or "")

    @collector_paused
    def lint_text(self, path: str, text: str, *, notebook: bool = False, tree: ast.Module | None = None) -> FileResult:
        """Lint ``text``; ``notebook``: it is a notebook's code cells joined (see dllint.notebook);
        ``tree``: ``text`` already parsed by the caller (flake8 hands plugins its tree)."""
        result = FileResult(path)
        suppressed = file_suppression(text)
        if suppressed is None:
            return result
        code_rules_apply = notebook or any(trigger in text for trigger in self.code_triggers)
        if not code_rules_apply and (not self.config_rules or not could_be_dict_config(text)):
            return result  # only a dict config could have findings, and this is a script (`build_ext(num_workers=)`)
        try:
            tree = tree if tree is not None else ast.parse(text, filename=path)
        except SyntaxError as exc:
            result.findings = self._filter(path, text, [syntax_error(path, exc)])
            return result
        except (ValueError, RecursionError, MemoryError) as exc:
            result.findings = self._filter(path, text, [unreadable(path, f"cannot parse file: {exc}")])
            return result
        findings: list[Finding] = []
        if code_rules_apply:
            facts = FileFacts(path, text, tree, self.settings, is_notebook=notebook)
            for rule in self.rules:
                try:
                    findings.extend(rule.check(facts))
                except Exception:  # noqa: BLE001 - a rule bug must not stop the run
                    result.errors.append(
                        f"{path}: internal error in {rule.code}: {traceback.format_exc(limit=-3).strip()}"
                    )
        if self.config_rules and not notebook and not (code_rules_apply and facts.loader_calls):
            # A dict config (mmengine, detectron2 LazyConfig) binds values; a script's loaders are its calls.
            blocks = facts.config_blocks if code_rules_apply else python_config_blocks(path, text, tree, self.settings)
            findings.extend(check_blocks(self.config_rules, blocks, result.errors))
        if suppressed:
            findings = [f for f in findings if f.code not in suppressed]
        result.findings = self._filter(path, text, findings)
        return result

    def _filter(self, path: str, text: str, findings: Iterable[Finding]) -> list[Finding]:
        findings = list(findings)
        if not findings:
            return []
        ignored = ignored_for_path(path, self.settings)
        noqa = LineSuppressions(split_lines(text))
        kept = []
        seen = set()
        for finding in findings:
            if finding.code == "DL000" and not self.report_unreadable:
                continue
            if ignored and code_matches(finding.code, ignored):
                continue
            if noqa.suppresses(finding.line, finding.code):
                continue
            key = (finding.line, finding.column, finding.code)
            if key not in seen:
                seen.add(key)
                kept.append(finding)
        kept.sort(key=lambda f: f.sort_key)
        return kept


def lint_file(path: str, linter: Linter) -> FileResult:
    data = read_source(path)
    if isinstance(data, Finding):
        return FileResult(path, [data])
    return linter.lint_bytes(path, data)


def lint_source(source: str, settings: Settings | None = None, path: str = "<string>", **kwargs) -> list[Finding]:
    """Lint a string; the convenience entry point for tests and tools."""
    linter = Linter(settings or Settings(), **kwargs)
    return linter.lint_text(path, source).findings
