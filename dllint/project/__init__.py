"""Whole-project analysis: each file is linted knowing the rest of its project.

- :func:`find_project_root`: ``--project-root``, else the nearest directory above the
  paths with ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``;
- :class:`ProjectIndex`: lazy, byte-gated per-file :class:`FileSummary` objects (JSON,
  stored by content digest) and the cross-file questions (``summary``, ``callers_of``,
  ``parameter_effects``);
- :class:`ProjectView`: ``facts.project`` for one file; records the summaries it reads in
  ``deps`` (path -> summary digest);
- :mod:`dllint.project.frameworks`: what Lightning, Hugging Face, accelerate do with loaders.
"""

from dllint.project.index import MemoryStore, ProjectIndex, ProjectView, find_project_root
from dllint.project.summary import Effects, FileSummary, NullProject, summarize

__all__ = [
    "Effects", "FileSummary", "MemoryStore", "NullProject", "ProjectIndex", "ProjectView", "find_project_root", "summarize",
]
