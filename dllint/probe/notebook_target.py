"""``dllint --probe nb.ipynb``: a notebook's code cells run in order, as its kernel would run them.

The cells are joined by the linter's own notebook adapter (:func:`dllint.inputs.notebook.prepare`):
the module text the linter checks, where magics and shell lines are placeholders of the same
line count and cells that do not parse are left out. The harness (child side,
:func:`run_notebook`) compiles that text under the notebook's path and runs it in a fresh
``__main__`` module without ``__file__``, as a Jupyter kernel's is: a spawn worker cannot
re-import such a module, so a dataset class defined in the notebook fails there exactly as in
Jupyter (DL106's error, measured by the spawn check).

Call sites are then the notebook's path and a line of the joined module. The parent
(:class:`NotebookPositions`) hands the probe the static findings in joined-module lines and
maps everything back to cells afterwards: ``nb.ipynb:cell 3:2``, as the linter reports.
"""

from __future__ import annotations

import builtins
import linecache
import os
import sys
import types
from dataclasses import dataclass, replace
from typing import Any

from dllint.findings import Finding
from dllint.inputs.notebook import NOTEBOOK_SUFFIX, prepare, to_cell_positions


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


def joined_module(path: str) -> tuple[str, list[tuple[int, int] | None]]:
    """The notebook's code cells as one module, and each module line's ``(cell, line)``."""
    with open(path, "rb") as stream:
        prepared = prepare(path, stream.read())
    if isinstance(prepared, Finding):
        raise SyntaxError(f"{path}: {prepared.message}")
    return prepared.text, prepared.line_map


def run_notebook(path: str) -> None:
    """Child side: run the joined cells as ``__main__`` (no ``__file__``, as in a kernel)."""
    text, _ = joined_module(path)
    # inspect and tracebacks read the source through linecache: give them the joined cells
    linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
    code = compile(text, path, "exec")
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    previous = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's notebook is the point of the probe
    finally:
        if previous is not None:
            sys.modules["__main__"] = previous


@dataclass
class NotebookPositions:
    """Parent side: joined-module lines <-> notebook cells, for one notebook."""

    path: str  # as given on the command line
    line_map: list[tuple[int, int] | None]

    @classmethod
    def of(cls, path: str) -> NotebookPositions | None:
        try:
            return cls(path, joined_module(path)[1])
        except (OSError, SyntaxError):
            return None

    def _same(self, path: str) -> bool:
        return os.path.realpath(path) == os.path.realpath(self.path)

    def module_line(self, cell: int, line: int) -> int | None:
        return next((index for index, place in enumerate(self.line_map, 1) if place == (cell, line)), None)

    def label(self, module_line: int) -> str:
        place = self.line_map[module_line - 1] if 0 < module_line <= len(self.line_map) else None
        shown = os.path.relpath(self.path) if os.path.isabs(self.path) else self.path
        return f"{shown}:cell {place[0]}:{place[1]}" if place else f"{shown}:{module_line}"

    def for_probe(self, findings: list[Finding]) -> list[Finding]:
        """The findings as the probe matches them: a notebook's in joined-module lines (copies)."""
        moved = []
        for finding in findings:
            line = self.module_line(finding.cell, finding.line) if finding.cell and self._same(finding.path) else None
            end = self.module_line(finding.cell, finding.end_line) if line and finding.cell else None
            moved.append(replace(finding, line=line, end_line=end or line, cell=None) if line else finding)
        return moved

    def restore(self, report: Any, originals: list[Finding], probed: list[Finding]) -> None:
        """Back to cells: the originals take their copies' verdicts; runtime findings and loader
        call sites in the notebook are re-addressed to their cells."""
        for original, copy in zip(originals, probed):
            original.probe = copy.probe
        runtime = [finding for finding in report.findings if finding.source == "runtime"]
        report.findings = list(originals) + [
            to_cell_positions(finding, self.line_map) if self._same(finding.path) else finding for finding in runtime]
        labels = {}
        for loader in report.loaders:
            if self._same(loader.summary.get("path", "")):
                site = loader.call_site.split(" [rank", 1)
                labels[f"at {site[0]}"] = f"at {self.label(loader.summary['line'])}"
                loader.call_site = self.label(loader.summary["line"]) + (f" [rank{site[1]}" if len(site) > 1 else "")
            if loader.terms is not None:  # the block's places in the notebook, as cells too
                loader.terms = loader.terms.moved(lambda path, line: self.label(line) if self._same(path) else None)
        for finding in report.findings:
            measured_on = (finding.probe or {}).get("measurements", {}).get("loader")
            if isinstance(measured_on, str):
                for old, new in labels.items():
                    measured_on = measured_on.replace(old, new)
                finding.probe["measurements"]["loader"] = measured_on
