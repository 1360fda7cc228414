"""The screening before a parse: which rules could fire on a file, decided on its bytes and text.

A file passes up to four gates, each cheaper than what it saves: the byte prefilter
(:meth:`Prefilter.screen`: one of the rules' triggers in the bytes, and what else they need), the
live gates of the decoded text, a scan of the code outside strings and comments
(:meth:`TextScreen.in_code`), and, after the parse, the identifiers of the tree
(:meth:`TextScreen.in_tree`). A rule behind a closed gate is not run: the rules' ``triggers``,
``literal_triggers``, ``needs_one_of`` and ``needs_class_base`` are the contract
(:mod:`dllint.rules`). The engine asks; nothing here parses, and nothing here runs a rule.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Iterable, NamedTuple, Protocol, Sequence

from dllint.configs.lint import (
    CONFIG_TRIGGERS,
    YAML_SUFFIXES,
    could_be_config,
    could_be_dict_config,
)
from dllint.knowledge.loaders import LIBRARY_LOADER_NAMES, LOADER_SETTINGS_NAMES
from dllint.patterns import LazyPattern

if TYPE_CHECKING:
    from dllint.config import Settings


# Comments and string literals (escapes and escaped newlines included), for the scan before
# parsing: what is left is code. Every alternative of the scan starts with one fixed character,
# so that the regex engine skips at C speed to the next `#`, quote or first letter of a trigger;
# a string's prefix is read back from its opening quote (`_is_fstring`): the replacement fields
# of f-strings (and t-strings) are code. The loops are unrolled (a run of plain characters at a
# time, not one alternation per character). Both halved the scan's time on the corpus.
_QUOTED = (
    r'''(?:"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'''
    r"""|'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"""
    r'''|"[^"\\\r\n]*(?:\\[\s\S][^"\\\r\n]*)*"'''
    r"""|'[^'\\\r\n]*(?:\\[\s\S][^'\\\r\n]*)*')"""
)
_STRINGS_AND_COMMENTS = r"#[^\r\n]*|(?P<string>" + _QUOTED + ")"


def _is_fstring(text: str, quote: int) -> bool:
    """Whether the string literal opening at ``quote`` has an f (or t) prefix: ``f``, ``rf``,
    ``fr`` in any case, the letters just before the quote."""
    before = text[quote - 1] if quote else ""
    if before in ("f", "F", "t", "T"):
        return True
    return before in ("r", "R") and quote >= 2 and text[quote - 2] in "fFtT"

# The field of each node class that holds an identifier (alias: also ``asname``).
_IDENTIFIER_FIELDS: dict[type, str] = {
    ast.Name: "id",
    ast.Attribute: "attr",
    ast.alias: "name",
    ast.ImportFrom: "module",
    ast.keyword: "arg",
    ast.arg: "arg",
    ast.ClassDef: "name",
    ast.FunctionDef: "name",
    ast.AsyncFunctionDef: "name",
}


class _Gate(NamedTuple):
    """What a file must contain for some rules to fire (see ``Rule.needs_one_of``,
    ``Rule.needs_class_base``): one of ``triggers``; one of ``needs`` too, if any; a class
    header (or an ``as`` import) naming the trigger found, with ``class_base``."""

    triggers: tuple[bytes, ...]
    needs: tuple[bytes, ...]
    class_base: bool
    literal: tuple[bytes, ...]
    codes: tuple[str, ...]  # the rules behind the gate


class _GateSet:
    """The live gates of a file, and what the scans look for in its code: their triggers (one
    containing another is implied by it) and their literal triggers (``os.environ["RANK"]``);
    ``codes``: the rules that could fire on it, the only ones run."""

    def __init__(self, gates: Sequence[_Gate]) -> None:
        self.gates = tuple(gates)
        self.codes = frozenset(code for gate in gates for code in gate.codes)
        self.names = tuple(t.decode("utf-8", "replace") for t in _minimal({t for gate in gates for t in gate.triggers}))
        literal = sorted({t.decode("utf-8", "replace") for gate in gates for t in gate.literal})
        # A literal trigger counts as a string of its own: os.environ["RANK"], getenv('LOCAL_RANK').
        self.literal_scan = (
            re.compile(r"""(["'])\w*(?:""" + "|".join(map(re.escape, literal)) + r")\w*\1") if literal else None
        )


def _minimal(triggers: Iterable[bytes]) -> tuple[bytes, ...]:
    """The triggers not implied by another (``IterableDataset`` is found wherever ``Dataset`` is)."""
    found = set(triggers)
    return tuple(sorted(t for t in found if not any(o != t and o in t for o in found)))


# The shortest substring that stands in for the triggers holding it (`Loader`): a shorter one is
# found in too many files that hold none of them.
_SHORTEST_KEY = 6


def _shared_keys(strings: Iterable[bytes]) -> dict[bytes, bytes]:
    """Each string that shares an ASCII substring of ``_SHORTEST_KEY`` bytes or more with another
    -> that substring (its key; ASCII: never part of a character, searched for in text too):
    where the key is absent, so is every string holding it (the library
    loaders named ``...Loader``, ``...Sampler``). Chosen greedily: the key held by most strings
    first, the longer of two held by as many. A string that is itself a key maps to nothing."""
    left = set(strings)
    keys: dict[bytes, bytes] = {}
    while True:
        # A longer key is held by no more strings than each of its pieces of `_SHORTEST_KEY` bytes:
        # the sets of holders of those pieces are all the candidates, each keyed by the longest
        # substring its holders share.
        holders: dict[bytes, set[bytes]] = {}
        for s in left:
            for start in range(len(s) - _SHORTEST_KEY + 1):
                piece = s[start : start + _SHORTEST_KEY]
                if piece.isascii():
                    holders.setdefault(piece, set()).add(s)
        most = max(map(len, holders.values()), default=0)
        if most < 2:
            return keys
        held, key = max(
            ((held, _longest_common(held)) for held in {frozenset(held) for held in holders.values() if len(held) == most}),
            key=lambda pair: (len(pair[1]), pair[1]),
        )
        keys.update((s, key) for s in held if s != key)
        left -= held


def _longest_common(strings: frozenset[bytes]) -> bytes:
    """The longest ASCII substring of all ``strings`` (the greatest of as long ones)."""
    shortest = min(strings, key=lambda s: (len(s), s))
    for length in range(len(shortest), 0, -1):
        common = [shortest[i : i + length] for i in range(len(shortest) - length + 1)]
        common = [sub for sub in common if sub.isascii() and all(sub in s for s in strings)]
        if common:
            return max(common)
    return b""


def _grouped_scan(strings: tuple[bytes, ...], keys: dict[bytes, bytes]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """``strings`` (none holding another) as searches (key, members): a file holds one of
    ``strings`` exactly when it holds a key and, where the key has members, one of those. Strings
    sharing a key (``keys``: see :func:`_shared_keys`) are searched for only in the files that
    hold the key, each of the others on its own."""
    members: dict[bytes, list[bytes]] = {}
    for s in strings:
        members.setdefault(keys.get(s, s), []).append(s)
    return tuple((key, tuple(held)) if len(held) > 1 else (held[0], ()) for key, held in sorted(members.items()))


def _first_scan(gates: Sequence[_Gate]) -> tuple[bytes, ...]:
    """The strings of which a file must hold one (or a string holding one) for a gate to open. A
    gate with needs opens only on one of its triggers and one of its needs: either list will do,
    the one that adds fewer strings to those already taken. The gates without needs come first,
    their triggers taken anyway: a loader's name, so DL305's triggers (``RANK``...), which need
    one, are never searched for."""
    taken: set[bytes] = set()

    def missing(strings: tuple[bytes, ...]) -> set[bytes]:
        return {s for s in strings if s not in taken and not any(t in s for t in taken)}

    for gate in sorted(gates, key=lambda gate: bool(gate.needs)):
        choices = [missing(gate.triggers)] + ([missing(gate.needs)] if gate.needs else [])
        taken |= min(choices, key=lambda strings: (len(strings), sorted(strings)))
    return _minimal(taken)


class _Search:
    """The strings found in one haystack (bytes, or the decoded text): each searched for once,
    and only where its key is (see :func:`_shared_keys`). A class, not a closure: a function
    that calls itself would be a cycle for the collector, one per file."""

    __slots__ = ("haystack", "keys", "as_text", "found")

    def __init__(self, haystack: bytes | str, keys: dict[bytes, bytes], as_text: dict[bytes, str]) -> None:
        self.haystack = haystack
        self.keys = keys
        self.as_text = as_text if isinstance(haystack, str) else None
        self.found: dict[bytes, bool] = {}

    def holds(self, string: bytes) -> bool:
        hit = self.found.get(string)
        if hit is None:
            key = self.keys.get(string)
            # (a string decoded exactly when the haystack is text: mypy cannot pair the two)
            needle = string if self.as_text is None else self.as_text[string]
            hit = self.found[string] = (key is None or self.holds(key)) and needle in self.haystack  # type: ignore[operator]
        return hit


@lru_cache(maxsize=None)
def _class_base(trigger: bytes, text: bool) -> re.Pattern:
    """A class header naming ``trigger`` among its bases (type parameters allowed; spanning lines:
    no colon comes before the trigger), or ``trigger...`` imported under another name (``as``).
    Strings and comments count too (more files parsed, never fewer); a colon inside an earlier
    base (a lambda, a slice: ``class D(f(lambda: 0), Dataset)``) hides the header."""
    name = re.escape(trigger.decode("latin-1"))
    pattern = r"class\s+[^\s(:\[]+\s*(?:\[[\s\S]*?\]\s*)?\([^:]*?" + name + r"|" + name + r"\S*\s+as\s"
    return re.compile(pattern if text else pattern.encode("latin-1"))


# A module-level definition, as `could_be_dict_config` asks, on bytes (an identifier may go on in
# non-ASCII letters: `classé = 1` is a binding, not a class).
_DICT_CONFIG_BYTES = LazyPattern(rb"^(?:def|async def|class|if)(?![0-9A-Za-z_\x80-\xff])", re.M)
_CONFIG_TRIGGER_NAMES = tuple(t.decode() for t in CONFIG_TRIGGERS)


_IMPORT_PREFIXES = ("from ", "from\t", "import ", "import\t")


@lru_cache(maxsize=None)
def _code_scan(names: tuple[str, ...]) -> re.Pattern[str]:
    """Compiled on first use (4 ms): a run whose files all fail the byte prefilter never needs it."""
    return re.compile(_STRINGS_AND_COMMENTS + "|(?P<trigger>" + "|".join(map(re.escape, names)) + ")")


def _on_an_import_line(text: str, names: tuple[str, ...]) -> bool:
    """Whether one of ``names`` occurs on a line that starts (after blanks) with ``from`` or
    ``import``: each occurrence's line is looked at, never every line of the file."""
    for name in names:
        at = text.find(name)
        while at >= 0:
            line = text[text.rfind("\n", 0, at) + 1 : at].lstrip(" \t")
            if line.startswith(_IMPORT_PREFIXES):
                return True
            at = text.find(name, at + len(name))
    return False


def _code_names_a_trigger(text: str, names: tuple[str, ...]) -> bool:
    """The identifier gate before parsing: is a trigger (one of ``names``) in the code, outside
    strings and comments? The byte prefilter also passes files that mention ``DataLoader`` only in
    docstrings and comments (127 of the 452 it passed on the benchmark corpus); no rule can fire on
    those, and scanning them costs a tenth of parsing them. The scan stops at the first trigger in
    code (imports, near the top); a trigger anywhere in an f-string counts as code. Where the scan
    misreads a string it sees more code than there is, never less: such files are parsed and meet
    :func:`_names_a_trigger`, the exact gate on the tree."""
    if not names:
        return False
    # Most files that name a trigger import it: an import line naming one settles it without the
    # scan (or compiling it: 4 ms, a one-file run's). A docstring's example import misleads this
    # into a parse, never into a skip: the tree gate then decides.
    if _on_an_import_line(text, names):
        return True
    for match in _code_scan(names).finditer(text):
        if match.group("trigger") is not None:
            return True
        string = match.group("string")
        if string is not None and _is_fstring(text, match.start()) and any(name in string for name in names):
            return True
    return False


def _names_a_trigger(nodes: list[ast.AST], names: tuple[str, ...]) -> bool:
    """The identifier gate after parsing: does an identifier (a name, attribute, import, keyword,
    parameter or definition) contain a trigger? If not, facts and rules are skipped. Imports
    come early in ``walk``'s breadth-first order: most files answer in the first slice."""
    found: list[str] = []
    fields = _IDENTIFIER_FIELDS
    start = 0
    for end in (256, 4096, len(nodes)):
        for node in nodes[start:end]:
            field_name = fields.get(node.__class__)
            if field_name is not None:
                value = getattr(node, field_name)
                if value:
                    found.append(value)
                if node.__class__ is ast.alias and node.asname:  # type: ignore[attr-defined]  # an alias, by its exact class
                    found.append(node.asname)  # type: ignore[attr-defined]
        joined = "\n".join(found)
        if any(trigger in joined for trigger in names):
            return True
        start = end
        if start >= len(nodes):
            break
    return False


class TextScreen(NamedTuple):
    """What a decoded text may need: the gates open in it, whether code rules apply and whether
    it may be a dict config; ``names``: the triggers that must be in its code unless a literal
    trigger opened it (``gated`` False)."""

    gates: _GateSet
    code_rules: bool
    config: bool
    names: tuple[str, ...]
    gated: bool

    def in_code(self, text: str) -> bool:
        """Whether a trigger is in the code (outside strings and comments): else no parse."""
        return not self.gated or _code_names_a_trigger(text, self.names)

    def in_tree(self, nodes: list[ast.AST]) -> bool:
        """Whether an identifier of the parsed tree holds a trigger: else no facts, no rules."""
        return not self.gated or _names_a_trigger(nodes, self.names)


class Screened(Protocol):
    """What screening reads of a rule: its class's attributes, or its :mod:`dllint.rules.catalog` entry."""

    @property
    def code(self) -> str: ...
    @property
    def triggers(self) -> tuple[bytes, ...]: ...
    @property
    def literal_triggers(self) -> tuple[bytes, ...]: ...
    @property
    def needs_one_of(self) -> tuple[bytes, ...]: ...
    @property
    def needs_class_base(self) -> bool: ...


class Prefilter:
    """The gates of one set of rules (``config_rules``: some of them also check config files)."""

    def __init__(self, settings: Settings, rules: Sequence[Screened], config_rules: bool) -> None:
        self.config_rules = config_rules
        # `DataLoader` stands for every loader class: custom ones named in the settings, the
        # library loaders and framework loader settings of the table of library knowledge.
        loader_names = {
            b"DataLoader",
            *(name.rsplit(".", 1)[-1].encode() for name in settings.extend_loader_classes),
            *(name.encode() for name in (*LIBRARY_LOADER_NAMES, *LOADER_SETTINGS_NAMES)),
        }
        # One gate per distinct (triggers, needs) among the rules: what a file must contain for one
        # of them to fire. A custom loader class named in the settings counts as `DataLoader`.
        by_need: dict[tuple[tuple[bytes, ...], tuple[bytes, ...], bool], tuple[set[bytes], list[str]]] = {}
        for rule in rules:
            triggers, needs = set(rule.triggers), set(rule.needs_one_of)
            if b"DataLoader" in triggers:
                triggers |= loader_names
            if b"DataLoader" in needs:
                needs |= loader_names
            key = (tuple(sorted(triggers)), tuple(sorted(needs)), rule.needs_class_base)
            literal, codes = by_need.setdefault(key, (set(), []))
            literal.update(rule.literal_triggers)
            codes.append(rule.code)
        self.gates = tuple(
            _Gate(triggers, needs, class_base, tuple(sorted(literal)), tuple(codes))
            for (triggers, needs, class_base), (literal, codes) in sorted(by_need.items())
        )
        # The first scan of every file: a gate needs one of its triggers and one of its needs, so one
        # of the two lists is enough to look for, and none already looked for (DL305 needs a loader's
        # name, which opens DL001's gate). A string containing another is implied by it
        # (`IterableDataset` by `Dataset`), and strings sharing a key (`Loader`) are looked for only
        # where it is: 6 searches of a file, not 24 (0.55 s -> 0.2 s on the benchmark corpus).
        # `live_gates` looks for each string at most once per file, and only where its key is.
        searched = {t for gate in self.gates for t in (*gate.triggers, *gate.needs)}
        self._key_of = _shared_keys(searched)
        self._as_text = {t: t.decode() for t in (*searched, *self._key_of.values())}
        self.first_scan = _first_scan(self.gates)
        self.first_searches = _grouped_scan(self.first_scan, self._key_of)
        self._live_cache: dict[tuple[_Gate, ...], _GateSet] = {}

    @cached_property
    def all_gates(self) -> _GateSet:
        """Every gate, as a notebook's text is screened (built at the first notebook: its triggers
        reduced by :func:`_minimal`, a comparison of each with each, cost every run 1-2 ms)."""
        return _GateSet(self.gates)

    def screen(self, data: bytes, path: str = "", start: int = 0, end: int | None = None) -> tuple[_Gate, ...] | None:
        """The byte-level prefilter: None when no rule could fire on these bytes (no parse
        needed), else the gates of the rules that could (empty for a config), which
        :meth:`dllint.engine.Linter.lint` takes so as not to search the text for them again.
        A rule could fire when one of its triggers is in the file and what else it needs (a loader
        class name, a class whose bases name the trigger) is there too; a dict config, when it
        binds values only (no module-level ``def``, ``class``, ``if``) and names a loader key.
        A YAML file (by ``path``) has its own: a loader key, ``DataLoader``, a base or defaults list.
        ``data[start:end]``: the file's bytes, searched where they lie (the project's joined text
        holds them: most files are settled without a copy of theirs)."""
        end = len(data) if end is None else end
        whole = start == 0 and end == len(data)
        if path.endswith(YAML_SUFFIXES):
            return () if self.config_rules and could_be_config(data if whole else data[start:end]) else None
        find = data.find
        for key, members in self.first_searches:
            if find(key, start, end) != -1 and (not members or any(find(member, start, end) != -1 for member in members)):
                live = self.live_gates(data if whole else data[start:end])
                if live:
                    return live
                break  # a string found, no gate open: a dict config, perhaps
        # A dict config binds values only: where a module-level `def` comes first (most files), no
        # key is searched for. A `class` or `def` line found by a substring search settles it
        # sooner than the regex (which also finds `if`, and a first line's `def`); `class` first:
        # classes come before functions in most modules (0.04 s -> 0.02 s on the benchmark corpus).
        if not self.config_rules or find(b"\nclass ", start, end) != -1 or find(b"\ndef ", start, end) != -1:
            return None
        text = data if whole else data[start:end]  # (the regex's ^ at the file's first line)
        if _DICT_CONFIG_BYTES.search(text):
            return None
        return () if any(t in text for t in CONFIG_TRIGGERS) else None

    def live_gates(self, haystack: bytes | str) -> tuple[_Gate, ...]:
        """The gates of rules that could fire on ``haystack`` (bytes, or the decoded text)."""
        text = isinstance(haystack, str)
        holds = _Search(haystack, self._key_of, self._as_text).holds
        live = []
        for gate in self.gates:
            if not any(map(holds, gate.triggers)):
                continue
            if gate.needs and not any(map(holds, gate.needs)):
                continue
            if gate.class_base and not any(_class_base(t, text).search(haystack) for t in gate.triggers if holds(t)):
                continue
            live.append(gate)
        return tuple(live)

    def screen_text(self, text: str, notebook: bool, live: tuple[_Gate, ...] | None) -> TextScreen | None:
        """The gates of ``text`` (``live``: those :meth:`screen` found open in the bytes it was
        decoded from; the triggers are ASCII: the same in the text); None when no rule could fire
        and it is no dict config (`build_ext(num_workers=)`)."""
        if notebook:
            gates = self.all_gates  # cells joined: the bytes the prefilter saw were the notebook's JSON
        else:
            if live is None:
                live = self.live_gates(text)
            gates = self._live_cache.get(live) or self._live_cache.setdefault(live, _GateSet(live))
        code_rules = notebook or bool(gates.gates)
        config = bool(self.config_rules) and not notebook and could_be_dict_config(text)
        if not code_rules and not config:
            return None
        names = gates.names + (_CONFIG_TRIGGER_NAMES if config else ())
        gated = gates.literal_scan is None or not gates.literal_scan.search(text)
        return TextScreen(gates, code_rules, config, names, gated)
