"""The probe on every rank of a distributed job.

Three places use this module:

- each rank's harness (the ranks of the user's launcher, see :mod:`dllint.probe.launched`, and the
  children the script starts itself, see :mod:`dllint.probe.rank_children`) writes its events
  through :class:`RankEvents`: tagged with the rank, loader ids renumbered so ranks never
  collide, and the rank's own ending kept in a file of its own;
- the rank-shards check (:mod:`dllint.probe.checks.rank_shards`) records, per loader, the sample
  indices this rank draws in an epoch, into the probe's scratch directory;
- the parent (:func:`cross_rank_events`) compares the ranks' records once the run is over:
  overlapping samples confirm DL305, identical streams DL302's rank half, the total of workers
  over all ranks against the usable cores DL207.

On one node the ranks exchange nothing but files in the scratch directory; ranks on other nodes
hand theirs to global rank 0 through the launcher's own store (:mod:`dllint.probe.launched`).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from dllint.probe.callsite import site_key as call_site_key
from dllint.probe.guard import EventFile
from dllint.probe.rank_env import rank_place

if TYPE_CHECKING:
    from dllint.probe.report import LoaderReport
    from dllint.probe.site import LoaderSite

# A rank's loader n is (slot + 1) * ID_STRIDE + n in the report. The slot is the rank under the
# launcher; children the script starts get slots in the order they start (two spawn calls give
# two rank 0s, which must not share ids).
ID_STRIDE = 1000
RANK_DIR = "ranks"  # under the probe's scratch directory
# A rank still running this long after another one ended is taken as hung (in a collective that
# waits for a rank that is gone) and killed with the rest.
HANG_GRACE_SECONDS = 5.0
MOST_INDICES = 1_000_000  # a bigger epoch is not recorded
STREAM_SAMPLES = 64  # samples of an IterableDataset compared across ranks

_rank: int | None = None  # this process's rank, once it runs as one
_slot: int = 0
_rank_directory: str | None = None
_node: int = 0  # the node this rank runs on (its launcher says; one node without a launcher)


def current_rank() -> int | None:
    """The rank this process runs as under the probe, or None outside a distributed probe."""
    return _rank


def current_slot() -> int:
    return _slot


def global_id(slot: int, loader_id: int) -> int:
    return (slot + 1) * ID_STRIDE + loader_id


def rank_dir(config: dict[str, Any]) -> str | None:
    return config.get("rank_dir")


def end_path(directory: str, rank: int) -> str:
    return os.path.join(directory, f"rank{rank}.end.json")


def heartbeat_path(directory: str, rank: int) -> str:
    """Rewritten at each event of the rank with the event's kind: when it last did something,
    and whether that was the start of a measurement (a ``progress`` event)."""
    return os.path.join(directory, f"rank{rank}.alive")


# -- a rank's event stream -----------------------------------------------------------------
class RankEvents:
    """What a rank's :class:`ProbeContext` writes its events to (it only calls ``write`` and
    ``flush``): each JSON line is tagged and renumbered, then appended to the run's events file;
    ``script_end`` and ``done`` go to the rank's end file, from which the launcher (or the
    parent) tells how every rank ended."""

    def __init__(self, events_path: str, directory: str, rank: int, slot: int, keep: bool = False) -> None:
        self.stream = EventFile(events_path)  # no descriptor left open for the script to write through
        self.directory = directory
        self.rank = rank
        self.slot = slot
        self.ending: dict[str, Any] = {"rank": rank}
        self.kept: list[str] | None = [] if keep else None  # the lines written, to hand to another node

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                self._event(json.loads(line))
        return len(text)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind in ("script_end", "done"):
            if kind == "script_end":
                self.ending.update({k: v for k, v in event.items() if k != "event"})
            else:
                self.ending["done"] = True
            _write_json(end_path(self.directory, self.rank), self.ending)
            return
        with open(heartbeat_path(self.directory, self.rank), "w", encoding="utf-8") as beat:
            beat.write(str(kind))
        event["rank"] = self.rank
        if kind == "loader":
            event["id"] = global_id(self.slot, event["id"])
            event["call_site"] = f"{event['call_site']} [rank {self.rank}]"
        elif isinstance(event.get("loader"), int):
            event["loader"] = global_id(self.slot, event["loader"])
        if kind == "result":
            event["evidence"] = f"rank {self.rank}: {event['evidence']}"
            event.setdefault("measurements", {})["rank"] = self.rank
        elif kind == "note":
            event["text"] = f"rank {self.rank}: {event['text']}"
        line = json.dumps(event, default=repr)
        if self.kept is not None:
            self.kept.append(line)
        self.stream.write(line + "\n")

    def note_unshared(self, text: str) -> None:
        self._event({"event": "note", "loader": None, "text": text})

    def append_lines(self, lines: list[str]) -> None:
        """Events another node's rank wrote (already tagged with its rank), as they were."""
        for line in lines:
            if line.strip():
                self.stream.write(line + "\n")

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def become_rank(rank: int, slot: int, directory: str, node: int = 0) -> None:
    """From here on this process runs as ``rank`` (its loaders numbered from ``slot``) on
    ``node``, writing its records under ``directory``."""
    global _rank, _slot, _rank_directory, _node
    _rank, _slot, _rank_directory, _node = rank, slot, directory, node


def ranks_on_node() -> int:
    """How many ranks share this node's cores: 1 outside a distributed probe; else what the launcher's
    environment says, else the process group's size (ranks a script starts itself run on one node)."""
    if _rank is None:
        return 1
    place = rank_place(os.environ)
    if place is not None and place.local_world:
        return place.local_world
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return int(dist.get_world_size())
    except Exception:  # no process group: the rank's own share cannot be known
        pass
    return 1


def cores_per_rank(cores: int) -> int:
    """This rank's share of the node's usable cores (all of them outside a distributed probe): the
    workers of every rank on the node share them (DL207)."""
    return max(1, cores // ranks_on_node())


def _write_json(path: str, data: dict[str, Any]) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(data, stream, default=repr)
    os.replace(temporary, path)  # readers never see half a file


# -- what the ranks drew (in each rank) -------------------------------------------------------
def site_key(site: LoaderSite) -> str:
    return call_site_key(site.call_site.path, site.call_site.line)


def record_draws(site: LoaderSite, directory: str, rank: int, record: dict[str, Any]) -> None:
    key = hashlib.sha1(site_key(site).encode()).hexdigest()[:12]
    _write_json(os.path.join(directory, f"draws-{key}.rank{rank}.json"), {"node": _node, **record})


def current_rank_dir() -> str | None:
    """Where this rank writes its records: the scratch directory's ``ranks/``."""
    return _rank_directory


# -- comparing the ranks (in the parent) ------------------------------------------------------
def cross_rank_events(directory: str) -> list[dict[str, Any]]:
    """Result events from comparing what the ranks drew at each loader site."""
    from dllint.probe.results import CONFIRMED, NOT_CONFIRMED

    by_site: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(glob.glob(os.path.join(directory, "draws-*.json"))):
        try:
            with open(path, encoding="utf-8") as stream:
                record = json.load(stream)
        except (OSError, ValueError):
            continue
        by_site.setdefault(record["site"], []).append(record)
    events = []
    for records in by_site.values():
        records.sort(key=lambda record: record["rank"])
        if len({record["rank"] for record in records}) < 2:
            continue
        first = records[0]
        base = {"event": "result", "anchors": [first["anchor"]],
                "loader": global_id(first.get("slot", first["rank"]), first["loader"])}
        ranks = ", ".join(str(record["rank"]) for record in records)
        if not all(record.get("distributed") for record in records):
            pass  # processes that are not one job may well read the same data
        elif first["kind"] == "map" and all(record.get("indices") is not None for record in records):
            verdict, evidence, measurements = _overlap(records, ranks, CONFIRMED, NOT_CONFIRMED)
            events.append({**base, "code": "DL305", "verdict": verdict, "evidence": evidence, "measurements": measurements})
        elif first["kind"] == "iterable" and all(record.get("samples") for record in records):
            streams = {tuple(record["samples"]) for record in records}
            if len(streams) == 1:
                evidence = (f"ranks {ranks} yield the same first {len(first['samples'])} samples: "
                            "the stream is not split by rank, every rank trains on all of it")
                events.append({**base, "code": "DL302", "verdict": CONFIRMED, "evidence": evidence,
                               "measurements": {"ranks": len(records), "samples_compared": len(first["samples"])}})
        events += _workers_per_node(records, base)
    return events


def _workers_per_node(records: list[dict[str, Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """DL207: the workers the ranks of each node start, against that node's usable cores."""
    from dllint.probe.results import CONFIRMED, NOT_CONFIRMED

    by_node: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        by_node.setdefault(record.get("node", 0), []).append(record)
    events = []
    for node, here in sorted(by_node.items()):
        total = sum(record["num_workers"] for record in here)
        if not total:
            continue
        cores = here[0]["cores"]
        each = " + ".join(str(record["num_workers"]) for record in here)
        verdict = CONFIRMED if total > cores else NOT_CONFIRMED
        relation = "more than" if total > cores else "within"
        where = f" on node {node}" if len(by_node) > 1 else ""
        evidence = f"{len(here)} ranks{where} start {each} = {total} worker processes, {relation} the {cores} usable cores"
        events.append({**base, "code": "DL207", "verdict": verdict, "evidence": evidence,
                       "measurements": {"ranks": len(here), "total_workers": total, "usable_cores": cores, "node": node}})
    return events


def _overlap(records: list[dict[str, Any]], ranks: str, confirmed: str,
             not_confirmed: str) -> tuple[str, str, dict[str, Any]]:
    seen: dict[int, int] = {}
    for record in records:
        for index in set(record["indices"]):
            seen[index] = seen.get(index, 0) + 1
    distinct = len(seen)
    shared = sum(1 for count in seen.values() if count > 1)
    sizes = [len(record["indices"]) for record in records]
    world = len(records)
    # DistributedSampler pads the last round with at most world - 1 repeated samples.
    verdict = confirmed if shared > max(world - 1, distinct // 100) else not_confirmed
    share = f"{100 * shared / distinct:.0f}%" if distinct else "0%"
    if verdict == confirmed:
        evidence = (f"ranks {ranks} draw {' + '.join(map(str, sizes))} samples in one epoch from {distinct} distinct: "
                    f"{shared} ({share}) drawn by more than one rank")
    else:
        evidence = (f"ranks {ranks} draw {' + '.join(map(str, sizes))} samples of {distinct} with {shared} drawn twice: "
                    "each rank has its own shard")
    return verdict, evidence, {"ranks": world, "samples_per_rank": sizes, "distinct": distinct, "shared": shared}


def started_ranks(directory: str) -> set[int]:
    """The ranks that emitted an event on this node (each has a heartbeat file), ended or not."""
    found = set()
    for path in glob.glob(os.path.join(directory, "rank*.alive")):
        number = os.path.basename(path)[len("rank"):-len(".alive")]
        if number.isdigit():
            found.add(int(number))
    return found


def rank_outcomes(directory: str) -> dict[int, dict[str, Any]]:
    outcomes = {}
    for path in glob.glob(os.path.join(directory, "rank*.end.json")):
        try:
            with open(path, encoding="utf-8") as stream:
                data = json.load(stream)
        except (OSError, ValueError):
            continue
        outcomes[int(data["rank"])] = data
    return outcomes


# -- one loader per site in the report ---------------------------------------------------------------
def merge_rank_loaders(loaders: list[LoaderReport]) -> list[LoaderReport]:
    """The report's loaders with each site's ranks merged into one entry: ``train.py:10 [ranks 0, 1]``,
    the results of every rank (their evidence names the rank), the slowest rank's first batch,
    each rank's tables titled with its rank. Loaders of a single process pass through."""
    from dllint.probe.report import LoaderReport
    from dllint.probe.results import Table

    groups: dict[str, list[LoaderReport]] = {}
    order: list[str] = []
    for loader in loaders:
        site = loader.call_site.rsplit(" [rank ", 1)[0] if loader.id >= ID_STRIDE else f"#{loader.id}"
        if site not in groups:
            order.append(site)
        groups.setdefault(site, []).append(loader)
    merged = []
    for site in order:
        group = sorted(groups[site], key=lambda loader: loader.id)
        if len(group) == 1 and group[0].id < ID_STRIDE:
            merged.append(group[0])
            continue
        rank_of = {id(loader): _rank_in_label(loader.call_site) for loader in group}
        ranks = ", ".join(str(rank_of[id(loader)]) for loader in group)
        times = [loader.first_batch_s for loader in group if loader.first_batch_s is not None]
        entry = LoaderReport(group[0].id, f"{site} [rank{'s' if len(group) > 1 else ''} {ranks}]", group[0].summary)
        entry.first_batch_s = max(times) if times else None
        entry.first_batch_error = _first_with_rank(group, rank_of, "first_batch_error")
        entry.construction_error = _first_with_rank(group, rank_of, "construction_error")
        entry.last_step = next((loader.last_step for loader in group if loader.last_step), None)
        entry.iterated_again = any(loader.iterated_again for loader in group)
        for loader in group:
            entry.results.extend(loader.results)
            entry.tables.extend(
                Table(f"rank {rank_of[id(loader)]}: {table.title}", table.columns, table.rows, table.chart)
                for table in loader.tables
            )
            entry.notes.extend(loader.notes)
            entry.failures.extend({**failure, "rank": rank_of[id(loader)]} for failure in loader.failures)
            entry.rank_steps[int(rank_of[id(loader)])] = loader.step
        # The report's data wait is the rank that waits most (each rank's is shown beside it).
        entry.step = max(entry.rank_steps.values(), key=lambda step: step.get("data_wait_fraction", -1.0))
        entry.results.sort(key=lambda result: (result.code, result.measurements.get("rank", -1)))
        agree_on_workers(entry)
        merged.append(entry)
    return merged


def agree_on_workers(entry: LoaderReport) -> None:
    """The ranks' sweeps of one loader site give one num_workers: the fewest any rank recommended that
    every rank measured (each rank swept within its share of the node's cores, so every rank's workers
    together stay within them). Every sweep result then says it, with what each rank measured."""
    sweeps = [result for result in entry.results if isinstance(result.measurements.get("sweep"), dict)]
    chosen = {result.measurements.get("rank", 0): result.measurements.get("recommended") for result in sweeps}
    counts = [count for count in chosen.values() if isinstance(count, int)
              and all(str(count) in result.measurements["sweep"] for result in sweeps)]
    if len(set(chosen)) < 2 or not counts:
        return
    agreed = min(counts)
    for result in sweeps:
        result.measurements["rank_recommended"] = {str(rank): count for rank, count in sorted(chosen.items())}
        result.measurements["recommended"] = agreed
    if len(set(chosen.values())) > 1:
        each = ", ".join(f"rank {rank}: {count}" for rank, count in sorted(chosen.items()))
        entry.notes.append(f"the ranks' sweeps recommended num_workers {each}: the block uses {agreed}, the "
                           "fewest, as every rank's workers share the node's cores")


def _rank_in_label(call_site: str) -> str:
    return call_site.rsplit(" [rank ", 1)[-1].rstrip("]")


def _first_with_rank(group: list[LoaderReport], rank_of: dict[int, str], field: str) -> str | None:
    for loader in group:
        value = getattr(loader, field)
        if value:
            return f"rank {rank_of[id(loader)]}: {value}"
    return None
