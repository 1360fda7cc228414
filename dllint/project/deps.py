"""What a file's findings depend on, typed. The cache stores them as a ``dict[str, str]``
(path -> digest, so old entries still read); :func:`read` and :func:`record` are the only
places that know that encoding.

- :class:`SummaryDep`: another file's content had this digest (its findings read its summary);
- :class:`ConfigDep`: a config file's bytes had this digest (a key read from it);
- :class:`CallersDep`: the lint asked which files name ``needle`` (and ``gate``): "the
  callers of f" is itself a dependency, so a new caller in a file the lint never read
  invalidates what was decided without it (:meth:`ProjectIndex.reconcile`).
"""

from __future__ import annotations

from typing import NamedTuple, Union

MENTIONS = "\0mentions:"  # the key prefix of a CallersDep (a NUL never starts a path)
CONFIG_DIGEST = "config:"  # the digest prefix of a ConfigDep


class SummaryDep(NamedTuple):
    path: str
    digest: str


class ConfigDep(NamedTuple):
    path: str
    digest: str


class CallersDep(NamedTuple):
    needle: bytes
    gate: bytes | None = None


Dependency = Union[SummaryDep, ConfigDep, CallersDep]


def read(deps: dict[str, str]) -> list[Dependency]:
    """The typed dependencies of a stored ``deps`` mapping."""
    found: list[Dependency] = []
    for key, digest in deps.items():
        if key.startswith(MENTIONS):
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
    else:
        deps[dependency.path] = dependency.digest


def asks_callers(deps: dict[str, str]) -> bool:
    """Whether a lint asked who names something (its findings need :meth:`reconcile`)."""
    return any(key.startswith(MENTIONS) for key in deps)
