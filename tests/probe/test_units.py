"""Pure parts of the probe: pairing, the sweep's arithmetic, CUDA with CUDA mocked out."""

from __future__ import annotations

import subprocess
import sys
import types

from probe_helpers import finding

import pytest

from dllint.probe.checks import all_checks, codes_with_checks, cuda, sweep
from dllint.probe.pairing import attach_verdicts, runtime_findings
from dllint.probe.results import Anchor, Result


def test_importing_the_probe_and_its_checks_does_not_import_torch():
    code = (
        "import sys, dllint.probe\n"
        "from dllint.probe.checks import all_checks\n"
        "all_checks()\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_checks_are_discovered_and_declare_their_codes():
    names = {module.__name__.rsplit(".", 1)[-1] for module in all_checks()}
    assert {"config_errors", "spawn", "persistence", "sweep", "sampler", "sharding", "stale", "rng", "cuda"} <= names
    assert {"DL001", "DL101", "DL201", "DL202", "DL301", "DL302", "DL303", "DL304", "DL105", "DL206"} <= codes_with_checks()


def result(code, verdict, path, first, last, evidence="measured"):
    return Result(code, verdict, evidence, {}, [Anchor(path, first, last)])


def test_a_finding_inside_the_call_span_pairs_with_its_loaders_result(tmp_path):
    path = str(tmp_path / "train.py")
    inside = finding("DL201", path, 12)
    elsewhere = finding("DL201", path, 40)
    results = [result("DL201", "confirmed", path, 10, 13), result("DL201", "not confirmed", path, 40, 40)]
    assert attach_verdicts([inside, elsewhere], results, "unreached")[0] == []
    assert inside.probe["verdict"] == "confirmed"
    assert elsewhere.probe["verdict"] == "not confirmed"


def test_a_finding_outside_every_span_takes_its_files_results(tmp_path):
    path = str(tmp_path / "train.py")
    argparse_default = finding("DL202", path, 3)
    attach_verdicts([argparse_default], [result("DL202", "confirmed", path, 20, 22)], "unreached")
    assert argparse_default.probe["verdict"] == "confirmed"


def test_unmatched_findings_are_not_reached_or_skipped(tmp_path):
    path = str(tmp_path / "train.py")
    no_result = finding("DL201", path, 5)
    no_check = finding("DL108", path, 5)
    attach_verdicts([no_result, no_check], [], "the script built no DataLoader")
    assert no_result.probe == {"verdict": "not reached", "evidence": "the script built no DataLoader", "measurements": {}}
    assert no_check.probe["verdict"] == "skipped (no runtime check for DL108)"


def test_only_confirmed_unclaimed_results_become_runtime_findings(tmp_path):
    path = str(tmp_path / "data.py")
    unclaimed = [result("DL104", "confirmed", path, 7, 9, "cannot pickle '_thread.lock' object"),
                 result("DL302", "not confirmed", path, 3, 3)]
    (created,) = runtime_findings(unclaimed, {"DL104": "unpicklable-dataset-attribute"})
    assert (created.code, created.line, created.source, created.name) == ("DL104", 7, "runtime", "unpicklable-dataset-attribute")
    assert created.probe["verdict"] == "confirmed"


def test_sweep_counts_and_recommendation():
    assert sweep.worker_counts(requested=16, cores=2) == [0, 1, 2, 4, 16]
    assert sweep.worker_counts(requested=3, cores=6) == [0, 1, 2, 3, 4, 6]
    assert sweep.worker_counts(requested=16, cores=2, limit=4) == [0, 1, 2, 4]
    assert sweep.recommend({0: 100.0, 2: 960.0, 4: 1000.0, 8: 990.0}) == 2
    assert sweep.recommend({}) is None
    chart = sweep.render_chart({0: {"samples_per_s": 50.0, "peak_mb": 300.0},
                                2: {"samples_per_s": 100.0, "peak_mb": 420.0}}, 2)
    assert chart[1].count("#") == sweep.CHART_WIDTH and chart[0].count("#") == sweep.CHART_WIDTH // 2
    assert chart[1].endswith("<- recommended")


class RecordingContext:
    """The slice of ProbeContext the CUDA check uses."""

    def __init__(self):
        self.results = []
        self.stderr_path = None

    def requested(self, site, codes):
        return True

    def result(self, site, code, verdict, evidence, measurements=None, anchors=None):
        self.results.append((code, verdict, evidence))


def test_cuda_checks_are_skipped_without_cuda():
    ctx = RecordingContext()
    no_cuda = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    cuda.on_first_iteration(object(), ctx, torch=no_cuda)
    assert [(code, verdict) for code, verdict, _ in ctx.results] == [("DL105", "skipped (no CUDA)"), ("DL206", "skipped (no CUDA)")]


def test_pinned_copy_timing_runs_with_cuda_mocked_out():
    copies = []

    class FakeTensor:
        def pin_memory(self):
            copies.append("pin")
            return self

        def to(self, device, non_blocking=False):
            copies.append((device, non_blocking))
            return self

    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
    batch = {"image": FakeTensor(), "label": [FakeTensor()]}
    tensors = list(cuda.tensors_in(batch))
    assert len(tensors) == 2
    assert cuda.copy_seconds(tensors, fake_torch, pinned=True, repeats=2) >= 0
    assert copies.count("pin") == 2 and ("cuda", True) in copies


def test_above_the_cores_a_count_must_beat_the_noise():
    rates = {0: 100.0, 1: 190.0, 2: 260.0, 4: 275.0}
    assert sweep.recommend(rates, cores=2, spread={2: 0.02, 4: 0.02}) == 4  # +6% beats the 5% floor
    assert sweep.recommend(rates, cores=2, spread={2: 0.1, 4: 0.1}) == 2  # +6% is inside 10% noise
    assert sweep.recommend({**rates, 4: 400.0}, cores=2, spread={2: 0.1, 4: 0.1}) == 4  # +54% is a real gain
    assert sweep.recommend({0: 100.0, 4: 400.0}, cores=2) == 4  # nothing measured within the cores


def test_a_finding_inside_a_loader_call_takes_only_that_loaders_results(tmp_path):
    path = str(tmp_path / "train.py")
    train = finding("DL202", path, 10)
    other_loader = Result("DL202", "confirmed", "measured on the test loader", {}, [Anchor(path, 1, 10 ** 9)], loader=2)
    spans = {1: Anchor(path, 10, 11), 2: Anchor(path, 20, 21)}
    unclaimed, used = attach_verdicts([train], [other_loader], "unreached", spans)
    assert train.probe["verdict"] == "not reached"
    assert unclaimed == [other_loader] and used == set()


def test_the_call_span_without_co_positions_is_the_innermost_call_around_the_line(tmp_path):
    from dllint.probe.callsite import call_span_from_source

    path = tmp_path / "train.py"
    path.write_text("x = 1\nloader = DataLoader(data,\n    num_workers=2,\n    sampler=range(8))\n")
    assert call_span_from_source(str(path), 3) == (2, 4)
    assert call_span_from_source(str(path), 1) == (1, 1)


def test_a_module_function_target_is_found_from_the_working_directory_without_importing_it(tmp_path, monkeypatch):
    from dllint.probe.command import static_source

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (tmp_path / "pkg" / "data.py").write_text("def make_loader():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    assert static_source("pkg.data:make_loader") == str(tmp_path / "pkg" / "data.py")
    assert static_source("missing.module:make") is None


def test_exit_codes_say_what_happened():
    from dllint.probe.command import exit_code
    from dllint.probe.report import ProbeReport

    report = ProbeReport("train.py", "completed", "", [], [], 1.0)
    assert exit_code(report, []) == 0
    assert exit_code(report, [finding("DL201", "train.py", 1)]) == 1
    for status in ("timeout", "crashed"):  # measured less than it says: never a clean exit
        assert exit_code(ProbeReport("train.py", status, "", [], [], 1.0), []) == 2
    report.could_not_run = True
    assert exit_code(report, [finding("DL201", "train.py", 1)]) == 2
    report.signal = 15
    assert exit_code(report, []) == 143


def test_the_guard_redirects_writes_and_stops_other_changes(tmp_path, monkeypatch):
    from dllint.probe.guard import FileGuard, WriteStopped

    events = []
    user_file = tmp_path / "metrics.txt"
    user_file.write_text("before\n")
    guard = FileGuard(str(tmp_path / "scratch"), events.append)
    (tmp_path / "scratch").mkdir()
    with guard.open(str(user_file), "a") as stream:
        stream.write("after\n")
    assert user_file.read_text() == "before\n"
    with guard.open(str(user_file)) as stream:
        assert stream.read() == "before\nafter\n"  # the script reads back what it wrote
    with pytest.raises(WriteStopped, match="os.remove"):
        guard.audit("os.remove", (str(user_file), None))
    guard.audit("os.remove", (str(tmp_path / "scratch" / "x"), None))  # its own directory is free
    guard.audit("open", (str(user_file), "r", 0))  # reading is free
    assert [(event["action"], event["handled"]) for event in events] == [("open", "redirected"), ("os.remove", "stopped")]


def test_a_spawn_epoch_that_runs_out_of_time_is_a_lower_bound():
    from dllint.probe.checks import persistence

    timed_out = {"latencies": [], "at_least": 12.04}
    persistent = {"latencies": [12.5, 0.02]}
    assert persistence._later(timed_out) == (12.04, True)
    assert persistence._row("spawn", "off", timed_out, 2) == ["spawn", "off", "> 12.0", "-", "> 12.0 s"]
    fresh = persistence._fresh_start(persistent)
    assert persistence._later(fresh) == (12.5, False)  # a non-persistent epoch pays a fresh start
    assert persistence._later(persistence._fresh_start({"latencies": [], "at_least": 30.0})) == (30.0, True)
    pending = {"by_method": {"spawn": {"off": timed_out, "on": persistent}}, "workers": "2 workers"}
    assert persistence._evidence(pending) == "spawn: epoch start > 12.0 s -> 0.02 s (2 workers)"


def test_a_loaders_table_shows_only_rules_reported_for_it_or_confirmed_on_it():
    from dllint.probe.report import LoaderReport, ProbeReport

    loader = LoaderReport(1, "train.py:10", {"loader_class": "DataLoader"})
    loader.results = [Result("DL201", "confirmed", "measured", loader=1),
                      Result("DL107", "not confirmed", "nothing reported here", loader=1, shown=False)]
    text = ProbeReport("train.py", "completed", "ran", [], [loader], 1.0).render_text()
    assert "DL201" in text and "DL107" not in text


def test_a_watch_records_the_root_and_its_descendants_but_not_what_ran_before():
    import time

    import psutil

    from dllint.probe.processes import ProcessTree

    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    before = subprocess.Popen(sleeper)
    tree = ProcessTree()
    root = subprocess.Popen([sys.executable, "-c", f"import subprocess, time; subprocess.Popen({sleeper!r}); time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while not psutil.Process(root.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        (grandchild,) = psutil.Process(root.pid).children()
        tree.watch(root.pid)
        assert {root.pid, grandchild.pid} <= set(tree.seen) and before.pid not in tree.seen
    finally:
        for process in [before, root, *psutil.Process(root.pid).children(recursive=True)]:
            process.kill()
        for process in (before, root):
            process.wait()
