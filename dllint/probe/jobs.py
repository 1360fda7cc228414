"""The parent's side of ``--launcher`` and ``--nproc-per-node``: the user's launcher, run as is.

``--launcher "torchrun --standalone --nproc-per-node 4"`` (or ``accelerate launch``, ``deepspeed``,
``srun``, ``python -m torch.distributed.run``) is run with the script and its arguments
appended (after this interpreter for ``srun`` and ``mpirun``, which exec a program); every Python process it starts gets the probe's boot ``sitecustomize`` and the probe's
config (:data:`~dllint.probe.launched.LAUNCH_ENV`), and the ranks among them run the script
probed (:mod:`dllint.probe.launched`). ``--nproc-per-node N`` is ``--launcher "python -m
torch.distributed.run --standalone --nproc-per-node N"`` with this interpreter.

Failures are the launcher's: a rank that dies ends the job as the launcher ends it, and its exit
status and last words are in the report. One thing a launcher does not do is notice a rank hung
in a collective after the others ended; :class:`HangWatch` does, and the job is killed then
(srun is first asked to end its step: :func:`stop_launcher`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from typing import Any

from dllint.probe.errors import ProbeError
from dllint.probe.ranks import HANG_GRACE_SECONDS, heartbeat_path, rank_outcomes, started_ranks

# Launchers that start a program on every rank, not a Python script (torchrun, accelerate and
# deepspeed run the script with their own interpreter): the interpreter that runs dllint goes
# before the script, unless the command already names one (``srun -n 2 python``).
_PROGRAM_LAUNCHERS = frozenset({"srun", "mpirun", "mpiexec"})
_PYTHON = re.compile(r"python[0-9.]*(\.exe)?", re.IGNORECASE)


def launcher_command(launcher: str | None, nproc_per_node: int | None) -> list[str] | None:
    """The launcher's argv (the script and its arguments go after it), or None to run it alone."""
    if launcher is not None and nproc_per_node is not None:
        raise ProbeError("--launcher and --nproc-per-node cannot go together (put --nproc-per-node in the launcher's command)")
    if nproc_per_node is not None:
        if nproc_per_node < 1:
            raise ProbeError(f"--nproc-per-node must be at least 1, got {nproc_per_node}")
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc_per_node}"]
    if launcher is None:
        return None
    try:
        argv = shlex.split(launcher)
    except ValueError as error:
        raise ProbeError(f"--launcher {launcher!r}: {error}") from None
    if not argv:
        raise ProbeError("--launcher needs a command, e.g. --launcher \"torchrun --standalone --nproc-per-node 2\"")
    if os.path.basename(argv[0]) in _PROGRAM_LAUNCHERS and not any(_PYTHON.fullmatch(os.path.basename(word)) for word in argv[1:]):
        argv.append(sys.executable)  # srun execs what it is given: a script alone is "Permission denied"
    return argv


def stop_launcher(command: list[str], process: subprocess.Popen[bytes], patience: float = 3.0) -> None:
    """Before the job is killed (a hung rank, a timeout, Ctrl-C): let srun end its job step itself.
    Its tasks are slurmd's children, not its own: a srun killed outright leaves them running, and
    the job it made holding the node; on SIGTERM it cancels the step and exits (0.2 s on a local
    SLURM). Other launchers are killed with their process group as they are."""
    if os.path.basename(command[0]) != "srun" or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(patience)
    except subprocess.TimeoutExpired:
        pass  # killed with the rest


def launch_spec(spec: dict[str, Any], launcher: str | None, nproc_per_node: int | None) -> dict[str, Any]:
    """What a launcher adds to the harness config (script targets only)."""
    command = launcher_command(launcher, nproc_per_node)
    if command is None:
        return {}
    if spec["mode"] != "script":
        raise ProbeError("a launcher runs a script on several ranks; MODULE:FUNCTION targets run once")
    return {"launcher": command, "script": os.path.realpath(spec["script"])}


def shown(command: list[str]) -> str:
    """The launcher as the report names it (this interpreter as ``python``)."""
    return shlex.join("python" if word == sys.executable else word for word in command)


class HangWatch:
    """A rank still running, and silent, :data:`HANG_GRACE_SECONDS` after another rank of this node
    ended (and after its own last event; in a measurement, for the measurement's limit besides)
    is hung, most often in a collective that waits for a rank that is gone."""

    def __init__(self, directory: str, measuring_seconds: float) -> None:
        self.directory = directory
        self.measuring_seconds = measuring_seconds
        self.first_end: tuple[int, float] | None = None
        self.hung: dict[int, str] = {}

    def check(self) -> bool:
        """True when a rank is hung (then :attr:`hung` says which and why)."""
        outcomes = rank_outcomes(self.directory)
        ended = [rank for rank, outcome in outcomes.items() if outcome.get("done")]
        if not ended:
            return False
        if self.first_end is None:
            self.first_end = (min(ended), time.monotonic())
        for rank in sorted(started_ranks(self.directory)):
            if rank not in ended and self._silent(rank):
                self.hung[rank] = (f"still running and silent {HANG_GRACE_SECONDS:g} s after rank {self.first_end[0]} "
                                   "ended (hung, e.g. in a collective waiting for it); killed")
        return bool(self.hung)

    def _silent(self, rank: int) -> bool:
        assert self.first_end is not None
        grace, last = HANG_GRACE_SECONDS, self.first_end[1]
        try:
            beat = heartbeat_path(self.directory, rank)
            last = max(last, time.monotonic() - (time.time() - os.path.getmtime(beat)))
            with open(beat, encoding="utf-8") as stream:
                if stream.read() == "progress":
                    grace += self.measuring_seconds
        except OSError:
            pass
        return time.monotonic() - last > grace


def job_outcome(directory: str, returncode: int | None, hung: dict[int, str], launcher_words: list[str]) -> dict[str, Any]:
    """The run's ``script_end``: every rank's ending on this node (errors first), and the
    launcher's own exit and last words when it failed."""
    outcomes = rank_outcomes(directory)
    lines: list[tuple[int, str, str]] = []  # (order, how, text)
    # A rank the launcher stopped before it could write its ending (another rank failed) still
    # started: it is told as one that died without reporting, not left out.
    for rank in sorted(set(outcomes) | set(hung) | started_ranks(directory)):
        outcome = outcomes.get(rank)
        if rank in hung:
            lines.append((1, "killed", f"rank {rank}: {hung[rank]}"))
        elif outcome is None or not outcome.get("done"):
            lines.append((0, "error", f"rank {rank}: died without reporting"))
        else:
            where = f" at {outcome['location']}" if outcome.get("location") else ""
            lines.append((0 if outcome["how"] == "error" else 2, outcome["how"], f"rank {rank}: {outcome['detail']}{where}"))
    if not lines and returncode is None:
        return {"how": "launcher", "detail": "the launcher was still running, with no rank started, when the probe "
                "killed it", "location": None, "ranks": 0}
    if not lines:
        said = f"; it said: {launcher_words[-1]}" if launcher_words else ""
        return {"how": "launcher", "detail": f"the launcher exited with status {returncode} before any rank ran the script{said}",
                "location": None, "ranks": 0}
    hows = [how for _, how, _ in lines]
    if "error" in hows or "killed" in hows:
        how = "error"
    elif "timeout" in hows:
        how = "timeout"
    else:
        how = hows[0] if len(set(hows)) == 1 else ("stopped" if "stopped" in hows else hows[0])
    texts = [text for _, _, text in sorted(lines, key=lambda line: line[0])]
    details = {text.split(": ", 1)[1] for text in texts}
    if len(texts) > 1 and len(details) == 1 and how != "error":
        detail = f"every rank ({len(texts)}): {details.pop()}"
    else:
        detail = "; ".join(texts)
    if returncode not in (0, None) and not hung:
        detail += f"; the launcher exited with status {returncode}"
        if launcher_words:
            detail += f" ({launcher_words[-1]})"
    return {"how": how, "detail": detail, "location": None, "ranks": len(texts)}


def launcher_words(stderr_lines: list[str]) -> list[str]:
    """The launcher's own verdict among the last lines of stderr: torchrun's ``ChildFailedError``
    line, else the last line that names an error."""
    verdicts = [line.strip().rstrip(":") for line in stderr_lines if line.rstrip().endswith("Error:")]
    if verdicts:
        return verdicts[-1:]
    errors = [line.strip() for line in stderr_lines if "Error" in line or "error:" in line]
    return errors[-1:]


def node_notes(rank_infos: list[dict[str, Any]]) -> list[str]:
    """What this node's report covers: every rank (it holds global rank 0, which gathered the
    others), or its own ranks only."""
    if not rank_infos:
        return []
    world = max(info.get("world", 1) for info in rank_infos)
    nodes = sorted({info.get("node", 0) for info in rank_infos})
    if world <= 1 or len(rank_infos) >= world:
        return [] if len(nodes) <= 1 else [f"every rank ({world}) reported here, from nodes {', '.join(map(str, nodes))}"]
    own = ", ".join(str(info["rank"]) for info in rank_infos)
    if any(info["rank"] == 0 for info in rank_infos):
        return [f"ranks {own} of {world} reported: the others handed nothing in (see the notes above)"]
    return [f"this node ran ranks {own} of {world}; the report of every rank is made on the node that runs global rank 0"]
