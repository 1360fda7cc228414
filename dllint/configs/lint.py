"""Config files through the rules: read, resolve, find loader blocks, ask each rule.

Rules that apply to configs define ``check_config(block)`` next to ``check(facts)``, with
one predicate behind both. This module reads Python dict configs (``python_config_blocks``;
YAML is read by :mod:`dllint.configs.read`), asks the rules (``check_blocks``) and gives them
their findings and fixes (``config_finding``, ``value_fix``, ``setting_fix``: a fix sets a
key's value and never deletes the key, which the user's code may read). It sits
below the engine (which calls it) and never imports it: a config file goes through the
engine as an input (:meth:`dllint.engine.Linter.lint`), its fixes through the fixer's one
loop (:class:`dllint.fixer.TextEdits`).
"""

from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING, Iterable

from dllint.deps import ConfigFileDep, Deps
from dllint.findings import Finding, Fix, SetArgument
from dllint.patterns import LazyPattern

if TYPE_CHECKING:
    from dllint.config import Settings
    from dllint.configs.blocks import ConfigBlock
    from dllint.configs.document import Entry, Span
    from dllint.rules import Rule

# The config tree, its blocks and edits are imported where a config is read or fixed: the engine
# imports this module for its prefilters, and most runs (a script, pre-commit's) read no config.

# The bytes a config file must contain to hold a loader block or inherit one (the prefilter):
# a loader key or a DataLoader target; YAML also `_base_` or a Hydra defaults list.
CONFIG_TRIGGERS = (b"num_workers", b"DataLoader", b"persistent_workers", b"prefetch_factor")
YAML_TRIGGERS = CONFIG_TRIGGERS + (b"_base_", b"pin_memory", b"defaults:")
# A dict config binds values only: a module-level def, class or `if` means a script or library.
NOT_A_DICT_CONFIG = LazyPattern(r"^(?:def|async def|class|if)\b", re.M)
YAML_SUFFIXES = (".yaml", ".yml")


def could_be_dict_config(text: str) -> bool:
    """Before parsing: the text has no module-level definition (what ``is_dict_config`` asks)."""
    return NOT_A_DICT_CONFIG.search(text) is None


def could_be_config(data: bytes) -> bool:
    """The YAML prefilter: no trigger, no loader block, no parse."""
    return any(trigger in data for trigger in YAML_TRIGGERS)


# -- reading --------------------------------------------------------------------------------
def python_config_blocks(path: str, text: str, tree: ast.Module, settings: Settings) -> list[ConfigBlock]:
    """The loader blocks of a Python dict config (none for a module that defines functions
    or classes: a script's loaders are its loader calls)."""
    from dllint.configs.blocks import find_blocks
    from dllint.configs.inherit import resolve_document
    from dllint.configs.python_reader import is_dict_config, read_python_config

    if not any(trigger.decode() in text for trigger in CONFIG_TRIGGERS) or not is_dict_config(tree):
        return []
    document = read_python_config(path, text, tree)
    if document is None:
        return []
    return find_blocks(resolve_document(document), settings)


# -- checking -------------------------------------------------------------------------------
def config_deps(document: object) -> Deps:
    """The ``FileResult.deps`` of a config file: the base/default files its values come from.
    Each is read whole (:class:`~dllint.deps.ConfigFileDep`), so the cache never trusts these
    findings: a file that inherits is linted again on every run (a changed base changes them)."""
    if document is None:
        return Deps()
    from dllint.configs.document import ConfigDocument, other_sources

    if not isinstance(document, ConfigDocument):
        return Deps()
    return Deps(ConfigFileDep(path) for path in sorted(other_sources(document)))


def checks_config(rule: Rule | type[Rule]) -> bool:
    """The rule (its class, or an instance) also checks config files' loader blocks."""
    return callable(getattr(rule, "check_config", None))


def config_rules(rules: Iterable[Rule]) -> list[Rule]:
    return [rule for rule in rules if checks_config(rule)]


def check_blocks(rules: Iterable[Rule], blocks: list[ConfigBlock], errors: list[str]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in config_rules(rules):
        for block in blocks:
            try:
                findings.extend(rule.check_config(block))  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a rule bug must not stop the run
                import traceback  # only when a rule fails: a run never pays for it otherwise

                errors.append(f"{block.path}: internal error in {rule.code}: {traceback.format_exc(limit=-3).strip()}")
    return findings


# -- reporting ------------------------------------------------------------------------------
def config_finding(rule: Rule, block: ConfigBlock, span: Span, message: str | None = None, fix: Fix | None = None) -> Finding:
    """A finding about ``block`` at ``span`` (a key the child writes: the fix edits that call);
    when a key its message names is inherited from a base file (mmengine's ``_base_``, a Hydra
    default), the message says which file sets it, and on which line, as ``_base_`` names it."""
    message = message or rule.summary
    inherited = _inherited_named(block, message)
    where = None if inherited is None else f"{_relative(inherited.path, block.path)}:{inherited.key_span.line}"
    if inherited is not None and os.path.basename(inherited.path) + ":" not in message:  # not said already
        message += f" ({inherited.key} is set in {where})"
    return Finding(
        path=block.path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        code=rule.code,
        name=rule.name,
        message=message,
        fix=fix,
    )


def _inherited_named(block: ConfigBlock, message: str) -> Entry | None:
    """The first key the message writes (``persistent_workers=True``, ``pin_memory: false``)
    that the block inherits from another file."""
    for name, entry in block.mapping.entries.items():
        if entry.path and not block.is_local(entry) and (f"{name}=" in message or f"{name}: " in message):
            return entry
    return None


def _relative(path: str, start: str) -> str:
    """``path`` as seen from the directory of ``start`` (how ``_base_`` names it)."""
    try:
        return os.path.relpath(path, os.path.dirname(start) or ".")
    except ValueError:  # another drive
        return path


def setting_fix(block: ConfigBlock, name: str, value: bool, *, after: str = "num_workers") -> Fix | None:
    """``name: true``: the written value replaced (unsafe: an explicit value may be deliberate),
    or a new line after the ``after`` key (safe)."""
    from dllint.configs.edits import insert_after, replace_value

    entry = block.entry(name)
    yaml_value, python_value = ("true", "True") if value else ("false", "False")
    if block.document.format == "python":
        if block.block_span is None or (entry is not None and not _python_keyword(block, entry)):
            return None
        applicability = "unsafe" if entry is not None else "safe"
        verb = "Set" if entry is not None else "Add"
        return Fix(applicability, f"{verb} `{name}={python_value}`", SetArgument(name, python_value))  # type: ignore[arg-type]
    if entry is not None:
        edit = replace_value(block.document, block.mapping, entry, yaml_value) if block.is_local(entry) else None
        return Fix("unsafe", f"Set `{name}: {yaml_value}`", edit) if edit else None
    anchor = block.entry(after)
    edit = insert_after(block.document, block.mapping, anchor, name, yaml_value) if block.is_local(anchor) else None  # type: ignore[arg-type]
    return Fix("safe", f"Add `{name}: {yaml_value}`", edit) if edit else None


def value_fix(block: ConfigBlock, name: str, yaml_value: str, python_value: str, *, after: str = "num_workers") -> Fix | None:
    """Set the key ``name`` to a value torch accepts (``persistent_workers: false``,
    ``prefetch_factor: null``), in the file being fixed; never delete it: the user's code reads
    the key (``cfg.loader.persistent_workers``) and OmegaConf's struct mode fails on a key that
    is gone. A value written here is replaced in place (its comment kept); a value a base or
    defaults file writes is overridden by a new key here, after ``after``: safe in a Python
    dict config (mmengine merges the child over its ``_base_``), unsafe in YAML (a Hydra
    defaults list's order decides which file wins)."""
    from dllint.configs.edits import insert_after, replace_value

    entry = block.entry(name)
    if block.document.format == "python":
        if block.block_span is None or (block.is_local(entry) and not _python_keyword(block, entry)):  # type: ignore[arg-type]
            return None
        return Fix("safe", f"Set `{name}={python_value}`", SetArgument(name, python_value))
    if block.is_local(entry):
        edit = replace_value(block.document, block.mapping, entry, yaml_value)  # type: ignore[arg-type]
        return Fix("safe", f"Set `{name}: {yaml_value}`", edit) if edit else None
    anchor = block.entry(after)
    edit = insert_after(block.document, block.mapping, anchor, name, yaml_value) if block.is_local(anchor) else None  # type: ignore[arg-type]
    return Fix("unsafe", f"Set `{name}: {yaml_value}` here (over the value inherited)", edit) if edit else None


def setting_message(block: ConfigBlock, name: str, value: bool) -> str:
    """What to do, in the config's own syntax: ``set pin_memory: true`` on a YAML line that
    writes it, ``add persistent_workers=True`` to a Python dict config that does not."""
    verb = "set" if block.entry(name) is not None else "add"
    return f"{verb} {key_value(block, name, 'true' if value else 'false', 'True' if value else 'False')}"


def key_value(block: ConfigBlock, name: str, yaml_value: str, python_value: str) -> str:
    """``name: value`` in a YAML config, ``name=value`` in a Python one: how messages write a key."""
    return f"{name}={python_value}" if block.document.format == "python" else f"{name}: {yaml_value}"


def _python_keyword(block: ConfigBlock, entry: Entry) -> bool:
    """A ``name=value`` keyword of the block's own ``dict(...)``/``L(...)(...)`` call."""
    return isinstance(entry.node, ast.keyword) and isinstance(block.mapping.node, ast.Call) and block.mapping.path == block.path
