"""Ways of linting that tests want and the package does not: a string, a Python file's bytes,
a path, a list of paths, one file's fix. Each goes through the package's own three calls
(:func:`dllint.pipeline.run` or the runner it drives, :func:`dllint.per_file.lint`,
:meth:`dllint.engine.Linter.lint`), so a test of one of these tests them."""

from __future__ import annotations

import ast
from typing import Any, Sequence

from dllint.config import Settings
from dllint.configs.read import read_config
from dllint.engine import FileResult, Linter
from dllint.findings import Finding
from dllint.fixer import FixResult, fix_text
from dllint.inputs import Input
from dllint.inputs.python import source_encoding
from dllint.per_file import fix, lint, read_file
from dllint.pipeline import RunOptions, cache_for
from dllint.runner import CHECK, Progress, run_files
from dllint.source import decode, read_source

__all__ = ["lint", "lint_source", "lint_text", "lint_python_bytes", "lint_path", "lint_paths", "run_lint", "fix_bytes", "lint_file", "lint_config_text", "fix_config_text"]


def lint_source(source: str, settings: Settings | None = None, path: str = "<string>", **kwargs: Any) -> list[Finding]:
    """The findings of a Python string."""
    return lint_text(Linter(settings or Settings(), **kwargs), path, source).findings


def lint_text(
    linter: Linter, path: str, text: str, *, notebook: bool = False, project: Any = None, tree: ast.Module | None = None
) -> FileResult:
    """Lint Python text as the file ``path`` (``notebook``: a notebook's code cells joined)."""
    return linter.lint(Input(path, "python", text, notebook=notebook), project, tree=tree)


def lint_python_bytes(linter: Linter, path: str, data: bytes) -> FileResult:
    """Lint bytes as Python source whatever ``path`` is called: the byte prefilter, the
    encoding (PEP 263), then the engine."""
    live = linter.prefilter.screen(data)
    if live is None:
        return FileResult(path, skipped=True)
    decoded = decode(path, data)
    if decoded.error is not None:
        return FileResult(path, linter.filter_findings(path, "", [decoded.error]))
    return linter.lint(Input(path, "python", decoded.text or ""), live=live)


def lint_path(linter: Linter, path: str) -> FileResult:
    """Read (size limit) and lint one file of any format."""
    data, _ = read_file(path, linter.settings.max_file_size, False)
    if isinstance(data, Finding):
        return FileResult(path, linter.filter_findings(path, "", [data]))
    return lint(linter, path, data)


def run_lint(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    cache: Any = None,
    progress: Progress | None = None,
    linter: Linter | None = None,
) -> list[FileResult]:
    """Check ``paths`` through the runner: one result per path, in their order."""
    return list(run_files(paths, settings, CHECK, jobs=jobs, cache=cache, progress=progress, linter=linter))


def lint_paths(
    paths: Sequence[str], settings: Settings | None = None, *, linter: Linter | None = None, jobs: int | None = 1, no_cache: bool = True
) -> list[FileResult]:
    """Check files (no discovery, no writing, no project index): one result per path, in order."""
    linter = linter or Linter(settings or Settings())
    cache = cache_for(linter.settings, linter, RunOptions(jobs=jobs, no_cache=no_cache))
    return list(run_files(list(paths), linter.settings, CHECK, jobs, cache, None, linter))


def fix_bytes(path: str, data: bytes, linter: Linter, unsafe: bool) -> tuple[FixResult, str]:
    """Fix one file's bytes (:func:`dllint.per_file.fix`); the result and the encoding to write it in."""
    outcome = fix(linter, path, data, unsafe)
    notebook = path.endswith(".ipynb")
    if outcome.before is not None and outcome.after is not None:
        original, text = outcome.before, outcome.after
    else:
        original = data.decode("utf-8-sig", "replace") if notebook else decode(path, data).text or ""
        text = original
    result = FixResult(
        path, original, text, fixed=outcome.fixed, failed=outcome.failed, remaining=outcome.findings,
        introduced=outcome.introduced, errors=outcome.errors,
    )
    return result, "utf-8" if notebook else source_encoding(data)


def lint_config_text(path: str, text: str, linter: Linter) -> FileResult:
    """Lint one YAML config's text as the input adapter reads it."""
    document = read_config(path, text)
    if isinstance(document, Finding):
        return FileResult(path, linter.filter_findings(path, text, [document]))
    return linter.lint(Input(path, "config", text, document=document, adapter="dllint.inputs.yaml"))


def fix_config_text(path: str, text: str, linter: Linter, *, unsafe: bool = False, project: Any = None) -> FixResult:
    """Fix one YAML config's text through the fixer's loop (text edits); ``project``: a view of
    the project whose code may hand the config's blocks on."""
    return fix_text(path, text, linter, unsafe=unsafe, input=Input(path, "config", text, adapter="dllint.inputs.yaml"), project=project)


def lint_file(path: str, linter: Linter) -> FileResult:
    """Read one file and lint it as Python source (:func:`lint_python_bytes`)."""
    data = read_source(path)
    if isinstance(data, Finding):
        return FileResult(path, [data])
    return lint_python_bytes(linter, path, data)
