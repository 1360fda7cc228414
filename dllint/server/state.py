"""What the language server knows between requests: each project's settings, linter and index.

Editors send buffers, not files: a document is linted from the text the editor holds, and the
project index answers cross-file questions with the open buffers in place of the files on disk.
Nothing here writes a file. Settings are read from the project (``[tool.dllint]``,
``dllint.toml``) and overridden by the editor's settings; a change to either rebuilds the
project's linter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from dllint.config import CONFIG_FILES as SETTINGS_FILES
from dllint.config import ConfigError, Settings, load_settings
from dllint.deps import Deps
from dllint.discovery import find_project_root
from dllint.engine import FileResult, Linter
from dllint.findings import Finding
from dllint.per_file import FileOutcome, fix, lint, too_large
from dllint.selection import validate_code_prefix
from dllint.server.index import BufferIndex, Changed

if TYPE_CHECKING:
    from dllint.project.view import ProjectView

CONFIG_FILES = ("pyproject.toml", *SETTINGS_FILES)  # every file settings are read from


@dataclass(frozen=True)
class EditorSettings:
    """What the editor may set (``initializationOptions`` or ``workspace/didChangeConfiguration``
    under ``dllint``): the same selection keys as ``[tool.dllint]``, and whether unsafe fixes are offered."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    unsafe_fixes: bool = False

    @classmethod
    def from_json(cls, data: Any) -> tuple[EditorSettings, list[str]]:
        """The settings and one message per value that could not be used (it is left out)."""
        if isinstance(data, dict) and isinstance(data.get("dllint"), dict):
            data = data["dllint"]
        if not isinstance(data, dict):
            return cls(), []
        problems: list[str] = []
        values: dict[str, Any] = {}
        for key, attr in (("select", "select"), ("extendSelect", "extend_select"), ("extend-select", "extend_select"), ("ignore", "ignore")):
            if key in data:
                codes = _codes(data[key], key, problems)
                if codes is not None:
                    values[attr] = codes
        if isinstance(data.get("unsafeFixes"), bool):
            values["unsafe_fixes"] = data["unsafeFixes"]
        return cls(**values), problems

    def apply(self, settings: Settings) -> Settings:
        chosen = {k: getattr(self, k) for k in ("select", "extend_select", "ignore") if getattr(self, k) is not None}
        return replace(settings, **chosen)


def _codes(value: Any, key: str, problems: list[str]) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"dllint.{key} must be a list of rule codes, got {value!r}")
        return None
    codes = tuple(v.strip().upper() for v in value if v.strip())
    for code in codes:
        error = validate_code_prefix(code)
        if error:
            problems.append(f"dllint.{key}: {error}")
            return None
    return codes


@dataclass
class Project:
    """One project root: its settings (project file + editor), linter and warm index."""

    root: str
    settings: Settings
    linter: Linter
    index: BufferIndex | None  # None: files there are linted alone (see :func:`index_root`)
    error: str | None = None  # why the project's own settings could not be read (defaults used)

    def too_large(self, path: str, data: bytes) -> Finding | None:
        """The DL000 of a buffer over ``max-file-size`` (as the command line skips such a file)."""
        limit = self.settings.max_file_size
        return None if len(data) <= limit else too_large(path, len(data), limit)

    def indexes(self) -> list[BufferIndex]:
        return [] if self.index is None else [self.index]


def index_root(root: str) -> bool:
    """Whether the files of project ``root`` are indexed together. Not a filesystem root, nor
    the home directory or a directory above it: a loose script there (no marker above it, or a
    dotfiles ``.git`` in the home directory) must not make the server read the whole disk."""
    home = os.path.realpath(os.path.expanduser("~"))
    root = os.path.realpath(root)
    return os.path.dirname(root) != root and os.path.commonpath([home, root]) != root


@dataclass
class Workspace:
    editor: EditorSettings = field(default_factory=EditorSettings)
    projects: dict[str, Project] = field(default_factory=dict)
    buffers: dict[str, bytes] = field(default_factory=dict)  # path -> the text an editor holds

    # -- projects ------------------------------------------------------------------------
    def project_for(self, path: str) -> Project:
        root = find_project_root([path])
        assert root is not None  # None only for no path: else the path's directory at least
        project = self.projects.get(root)
        if project is None:
            project = self.projects[root] = self._load(root)
            for open_path, data in self.buffers.items():
                for index in project.indexes():
                    index.set_buffer(open_path, data)
        return project

    def _load(self, root: str) -> Project:
        error = None
        try:
            settings = load_settings(start=root)
        except ConfigError as exc:
            settings, error = Settings(project_root=root), str(exc)
        settings = self.editor.apply(settings)
        index = BufferIndex(root, settings) if index_root(root) else None
        return Project(root, settings, Linter(settings), index, error)

    def reload(self) -> None:
        """Settings changed (a project's config file, or the editor's): rebuild every project."""
        self.projects.clear()

    def is_config_file(self, path: str) -> bool:
        return os.path.basename(path) in CONFIG_FILES

    # -- buffers -----------------------------------------------------------------------
    def open(self, path: str, data: bytes) -> Changed:
        """``path``'s text is ``data`` (a buffer over ``max-file-size`` is not: the index reads
        the file on disk, with its own limit). What changed: ``path``, its texts before and after."""
        before = self.buffers.get(path)
        if self.project_for(path).too_large(path, data) is not None:
            self.close(path)
            return {os.path.realpath(path): (before, None)}
        self.buffers[path] = data
        for index in self._indexes():
            index.set_buffer(path, data)
        return {os.path.realpath(path): (before, data)}

    def close(self, path: str) -> None:
        self.buffers.pop(path, None)
        for index in self._indexes():
            index.set_buffer(path, None)

    def disk_changed(self, path: str) -> None:
        for index in self._indexes():
            index.file_changed(path)

    def _indexes(self) -> list[BufferIndex]:
        return [index for project in self.projects.values() for index in project.indexes()]

    # -- linting -----------------------------------------------------------------------
    def lint(self, path: str, data: bytes) -> FileResult:
        """The findings of ``data`` as ``path``'s text, knowing the rest of its project."""
        project = self.project_for(path)
        refused = project.too_large(path, data)
        if refused is not None:
            return FileResult(path, project.linter.filter_findings(path, "", [refused]))
        try:
            return lint(project.linter, path, data, self._view(project, path))
        except Exception as exc:  # noqa: BLE001 - a bug in one lint must not end the editor's session
            return FileResult(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])

    def stale(self, path: str, deps: Deps, changed: Changed | None = None) -> bool:
        """Whether ``path``'s findings, computed with ``deps``, need a new lint after a change
        elsewhere (``changed``: the files changed and their texts, when known)."""
        index = self.project_for(path).index
        return index is not None and index.stale(deps, changed)

    def fix(self, path: str, data: bytes, unsafe: bool, only: Finding | None = None, findings: list[Finding] | None = None) -> FileOutcome:
        """``data`` fixed; ``only``: just that finding's rule (its code selected alone); ``findings``:
        ``data``'s current findings when known (a lint saved: seconds for a large file)."""
        project = self.project_for(path)
        if project.too_large(path, data) is not None:
            return FileOutcome(path, skipped=True)
        linter = project.linter if only is None else self.rule_linter(path, only.code)
        return fix(linter, path, data, unsafe, self._view(project, path), findings if only is None else None)

    @staticmethod
    def _view(project: Project, path: str) -> ProjectView | None:
        return None if project.index is None else project.index.view(path)

    def rule_linter(self, path: str, code: str) -> Linter:
        """A linter of ``path``'s project with rule ``code`` alone (a quick fix fixes that rule only)."""
        return Linter(replace(self.project_for(path).settings, select=(code,), extend_select=(), ignore=()))
