"""Harnesses forked from a template (dllint/probe/template.py, dllint/probe/launch.py): the same report as a new
interpreter's, a fall back to one whenever the template cannot serve, exit statuses as Popen gives them, and no
process left behind. Real torch, real DataLoader workers, a real template process.

Which path ran is read from the script's own words: it prints its parent's pid on stderr (the report's
stderr tail), which is the template's when forked and this process's when started anew.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "probe"))
from probe_helpers import checks_settings, finding, line_of, live_children, write_script  # noqa: E402

from dllint.probe import run_probe  # noqa: E402
from dllint.probe.context import Settings  # noqa: E402
from dllint.probe.launch import TEMPLATE_ENV, ForkedHarness, can_fork, start_harness  # noqa: E402
from dllint.probe.runner import _child_environment  # noqa: E402

pytestmark = pytest.mark.skipif(not can_fork(), reason="templates are Linux only")

PARENT = "harness parent:"
SCRIPT = f"""
print("{PARENT}", os.getppid(), file=sys.stderr)

class Drawn(Dataset):  # each worker gets a copy of one generator: their draws repeat (DL304)
    def __init__(self, length=8):
        self.length = length
        self.rng = random.Random(0)

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        value = self.rng.random()
        return torch.tensor([value])


if __name__ == "__main__":
    data = TensorDataset(torch.arange(16.0))
    forgotten = DistributedSampler(data, num_replicas=1, rank=0)
    forgotten_loader = DataLoader(data, batch_size=4, sampler=forgotten)
    for epoch in range(3):
        for batch in forgotten_loader:
            pass
    for batch in DataLoader(Drawn(), batch_size=2, num_workers=2):
        pass
    print("done")
"""


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    """The module's template, started again after a test stopped it (each start imports torch: a few
    CPU-seconds, once for the module rather than once per test)."""
    from dllint.probe.template import start_template

    started = []

    def live():
        if not started or started[-1].process.poll() is not None:
            started.append(start_template(str(tmp_path_factory.mktemp("t")), ("PYTEST_CURRENT_TEST",)))
        return started[-1]

    yield live
    for template in started:
        template.stop()


@pytest.fixture
def template(templates):
    return templates()


@pytest.fixture
def forking(template, monkeypatch):
    monkeypatch.setenv(TEMPLATE_ENV, template.socket_path)
    return template


def probed(tmp_path: Path):
    tmp_path.mkdir(exist_ok=True)
    script = write_script(tmp_path, SCRIPT)
    findings = [finding("DL301", script, line_of(script, "forgotten_loader = ")),
                finding("DL304", script, line_of(script, "num_workers=2):"))]
    report = run_probe(str(script), [], findings, timeout=60, progress=False, settings=checks_settings())
    return report, findings


def parent_of_harness(report) -> int:
    said = [line for line in report.stderr_tail if line.startswith(PARENT)]
    assert said, report.stderr_tail
    return int(said[0].split()[-1])


def outcome(report, findings):
    """What a run found: verdicts, loaders, how the script ended."""
    return ([(f.code, f.line, f.probe["verdict"]) for f in findings],
            [(os.path.basename(loader.call_site), loader.summary["num_workers"]) for loader in report.loaders],
            report.status, report.script_outcome, report.leftover_processes)


def test_a_forked_harness_gives_the_report_of_a_new_interpreter(tmp_path, forking, monkeypatch):
    forked, forked_findings = probed(tmp_path / "forked")
    assert parent_of_harness(forked) == forking.pid
    monkeypatch.delenv(TEMPLATE_ENV)
    fresh, fresh_findings = probed(tmp_path / "fresh")
    assert parent_of_harness(fresh) == os.getpid()
    assert outcome(forked, forked_findings) == outcome(fresh, fresh_findings)
    assert [f.probe["verdict"] for f in forked_findings] == ["confirmed", "confirmed"]
    assert forked.status == "completed" and forked.script_outcome == "the script ran to its end"
    assert forked.startup_s < fresh.startup_s  # torch was imported already
    assert live_children() == []


def test_an_environment_that_differs_from_the_templates_starts_a_new_interpreter(tmp_path, forking, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # read by torch at import: a forked harness would not have it
    report, findings = probed(tmp_path)
    assert parent_of_harness(report) == os.getpid()
    assert [f.probe["verdict"] for f in findings] == ["confirmed", "confirmed"]


@pytest.mark.parametrize("how", ["stopped", "missing", "not a socket"])
def test_no_live_template_starts_a_new_interpreter(tmp_path, forking, monkeypatch, how):
    if how == "stopped":
        forking.stop()
    elif how == "missing":
        monkeypatch.setenv(TEMPLATE_ENV, str(tmp_path / "no-such.sock"))
    else:
        (tmp_path / "file").write_text("")
        monkeypatch.setenv(TEMPLATE_ENV, str(tmp_path / "file"))
    report, findings = probed(tmp_path / "run")
    assert parent_of_harness(report) == os.getpid()
    assert report.status == "completed" and [f.probe["verdict"] for f in findings] == ["confirmed", "confirmed"]


OWNER = """
import sys
from dllint.probe.template import start_template

template = start_template(sys.argv[1], ("PYTEST_CURRENT_TEST",))
print(template.socket_path, flush=True)
sys.stdin.read()
template.stop()
"""


def test_a_template_another_process_started_is_not_used(tmp_path, monkeypatch):
    """Its harness would not be this process's descendant (nor would the probe's cleanup find it): the
    environment is the same, the template declines nothing, and yet a new interpreter runs."""
    # os.environ, not the C environment pytest's process has (COLUMNS and LINES set below Python's sight)
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        monkeypatch.setenv(TEMPLATE_ENV, owner.stdout.readline().strip())
        report, findings = probed(tmp_path / "run")
    finally:
        owner.stdin.close()
        owner.wait(timeout=60)
    assert parent_of_harness(report) == os.getpid()
    assert report.status == "completed" and [f.probe["verdict"] for f in findings] == ["confirmed", "confirmed"]


# -- the handle: exit statuses as Popen reports them -------------------------------------------------------


def harness_command(tmp_path: Path, body: str):
    """A harness command and environment as the runner makes them, for a script of ``body``."""
    tmp_path.mkdir(exist_ok=True)
    script = write_script(tmp_path, body)
    scratch = tmp_path / "scratch"
    (scratch / "tmp").mkdir(parents=True)
    config = {"mode": "script", "script": str(script), "args": [], "timeout": 60, "scratch": str(scratch),
              "settings": asdict(Settings()), "findings": [], "events": str(tmp_path / "events.jsonl"),
              "stderr": str(tmp_path / "stderr"), "rank_dir": str(tmp_path / "ranks")}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "events.jsonl").touch()
    command = [sys.executable, "-m", "dllint.probe.harness_main", str(tmp_path / "config.json")]
    return command, _child_environment(str(scratch), config["events"])


def started(tmp_path: Path, body: str, fork: bool):
    command, environment = harness_command(tmp_path, body)
    if not fork:
        environment.pop(TEMPLATE_ENV, None)
    with open(tmp_path / "stdout", "wb") as stdout, open(tmp_path / "stderr", "wb") as stderr:
        process = start_harness(command, stdout, stderr, environment)
    assert isinstance(process, ForkedHarness) == fork
    return process


ENDINGS = {
    "ran to its end": ("print('ok')", 0),
    "os._exit(3)": ("os._exit(3)", 3),
    "sys.exit(4)": ("sys.exit(4)", 0),  # the harness reports the script's exit, then leaves with 0 itself
    "killed by a signal": ("os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_exit_status_is_popens(tmp_path, forking, ending):
    body, expected = ENDINGS[ending]
    statuses = [started(tmp_path / name, f"import signal\n{body}\n", fork).wait(timeout=60)
                for name, fork in (("forked", True), ("fresh", False))]
    assert statuses == [expected, expected]


def test_a_harness_that_cannot_start_exits_1_with_its_traceback(tmp_path, forking):
    for name, fork in (("forked", True), ("fresh", False)):
        command, environment = harness_command(tmp_path / name, "")
        command[-1] = str(tmp_path / "no-such-config.json")
        if not fork:
            environment.pop(TEMPLATE_ENV)
        with open(tmp_path / f"{name}.err", "wb") as stderr:
            process = start_harness(command, stderr, stderr, environment)
        assert process.wait(timeout=60) == 1
        assert "FileNotFoundError" in (tmp_path / f"{name}.err").read_text()


BLOCKS = "time.sleep(600)"


def test_poll_kill_and_wait_with_a_timeout(tmp_path, forking):
    process = started(tmp_path, BLOCKS, fork=True)
    assert process.poll() is None
    with pytest.raises(Exception, match="timed out"):
        process.wait(timeout=0.2)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM
    assert process.poll() == -signal.SIGTERM


def test_closing_the_connection_kills_a_running_harness(tmp_path, forking):
    process = started(tmp_path, BLOCKS, fork=True)
    harness = psutil.Process(process.pid)
    process.close()
    harness.wait(timeout=30)  # psutil waits on a process that is not its child
    assert not harness.is_running() or harness.status() == psutil.STATUS_ZOMBIE


def test_no_process_is_left_when_the_template_stops(tmp_path, forking):
    body = f"import subprocess\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n{BLOCKS}\n"
    handles = [started(tmp_path / name, body, fork=True) for name in ("one", "two")]  # dropped, they kill theirs
    harnesses = [psutil.Process(handle.pid) for handle in handles]
    deadline = time.monotonic() + 60
    while len(children := descendants(harnesses)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    everything = [*harnesses, *children]
    assert len(everything) == 4
    forking.stop()
    assert forking.process.returncode == 0
    gone, alive = psutil.wait_procs(everything, timeout=30)
    assert alive == []
    assert live_children() == []
    assert not os.path.exists(forking.socket_path)


def descendants(processes: list[psutil.Process]) -> list[psutil.Process]:
    found = []
    for process in processes:
        try:
            found += process.children(recursive=True)
        except psutil.Error:  # a child that ended while psutil read it
            continue
    return found


OWNER_THAT_FORKS = """
import os, pathlib, sys, time
sys.path.insert(0, sys.argv[2])
from test_probe_template import harness_command
from dllint.probe.launch import TEMPLATE_ENV, start_harness
from dllint.probe.template import start_template

directory = pathlib.Path(sys.argv[1])
template = start_template(str(directory))
os.environ[TEMPLATE_ENV] = template.socket_path
command, environment = harness_command(directory / "run", "time.sleep(600)")
with open(directory / "output", "wb") as output:
    harness = start_harness(command, output, output, environment)
print(template.pid, harness.pid, type(harness).__name__, flush=True)
time.sleep(600)
"""


def test_the_template_and_its_harnesses_die_with_their_owner(tmp_path):
    """A SIGKILLed owner (dllint) leaves nothing: the kernel kills the template, then the harness."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER_THAT_FORKS, str(tmp_path), str(Path(__file__).parent)],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        template, harness, kind = owner.stdout.readline().split()
        assert kind == "ForkedHarness"
        processes = [psutil.Process(int(template)), psutil.Process(int(harness))]
    finally:
        owner.kill()
        owner.wait()
    gone, alive = psutil.wait_procs(processes, timeout=30)
    assert alive == []
