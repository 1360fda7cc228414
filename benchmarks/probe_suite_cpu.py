"""Where the suite's CPU goes: per test, its wall time, the CPU of the pytest process and the CPU of
the processes it started (the probe's harness, its workers, its reruns), by module and by xdist worker.

Wall time alone misleads on 2 shared cores: a probe test that sleeps (a dataset waiting on "storage")
holds an xdist worker without using a core, while a test that starts interpreters (each imports torch,
about 1.3 CPU-s) takes cores from every other worker. This plugin sums both.

Run the suite with it, then read the summary::

    PROBE_CPU_DIR=/tmp/cpu PYTHONPATH=benchmarks python -m pytest -n 2 --dist loadscope \\
        -m "not serial" -p probe_suite_cpu tests/probe tests/test_distributed_probe.py
    python benchmarks/probe_suite_cpu.py /tmp/cpu

Children's CPU is ``RUSAGE_CHILDREN``: descendants that were waited for, which under the probe is all
of them (the probe reaps its script's orphans as their subreaper). A harness forked from the worker's
template (tests/conftest.py, dllint/probe/template.py) is the template's child, reaped by it: its CPU
is read from the template's own count of its children, in the test that ran it (and the template's
own CPU with it); the template's total, counted by ``RUSAGE_CHILDREN`` when it is stopped, is not
counted twice. To count the interpreters started,
``strace -f -qq --seccomp-bpf -e trace=execve -o FILE`` around the same command.
"""

from __future__ import annotations

import collections
import glob
import os
import resource
import sys
import time
from collections.abc import Iterator
import pytest

DIR_ENV = "PROBE_CPU_DIR"


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """One row per test (setup, call and teardown: a class's shared fixture lands on its first test)."""
    own, children = _cpu()
    templates = _templates()
    start = time.monotonic()
    yield
    wall = time.monotonic() - start
    own_after, children_after = _cpu()
    templates_after = _templates()
    forked = sum(cpu - templates.get(pid, 0.0) for pid, cpu in templates_after.items())
    stopped = sum(cpu for pid, cpu in templates.items() if pid not in templates_after)  # counted in earlier rows
    children_after += forked - stopped
    directory = os.environ.get(DIR_ENV, "probe_suite_cpu")
    os.makedirs(directory, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(directory, f"{worker}.tsv"), "a", encoding="utf-8") as rows:
        rows.write(f"{item.nodeid}\t{wall:.2f}\t{own_after - own:.2f}\t{children_after - children:.2f}\n")


def _templates() -> dict[int, float]:
    """This process's templates (children running dllint.probe.template): their CPU and their reaped harnesses'."""
    import psutil

    found = {}
    for child in psutil.Process().children():
        try:
            if child.cmdline()[1:3] == ["-m", "dllint.probe.template"]:
                times = child.cpu_times()
                found[child.pid] = times.user + times.system + times.children_user + times.children_system
        except psutil.Error:  # ended meanwhile
            continue
    return found


def _scope(nodeid: str) -> str:
    """The unit xdist's loadscope sends to one worker: the class, else the module."""
    parts = nodeid.split("::")
    return "::".join(parts[:2]) if len(parts) > 2 else parts[0]


def summarise(directory: str, top: int = 25) -> None:
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    tests: list[tuple[float, float, str]] = []
    own_total = children_total = 0.0
    for path in sorted(glob.glob(os.path.join(directory, "*.tsv"))):
        busy, scopes = 0.0, dict[str, float]()
        with open(path, encoding="utf-8") as rows:
            for row in rows:
                nodeid, *numbers = row.rstrip("\n").split("\t")
                wall, own, children = map(float, numbers)
                own_total, children_total = own_total + own, children_total + children
                module = modules[nodeid.split("::")[0]]
                module[0], module[1], module[2] = module[0] + own + children, module[1] + wall, module[2] + 1
                tests.append((own + children, wall, nodeid))
                busy += wall
                scopes[_scope(nodeid)] = scopes.get(_scope(nodeid), 0.0) + wall
        longest = sorted(((wall, scope) for scope, wall in scopes.items()), reverse=True)[:3]
        print(f"{os.path.basename(path)}: busy {busy:.0f} s; longest scopes "
              + ", ".join(f"{scope} {wall:.0f} s" for wall, scope in longest))
    print(f"CPU: pytest processes {own_total:.0f} s, processes they started {children_total:.0f} s")
    print(f"\n{'CPU s':>7} {'wall s':>7} {'tests':>5}  module")
    for name, (cpu, wall, count) in sorted(modules.items(), key=lambda item: -item[1][0])[:top]:
        print(f"{cpu:7.1f} {wall:7.1f} {int(count):5d}  {name}")
    print(f"\n{'CPU s':>7} {'wall s':>7}  test")
    for cpu, wall, nodeid in sorted(tests, reverse=True)[:top]:
        print(f"{cpu:7.1f} {wall:7.1f}  {nodeid}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__)
        return 2
    summarise(args[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
