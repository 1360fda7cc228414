"""What a check sees while it measures (child process only)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from dllint.probe.limits import Budget, MeasurementTimeout, time_limit
from dllint.probe.measure import describe_error
from dllint.probe.results import Anchor, Result, Table, skipped
from dllint.probe.site import LoaderSite


@dataclass
class StaticFinding:
    """The parts of a static finding the harness needs to decide what to measure."""

    code: str
    path: str
    line: int


@dataclass
class Settings:
    """What the probe measures, and how much evidence it gathers before it decides.

    The evidence sizes (``min_pairs`` ... ``sweep_seconds``) are internal, not options: the
    defaults are what a user's probe needs on a noisy machine (``--probe-timeout`` bounds the
    whole); the tests shrink them where the decision or the sweep is not what they test.
    """

    batches: int = 8  # batches per throughput measurement
    epoch_batches: int = 16  # batches per epoch of the script's real step (--probe-batches)
    max_epochs: int = 3  # real epochs per loader; later ones are handed out empty
    epochs: int = 2  # epochs per persistence measurement: the first starts workers, the second shows the restart
    start_methods: tuple[str, ...] = ("script", "spawn")  # persistence: "script" = this loader's own
    sweep_limit: int | None = None  # highest num_workers the sweep tries (None: requested and cores)
    cores: int | None = None  # usable cores the sweep assumes (None: this process's CPU affinity)
    measurement_seconds: float = 30.0  # most one measurement may take
    stop_after_idle_iterations: int = 6  # empty epochs (past the cap) with no new loader before the script is stopped
    trace: bool = False  # --probe-trace: epochs' marks and workers' batches go to the events (dllint.probe.trace)
    # The block's decision (dllint.probe.recommend.decide): pairs of whole-script runs, the script's
    # settings then the block's; at least min_pairs (one pair has no spread), at most most_pairs while
    # the spread hides the difference. most_pairs 0: no decision runs, the block unmeasured and the verdicts
    # the checks' own (for a test whose subject is not the decision: each pair runs the script twice).
    min_pairs: int = 2
    most_pairs: int = 4
    # The num_workers sweep (dllint.probe.checks.sweep): interleaved rounds, at least sweep_rounds, at
    # most sweep_most_rounds while its comparisons are within the noise; no new round starts after
    # sweep_seconds once sweep_rounds are in.
    sweep_rounds: int = 3
    sweep_most_rounds: int = 8
    sweep_seconds: float = 20.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        settings = cls(**data)
        settings.start_methods = tuple(settings.start_methods)
        return settings


class EventStream(Protocol):
    """Where the events go: a file, or a rank's :class:`dllint.probe.ranks.RankEvents`."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


@dataclass
class ProbeContext:
    budget: Budget
    settings: Settings
    mode: str  # "script" or "factory"
    findings: list[StaticFinding]
    events: EventStream
    stderr_path: str | None = None
    sites: list[LoaderSite] = field(default_factory=list)
    main_globals: dict[str, Any] = field(default_factory=dict)
    inside_probe: bool = False  # loaders built and iterated by checks bypass the harness hooks
    forced: dict[int, set[str]] = field(default_factory=dict)  # codes measured on a loader though no finding asked
    advisory: bool = False  # results reported now inform the recommendation only: never a runtime finding
    # how many ranks share this node's cores (1 outside a distributed probe; the harness sets ranks.ranks_on_node)
    ranks_on_node: Callable[[], int] = field(default=lambda: 1)

    # -- events -------------------------------------------------------------
    def emit(self, event: dict[str, Any]) -> None:
        event.setdefault("t", round(time.monotonic(), 3))  # when: the report's timeline and the benchmark's breakdown
        self.events.write(json.dumps(event, default=repr) + "\n")
        self.events.flush()

    def progress(self, site: LoaderSite | None, step: str) -> None:
        self.emit({"event": "progress", "loader": site.id if site else None, "step": step})

    def result(
        self,
        site: LoaderSite | None,
        code: str,
        verdict: str,
        evidence: str,
        measurements: dict[str, Any] | None = None,
        anchors: list[Anchor] | None = None,
    ) -> None:
        if self.advisory:
            measurements = {**(measurements or {}), "advisory": True}
        all_anchors = list(anchors or [])
        if site is not None:
            all_anchors.append(site.anchor)
        result = Result(code, verdict, evidence, measurements or {}, all_anchors, site.id if site else None)
        self.emit({"event": "result", **result.to_dict()})

    def table(self, site: LoaderSite, table: Table) -> None:
        self.emit({"event": "table", "loader": site.id, **table.to_dict()})

    # -- what to measure -------------------------------------------------------
    def requested(self, site: LoaderSite, codes: tuple[str, ...]) -> bool:
        """Whether a static finding of one of ``codes`` belongs to this loader.

        A finding inside the loader call is this loader's. One elsewhere in the
        same file (an argparse default, a sampler, a lambda) is every loader's
        in that file that does not claim it by span.
        """
        if any(code in self.forced.get(site.id, ()) for code in codes):
            return True
        for finding in self.findings:
            if finding.code not in codes or not _same_file(finding.path, site.call_site.path):
                continue
            if site.anchor.covers(finding.line):
                return True
            others = [other for other in self.sites if other is not site and _same_file(other.call_site.path, finding.path)]
            if not any(other.anchor.covers(finding.line) for other in others):
                return True
        return False

    # -- measuring -------------------------------------------------------------
    @contextmanager
    def measuring(self, site: LoaderSite | None, step: str, at_most: float | None = None) -> Iterator[None]:
        """Run one measurement under the harness bypass and its time slice."""
        self.progress(site, step)
        seconds = self.budget.slice(at_most or self.settings.measurement_seconds)
        was_inside = self.inside_probe
        self.inside_probe = True
        try:
            with time_limit(seconds, step):
                yield
        finally:
            self.inside_probe = was_inside

    def no_second_epoch(self, site: LoaderSite, code: str, what: str) -> None:
        """The verdict for a check that needed the script to iterate the loader again."""
        if self.mode == "factory":
            self.result(site, code, skipped("a factory target has no epoch loop to watch"), what)
        else:
            self.result(site, code, "not reached", f"the loader was iterated once; {what}")


def _same_file(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)


def out_of_time(error: BaseException) -> str:
    """The skipped verdict for a measurement that ran out of its time slice."""
    return skipped(describe_error(error) if not isinstance(error, MeasurementTimeout) else str(error))
