"""Whole-project analysis: each file is linted knowing the rest of its project.

- :func:`find_project_root`: ``--project-root``, else the nearest directory above the
  paths with ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``;
- :class:`ProjectIndex`: its parts, each with its own caches and ``forget``: the files
  (``files``), who names X (``text``), lazy per-file :class:`FileSummary` objects
  (``summaries``), where imports go (``modules``, ``imports``), what a target names
  (``definitions``) and the cross-file questions (``queries``: ``callers_of``,
  ``parameter_effects``...);
- :class:`ProjectView`: ``facts.project`` for one file; records what it reads in ``deps``
  (a :class:`dllint.deps.Deps`: each summary with its content digest, each question asked);
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Exported names, imported on first use: a run without a project root never uses the index
# and the summaries.
_EXPORTS = {
    "Effects": "dllint.facts.flow.records", "FileSummary": "dllint.facts.flow.records",
    "NullProject": "dllint.facts.flow.queries", "summarize": "dllint.facts.flow.summary",
    "ProjectIndex": "dllint.project.index",
    "ProjectView": "dllint.project.index", "find_project_root": "dllint.project.index",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
