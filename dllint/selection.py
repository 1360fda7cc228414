"""Which rules run: ``select``/``ignore``/``extend-select`` by code or prefix, as in ruff."""

from __future__ import annotations

import fnmatch
import os
from typing import TYPE_CHECKING, Iterable, Protocol, TypeVar

from dllint.paths import resolved_relative
from dllint.patterns import LazyPattern

if TYPE_CHECKING:
    from dllint.config import Settings


class Selectable(Protocol):
    """What choosing a rule reads of it: a rule class, or its :mod:`dllint.rules.catalog` entry."""

    @property
    def code(self) -> str: ...

    @property
    def default_enabled(self) -> bool: ...


_S = TypeVar("_S", bound=Selectable)

PREFIX = LazyPattern(r"^(ALL|DL\d{0,3})$")


def validate_code_prefix(code: str) -> str | None:
    """An error message when ``code`` is not ``ALL``, ``DL`` or a DL code prefix."""
    code = code.strip().upper()
    if not PREFIX.match(code):
        return f"'{code}' is not a rule code or prefix (expected ALL, DL, DL2, DL201, ...)"
    from dllint.rules.catalog import CATALOG

    if code != "ALL" and not any(rule.code.startswith(code) for rule in CATALOG):
        return f"'{code}' matches no rule"
    return None


def _specificity(code: str, prefixes: Iterable[str]) -> int:
    """Length of the longest prefix matching ``code`` (ALL counts as 0), or -1."""
    best = -1
    for prefix in prefixes:
        if prefix == "ALL":
            best = max(best, 0)
        elif code.startswith(prefix):
            best = max(best, len(prefix))
    return best


def is_selected(rule: Selectable, select: Iterable[str] | None, extend_select: Iterable[str], ignore: Iterable[str]) -> bool:
    """The most specific matching prefix wins; off-by-default rules need their exact code or ALL.

    ``select`` None (not set): the on-by-default rules, a choice as broad as ``ALL``, so that
    ``ignore = ["ALL"]`` turns them off; an empty ``select`` selects nothing (as in ruff)."""
    chosen = (tuple(select) if select is not None else ()) + tuple(extend_select)
    selected = _specificity(rule.code, chosen)
    if select is None and rule.default_enabled:
        selected = max(selected, 0)
    if not rule.default_enabled and rule.code not in chosen and "ALL" not in chosen:
        selected = -1
    if selected < 0:
        return False
    return _specificity(rule.code, ignore) < selected


def enabled_rules(settings: Settings, rules: Iterable[_S]) -> list[_S]:
    """The rules to run. DL000 (unreadable file) is always on unless ignored explicitly."""
    return [
        r
        for r in rules
        if is_selected(r, settings.select, settings.extend_select, settings.ignore)
        or (r.code == "DL000" and not code_matches("DL000", [i for i in settings.ignore if i != "ALL"]))
    ]


def ignored_for_path(path: str, settings: Settings) -> tuple[str, ...]:
    """Codes that ``per-file-ignores`` turns off for ``path``."""
    if not settings.per_file_ignores:
        return ()
    candidates = _relative_forms(path, settings.project_root)
    ignored: list[str] = []
    for pattern, codes in settings.per_file_ignores:
        if any(fnmatch.fnmatch(c, pattern) for c in candidates):
            ignored.extend(codes)
    return tuple(ignored)


def _relative_forms(path: str, root: str) -> list[str]:
    from pathlib import PurePath  # only with per-file-ignores

    pure = PurePath(path)
    forms = [pure.as_posix(), pure.name]
    relative = resolved_relative(path, os.path.realpath(root))
    if relative is not None:
        forms.append(relative)
    return forms


def code_matches(code: str, prefixes: Iterable[str]) -> bool:
    return _specificity(code, prefixes) >= 0
