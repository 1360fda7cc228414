"""Rules: one module each, discovered at import time (no hand-kept list).

A rule is a subclass of :class:`Rule` with its code, name, docs in fixed
sections (What it does / Why is this bad? / Example / Use instead / Fix
safety / References), VALID/INVALID examples that run as tests, and a
``check`` that reads :class:`~dllint.facts.FileFacts` and yields findings.

The rule catalog (codes, names, triggers and the common ground of loader calls, value
resolution, following calls, endless iteration, evaluation-only loaders and config files) is a
public contract; docstrings across the package cite it as "the rule catalog". Its text is
each rule's docs, rendered into ``docs/rules.md`` and ``dllint explain``, and the README's
"Rules", "Config files" and "Whole-project analysis" sections.
"""

from __future__ import annotations

import ast
import importlib
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

from dllint.findings import ConfigKey, Finding, Fix, NotKept, RemoveArguments, ReplaceText, SetArgument

if TYPE_CHECKING:
    from dllint.facts import FileFacts

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # the default message, one line: what, why, what to do
    fix_safety: ClassVar[str] = "none"  # "safe", "unsafe", "sometimes" (see the docs), or "none"
    # Fixes whose edit is one of FIXER_EDITS are applied by the fixer, by the edit's type; a
    # rule with another edit defines ``apply_fix(ctx, finding)``. ``fix_at_argument``: the
    # finding points at an argument (DL001-DL003), so a SetArgument edits the call around it,
    # not a call at the finding.
    fix_at_argument: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    # Byte strings of which a file must contain at least one for this rule to fire (the prefilter).
    triggers: ClassVar[tuple[bytes, ...]] = (b"DataLoader",)
    # Triggers that do their work as string literals of their own (an environment variable's name:
    # os.environ["RANK"], getenv('LOCAL_RANK')): a file with such a string is always parsed, even if
    # no identifier names a trigger (the engine otherwise skips files whose triggers are only in
    # strings and comments).
    literal_triggers: ClassVar[tuple[bytes, ...]] = ()
    # What else a file must show, beyond a trigger, for ``check`` to fire (the engine's rule-aware
    # gate: a file on which no rule could fire is neither parsed nor analysed).
    # ``needs_one_of``: byte strings of which the file must contain one as well: DL305 reports on a
    # loader the file constructs (``facts.loader_calls``), so it needs a loader class name
    # (``DataLoader`` stands for the ``extend-loader-classes`` too); DL101 needs a loader or a
    # process starter.
    needs_one_of: ClassVar[tuple[bytes, ...]] = ()
    # ``needs_class_base``: the rule looks only at classes the file defines whose bases name a
    # trigger (``facts.dataset_classes``: ``class Ds(Dataset)``, and local subclasses of those), so a
    # ``class`` header must name one, or an import bind one under another name (``Dataset as Base``).
    needs_class_base: ClassVar[bool] = False
    # Examples: each VALID snippet must not fire this rule; each INVALID one must fire it.
    valid: ClassVar[tuple[str, ...]] = ()
    invalid: ClassVar[tuple[str, ...]] = ()
    # The loader arguments a finding rests on: where one is read from a config file
    # (cfg.train_ds.num_workers), the message names the file and key (the rule catalog "Config files").
    value_arguments: ClassVar[tuple[str, ...]] = ("num_workers",)

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        raise NotImplementedError

    def report(
        self, facts: FileFacts, node: ast.AST, message: str | None = None, fix: Fix | None = None
    ) -> Finding:
        line, column, end_line, end_column = facts.span(node)
        message = message or self.summary
        if fix is not None and not _torch_positions(facts, node):
            fix = None  # fixes edit arguments by torch's positions: a library loader's bind others
        keys = config_keys(facts, node, self.value_arguments) if facts.config_values else ()
        if keys:
            message += " (" + "; ".join(key.describe() for key in keys) + ")"
        return Finding(
            path=facts.path,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            code=self.code,
            name=self.name,
            message=message,
            fix=fix,
            config_keys=keys,
        )

    @classmethod
    def docs(cls) -> str:
        import textwrap  # only documentation needs it, not a run

        return textwrap.dedent(cls.__doc__ or "").strip()

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring split into its ``## Section`` parts."""
        sections: dict[str, list[str]] = {}
        current = None
        for line in cls.docs().splitlines():
            if line.startswith("## "):
                current = line[3:].strip()
                sections[current] = []
            elif current is not None:
                sections[current].append(line)
        return {k: "\n".join(v).strip() for k, v in sections.items()}

    @classmethod
    def metadata(cls) -> dict[str, Any]:
        return {
            "code": cls.code,
            "name": cls.name,
            "summary": cls.summary,
            "fix_safety": cls.fix_safety,
            "default_enabled": cls.default_enabled,
        }


def config_keys(facts: FileFacts, node: ast.AST, arguments: tuple[str, ...]) -> tuple[ConfigKey, ...]:
    """The config keys behind a finding at ``node``: in the loader call that holds it, the
    ``arguments`` read from config files (the reported argument first); elsewhere (an
    assignment the value is read at), the config reads inside ``node``."""
    loader = _loader_holding(facts, node)
    found: list[ConfigKey] = []
    if loader is not None:
        reported = node.arg if isinstance(node, ast.keyword) and node.arg in arguments else None
        for name in ([reported] if reported else []) + [a for a in arguments if a != reported]:
            value = loader.value(name)
            if value.config is not None:
                found.append(value.config)
    else:
        for inner in ast.walk(node):
            entry = facts.config_values.get(id(inner))
            if entry is not None and entry[0] is inner and entry[1] is not None:
                found.append(entry[1].config)
    return tuple(dict.fromkeys(found))


def _torch_positions(facts: FileFacts, node: ast.AST) -> bool:
    """The loader call holding ``node`` (if any) binds its positional arguments as torch's does."""
    if not facts.other_positions:
        return True  # (one look per file: a file of 2,000 findings must not search per finding)
    loader = _loader_holding(facts, node)
    return loader is None or loader.torch_positions


def _loader_holding(facts: FileFacts, node: ast.AST):
    line, column = getattr(node, "lineno", None), getattr(node, "col_offset", None)
    if line is None:
        return None
    best = None
    for loader in facts.loader_calls:
        call = loader.node
        start, end = (call.lineno, call.col_offset), (call.end_lineno or call.lineno, call.end_col_offset or 0)
        if start <= (line, column) < end and (best is None or (best.node.lineno, best.node.col_offset) < start):
            best = loader
    return best


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class in ``dllint.rules.*``, sorted by code."""
    found: dict[str, type[Rule]] = {}
    for name in _modules():
        module = importlib.import_module(f"{__name__}.{name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                if obj.code in found:
                    raise RuntimeError(f"duplicate rule code {obj.code}: {obj} and {found[obj.code]}")
                found[obj.code] = obj
    return tuple(found[code] for code in sorted(found))


def _modules() -> list[str]:
    """The modules of this package, as ``pkgutil.iter_modules`` lists them (whose imports,
    ``importlib.util`` and ``zipimport``, cost a one-file run 1.5 ms)."""
    names = set()
    for directory in __path__:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in entries:
            name, dot, suffix = entry.partition(".")
            if dot and suffix in ("py", "pyc") and name.isidentifier() and name != "__init__":
                names.add(name)
    return sorted(names)


def rule_by_code(code: str) -> type[Rule] | None:
    code = code.strip().upper()
    return next((rule for rule in all_rules() if rule.code == code), None)


# Edits the fixer applies to any rule's finding, by their type (dllint.fixer): setting or removing
# loader arguments, what most fixes are, and a config file's text edits.
FIXER_EDITS = (SetArgument, RemoveArguments, ReplaceText)


def has_fix(finding: Finding) -> bool:
    """Whether ``--fix`` can act on the finding: its edit is one the fixer applies by type, or
    its rule implements the fix it offers (a finding read from the cache, whose edit is not
    kept, is linted again and fixed from what that finds)."""
    if finding.fix is None:
        return False
    if isinstance(finding.fix.edit, (*FIXER_EDITS, NotKept)):
        from dllint.rules.catalog import CODES  # (no rule imported: a run whose findings are all cached)

        return finding.code in CODES
    rule = rule_by_code(finding.code)
    return rule is not None and callable(getattr(rule, "apply_fix", None))


def quote(facts: FileFacts, node: ast.AST, limit: int = 60) -> str:
    """An expression or statement as a message quotes it: its own source on one line (never the
    rest of its line, such as a trailing comment), shortened to ``limit`` characters."""
    source = facts.source_segment(node)
    if source is None or "\n" in source:
        source = " ".join(ast.unparse(node).split())  # a compound statement unparses to several lines
    return source if len(source) <= limit else source[: limit - 3] + "..."
