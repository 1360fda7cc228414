"""Memory of every multi-worker loader: PSS of the main process and of each worker.

Runs on every loader the script iterates with ``num_workers > 0`` (no static finding needed):
a variant with the script's own arguments (workers not persistent; its order repeated, so
that a short epoch does not end first) delivers one batch per worker and the prefetched ones,
then the memory of the main process and of each of its workers is read. PSS splits pages
shared copy-on-write among their sharers, so forked workers are not counted once per worker;
where the system has no PSS (macOS) USS is read instead (pages only that process holds), and
the table says which.

On a machine with CUDA, a loader whose workers are started by spawn or forkserver pays a CUDA
context in every worker that touches CUDA (DL105 is silent for those loaders): the GPU memory
each worker process holds is read too (NVML through ``pynvml``, else ``nvidia-smi``).

Reports a table under the loader (``memory (PSS) of main + 2 workers``; in the JSON report
under ``loaders[i].tables``, numbers as numbers). The time-based checks that run after it on
the same loader (persistence, sweep) copy it into their results' measurements as ``memory``:
``{"kind": "pss"|"uss"|"rss", "main_mb", "workers_mb": [...], "total_mb", "per_worker_mb",
"cuda_mb_per_worker": [...] or None, "load_average"}`` (``memory_of(site)``).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING, Any

from dllint.probe.checks.gains import load_average
from dllint.probe.internals import worker_pids
from dllint.probe.measure import close_iterator, describe_error
from dllint.probe.results import Table

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

CODES: tuple[str, ...] = ()
ALWAYS = True
MB = 2**20


def process_bytes(pid: int | None = None) -> tuple[int, str] | None:
    """(bytes, "pss"|"uss"|"rss") of one process; None when it is gone."""
    import psutil

    try:
        process = psutil.Process(pid)
        try:
            info = process.memory_full_info()
        except (psutil.AccessDenied, OSError):
            return int(process.memory_info().rss), "rss"
        for kind in ("pss", "uss"):
            if hasattr(info, kind):
                return int(getattr(info, kind)), kind
        return int(info.rss), "rss"
    except psutil.Error:
        return None


def tree_memory(pids: list[int]) -> dict[str, Any]:
    """Main process plus the given workers, in MB."""
    main = process_bytes()
    workers = [found for pid in pids if (found := process_bytes(pid)) is not None]
    kind = main[1] if main else "pss"
    main_mb = (main[0] if main else 0) / MB
    workers_mb = [round(amount / MB, 1) for amount, _ in workers]
    return {
        "kind": kind,
        "main_mb": round(main_mb, 1),
        "workers_mb": workers_mb,
        "total_mb": round(main_mb + sum(workers_mb), 1),
        "per_worker_mb": round(sum(workers_mb) / len(workers_mb), 1) if workers_mb else None,
    }


def cuda_memory_by_pid(torch: Any) -> dict[int, int] | None:
    """GPU memory in use per process id (bytes), or None where it cannot be read."""
    if not torch.cuda.is_available():
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
        used: dict[int, int] = {}
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                used[process.pid] = used.get(process.pid, 0) + int(process.usedGpuMemory or 0)
        return used
    except Exception:  # no pynvml, or NVML not usable here: ask nvidia-smi
        return _nvidia_smi_memory()


def _nvidia_smi_memory() -> dict[int, int] | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    used: dict[int, int] = {}
    for line in out.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            used[int(parts[0])] = used.get(int(parts[0]), 0) + int(parts[1]) * MB
    return used


def spawned_workers(site: LoaderSite) -> bool:
    return site.start_method() in ("spawn", "forkserver")


def on_first_iteration(site: LoaderSite, ctx: ProbeContext, torch: Any = None) -> None:
    if site.num_workers == 0 or (site.first_batch is not None and site.first_batch.error):
        return
    if torch is None:
        import torch
    prefetch = site.arguments.get("prefetch_factor") or 2
    iterator = None
    try:
        with ctx.measuring(site, "memory of main + workers"):
            loader = site.endless_variant(persistent_workers=False)  # a short epoch must not end first
            iterator = iter(loader)
            for _ in range(site.num_workers * (1 + prefetch)):
                next(iterator)
            memory = tree_memory(worker_pids(iterator))
            cuda = cuda_memory_by_pid(torch) if spawned_workers(site) else None
            memory["cuda_mb_per_worker"] = ([round(cuda.get(pid, 0) / MB, 1) for pid in worker_pids(iterator)]
                                            if cuda is not None else None)
    except StopIteration:  # a short epoch: what the workers hold now is the answer
        memory = tree_memory(worker_pids(iterator)) | {"cuda_mb_per_worker": None}
    except Exception as error:  # memory is context, never a failure of the run
        ctx.emit({"event": "note", "loader": site.id, "text": f"memory not measured: {describe_error(error)}"})
        return
    finally:
        if iterator is not None:
            close_iterator(iterator)
    memory["load_average"] = load_average()
    site.state[__name__] = memory
    ctx.table(site, memory_table(site.num_workers, memory))


def memory_table(workers: int, memory: dict[str, Any]) -> Table:
    kind = memory["kind"].upper()
    row: list[Any] = [round(memory["main_mb"]), round(memory["per_worker_mb"] or 0), round(memory["total_mb"])]
    columns = [f"main {kind} MB", f"per worker {kind} MB", f"total {kind} MB"]
    if memory.get("cuda_mb_per_worker") is not None:
        columns.append("CUDA MB per worker")
        row.append(" ".join(f"{amount:.0f}" for amount in memory["cuda_mb_per_worker"]))
    return Table(f"memory ({kind}) of main + {workers} workers, after one batch per worker", columns, [row])


def memory_of(site: LoaderSite) -> dict[str, Any] | None:
    """The memory this check measured on ``site``, for other checks and the recommendation."""
    return site.state.get(__name__)
