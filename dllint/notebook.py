"""Moved to :mod:`dllint.inputs.notebook` (the notebook input adapter); kept for imports that name it."""

from dllint.inputs.notebook import dump_like, notebook_from_percent, prepare, read_notebook, to_cell_positions

__all__ = ["dump_like", "notebook_from_percent", "prepare", "read_notebook", "to_cell_positions"]
