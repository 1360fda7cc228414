"""A config file as a neutral tree: mappings, sequences and scalars, each with its position.

The YAML reader and the Python dict-config reader both produce this tree, so that which
mappings are loader blocks, how files inherit and what the rules ask is decided once.
Positions are 1-based lines and columns (characters), as in findings. A value that cannot
be known statically (a Python expression, an interpolation that does not resolve) is an
:class:`Unknown`: rules stay silent about it, as they do about dynamic Python values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Union


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(eq=False)
class Scalar:
    span: Span
    value: Any  # str, int, float, bool or None, as the file's format reads it
    path: str = ""  # the file the value is written in (a `_base_` file when inherited)
    # Python configs: the ast node, so that fixes and reports can find the written expression.
    node: Any = field(default=None, repr=False)


@dataclass(eq=False)
class Unknown:
    """A value no static reading can tell (an expression, an unresolved interpolation)."""

    span: Span
    path: str = ""
    node: Any = field(default=None, repr=False)


@dataclass(eq=False)
class Entry:
    key: str
    key_span: Span
    value: Node
    path: str = ""  # the file the entry is written in
    node: Any = field(default=None, repr=False)  # Python: the ast keyword (or dict key)


@dataclass(eq=False)
class Mapping:
    span: Span
    entries: dict[str, Entry] = field(default_factory=dict)
    path: str = ""
    flow: bool = False  # YAML `{a: 1}` / Python: a dict literal or call (not line-per-key)
    # Keys not written here may still come from elsewhere (an unresolved `_base_` or Hydra
    # default, a `**` splat): an absent key is then unknown, not absent.
    open: bool = False
    target: str | None = None  # what builds it: Hydra `_target_`, mmengine `type`, detectron2 `L(f)`
    node: Any = field(default=None, repr=False)  # Python: the dict(...) / L(...)(...) call

    def get(self, key: str) -> Node | None:
        entry = self.entries.get(key)
        return entry.value if entry is not None else None


@dataclass(eq=False)
class Sequence:
    span: Span
    items: list[Node] = field(default_factory=list)
    path: str = ""
    node: Any = field(default=None, repr=False)


Node = Union[Scalar, Unknown, Mapping, Sequence]


MAX_DEPTH = 200  # deeper than any config; a walk stops there (pathological nesting)


def walk(root: Node) -> Iterator[tuple[tuple[str, ...], Node, Entry | None]]:
    """Every node of the tree once, in file order, with its key path (sequence items count as
    ``[i]``) and the entry it is the value of (a sequence's items: the sequence's entry).

    A node shared by YAML aliases (or a mmengine base) is visited where it is first met, so a
    billion laughs costs its size, not its expansion, and a self-referencing anchor ends; the
    walk goes no deeper than ``MAX_DEPTH`` and keeps its stack on the heap (no RecursionError).
    """
    seen: set[int] = set()
    stack: list[tuple[tuple[str, ...], Node, Entry | None]] = [((), root, None)]
    while stack:
        path, node, key = stack.pop()
        if id(node) in seen or len(path) > MAX_DEPTH:
            continue
        seen.add(id(node))
        yield path, node, key
        if isinstance(node, Mapping):
            stack.extend(reversed([(path + (name,), entry.value, entry) for name, entry in node.entries.items()]))
        elif isinstance(node, Sequence):
            stack.extend(reversed([(path + (f"[{index}]",), item, key) for index, item in enumerate(node.items)]))


@dataclass(eq=False)
class ConfigDocument:
    """One config file: its text, its tree (after inheritance and interpolation), its format."""

    path: str
    text: str
    root: Node
    format: str  # "yaml" or "python"
    # Top-level keys written in this file (the others came from `_base_`/defaults files).
    local_keys: frozenset[str] = frozenset()
    # Python configs: names used as `**name` somewhere in the file (a loader call already
    # receives them, and the loader call's own checks report there).
    splatted: frozenset[str] = frozenset()


def lookup(root: Node, path: tuple[str, ...] | list[str]) -> Node | None:
    """The node at a dotted key path, or None when a step is missing or not a mapping."""
    node: Node | None = root
    for step in path:
        if isinstance(node, Mapping):
            node = node.get(step)
        elif isinstance(node, Sequence) and step.isdigit() and int(step) < len(node.items):
            node = node.items[int(step)]
        else:
            return None
    return node


def clone(node: Node) -> Node:
    """A copy of the tree's containers (mappings, sequences, entries) sharing its leaves and
    ast nodes: what merging and interpolation change is then private to the copy, at a small
    fraction of ``copy.deepcopy``'s cost. A node shared by aliases stays shared in the copy
    (each is copied once), and a cycle stays a cycle."""
    return _clone(node, {}, 0)


def _clone(node: Node, done: dict[int, Node], depth: int) -> Node:
    if not isinstance(node, (Mapping, Sequence)) or depth > MAX_DEPTH:
        return node
    copied = done.get(id(node))
    if copied is not None:
        return copied
    if isinstance(node, Mapping):
        mapping = Mapping(node.span, {}, node.path, node.flow, node.open, node.target, node.node)
        done[id(node)] = mapping
        for key, e in node.entries.items():
            mapping.entries[key] = Entry(e.key, e.key_span, _clone(e.value, done, depth + 1), e.path, e.node)
        return mapping
    sequence = Sequence(node.span, [], node.path, node.node)
    done[id(node)] = sequence
    sequence.items = [_clone(item, done, depth + 1) for item in node.items]
    return sequence


def other_sources(document: ConfigDocument) -> set[str]:
    """The other files the resolved tree holds values of (`_base_`, Hydra defaults, imported
    configs): the findings of ``document`` depend on them."""
    found: set[str] = set()
    stack: list[Node] = [document.root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.path:
            found.add(node.path)
        if isinstance(node, Mapping):
            for entry in node.entries.values():
                if entry.path:
                    found.add(entry.path)
                stack.append(entry.value)
        elif isinstance(node, Sequence):
            stack.extend(node.items)
    found.discard(document.path)
    return found
