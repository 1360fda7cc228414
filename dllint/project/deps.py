"""What a file's findings depend on, typed. The cache stores them as a ``dict[str, str]``
(path -> digest, so old entries still read); :func:`read` and :func:`record` are the only
places in the project layer that know that encoding (every part records through
:func:`record`). Outside it, ``dllint.configs.lint.config_deps`` still writes its own value
(``"config-file"``: a config read whole, which reads back as a summary whose digest never
matches, so the file is linted again).

- :class:`SummaryDep`: another file's content had this digest (its findings read its summary);
- :class:`ConfigDep`: a config file's bytes had this digest (a key read from it);
- :class:`CallersDep`: the lint asked which files name ``needle`` (and ``gate``): "the
  callers of f" is itself a dependency, so a new caller in a file the lint never read
  invalidates what was decided without it (:meth:`ProjectIndex.reconcile`);
- :class:`LoaderClassesDep`: the lint was told that a name is no project DataLoader subclass
  by the names that may be one (:meth:`SearchIndex.loader_class_names`), which had this digest:
  any file may change them, so :meth:`ProjectIndex.reconcile` keeps it true as for a CallersDep.
"""

from __future__ import annotations

from typing import NamedTuple, Union

MENTIONS = "\0mentions:"  # the key prefix of a CallersDep (a NUL never starts a path)
CONFIG_DIGEST = "config:"  # the digest prefix of a ConfigDep
LOADER_CLASSES = "\0loader-classes"  # the key of a LoaderClassesDep


class SummaryDep(NamedTuple):
    path: str
    digest: str


class ConfigDep(NamedTuple):
    path: str
    digest: str


class CallersDep(NamedTuple):
    needle: bytes
    gate: bytes | None = None


class LoaderClassesDep(NamedTuple):
    digest: str


Dependency = Union[SummaryDep, ConfigDep, CallersDep, LoaderClassesDep]


def read(deps: dict[str, str]) -> list[Dependency]:
    """The typed dependencies of a stored ``deps`` mapping."""
    found: list[Dependency] = []
    for key, digest in deps.items():
        if key == LOADER_CLASSES:
            found.append(LoaderClassesDep(digest))
        elif key.startswith(MENTIONS):
            needle, _, gate = key[len(MENTIONS):].partition("\0")
            found.append(CallersDep(needle.encode("utf-8", "surrogateescape"), gate.encode() or None))
        elif digest.startswith(CONFIG_DIGEST):
            found.append(ConfigDep(key, digest))
        else:
            found.append(SummaryDep(key, digest))
    return found


def record(deps: dict[str, str], dependency: Dependency) -> None:
    """Add one dependency to a ``deps`` mapping."""
    if isinstance(dependency, CallersDep):
        gate = dependency.gate
        deps[MENTIONS + dependency.needle.decode("utf-8", "surrogateescape") + ("\0" + gate.decode() if gate else "")] = ""
    elif isinstance(dependency, LoaderClassesDep):
        deps[LOADER_CLASSES] = dependency.digest
    else:
        deps[dependency.path] = dependency.digest


def asks_callers(deps: dict[str, str]) -> bool:
    """Whether a lint asked a question of every project file (who names something, which names
    may be loader classes): its findings need :meth:`reconcile`."""
    return any(key.startswith(MENTIONS) or key == LOADER_CLASSES for key in deps)
