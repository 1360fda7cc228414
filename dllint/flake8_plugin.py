"""The flake8 plugin: ``flake8 --select DL`` reports what ``dllint`` reports, at the same places.

Registered as the ``DL`` entry point of ``flake8.extension``. An adapter only:
the engine does the work; this module maps settings in and findings out.

- Selection and ``# noqa`` are flake8's (``--select``, ``--extend-select``,
  ``--per-file-ignores``). Rules off by default in dllint (DL203) run only when
  their exact code is in ``select``, ``extend-select`` or ``enable-extensions``,
  as ``dllint --select DL203`` needs it spelled out too.
- Unparsable files are flake8's E999/E902, so DL000 is never reported here.
- An internal error (a bug in dllint) fails the run: flake8 reports the plugin that raised and exits 1.
- flake8 prints a column as the offset it is given plus one; dllint's columns are
  1-based characters, so the offset given is ``column - 1``.
"""

from __future__ import annotations

import argparse
import ast
from typing import Any, ClassVar, Iterator

from dllint import __version__
from dllint.config import Settings
from dllint.engine import Linter
from dllint.inputs import Input
from dllint.rules import all_rules


class InternalError(RuntimeError):
    """dllint failed on a file (a bug): raised so that flake8 fails the run."""


def _one_line(error: str) -> str:
    """``path: internal error in DL202: Traceback ...`` as its first line and the exception."""
    lines = error.splitlines()
    head = lines[0].replace("Traceback (most recent call last):", "").rstrip()
    return head if len(lines) == 1 else f"{head} {lines[-1].strip()}"


def _max_workers(value: str) -> int:
    """``dllint-max-workers``: a positive integer, or flake8 stops with an error naming the option."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"dllint-max-workers must be a positive integer, got {value!r}")
    return number


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
            type=_max_workers,
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
        live = linter.prefilter.screen(text.encode("utf-8", "surrogateescape"))
        if live is None:
            return
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        result = linter.lint(Input(self.filename, "python", text), live=live, tree=tree)
        if result.errors:
            # A bug in dllint must fail the run: flake8 exits 0 on a plugin's stderr, and the
            # file's other findings would be lost without a word. flake8 reports a plugin that
            # raises as a failure of the run (exit 1), naming the plugin and the file.
            raise InternalError("; ".join(_one_line(error) for error in result.errors))
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)


def settings_from_options(options: argparse.Namespace) -> Settings:
    classes = getattr(options, "dllint_extend_loader_classes", None) or []
    if isinstance(classes, str):  # flake8 < 6 could hand over the raw string
        classes = [c for c in classes.split(",")]
    return Settings(
        max_workers=getattr(options, "dllint_max_workers", None) or Settings.max_workers,
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
