"""Inheritance and interpolation, resolved where they are static.

- mmengine ``_base_`` (a path or a list of paths, relative to the file): the bases are read
  (recursively), merged into one, and the file's own keys merged over them the way
  mmengine's ``Config._merge_a_into_b`` does: mappings merge key by key, anything else
  replaces, and a mapping with ``_delete_=True`` replaces the base's mapping whole.
- Hydra defaults lists (``defaults: [base, {dataset: imagenet}, _self_]``): each entry's
  file is merged at its group's package (a ``# @package`` header moves it), in list order,
  with the file's own keys where ``_self_`` stands (last when it is not listed), the way
  OmegaConf merges (mappings key by key, anything else replaces).
- OmegaConf interpolation: a value that is exactly ``${a.b}`` (absolute) or ``${.x}`` /
  ``${..x}`` (relative) takes the referenced value; any other ``${...}`` (resolvers such as
  ``${oc.env:X}``, string concatenation) is unknown.

What cannot be read (a package-scoped base such as ``mmdet::x.py``, a missing file, a
default with options we do not follow) makes every mapping of the file *open*: a key it does
not write is unknown rather than absent, so rules stay silent, as with an unresolvable
``**`` splat in Python.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import lru_cache
from typing import Callable, TypeGuard

from dllint.configs.document import MAX_DEPTH as MAX_NESTING  # how deep merge goes into mappings
from dllint.configs.document import ConfigDocument, Entry, Mapping, Node, Scalar, Sequence, Span, Unknown, clone, lookup, walk
from dllint.files import Unreadable, default_limit, read_text

MAX_DEPTH = 16
INTERPOLATION = re.compile(r"^\$\{(?P<path>\.*[A-Za-z_][\w.\-]*|\.+)\}$")
PACKAGE_HEADER = re.compile(r"^#\s*@package\s+(?P<package>\S+)\s*$", re.M)

Reader = Callable[[str, int], "ConfigDocument | None"]


def resolve_document(document: ConfigDocument, *, depth: int = 0) -> ConfigDocument:
    """``document`` with its bases/defaults merged in and its static interpolations resolved."""
    root = document.root
    if isinstance(root, Mapping) and depth < MAX_DEPTH:
        if "_base_" in root.entries:
            root = _merge_mmengine_bases(document.path, root, depth)
        elif document.format == "yaml" and _defaults_list(root) is not None:
            root = _merge_hydra_defaults(document.path, root, depth)
    root = resolve_interpolations(root)
    return replace(document, root=root)


# -- reading other files --------------------------------------------------------------------
def read_config_file(path: str, depth: int) -> ConfigDocument | None:
    """A base/default file, itself resolved (its own bases, not yet interpolated: the
    interpolations of the composed result are resolved once, at the end). Read once per
    process and version of the file (hundreds of mmengine configs share a few bases); each
    caller gets its own copy of the tree to merge into."""
    if depth > MAX_DEPTH or path in _READING:  # a file that includes itself: unknown, as Hydra refuses it
        return None
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    _READING.add(path)
    try:
        document = _read_config_file(path, stat.st_mtime_ns, stat.st_size, depth, default_limit())
    finally:
        _READING.discard(path)
    return replace(document, root=clone(document.root)) if document is not None else None


_READING: set[str] = set()  # the bases being read now, one inside another: a cycle stops where it closes


@lru_cache(maxsize=512)
def _read_config_file(path: str, mtime_ns: int, size: int, depth: int, limit: int) -> ConfigDocument | None:
    try:
        text = read_text(path, limit)  # a regular file within max-file-size: never /dev/zero or a FIFO
    except (Unreadable, UnicodeDecodeError):
        return None
    document: ConfigDocument | None
    if path.endswith((".yaml", ".yml")):
        from dllint.configs.yaml_reader import read_yaml

        read = read_yaml(path, text)
        document = read if isinstance(read, ConfigDocument) else None
    elif path.endswith(".py"):
        from dllint.configs.python_reader import read_python_config

        document = read_python_config(path, text)
    else:
        return None
    if document is None or not isinstance(document.root, Mapping):
        return None
    root = document.root
    if "_base_" in root.entries:
        root = _merge_mmengine_bases(path, root, depth + 1)
    elif document.format == "yaml" and _defaults_list(root) is not None:
        root = _merge_hydra_defaults(path, root, depth + 1)
    return replace(document, root=root)


# -- merging --------------------------------------------------------------------------------
def merge(base: Node, child: Node, *, delete_key: bool) -> Node:
    """``child`` over ``base``: mappings key by key, anything else replaces."""
    return _merge(base, child, delete_key, {}, 0)


def _merge(base: Node, child: Node, delete_key: bool, done: dict[tuple[int, int], Node], depth: int) -> Node:
    """:func:`merge`, each pair of nodes merged once (aliases shared on both sides cost their
    size, a cycle ends) and no deeper than ``MAX_NESTING``."""
    if depth > MAX_NESTING:
        return child
    pair = (id(base), id(child))
    if pair in done:
        return done[pair]
    if not (isinstance(child, Mapping) and isinstance(base, Mapping)):
        return _strip_delete(child) if delete_key else child
    if delete_key and _deletes(child):
        return _strip_delete(child)
    result = Mapping(child.span, dict(base.entries), child.path, child.flow, child.open or base.open, child.target, child.node)
    done[pair] = result
    for key, entry in child.entries.items():
        if delete_key and key == "_delete_":
            continue
        old = result.entries.get(key)
        value = _merge(old.value, entry.value, delete_key, done, depth + 1) if old is not None else entry.value
        if old is None and delete_key:
            value = _strip_delete(value)
        result.entries[key] = Entry(key, entry.key_span, value, entry.path, entry.node)
    if result.target is None:
        result.target = base.target
    return result


def _deletes(mapping: Mapping) -> bool:
    flag = mapping.get("_delete_")
    return isinstance(flag, Scalar) and flag.value is True


def _strip_delete(node: Node) -> Node:
    if isinstance(node, Mapping) and "_delete_" in node.entries:
        entries = {k: e for k, e in node.entries.items() if k != "_delete_"}
        return Mapping(node.span, entries, node.path, node.flow, node.open, node.target, node.node)
    return node


def open_all(node: Node) -> None:
    """Keys not written may come from what we could not read: absent becomes unknown."""
    for _, inner, _ in walk(node):
        if isinstance(inner, Mapping):
            inner.open = True


# -- mmengine -------------------------------------------------------------------------------
def _merge_mmengine_bases(path: str, root: Mapping, depth: int) -> Mapping:
    written = root.get("_base_")
    names: list[Node | None] = [written] if isinstance(written, Scalar) else list(written.items) if isinstance(written, Sequence) else [written]
    directory = os.path.dirname(os.path.abspath(path))
    base = Mapping(root.span, {}, path)
    complete = True
    for name in names:
        other = None
        if isinstance(name, Scalar) and isinstance(name.value, str) and "::" not in name.value and depth < MAX_DEPTH:
            other = read_config_file(os.path.normpath(os.path.join(directory, name.value)), depth + 1)
        if other is None or not isinstance(other.root, Mapping):
            complete = False
            break
        base.entries.update(other.root.entries)  # mmengine forbids the same key in two bases
    own = Mapping(root.span, {k: e for k, e in root.entries.items() if k != "_base_"}, root.path, root.flow, root.open)
    if not complete:
        open_all(own)
        return own
    merged = merge(base, own, delete_key=True)
    assert isinstance(merged, Mapping)
    return merged


# -- Hydra ----------------------------------------------------------------------------------
def _defaults_list(root: Mapping) -> Sequence | None:
    defaults = root.get("defaults")
    if not isinstance(defaults, Sequence):
        return None
    for item in defaults.items:
        if isinstance(item, Scalar) and isinstance(item.value, str):
            continue
        if isinstance(item, Mapping) and len(item.entries) == 1:
            continue
        return None  # not a Hydra defaults list: leave the key alone
    return defaults


def _merge_hydra_defaults(path: str, root: Mapping, depth: int) -> Mapping:
    defaults = _defaults_list(root)
    assert defaults is not None
    directory = os.path.dirname(os.path.abspath(path))
    own = Mapping(root.span, {k: e for k, e in root.entries.items() if k != "defaults"}, root.path, root.flow, root.open)
    chosen: list[tuple[str | None, str | None, bool, Span]] = []  # (group, option or file, optional, the item's place)
    for item in defaults.items:
        if isinstance(item, Scalar):
            chosen.append((None, item.value, False, item.span))
            continue
        (key, entry), = item.entries.items()  # type: ignore[union-attr]
        optional = key.startswith("optional ")
        key = key.removeprefix("optional ").removeprefix("override ").strip()
        option = entry.value.value if isinstance(entry.value, Scalar) else ...
        if option is ...:
            open_all(own)  # a list of options, an interpolated choice: not followed
            return own
        existing = [i for i, (group, _, _, _) in enumerate(chosen) if group == key]
        if existing:
            chosen[existing[0]] = (key, option, optional, item.span)
        else:
            chosen.append((key, option, optional, item.span))
    if not any(group is None and option == "_self_" for group, option, _, _ in chosen):
        chosen.append((None, "_self_", False, root.span))
    result: Node = Mapping(root.span, {}, path)
    for group, option, optional, item_span in chosen:
        if group is None and option == "_self_":
            result = merge(result, own, delete_key=False)
            continue
        if option is None or (group or "").lstrip("/").startswith("hydra"):
            continue  # `dataset: null` selects nothing; Hydra's own settings hold no loader
        found = _find_default(directory, group, str(option))
        other = read_config_file(found, depth + 1) if found is not None else None
        if found is None or other is None or not isinstance(other.root, Mapping):
            if found is None and optional:
                continue
            merged = merge(result, own, delete_key=False)
            open_all(merged)
            assert isinstance(merged, Mapping)
            return merged
        package = _package(other.text, group)
        placed: Node = other.root
        for step in reversed(package):
            # The group's key is written by this file's defaults line (`- loader: fast`): a finding
            # about the block as a whole (DL206 with `accelerator: gpu` from another default) goes there.
            placed = Mapping(other.root.span, {step: Entry(step, item_span, placed, path)}, found)
        result = merge(result, placed, delete_key=False)
    assert isinstance(result, Mapping)
    return result


def _find_default(directory: str, group: str | None, option: str) -> str | None:
    relative = option if group is None else os.path.join(group.lstrip("/"), option)
    for _ in range(3):  # the file's directory, then the config root above a group directory
        for suffix in (".yaml", ".yml", ""):
            candidate = os.path.join(directory, relative + suffix)
            if os.path.isfile(candidate):
                return candidate
        directory = os.path.dirname(directory)
    return None


def _package(text: str, group: str | None) -> list[str]:
    header = PACKAGE_HEADER.search(text[:2000])
    package = header.group("package") if header else "_group_"
    if package == "_global_":
        return []
    if package == "_group_":
        return [p for p in (group or "").lstrip("/").split("/") if p]
    return [p for p in package.replace("_group_", (group or "").replace("/", ".")).split(".") if p]


# -- interpolation --------------------------------------------------------------------------
def resolve_interpolations(root: Node) -> Node:
    """Replace static ``${...}`` values in place (positions stay where the value is written);
    each container is visited once (:func:`~dllint.configs.document.walk`)."""
    interpolator = _Interpolator(root)
    for path, node, _ in walk(root):
        interpolator.visit(node, tuple(step[1:-1] if step.startswith("[") else step for step in path))
    return root


def _interpolated(node: Node) -> TypeGuard[Scalar]:
    return isinstance(node, Scalar) and isinstance(node.value, str) and "${" in node.value


class _Interpolator:
    def __init__(self, root: Node) -> None:
        self.root = root

    def visit(self, node: Node, path: tuple[str, ...]) -> None:
        """Resolve the interpolated scalars directly in ``node``, a container at ``path``."""
        if isinstance(node, Mapping):
            for entry in node.entries.values():
                if _interpolated(entry.value):
                    entry.value = self.resolve(entry.value, path, 0)
        elif isinstance(node, Sequence):
            for index, item in enumerate(node.items):
                if _interpolated(item):
                    node.items[index] = self.resolve(item, path, 0)

    def resolve(self, scalar: Scalar, parent: tuple[str, ...], depth: int) -> Node:
        match = INTERPOLATION.match(scalar.value.strip())
        if match is None or depth > MAX_DEPTH:
            return Unknown(scalar.span, scalar.path, scalar.node)
        reference = match.group("path")
        if reference.startswith("."):
            dots = len(reference) - len(reference.lstrip("."))
            base = parent[: len(parent) - (dots - 1)] if dots - 1 <= len(parent) else None
            if base is None:
                return Unknown(scalar.span, scalar.path, scalar.node)
            steps = list(base) + [s for s in reference[dots:].split(".") if s]
        else:
            steps = reference.split(".")
        target = lookup(self.root, steps)
        if isinstance(target, Scalar):
            if isinstance(target.value, str) and "${" in target.value:
                target = self.resolve(target, tuple(steps[:-1]), depth + 1)
                if not isinstance(target, Scalar):
                    return Unknown(scalar.span, scalar.path, scalar.node)
            return Scalar(scalar.span, target.value, scalar.path, scalar.node)
        return Unknown(scalar.span, scalar.path, scalar.node)
