"""Settings: defaults, the nearest ``.dllint.toml``/``dllint.toml`` or ``[tool.dllint]`` in a
pyproject.toml, and CLI overrides."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any, Sequence

from dllint.files import DEFAULT_MAX_FILE_SIZE, Unreadable, read_bytes
from dllint.paths import ancestors
from dllint.patterns import LazyPattern

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


MAX_SIZE = 1 << 40  # the largest max-file-size: 1 TB (past it, "<400 nines>MB" is infinity, not a size)
MAX_CONFIG_SIZE = 16 * 1024 * 1024  # a config file is read only up to this (never a 3 GB sparse file)
_SIZE_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_SIZE = LazyPattern(r"^\s*(\d+(?:\.\d+)?)\s*([kmgKMG]?)(?:i?[bB])?\s*$")


class ConfigError(Exception):
    """A setting that cannot be used; the message names the key and the file."""


@dataclass(frozen=True)
class Settings:
    """What a run is configured with: ``[tool.dllint]``, its ruff-style options and the command line, merged."""

    select: tuple[str, ...] | None = None  # None: the default set; empty: no rule
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True  # skip what .gitignore/.ignore/info/exclude/global excludes ignore
    max_workers: int = 16
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes
    line_length: int | None = None  # what fixed lines keep to; None: the project's ruff/black setting
    extend_loader_classes: frozenset[str] = field(default_factory=frozenset)
    project_root: str = "."  # where per-file-ignores and exclude patterns are anchored
    config_path: str | None = None

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def cache_key(self) -> str:
        """The settings that can change findings, as a stable string."""
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.name not in ("config_path",)]
        return "|".join(sorted(parts))


def _shown(value: Any) -> str:
    """A value as an error message quotes it: on one line (repr escapes newlines) and short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _codes(key: str, value: Any, source: str) -> tuple[str, ...]:
    from dllint.selection import validate_code_prefix

    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {_shown(key)} must be a list of rule codes, got {_shown(value)}")
    for code in value:
        if not code.isprintable():
            raise ConfigError(f"{source}: {_shown(key)}: {_shown(code)} is not a rule code or prefix")
        problem = validate_code_prefix(code)
        if problem:
            raise ConfigError(f"{source}: {_shown(key)}: {problem}")
    return tuple(v.strip().upper() for v in value)


def _strings(key: str, value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {_shown(key)} must be a list of strings, got {_shown(value)}")
    if any(not v.strip() for v in value):
        raise ConfigError(f"{source}: {_shown(key)} has an empty pattern, got {_shown(value)}")
    return tuple(value)


DOTTED_NAME = LazyPattern(r"[^\W\d]\w*(\.[^\W\d]\w*)*")  # matched with fullmatch


def _class_names(key: str, value: Any, source: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {_shown(key)} must be a list of class names, got {_shown(value)}")
    for name in value:
        if not DOTTED_NAME.fullmatch(name):
            raise ConfigError(
                f"{source}: {_shown(key)}: {_shown(name)} is not a class name (expected Name or package.Name)"
            )
    return frozenset(value)


def _boolean(key: str, value: Any, source: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: {_shown(key)} must be true or false, got {_shown(value)}")
    return value


def _max_workers(key: str, value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{source}: {_shown(key)} must be a positive integer, got {_shown(value)}")
    return value


def parse_size(value: Any) -> int | None:
    """Bytes from ``4194304``, ``"4MB"``, ``"512 KB"``, ``"1GiB"`` (powers of 1024); None if not a
    size, or not one from 1 byte to ``MAX_SIZE``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 < value <= MAX_SIZE else None
    match = _SIZE.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    size = float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()]  # float: 400 nines are inf, not an error
    return int(size) if 1 <= size <= MAX_SIZE else None


def _max_file_size(key: str, value: Any, source: str) -> int:
    size = parse_size(value)
    if size is None:
        raise ConfigError(f"{source}: {_shown(key)} must be a size in bytes or like \"8MB\", up to 1TB, got {_shown(value)}")
    return size


def _line_length(key: str, value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 320:
        raise ConfigError(f"{source}: {_shown(key)} must be an integer from 1 to 320, got {_shown(value)}")
    return value


def _per_file_ignores(key: str, value: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {_shown(key)} must be a table of glob = [codes], got {_shown(value)}")
    if any(not pattern.strip() for pattern in value):
        raise ConfigError(f"{source}: {_shown(key)} has an empty glob, got {_shown(value)}")
    return tuple((str(pattern), _codes(f"{key}.{pattern}", codes, source)) for pattern, codes in value.items())


# key in pyproject.toml -> (Settings field, parser)
KEYS = {
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "extend-select": ("extend_select", _codes),
    "extend-ignore": ("extend_ignore", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "extend-per-file-ignores": ("extend_per_file_ignores", _per_file_ignores),
    "exclude": ("exclude", _strings),
    "extend-exclude": ("extend_exclude", _strings),
    "respect-gitignore": ("respect_gitignore", _boolean),
    "max-workers": ("max_workers", _max_workers),
    "max-file-size": ("max_file_size", _max_file_size),
    "line-length": ("line_length", _line_length),
    "extend-loader-classes": ("extend_loader_classes", _class_names),
}


CONFIG_FILES = (".dllint.toml", "dllint.toml")  # settings at the top level, found before pyproject.toml


def find_config(start: str | os.PathLike[str]) -> str | None:
    """The nearest config file at or above ``start``: in each directory ``.dllint.toml``, then
    ``dllint.toml``, then a pyproject.toml that has a ``[tool.dllint]`` table (ruff's order for
    ``.ruff.toml``, ``ruff.toml`` and ``pyproject.toml``)."""
    for directory in ancestors(os.fspath(start)):
        for name in CONFIG_FILES:
            if os.path.isfile(os.path.join(directory, name)):
                return os.path.join(directory, name)
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):  # False for a directory we may not search (EACCES)
            try:
                if _dllint_table(_load_toml(candidate), candidate) is not None:
                    return candidate
            except ConfigError:
                return candidate  # report the broken file rather than skipping past it
    return None


def _dllint_table(data: dict[str, Any], path: object) -> dict[str, Any] | None:
    """``[tool.dllint]`` of a parsed file, ``None`` when it has none; a table of another shape is an error."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: [tool] must be a table, got {_shown(tool)}")
    table = tool.get("dllint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.dllint] must be a table, got {_shown(table)}")
    return table


def _tomllib() -> Any:
    """The TOML reader, imported when used: a run without a config file never needs it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def _load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    tomllib = _tomllib()
    try:
        return tomllib.loads(read_bytes(path, MAX_CONFIG_SIZE).decode("utf-8"))
    except Unreadable as exc:  # too large, a FIFO, a device: never read without a limit
        raise ConfigError(f"{path}: cannot read: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object.count(b"\n", 0, exc.start) + 1
        byte = exc.object[exc.start]
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {byte:#04x} at line {line})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer over Python's 4,300-digit conversion limit
        raise ConfigError(f"{path}: invalid TOML: {_shown(str(exc))}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def load_settings(
    config: str | None = None, start: str | os.PathLike[str] | None = None, overrides: Sequence[str] = ()
) -> Settings:
    """Settings from ``config`` (a pyproject.toml or dllint.toml path), else the nearest config
    file (:func:`find_config`); then ``overrides``, each a TOML ``KEY = VALUE`` fragment (ruff's
    ``--config "line-length = 100"``), which win over every file."""
    start = os.fspath(start) if start is not None else os.getcwd()
    if config is not None:
        from pathlib import Path  # as given, normalized: how messages name the file

        path: str | None = str(Path(config))
        if not os.path.isfile(path):  # type: ignore[arg-type]
            raise ConfigError(f"{config}: config file not found")
    else:
        path = find_config(start)
    values: dict[str, Any] = {}
    if path is not None:
        data = _load_toml(path)
        table = _dllint_table(data, path)
        if table is None:
            # a dllint.toml holds the settings at its top level; a pyproject.toml without the table: defaults
            table = data if os.path.basename(path) != "pyproject.toml" else {}
        values = _values(table, str(path))
    for fragment in overrides:
        values.update(_values(parse_override(fragment), f"--config {fragment!r}"))
    _fold_extensions(values)
    if path is not None:
        root = os.path.dirname(path) or "."
    else:  # no config file: the directory of the first path (a file's own directory, not the file)
        root = start if os.path.isdir(start or ".") else os.path.dirname(start) or "."
    return Settings(project_root=os.path.realpath(root), config_path=path, **values)


def _values(table: dict[str, Any], source: str) -> dict[str, Any]:
    """Settings fields from a ``[tool.dllint]`` table (or a ``--config`` fragment)."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{source}: unknown key {_shown(key)} in [tool.dllint] (known keys: {known})")
        attr, parse = KEYS[key]
        values[attr] = parse(key, value, source)
    return values


def _fold_extensions(values: dict[str, Any]) -> None:
    """``extend-ignore`` and ``extend-per-file-ignores`` add to ``ignore``/``per-file-ignores``."""
    if "extend_ignore" in values:
        values["ignore"] = values.get("ignore", ()) + values.pop("extend_ignore")
    if "extend_per_file_ignores" in values:
        values["per_file_ignores"] = values.get("per_file_ignores", ()) + values.pop("extend_per_file_ignores")


def parse_override(fragment: str) -> dict[str, Any]:
    """One ``--config KEY = VALUE`` fragment as a table; ConfigError when it is no TOML pair."""
    tomllib = _tomllib()
    try:
        table = tomllib.loads(fragment)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--config {fragment!r}: neither a config file nor a TOML `KEY = VALUE` pair ({exc})"
        ) from None
    return table


DEFAULT_LINE_LENGTH = 88  # black's and ruff's


def project_line_length(path: str, settings: Settings | None = None) -> int:
    """The line length a fixed line should keep to: ``settings.line_length`` when set
    (``--line-length``, ``line-length`` in ``[tool.dllint]``), else ``line-length`` of the nearest
    ``.ruff.toml``/``ruff.toml``, else ``[tool.ruff]`` then ``[tool.black]`` of the nearest
    pyproject.toml that sets one, at or above ``path``; else 88. Read for each file fixed, not
    cached: a long-lived process (the language server) sees the project's edits."""
    if settings is not None and settings.line_length is not None:
        return settings.line_length
    return _line_length_in(os.path.dirname(os.path.realpath(path or ".")) if not os.path.isdir(path or ".") else os.path.realpath(path))


def _line_length_in(directory: str) -> int:
    for folder in ancestors(directory):
        for name, tables in ((".ruff.toml", ((),)), ("ruff.toml", ((),)), ("pyproject.toml", (("tool", "ruff"), ("tool", "black")))):
            candidate = os.path.join(folder, name)
            if not os.path.isfile(candidate):
                continue
            try:
                data = _load_toml(candidate)
            except ConfigError:
                continue
            for keys in tables:
                table: Any = data
                for key in keys:
                    table = table.get(key, {}) if isinstance(table, dict) else {}
                value = table.get("line-length") if isinstance(table, dict) else None
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return DEFAULT_LINE_LENGTH
