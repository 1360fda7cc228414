"""The engine: an input -> gate -> parse (once) -> facts -> rules -> filter.

It knows one kind of thing, an :class:`~dllint.inputs.Input` (Python text, or a parsed
config document), and has one entry, :meth:`Linter.lint`; reading files and turning their
formats into inputs (notebooks) is the adapters' job (:mod:`dllint.inputs`, one file's bytes
:func:`dllint.per_file.lint`), running many files the runner's, a whole run the pipeline's
(:func:`dllint.pipeline.run`). Which rules could fire on a text, before it is parsed, is the
prefilter's to say (:mod:`dllint.prefilter`).

Analysis uses Python's ``ast``: measured on 62,752 lines of the standard
library, ``ast.parse`` took 1.5 s where ``libcst.parse_module`` took 4.9 s,
LibCST's PositionProvider another 14 s and one empty CST visit 6.8 s.
LibCST is used where it pays: rewriting code in fixes, which must keep the
file's formatting.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Sequence

from dllint.config import Settings
from dllint.configs.lint import (
    check_blocks,
    checks_config,
    config_deps,
    config_rules,
    python_config_blocks,
)
from dllint.deps import Deps
from dllint.facts.walk import walk_with_parents
from dllint.files import set_default_limit
from dllint.findings import Finding
from dllint.gc_pause import collector_paused
from dllint.noqa import LineSuppressions, file_suppression
from dllint.prefilter import Prefilter, _Gate
from dllint.rules import Rule, all_rules
from dllint.rules.catalog import CATALOG
from dllint.selection import code_matches, enabled_rules, ignored_for_path
from dllint.source import parse_module, split_lines, syntax_error, unreadable

if TYPE_CHECKING:
    from dllint.facts.file import FileFacts
    from dllint.facts.flow.queries import ProjectQueries
    from dllint.inputs import Input


class FileResult:
    """One file's lint. (A class with its methods written out, not a dataclass: defining one
    costs every run, a one-file run too, 0.3-0.4 ms; see :mod:`dllint.deps`.)"""

    def __init__(
        self, path: str, findings: list[Finding] | None = None, errors: list[str] | None = None, skipped: bool = False, deps: Deps | None = None
    ) -> None:
        self.path = path
        self.findings: list[Finding] = [] if findings is None else findings
        self.errors: list[str] = [] if errors is None else errors  # internal errors: a bug in dllint, never the user's
        self.skipped = skipped  # the prefilter proved there is nothing to find
        # What the lint read elsewhere (project summaries, configs, questions asked of every file):
        # the cache trusts these findings only while every one of them still holds.
        self.deps = Deps() if deps is None else deps

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(f'{name}={value!r}' for name, value in vars(self).items())})"


# The modules a lint imports only once a file asks for them (its loaders' uses, a process
# start, a dict config's blocks), so that a run whose files ask nothing never pays for them.
# A process about to fork workers imports them first (:func:`preload`): each worker inherits
# them rather than importing them again (15 ms of each worker's CPU on the benchmark corpus).
LAZY_MODULES = (
    "dllint.facts.usage", "dllint.facts.processes", "dllint.facts.frameworks", "dllint.facts.config_reads",
    "dllint.facts.device_parameters", "dllint.facts.handed_wrappers", "dllint.facts.partials",
    "dllint.configs.python_reader", "dllint.configs.blocks", "dllint.configs.inherit", "dllint.inputs.python",
)


def preload() -> None:
    """Import :data:`LAZY_MODULES` now (before forking workers that lint many files)."""
    import importlib

    for name in LAZY_MODULES:
        importlib.import_module(name)


class Linter:
    """Lints sources with one fixed set of settings (and so one set of rules)."""

    def __init__(self, settings: Settings, rules: Sequence[type[Rule]] | None = None) -> None:
        self.settings = settings
        set_default_limit(settings.max_file_size)  # the bound of files read without settings at hand (config bases)
        # The rules are chosen by code (the catalog) and imported when a file is first linted: a
        # run whose files are all cached never imports them.
        self._chosen = None if rules is None else list(rules)
        codes = [r.code for r in (enabled_rules(settings, CATALOG) if self._chosen is None else self._chosen)]
        self.report_unreadable = "DL000" in codes
        self.codes = tuple(sorted(code for code in codes if code != "DL000"))  # what the rules run (a cache's key)

    @cached_property
    def rules(self) -> list[Rule]:
        codes = set(self.codes)
        chosen = self._chosen if self._chosen is not None else [rule for rule in all_rules() if rule.code in codes]
        return [rule() for rule in chosen if rule.code != "DL000"]

    @cached_property
    def config_rules(self) -> list[Rule]:
        """The rules that also check config files' loader blocks."""
        return config_rules(self.rules)

    @cached_property
    def prefilter(self) -> Prefilter:
        """The rules' gates, from the catalog (no rule imported: a file screened out needs none)."""
        if self._chosen is not None:
            chosen = [rule for rule in self._chosen if rule.code != "DL000"]
            return Prefilter(self.settings, chosen, any(map(checks_config, chosen)))
        codes = set(self.codes)
        entries = [entry for entry in CATALOG if entry.code in codes]
        return Prefilter(self.settings, entries, any(entry.checks_config for entry in entries))

    def lint(
        self, input: Input, project: ProjectQueries | None = None, *, live: tuple[_Gate, ...] | None = None, tree: ast.Module | None = None
    ) -> FileResult:
        """Lint an adapter's :class:`~dllint.inputs.Input`; findings come back at the file's positions.

        ``project``: what the file's facts see of the rest of the project (``facts.project``);
        the summaries it reports reading (its ``deps``) become ``FileResult.deps``.
        ``live``: what the byte prefilter (:meth:`Prefilter.screen`) found open in the file's bytes,
        if it was asked; ``tree``: the text already parsed by the caller (flake8 hands plugins its tree).
        """
        if input.kind == "config":
            result = FileResult(input.path)
            result.findings = self._filter(input.path, input.text, self.check_config(input, result.errors, project))
            result.deps = config_deps(input.document)
            if project is not None and project.deps:
                result.deps.update(project.deps)  # the code files asked what they hand on whole
        else:
            result = self._lint_python(input.path, input.text, input.notebook, project, live, tree)
        if input.positions is not None or input.errors:
            findings = [input.positions.to_file(f) for f in result.findings] if input.positions else result.findings
            result.findings = self._filter(input.path, "", input.errors) + findings
            result.findings.sort(key=lambda f: f.sort_key)
        return result

    def check_config(self, input: Input, errors: list[str] | None = None, project: ProjectQueries | None = None) -> list[Finding]:
        """Findings in a config file (``input.document``, a resolved
        :class:`~dllint.configs.document.ConfigDocument`): each loader block through the rules'
        ``check_config``, ``# dllint: noqa`` on a line of its own honoured; ``project``: which
        blocks the project's code hands to a DataLoader whole."""
        from dllint.configs.blocks import find_blocks, unlinked
        from dllint.configs.document import ConfigDocument

        suppressed = file_suppression(input.text)
        if suppressed is None or not isinstance(input.document, ConfigDocument):
            return []
        blocks = find_blocks(input.document, self.settings, unlinked if project is None else project.config_handed_whole)
        findings = check_blocks(self.config_rules, blocks, errors if errors is not None else [])
        return [f for f in findings if f.code not in suppressed] if suppressed else findings

    @collector_paused
    def _lint_python(
        self,
        path: str,
        text: str,
        notebook: bool,
        project: ProjectQueries | None,
        live: tuple[_Gate, ...] | None,
        tree: ast.Module | None,
    ) -> FileResult:
        """Gate, parse, facts, rules, filter; ``notebook``: ``text`` is a notebook's code cells
        joined (``facts.is_notebook``)."""
        result = FileResult(path)
        suppressed = file_suppression(text)
        if suppressed is None:
            return result
        screen = self.prefilter.screen_text(text, notebook, live)
        if screen is None:
            return result  # no rule could fire, and this is no dict config
        if not screen.in_code(text):
            result.skipped = True  # the trigger text is only in strings and comments: no parse
            return result
        try:
            tree = tree if tree is not None else parse_module(text)
        except SyntaxError as exc:
            result.findings = self._filter(path, text, [syntax_error(path, exc)])
            return result
        except (ValueError, RecursionError, MemoryError) as exc:
            result.findings = self._filter(path, text, [unreadable(path, f"cannot parse file: {exc}")])
            return result
        nodes, parent_index = walk_with_parents(tree)
        if not screen.in_tree(nodes):
            result.skipped = True  # the trigger text is only in strings and comments
            return result
        findings: list[Finding] = []
        loader_calls = False
        if screen.code_rules:
            from dllint.facts.file import FileFacts  # (the file analyses: a run whose files are all cached never needs them)

            facts = FileFacts(
                path, text, tree, self.settings, is_notebook=notebook, project=project, nodes=nodes, parent_index=parent_index
            )
            loader_calls = bool(facts.loader_calls)
            findings += self._run_rules(facts, screen.gates.codes, result.errors)
        if self.config_rules and not notebook and not loader_calls:
            # A dict config (mmengine, detectron2 LazyConfig) binds values; a script's loaders are its calls.
            blocks = python_config_blocks(path, text, tree, self.settings)
            findings.extend(check_blocks(self.config_rules, blocks, result.errors))
            if blocks:
                result.deps.update(config_deps(blocks[0].document))
        if suppressed:
            findings = [f for f in findings if f.code not in suppressed]
        result.findings = self._filter(path, text, findings)
        if project is not None and project.deps:
            result.deps.update(project.deps)
        return result

    def _run_rules(self, facts: FileFacts, codes: frozenset[str], errors: list[str]) -> list[Finding]:
        """The findings of the rules behind the open gates (``codes``): the others cannot fire
        (none of their triggers in the file: the prefilter's contract)."""
        findings: list[Finding] = []
        for rule in self.rules:
            if rule.code not in codes:
                continue
            try:
                findings.extend(rule.check(facts))
            except Exception:  # noqa: BLE001 - a rule bug must not stop the run
                errors.append(f"{facts.path}: internal error in {rule.code}: {_traceback_text()}")
        # The facts' analyses point back at them (reference cycles): emptied here, the tree and
        # all built on it are freed now, not by a pass of the cyclic collector over all of it.
        facts.__dict__.clear()
        return findings

    def filter_findings(self, path: str, text: str, findings: Iterable[Finding]) -> list[Finding]:
        """What the run reports of ``findings``: DL000 if enabled, ``per-file-ignores``,
        ``# noqa`` on ``text``'s lines, one finding per place (cell, line, column) and code, sorted."""
        return self._filter(path, text, findings)

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
            key = (finding.cell, finding.line, finding.column, finding.code)  # (two cells' DL000 may share a place)
            if key not in seen:
                seen.add(key)
                kept.append(finding)
        kept.sort(key=lambda f: f.sort_key)
        return kept


def _traceback_text() -> str:
    """The current exception's last frames; ``traceback`` imported only when a rule fails."""
    import traceback

    return traceback.format_exc(limit=-3).strip()
