"""``--show-settings`` and ``--show-files``: what a run would use, printed instead of running."""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Sequence

from dllint.config import Settings, project_line_length


def show_files(paths: Sequence[str], settings: Settings) -> str:
    """The files a run on ``paths`` lints, one absolute path a line, sorted (ruff's ``--show-files``)."""
    from dllint.discovery import discover

    found = discover([p for p in paths if p != "-"], settings)
    return "\n".join(sorted(os.path.abspath(path) for path in found.files))


def show_settings(paths: Sequence[str], settings: Settings) -> str:
    """The settings the first file of ``paths`` is linted with, one ``key = value`` a line, then
    the rules that run (ruff's ``--show-settings``)."""
    from dllint.discovery import discover
    from dllint.engine import Linter

    files = discover([p for p in paths if p != "-"], settings).files
    first = os.path.abspath(files[0]) if files else os.path.abspath(paths[0])
    lines = [f'Resolved settings for: "{first}"']
    if settings.config_path is not None:
        lines.append(f'Settings path: "{os.path.abspath(settings.config_path)}"')
    lines.append("")
    for field in fields(settings):
        if field.name == "config_path":
            continue
        value = getattr(settings, field.name)
        if field.name == "line_length" and value is None:
            value = project_line_length(first)
        lines.append(f"{field.name.replace('_', '-')} = {_shown(value)}")
    rules = Linter(settings).rules
    lines.append(f"rules.enabled = [{', '.join(rule.code for rule in rules)}]")
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, frozenset):
        value = sorted(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)
