"""A project file's Python source, whatever its kind: the one place that knows a notebook is
a project file too (it imports and calls the project's helpers, as course repositories do)."""

from __future__ import annotations

from dllint.findings import Finding

PROJECT_SUFFIXES = (".py", ".ipynb")  # notebooks import and call the project's helpers too


def python_text(path: str, data: bytes) -> str:
    """A project file's Python source: a notebook's code cells joined as it is linted (its
    lines are that module's), a ``.py`` file's text."""
    if path.endswith(".ipynb"):
        from dllint.inputs.notebook import prepare

        prepared = prepare(path, data)
        return "" if isinstance(prepared, Finding) else prepared.text
    return data.decode("utf-8", "replace")
