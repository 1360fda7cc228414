"""``python -m dllint.probe.launch CONFIG.json``: the script on N ranks, as
``torchrun --standalone --nproc-per-node N`` runs it, with the probe's harness in every rank.

Each rank is a harness process with torchrun's environment (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1`` and a free ``MASTER_PORT`` on
loopback), in the launcher's process group, which the parent kills as one. As torchrun does, one
failed rank ends the job: the others are killed at once. A rank that stays
silent for :data:`~dllint.probe.ranks.HANG_GRACE_SECONDS` after another ended (and after its own
last event; a measurement in progress gets its time limit besides) is taken as hung in a
collective and killed too. The launcher then writes how every rank ended as the run's
``script_end``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from dllint.probe.ranks import HANG_GRACE_SECONDS, heartbeat_path, rank_outcomes

POLL_SECONDS = 0.05


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rank_environment(rank: int, world: int, port: int) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(world),
        GROUP_RANK="0",
        ROLE_RANK=str(rank),
        ROLE_WORLD_SIZE=str(world),
        OMP_NUM_THREADS=environment.get("OMP_NUM_THREADS", "1"),  # torchrun's default with several ranks
    )
    return environment


def run_ranks(config_path: str, config: dict[str, Any]) -> dict[str, Any]:
    world = int(config["nproc_per_node"])
    directory = config["rank_dir"]
    os.makedirs(directory, exist_ok=True)
    port = free_port()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "dllint.probe.harness_main", config_path],
            stdin=subprocess.DEVNULL, env=rank_environment(rank, world, port),
        )
        for rank in range(world)
    ]
    measuring_seconds = float(config.get("settings", {}).get("measurement_seconds", 30.0))
    killed: dict[int, str] = {}
    first_end: tuple[int, float] | None = None
    while any(process.poll() is None for process in processes):
        outcomes = rank_outcomes(directory)
        for rank, process in enumerate(processes):
            if process.poll() is None:
                continue
            if first_end is None:
                first_end = (rank, time.monotonic())
            if _failed(outcomes.get(rank), process.returncode):
                for other, survivor in enumerate(processes):
                    if survivor.poll() is None:
                        _kill(survivor)
                        killed.setdefault(other, f"killed when rank {rank} failed")
        if first_end is not None:
            for other, survivor in enumerate(processes):
                if survivor.poll() is None and _hung(directory, other, first_end[1], measuring_seconds):
                    _kill(survivor)
                    killed.setdefault(other, f"still running and silent {HANG_GRACE_SECONDS:g} s after rank {first_end[0]} ended "
                                             "(hung, e.g. in a collective waiting for it); killed")
        time.sleep(POLL_SECONDS)
    return combined_outcome(rank_outcomes(directory), [p.returncode for p in processes], killed)


def _hung(directory: str, rank: int, others_ended: float, measuring_seconds: float) -> bool:
    """Silent for the grace period since another rank ended and since its own last event; in the
    middle of a measurement (its last event started one), for the measurement's limit besides."""
    grace = HANG_GRACE_SECONDS
    last = others_ended
    try:
        beat = heartbeat_path(directory, rank)
        last = max(last, time.monotonic() - (time.time() - os.path.getmtime(beat)))
        with open(beat, encoding="utf-8") as stream:
            if stream.read() == "progress":
                grace += measuring_seconds
    except OSError:
        pass
    return time.monotonic() - last > grace


def _failed(outcome: dict[str, Any] | None, returncode: int | None) -> bool:
    if outcome is None or not outcome.get("done"):
        return True  # died without reporting: a crash of the interpreter, a kill
    return outcome.get("how") == "error" or bool(returncode)


def _kill(process: subprocess.Popen) -> None:
    try:
        process.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def combined_outcome(outcomes: dict[int, dict[str, Any]], returncodes: list[int | None],
                     killed: dict[int, str]) -> dict[str, Any]:
    """One ``script_end`` for the job: every rank's ending, errors first."""
    lines: list[tuple[int, str, str]] = []  # (order, how, text)
    for rank, returncode in enumerate(returncodes):
        outcome = outcomes.get(rank)
        if rank in killed:
            lines.append((1, "killed", f"rank {rank}: {killed[rank]}"))
        elif outcome is None or not outcome.get("done"):
            lines.append((0, "error", f"rank {rank}: died without reporting (exit code {returncode})"))
        else:
            where = f" at {outcome['location']}" if outcome.get("location") else ""
            lines.append((0 if outcome["how"] == "error" else 2, outcome["how"], f"rank {rank}: {outcome['detail']}{where}"))
    hows = [how for _, how, _ in lines]
    if "error" in hows or "killed" in hows:
        how = "error"  # a rank that crashed, or one that hung and was killed
    elif "timeout" in hows:
        how = "timeout"
    else:
        how = hows[0] if len(set(hows)) == 1 else ("stopped" if "stopped" in hows else hows[0])
    texts = [text for _, _, text in sorted(lines, key=lambda line: line[0])]
    details = {text.split(": ", 1)[1] for text in texts}
    if len(details) == 1 and how != "error":
        detail = f"every rank ({len(texts)}): {details.pop()}"
    else:
        detail = "; ".join(texts)
    return {"how": how, "detail": detail, "location": None, "ranks": len(texts)}


def main(config_path: str) -> None:
    with open(config_path, encoding="utf-8") as stream:
        config = json.load(stream)
    try:
        outcome = run_ranks(config_path, config)
    except BaseException as error:  # the launcher itself failing must still end the report
        outcome = {"how": "error", "detail": f"the launcher failed: {type(error).__name__}: {error}", "location": None}
    with open(config["events"], "a", encoding="utf-8") as events:
        events.write(json.dumps({"event": "script_end", **outcome}) + "\n")
        events.write(json.dumps({"event": "done"}) + "\n")
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
