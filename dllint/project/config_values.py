"""Config values for the code: ``cfg.train_ds.num_workers`` read from the project's config
file(s) (the rule catalog "Config files": the config's value resolves the argument like an argparse
default does).

Which files a config comes from is the facts' answer (:mod:`dllint.facts.config_reads`);
this module finds them, reads them with :mod:`dllint.configs` (``_base_``, Hydra defaults
and ``${...}`` interpolation resolved), and looks the key up. Where several files could
supply it (an f-string path: one config per machine; a relative path that exists both under
the project root and beside the script), each is read and the value is known only when they
all agree. Every file read (and every candidate that is missing) is a dep of the linting
file with a ``config:`` digest of its bytes, so the cache lints the file again when a
config changes.
"""

from __future__ import annotations

import glob
import hashlib
import os
from typing import TYPE_CHECKING, Any

from dllint.configs.document import ConfigDocument, Mapping, Scalar, lookup, other_sources
from dllint.files import Unreadable, read_bytes, read_text
from dllint.findings import ConfigKey
from dllint.deps import ConfigDep, Deps

if TYPE_CHECKING:
    from dllint.facts.config_reads import ConfigRead

MAX_PROFILES = 16  # files one f-string path may name


def config_digest(path: str) -> str:
    """A config dep's current digest: its bytes (``*`` in ``path``: which files match)."""
    if "*" in path:
        return hashlib.sha256("\0".join(sorted(glob.glob(path))).encode()).hexdigest()
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except Unreadable:
        return "missing"


def candidates(read: ConfigRead, path: str, root: str, deps: Deps) -> list[str]:
    """The files ``read`` may come from, each recorded in ``deps``."""
    here = os.path.dirname(path)
    bases = [here] if read.source.relative_to == "file" else list(dict.fromkeys([root, here]))
    found: list[str] = []
    for pattern in read.source.patterns:
        for base in bases:
            full = os.path.normpath(os.path.join(base, pattern))
            deps.add(ConfigDep(full, config_digest(full)))
            if "*" in full:
                found += sorted(glob.glob(full))
            elif os.path.isfile(full):
                found.append(full)
    return list(dict.fromkeys(found))


def read_document(path: str, reader: str) -> ConfigDocument | None:
    """A config file as ``reader`` (:class:`~dllint.facts.config_reads.ConfigSource`) sees it:
    bases or a Hydra defaults list merged, ``${...}`` resolved, or as written."""
    from dllint.configs.inherit import read_config_file, resolve_interpolations

    if reader in ("hydra", "mmengine"):
        document = read_config_file(path, 0)
        if document is not None and reader == "hydra":
            resolve_interpolations(document.root)
        return document
    if not path.endswith((".yaml", ".yml")):
        return None
    from dllint.configs.document import clone
    from dllint.configs.yaml_reader import read_yaml

    try:
        read = read_yaml(path, read_text(path))
    except (Unreadable, UnicodeDecodeError):
        return None
    if not isinstance(read, ConfigDocument):
        return None
    if reader == "omegaconf":
        read.root = resolve_interpolations(clone(read.root))
    return read


def config_value(read: ConfigRead, path: str, root: str, deps: Deps) -> tuple[Any, ConfigKey] | None:
    """(value, the key it is written at) when every candidate file writes the same scalar."""
    files = candidates(read, path, root, deps)
    if not files or len(files) > MAX_PROFILES:
        return None
    values: list[Any] = []
    places: list[tuple[str, int]] = []
    shown = ""
    for file in files:
        document = read_document(file, read.source.reader)
        if document is None:
            return None
        for source in other_sources(document):
            deps.add(ConfigDep(source, config_digest(source)))
        node = lookup(document.root, list(read.keys))
        if not isinstance(node, Scalar) or not _known_parents(document, read.keys):
            return None
        if values and (type(node.value) is not type(values[0]) or node.value != values[0]):
            return None  # the profiles disagree: unknown
        values.append(node.value)
        places.append((os.path.relpath(node.path or file, root), node.span.line))
        shown = _written(document, node)
    key = ".".join(read.keys)
    return values[0], ConfigKey(key, shown, tuple(dict.fromkeys(places)))


def _known_parents(document: ConfigDocument, keys: tuple[str, ...]) -> bool:
    """No mapping on the way is open (an unread base could replace the value)."""
    node: Any = document.root
    for key in keys[:-1]:
        if not isinstance(node, Mapping) or node.open:
            return False
        node = node.get(key)
    return isinstance(node, Mapping) and not node.open


def _written(document: ConfigDocument, node: Scalar) -> str:
    """The value as the config's format writes it (``true`` in YAML, ``True`` in Python)."""
    value = node.value
    if document.format == "python":
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)
