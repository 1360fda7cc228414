"""The flake8 plugin: ``flake8 --select DL`` reports what ``dllint`` reports, at the same places.

Registered as the ``DL`` entry point of ``flake8.extension``. An adapter only:
the engine does the work; this module maps settings in and findings out.

- Selection and ``# noqa`` are flake8's (``--select``, ``--extend-select``,
  ``--per-file-ignores``). Rules off by default in dllint (DL203) run only when
  their exact code is in ``select``, ``extend-select`` or ``enable-extensions``,
  as ``dllint --select DL203`` needs it spelled out too.
- Unparsable files are flake8's E999/E902, so DL000 is never reported here.
- flake8 prints a column as the offset it is given plus one; dllint's columns are
  1-based characters, so the offset given is ``column - 1``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from typing import Any, ClassVar, Iterator

from dllint import __version__
from dllint.config import Settings
from dllint.engine import Linter
from dllint.rules import all_rules


class Plugin:
    name = "dllint"
    version = __version__

    # Built once from the options (flake8 builds a plugin instance per file).
    linter: ClassVar[Linter | None] = None

    # flake8 parses each file once and hands plugins its tree: dllint uses it, not a parse of its own.
    def __init__(self, tree: ast.AST, lines: list[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--dllint-max-workers",
            type=int,
            default=Settings.max_workers,
            parse_from_config=True,
            help="dllint: DL202 fires when num_workers exceeds this (default: %(default)s)",
        )
        option_manager.add_option(
            "--dllint-extend-loader-classes",
            default="",
            comma_separated_list=True,
            parse_from_config=True,
            help="dllint: comma-separated DataLoader wrapper classes to check like DataLoader (keywords only)",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.linter = Linter(settings_from_options(options), rules_for_options(options))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        linter = self.linter or Linter(Settings(), rules_for_options(None))
        text = "".join(self.lines)
        # The byte prefilter before any parse: most files never mention a loader.
        live = linter.prefilter(text.encode("utf-8", "surrogateescape"))
        if live is None:
            return
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        result = linter.lint_text(self.filename, text, tree=tree, live=live)
        for error in result.errors:  # a bug in dllint: say so, but never stop flake8's run
            print(f"dllint: {error}", file=sys.stderr)
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)


def settings_from_options(options: argparse.Namespace) -> Settings:
    classes = getattr(options, "dllint_extend_loader_classes", None) or []
    if isinstance(classes, str):  # flake8 < 6 could hand over the raw string
        classes = [c for c in classes.split(",")]
    return Settings(
        max_workers=max(1, getattr(options, "dllint_max_workers", None) or Settings.max_workers),
        extend_loader_classes=frozenset(c.strip() for c in classes if c.strip()),
    )


def rules_for_options(options: argparse.Namespace | None) -> list:
    """Every on-by-default rule, plus off-by-default rules whose code was selected by name."""
    named: set[str] = set()
    for option in ("select", "extend_select", "enable_extensions"):
        values = getattr(options, option, None) or []
        if isinstance(values, str):
            values = values.split(",")
        named.update(v.strip().upper() for v in values)
    return [r for r in all_rules() if r.code != "DL000" and (r.default_enabled or r.code in named)]
