"""YAML to the neutral tree, with each key's and value's position.

PyYAML's composer gives nodes with marks (0-based line and character column); its safe
constructor turns a scalar node into the value YAML 1.1 means (``true``, ``0x10``, ``~``).
PyYAML is imported on first use, so linting Python never pays for it. Anchors and aliases
share one converted node; ``<<`` merge keys are applied as YAML defines them (explicit keys
win).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dllint.configs.document import ConfigDocument, Entry, Mapping, Node, Scalar, Sequence, Span, Unknown

MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_DEPTH = 200  # deeper than any config; a guard against pathological nesting


@dataclass(frozen=True)
class YamlError:
    message: str
    line: int
    column: int


def parse_yaml(path: str, text: str) -> list[Node] | YamlError:
    """The documents of ``text`` as neutral trees (an empty file has none)."""
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        nodes = list(yaml.compose_all(text, Loader=loader_class))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        return YamlError(f"cannot parse YAML: {problem} at line {line} column {column}", line, column)
    except (RecursionError, MemoryError, ValueError) as exc:
        return YamlError(f"cannot parse YAML: {exc}", 1, 1)
    converter = _Converter(path, _constructor(yaml))
    return [converter.convert(node, 0) for node in nodes if node is not None]


def _constructor(yaml: Any) -> Any:
    """PyYAML's safe constructor, but for a decimal integer over Python's 4,300-digit conversion
    limit (``int()`` raises ValueError): such a value is still known to be that long, and is
    taken as the smallest number of its length (what a limit is compared with, and what a
    message shows: ``<a 4301-digit number>``) rather than lost."""

    class Constructor(yaml.constructor.SafeConstructor):
        def construct_yaml_int(self, node: Any) -> int:
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                digits = str(node.value).replace("_", "").lstrip("+-").lstrip("0")
                if not digits.isdigit():
                    raise
                return (-1 if str(node.value).startswith("-") else 1) * 10 ** (len(digits) - 1)

    Constructor.add_constructor("tag:yaml.org,2002:int", Constructor.construct_yaml_int)
    return Constructor()


def read_yaml(path: str, text: str) -> ConfigDocument | YamlError:
    """One file as a :class:`ConfigDocument` (several documents become a sequence)."""
    documents = parse_yaml(path, text)
    if isinstance(documents, YamlError):
        return documents
    if len(documents) == 1:
        root: Node = documents[0]
    else:
        root = Sequence(Span(1, 1, 1, 1), documents, path)
    local = frozenset(root.entries) if isinstance(root, Mapping) else frozenset()
    return ConfigDocument(path, text, root, "yaml", local_keys=local)


def _span(node: Any) -> Span:
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)


class _Converter:
    def __init__(self, path: str, constructor: Any) -> None:
        self.path = path
        self.constructor = constructor
        self.done: dict[int, Node] = {}  # an alias is the same node object: convert it once

    def convert(self, node: Any, depth: int) -> Node:
        known = self.done.get(id(node))
        if known is not None:
            return known
        if depth > MAX_DEPTH:
            return Unknown(_span(node), self.path)
        kind = node.id
        if kind == "scalar":
            try:
                value = self.constructor.construct_object(node, deep=True)
            except Exception:  # noqa: BLE001 - an unusual tag: its value is unknown, not an error
                result: Node = Unknown(_span(node), self.path)
            else:
                result = Scalar(_span(node), value, self.path) if _plain(value) else Unknown(_span(node), self.path)
        elif kind == "sequence":
            result = Sequence(_span(node), [], self.path)
            self.done[id(node)] = result
            result.items = [self.convert(item, depth + 1) for item in node.value]
        else:
            result = Mapping(_span(node), {}, self.path, flow=bool(node.flow_style))
            self.done[id(node)] = result
            merged: list[Mapping] = []
            for key_node, value_node in node.value:
                if key_node.tag == MERGE_TAG:
                    value = self.convert(value_node, depth + 1)
                    sources = value.items if isinstance(value, Sequence) else [value]
                    merged.extend(s for s in sources if isinstance(s, Mapping))
                    result.open |= any(not isinstance(s, Mapping) for s in sources)
                    continue
                key = key_node.value if key_node.id == "scalar" else None
                if key is None:
                    continue  # a complex key: never a loader argument
                result.entries[str(key)] = Entry(str(key), _span(key_node), self.convert(value_node, depth + 1), self.path)
            for source in merged:  # `<<: *defaults`: explicit keys win, the first merge wins
                for key, entry in source.entries.items():
                    result.entries.setdefault(key, entry)
                result.open |= source.open
        self.done[id(node)] = result
        return result


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))
