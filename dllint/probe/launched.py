"""The probe inside the ranks of the user's own launcher (``--launcher "torchrun ..."``).

dllint runs the launcher as the user would, with the script and its arguments appended, and the
probe's boot ``sitecustomize`` on every Python process it starts. In each process that is a rank
of the job running the target script (:func:`rank_place` finds its rank in the launcher's
environment: torchrun, accelerate and the DeepSpeed launcher set ``RANK``, torchrun its node as
``GROUP_RANK``, DeepSpeed as ``CROSS_RANK``; ``srun`` sets ``SLURM_PROCID``; Open MPI
``OMPI_COMM_WORLD_RANK``), :func:`run_if_rank` runs the script under
a harness of its own, as that rank, then ends the process with the script's exit status: the
interpreter never runs the script a second time. The launcher's own processes (torchrun's agent)
and any other program are left alone.

Cross-rank checks compare records the ranks write into the node's scratch directory. Ranks on
other nodes hand theirs, with their events and their ending, to global rank 0 through the job's
own store (torchrun's agent store, ``TORCHELASTIC_USE_AGENT_STORE``), so that the node of rank
0 reports every rank and nothing depends on a shared file system.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time
from typing import Any

from dllint.probe.rank_env import RankPlace, rank_place

LAUNCH_ENV = "DLLINT_PROBE_LAUNCH"  # the probe's config file, set by the parent for the launcher
STORE_PREFIX = "dllint/"
# How long global rank 0 waits, after its own end, for the ranks of other nodes to hand in theirs.
GATHER_SECONDS = 30.0


def is_target(config: dict[str, Any], argv: list[str]) -> bool:
    """Whether this interpreter was started to run the probed script (not the launcher's own code)."""
    if config.get("mode") != "script" or not argv or not argv[0]:
        return False
    try:
        return os.path.samefile(argv[0], config["script"])
    except OSError:
        return False


def run_if_rank() -> None:
    """Called by the boot ``sitecustomize``: run the script as a probed rank and exit, when this
    process is one; return at once otherwise."""
    config_path = os.environ.get(LAUNCH_ENV)
    place = rank_place(os.environ) if config_path else None
    if config_path is None or place is None:
        return
    try:
        with open(config_path, encoding="utf-8") as stream:
            config = json.load(stream)
    except (OSError, ValueError):
        return
    if not is_target(config, sys.argv):
        return
    del os.environ[LAUNCH_ENV]  # what the rank starts (workers, its own children) is not a rank
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))  # as the interpreter would, after site
    os._exit(_run(config, place))


def _run(config: dict[str, Any], place: RankPlace) -> int:
    import dllint.probe.ranks as ranks
    from dllint.probe.harness import install_harness

    directory = config["rank_dir"]
    os.makedirs(directory, exist_ok=True)
    ranks.become_rank(place.rank, place.rank, directory, place.node)
    events = ranks.RankEvents(config["events"], directory, place.rank, place.rank, keep=True)
    harness = install_harness(config, events)
    ctx = harness.ctx
    ctx.emit({"event": "rank_info", **place._asdict(), "host": _host()})
    outcome = harness.run_script(os.path.abspath(sys.argv[0]), sys.argv[1:])
    try:
        harness.finish()
    except BaseException as error:  # noqa: BLE001 - finishing must still report
        ctx.emit({"event": "note", "loader": None, "text": f"cleanup failed: {type(error).__name__}: {error}"})
    ctx.emit({"event": "script_end", **outcome})
    ctx.emit({"event": "done"})
    events.flush()
    share_across_nodes(place, directory, events, config)
    events.close()
    sys.stdout.flush()
    sys.stderr.flush()
    return exit_status(outcome)


def exit_status(outcome: dict[str, Any]) -> int:
    """What the rank exits with, so that the launcher sees it fail as it would without the probe."""
    how = outcome.get("how")
    if how == "error":
        return 1
    if how == "exit":
        code = outcome.get("code")
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


def _host() -> str:
    import socket

    return socket.gethostname()


# -- the job's store: the ranks of other nodes hand their records to global rank 0 ----------------
def job_store(timeout: float = 10.0) -> Any:
    """A client of the launcher's store, or None (no agent store: the single-node files suffice)."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() != "true":
        return None
    try:
        from datetime import timedelta

        # public, but torch.distributed lists no __all__: an error only where torch is read strictly (--strict)
        from torch.distributed import TCPStore  # type: ignore[attr-defined, unused-ignore]

        return TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                        timeout=timedelta(seconds=timeout))
    except (KeyError, ValueError, RuntimeError, OSError):
        return None


def share_across_nodes(place: RankPlace, directory: str, events: Any, config: dict[str, Any]) -> None:
    """A rank on another node than rank 0 hands in its records; rank 0 takes them in (only when
    the job spans nodes: on one node the scratch directory already holds every rank's)."""
    if place.world <= place.local_world:
        return
    store = job_store()
    if store is None:
        events.note_unshared("the launcher has no agent store: the ranks of other nodes are reported on their own nodes")
        return
    key = f"{STORE_PREFIX}{config.get('run_id', '')}/"
    if place.rank != 0:
        store.set(f"{key}node/{place.rank}", str(place.node))
        if place.node != 0:
            store.set(f"{key}records/{place.rank}", json.dumps(_own_records(directory, place.rank)))
            store.set(f"{key}events/{place.rank}", "\n".join(events.kept))
        store.set(f"{key}done/{place.rank}", "1")
        return
    deadline = time.monotonic() + GATHER_SECONDS
    for rank in range(1, place.world):
        if not _wait_for(store, f"{key}done/{rank}", deadline):
            events.note_unshared(f"rank {rank} handed nothing in within {GATHER_SECONDS:g} s of rank 0's end")
            continue
        if int(store.get(f"{key}node/{rank}")) == place.node:
            continue  # its files are here already
        _take_records(directory, json.loads(store.get(f"{key}records/{rank}")))
        events.append_lines(store.get(f"{key}events/{rank}").decode("utf-8").splitlines())


def _wait_for(store: Any, key: str, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if store.check([key]):
            return True
        time.sleep(0.1)
    return False


def _own_records(directory: str, rank: int) -> dict[str, str]:
    """This rank's files in the scratch directory (what it drew; how it ended), by name."""
    records = {}
    for path in glob.glob(os.path.join(directory, f"*.rank{rank}.json")) + glob.glob(os.path.join(directory, f"rank{rank}.end.json")):
        with open(path, encoding="utf-8") as stream:
            records[os.path.basename(path)] = stream.read()
    return records


def _take_records(directory: str, records: dict[str, str]) -> None:
    for name, text in records.items():
        if os.sep in name or name.startswith("."):
            continue  # only plain names, as _own_records writes them
        with open(os.path.join(directory, name), "w", encoding="utf-8") as stream:
            stream.write(text)
