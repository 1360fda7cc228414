"""Fixing one file's bytes, for callers that want a :class:`~dllint.fixer.FixResult` (tests, tools).

``dllint --fix``/``--diff``/``--fix-only`` run through :mod:`dllint.pipeline`, where
fixing shares the runner (pool, cache) with checking; this is a thin view of
:func:`dllint.per_file.fix`.
"""

from __future__ import annotations

from dllint.engine import Linter
from dllint.fixer import FixResult
from dllint.inputs.python import source_encoding
from dllint.per_file import fix
from dllint.source import decode


def fix_bytes(path: str, data: bytes, linter: Linter, unsafe: bool) -> tuple[FixResult, str]:
    """Fix one file's bytes; returns the result and the encoding to write it back in."""
    outcome = fix(linter, path, data, unsafe)
    notebook = path.endswith(".ipynb")
    if outcome.before is not None and outcome.after is not None:
        original, text = outcome.before, outcome.after
    else:
        original = data.decode("utf-8-sig", "replace") if notebook else decode(path, data).text or ""
        text = original
    result = FixResult(
        path,
        original,
        text,
        fixed=outcome.fixed,
        failed=outcome.failed,
        remaining=outcome.findings,
        introduced=outcome.introduced,
        errors=outcome.errors,
    )
    return result, "utf-8" if notebook else source_encoding(data)
