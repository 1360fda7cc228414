"""What a file's findings depend on besides its own text, typed: one frozen record per kind,
collected in a :class:`Deps`. Every producer (the project's parts, the config readers) adds
records; :mod:`dllint.cache` alone turns them into its JSON and back.

- :class:`SummaryDep`: another file's content had this digest (its findings read its summary);
- :class:`ConfigDep`: a config file's bytes had this digest (a key read from it; for a path
  with ``*``, the digest of the files it matched);
- :class:`ConfigFileDep`: a config file's values came from this base file, read whole. It is no
  summary and has no digest, so findings that hold one are never trusted from the cache: a
  config that inherits is linted again (a changed base changes its findings);
- :class:`CallersDep`: the lint asked which files name ``needle`` (and ``gate``): "the
  callers of f" is itself a dependency, so a new caller in a file the lint never read
  invalidates what was decided without it (``ProjectIndex.reconcile``);
- :class:`LoaderClassesDep`: the lint was told that a name is no project DataLoader subclass
  by the names that may be one (``TextIndex.loader_class_names``), which had this digest:
  any file may change them, so ``reconcile`` keeps it true as for a CallersDep.

This module sits in the lowest layer: the facts, the configs and the project all record here.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar, Iterable, Iterator, Union


class _Record:
    """A frozen record: equality, hash and repr over its fields, and pickling (a worker sends
    deps back), written once here. (Five ``@dataclass(frozen=True, slots=True)`` classes cost
    every run, a one-file run too, 2 ms to define: a tenth of what such a run does besides.)"""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[attrgetter[Any]]  # (called with the record: one field's value, or a tuple of them)

    def __init_subclass__(cls) -> None:
        cls._fields = tuple(cls.__slots__)  # (each record names its fields in __slots__)
        cls._values = attrgetter(*cls._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) == self._values(other))

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, self._values(self)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__name__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{self.__class__.__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{self.__class__.__name__} is frozen")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return self.__class__, tuple(getattr(self, name) for name in self._fields)


_set = object.__setattr__  # (how a frozen record's __init__ sets its fields)


class SummaryDep(_Record):
    __slots__ = ("path", "digest")
    path: str
    digest: str

    def __init__(self, path: str, digest: str) -> None:
        _set(self, "path", path)
        _set(self, "digest", digest)


class ConfigDep(_Record):
    __slots__ = ("path", "digest")
    path: str
    digest: str

    def __init__(self, path: str, digest: str) -> None:
        _set(self, "path", path)
        _set(self, "digest", digest)


class ConfigFileDep(_Record):
    __slots__ = ("path",)
    path: str

    def __init__(self, path: str) -> None:
        _set(self, "path", path)


class CallersDep(_Record):
    __slots__ = ("needle", "gate")
    needle: bytes
    gate: bytes | None

    def __init__(self, needle: bytes, gate: bytes | None = None) -> None:
        _set(self, "needle", needle)
        _set(self, "gate", gate)


class LoaderClassesDep(_Record):
    __slots__ = ("digest",)
    digest: str

    def __init__(self, digest: str) -> None:
        _set(self, "digest", digest)


Dependency = Union[SummaryDep, ConfigDep, ConfigFileDep, CallersDep, LoaderClassesDep]
FileDep = (SummaryDep, ConfigDep, ConfigFileDep)  # the kinds that read one file


class Deps:
    """The dependencies one lint collected, in the order first recorded. A file counts once
    (the last reading of it wins: a summary read again after a change has the new digest), and
    so does each question; the records themselves are frozen."""

    __slots__ = ("_by_key",)

    def __init__(self, dependencies: Iterable[Dependency] = ()) -> None:
        self._by_key: dict[object, Dependency] = {}
        for dependency in dependencies:
            self.add(dependency)

    def add(self, dependency: Dependency) -> None:
        self._by_key[_key(dependency)] = dependency

    def update(self, other: Iterable[Dependency]) -> None:
        for dependency in other:
            self.add(dependency)

    def reads(self, path: str) -> bool:
        """Whether the lint read the file ``path`` (a summary, a config)."""
        return path in self._by_key

    __contains__ = reads

    def asks_callers(self) -> bool:
        """Whether the lint asked a question of every project file (who names something, which
        names may be loader classes): its findings need ``ProjectIndex.reconcile``."""
        return any(isinstance(d, (CallersDep, LoaderClassesDep)) for d in self)

    def paths(self) -> list[str]:
        """The files the lint read."""
        return [d.path for d in self if isinstance(d, FileDep)]

    def copy(self) -> Deps:
        return Deps(self)

    def __iter__(self) -> Iterator[Dependency]:
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        return len(self._by_key)

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deps) and self._by_key == other._by_key

    __hash__ = None  # type: ignore[assignment]  # mutable while a lint records

    def __repr__(self) -> str:
        return f"Deps({list(self)!r})"

    def __getstate__(self) -> list[Dependency]:  # sent from a worker process
        return list(self)

    def __setstate__(self, state: list[Dependency]) -> None:
        self._by_key = {}
        self.update(state)


def _key(dependency: Dependency) -> object:
    """What one entry is: a file by its path, a question by itself."""
    if isinstance(dependency, FileDep):
        return dependency.path
    return dependency
