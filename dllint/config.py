"""Settings: defaults, ``[tool.dllint]`` in the nearest pyproject.toml, and CLI overrides."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    "__pycache__",
    "build",
    "dist",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".dllint_cache",
    "node_modules",
    "site-packages",
    ".eggs",
)


class ConfigError(Exception):
    """A setting that cannot be used; the message names the key and the file."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()  # empty: the default set
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    max_workers: int = 16
    extend_loader_classes: frozenset[str] = field(default_factory=frozenset)
    project_root: str = "."  # where per-file-ignores and exclude patterns are anchored
    config_path: str | None = None

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def cache_key(self) -> str:
        """The settings that can change findings, as a stable string."""
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.name not in ("config_path",)]
        return "|".join(sorted(parts))


def _codes(key: str, value: Any, source: str) -> tuple[str, ...]:
    from dllint.selection import validate_code_prefix

    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: '{key}' must be a list of rule codes, got {value!r}")
    for code in value:
        problem = validate_code_prefix(code)
        if problem:
            raise ConfigError(f"{source}: '{key}': {problem}")
    return tuple(v.strip().upper() for v in value)


def _strings(key: str, value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: '{key}' must be a list of strings, got {value!r}")
    return tuple(value)


def _max_workers(key: str, value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{source}: '{key}' must be a positive integer, got {value!r}")
    return value


def _per_file_ignores(key: str, value: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: '{key}' must be a table of glob = [codes], got {value!r}")
    return tuple((str(pattern), _codes(f"{key}.{pattern}", codes, source)) for pattern, codes in value.items())


# key in pyproject.toml -> (Settings field, parser)
KEYS = {
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "extend-select": ("extend_select", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "exclude": ("exclude", _strings),
    "extend-exclude": ("extend_exclude", _strings),
    "max-workers": ("max_workers", _max_workers),
    "extend-loader-classes": ("extend_loader_classes", lambda k, v, s: frozenset(_strings(k, v, s))),
}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.dllint]`` table."""
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                if "dllint" in _load_toml(candidate).get("tool", {}):
                    return candidate
            except ConfigError:
                return candidate  # report the broken file rather than skipping past it
    return None


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def load_settings(config: str | None = None, start: Path | None = None) -> Settings:
    """Settings from ``config`` (a pyproject.toml or dllint.toml path) or the nearest pyproject.toml."""
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"{config}: config file not found")
    else:
        path = find_pyproject(start or Path.cwd())
        if path is None:
            return Settings(project_root=str((start or Path.cwd()).resolve()))
    data = _load_toml(path)
    table = data.get("tool", {}).get("dllint", data if path.name != "pyproject.toml" else {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.dllint] must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: unknown key '{key}' in [tool.dllint] (known keys: {known})")
        attr, parse = KEYS[key]
        values[attr] = parse(key, value, str(path))
    return Settings(project_root=str(path.parent.resolve()), config_path=str(path), **values)
