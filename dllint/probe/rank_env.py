"""Where a process sits in a distributed job, as its launcher's environment says: torchrun,
accelerate and the DeepSpeed launcher set ``RANK`` (torchrun names the node ``GROUP_RANK``,
DeepSpeed ``CROSS_RANK``), ``srun`` sets ``SLURM_PROCID``, Open MPI ``OMPI_COMM_WORLD_RANK``.
A leaf: :mod:`dllint.probe.launched` (the probe inside the ranks) and :mod:`dllint.probe.ranks`
(how many ranks share the node's cores) both read it."""

from __future__ import annotations

import os
from typing import NamedTuple


class RankPlace(NamedTuple):
    """Where a process sits in the job, as its launcher's environment says."""

    rank: int
    local_rank: int
    node: int
    world: int
    local_world: int


# (global rank, local rank, node, world size, ranks on this node), per launcher family.
_ENVIRONMENTS = (
    ("RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"),  # torchrun, accelerate
    ("RANK", "LOCAL_RANK", "CROSS_RANK", "WORLD_SIZE", "LOCAL_SIZE"),  # deepspeed.launcher.launch
    ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS", "SLURM_STEP_TASKS_PER_NODE"),  # srun
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_NODE_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),  # mpirun (Open MPI)
)
_SRUN = 2


def rank_place(environ: dict[str, str] | os._Environ[str]) -> RankPlace | None:
    """This process's place in the job, or None when no launcher made it a rank.

    The first family that names both the rank and the node wins (torchrun and DeepSpeed both set
    ``RANK``, each names the node its own way); else the first that names the rank.
    """
    found = [[_number(environ.get(name)) for name in names] for names in _ENVIRONMENTS]
    srun = found[_SRUN]
    srun[4] = _tasks_on_node(environ.get(_ENVIRONMENTS[_SRUN][4]), srun[2] or 0)  # a list, not a number
    with_rank = [values for values in found if values[0] is not None]
    if not with_rank:
        return None
    rank, local, node, world, local_world = next((values for values in with_rank if values[2] is not None), with_rank[0])
    assert rank is not None  # every candidate has one
    world = world if world is not None else rank + 1
    local = local if local is not None else rank
    local_world = local_world if local_world is not None else world
    node = node if node is not None else (rank // local_world if local_world else 0)
    return RankPlace(rank, local, node, world, local_world)


def _number(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def _tasks_on_node(text: str | None, node: int) -> int | None:
    """The tasks srun starts on ``node``, from its per-node list: ``"2(x3),1"`` is 2, 2, 2, 1
    (``SLURM_NTASKS_PER_NODE`` is set only by ``--ntasks-per-node``; this one always is)."""
    for item in (text or "").split(","):
        count, _, times = item.strip().rstrip(")").partition("(x")
        times = times or "1"
        if not count.isdigit() or not times.isdigit():
            return None
        if node < int(times):
            return int(count)
        node -= int(times)
    return None
