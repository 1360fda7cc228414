"""A worker that crashes in a later epoch: the rule whose crash it is, from the evidence alone.

One script, three loaders with non-persistent workers whose dataset changes after epoch 1 (the
script sets ``loader.dataset.epoch``), so that the workers re-forked for epoch 2 fail: CUDA
re-initialised in a forked worker (DL105), a process pool started in a worker (DL108), and the
dataset's own ValueError (no rule's: the ending names it). The script runs twice under the probe
(real torch workers, fork): without static findings, and with the engine's own findings.
"""

from __future__ import annotations

import json

import pytest
from probe_helpers import checks_settings, line_of, write_script

from dllint.output import render
from dllint.output.summary import RunSummary
from dllint.probe import run_probe
from dllint.probe.crashes import crash_results
from dllint.probe.internals import crash_code
from dllint.probe.results import Anchor

from lint_helpers import lint_source

SCRIPT = """
    import multiprocessing

    MAIN = os.getpid()


    def initialise_cuda():
        # What `model.cuda()` leaves behind for workers forked afterwards, on a machine that may have
        # no GPU: torch marks every forked child a bad fork, and its own check raises there.
        torch.cuda._is_in_bad_fork = lambda: os.getpid() != MAIN


    class Staged(Dataset):
        epoch = 0

        def __len__(self):
            return 8

        def read(self):
            time.sleep(0.005)  # a read from storage: workers pay off, and the sweep keeps them


    class OnGpu(Staged):
        def __getitem__(self, index):
            self.read()
            if self.epoch > 0:
                torch.cuda.init()
            return torch.tensor([float(index)])


    class Pools(Staged):
        def __getitem__(self, index):
            self.read()
            if self.epoch > 0:
                with multiprocessing.Pool(1) as pool:
                    return torch.tensor(pool.map(float, [index]))
            return torch.tensor([float(index)])


    class Corrupt(Staged):
        def __getitem__(self, index):
            self.read()
            if self.epoch > 0:
                raise ValueError(f"sample {index} is corrupt")
            return torch.tensor([float(index)])


    def two_epochs(loader, between=None):
        for epoch in range(2):
            loader.dataset.epoch = epoch
            for batch in loader:
                time.sleep(0.01)
            if between is not None:
                between()


    if __name__ == "__main__":
        try:
            two_epochs(DataLoader(OnGpu(), batch_size=2, num_workers=1), initialise_cuda)
        except RuntimeError as error:
            print("falling back to the CPU:", error)
        try:
            two_epochs(DataLoader(Pools(), batch_size=2, num_workers=2))
        except AssertionError as error:
            print("no pool:", error)
        two_epochs(DataLoader(Corrupt(), batch_size=2, num_workers=2))
"""

CUDA_ERROR = "RuntimeError: Cannot re-initialize CUDA in forked subprocess"


def probe(script, findings, sweep_limit=2):
    """The least evidence with no decision runs (crashes are codes the decision never changes), and a sweep
    of at most ``sweep_limit`` workers (the crashes are the subject: the requested counts, 1 and 2, stay in it)."""
    report_path = script.parent / "probe.json"
    report = run_probe(str(script), [], findings, timeout=90, progress=False, report_path=str(report_path),
                       settings=checks_settings(epoch_batches=4, sweep_limit=sweep_limit))
    return report, json.loads(report_path.read_text())


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    return write_script(tmp_path_factory.mktemp("crashes"), SCRIPT)


@pytest.fixture(scope="module")
def runtime_only(script):
    return probe(script, [])


@pytest.fixture(scope="module")
def with_static(script):
    findings = [f for f in lint_source(script.read_text(), path=str(script)) if f.code in ("DL105", "DL108")]
    return findings, *probe(script, findings)


def by_code(findings, code):
    return [finding for finding in findings if finding.code == code]


class TestRuntimeOnly:
    """The script probed without static findings (a class: one unit under --dist loadscope, its fixture runs once)."""

    @pytest.mark.probe
    def test_cuda_reinitialised_in_a_later_epoch_is_a_runtime_dl105_at_the_loader(self, script, runtime_only):
        report, data = runtime_only
        (dl105,) = by_code(report.findings, "DL105")
        assert dl105.source == "runtime"
        assert dl105.line == line_of(script, "DataLoader(OnGpu()")
        assert dl105.path.endswith("train.py") and dl105.column == 1
        assert dl105.probe["verdict"] == "confirmed"
        assert dl105.probe["evidence"].startswith("epoch 2 failed at batch 1: ")
        assert CUDA_ERROR in dl105.probe["evidence"]
        measurements = dl105.probe["measurements"]
        assert (measurements["epoch"], measurements["batch"], measurements["triggered_by"]) == (2, 1, "script")
        assert dl105.message.startswith("DL105 seen at run time: epoch 2 failed at batch 1: ")
        (entry,) = [f for f in data["findings"] if f["code"] == "DL105"]  # the JSON report carries it
        assert (entry["source"], entry["line"], entry["probe"]["verdict"]) == ("runtime", dl105.line, "confirmed")
        # Anchored at the loader's call, then at the worker's line that failed: a static finding there pairs.
        (result,) = [result for result in report.loaders[0].results if result.code == "DL105"]
        assert [anchor.first_line for anchor in result.anchors] == [dl105.line, line_of(script, "torch.cuda.init()")]
        assert result.anchors[1].path == str(script.resolve())
        # The recommendation acts on it: spawn workers do not inherit the parent's CUDA.
        assert report.loaders[0].recommendation.settings["multiprocessing_context"] == "spawn"

    @pytest.mark.probe
    def test_a_pool_started_in_a_later_epochs_worker_is_a_runtime_dl108(self, script, runtime_only):
        report, _ = runtime_only
        (dl108,) = by_code(report.findings, "DL108")
        assert (dl108.source, dl108.line) == ("runtime", line_of(script, "DataLoader(Pools()"))
        assert dl108.probe["verdict"] == "confirmed"
        assert "daemonic processes are not allowed to have children" in dl108.probe["evidence"]
        assert dl108.probe["evidence"].startswith("epoch 2 failed at batch 1: ")

    @pytest.mark.probe
    @pytest.mark.serial  # its sweep must not confirm DL202: another test's processes on the same cores can make it
    def test_the_datasets_own_error_in_a_later_epoch_is_no_finding_and_the_ending_names_it(self, script, runtime_only):
        report, _ = runtime_only
        assert sorted(finding.code for finding in report.findings) == ["DL105", "DL108"]
        corrupt = report.loaders[2]
        (failure,) = corrupt.failures
        assert (failure["epoch"], failure["batch"], failure["worker_died"]) == (2, 1, False)
        assert "ValueError: sample" in failure["error"] and "is corrupt" in failure["error"]
        # The script's own line where the error reached it, the loader, the epoch and the batch.
        line = line_of(script, "for batch in loader:")
        assert report.script_outcome.startswith("the script raised Caught ValueError in DataLoader worker process "), \
            report.script_outcome
        assert "ValueError: sample 0 is corrupt at " in report.script_outcome
        assert f"train.py:{line}, in loader 3's epoch 2 (batch 1); " in report.script_outcome, report.script_outcome
        # the sweep every multi-worker loader gets informs its block only (advisory): no finding
        assert not [result for result in corrupt.results if result.verdict == "confirmed" and not result.measurements.get("advisory")]

    @pytest.mark.probe
    def test_the_text_report_marks_them_runtime_with_a_short_verdict_column(self, runtime_only):
        report, _ = runtime_only
        text = report.render_text()
        rows = [line for line in text.splitlines() if line.startswith(("  DL105", "  DL108"))]
        assert [row.split()[:2] for row in rows] == [["DL105", "confirmed"], ["DL108", "confirmed"]], text
        assert all(len(row) < 140 for row in rows)
        shown = render("text", RunSummary(report.findings))
        assert f"train.py:{report.findings[0].line}:1: DL105 (runtime) DL105 seen at run time: epoch 2" in shown, shown
        assert "    probe: confirmed: epoch 2 failed at batch 1: Caught RuntimeError" in shown
        sarif = json.loads(render("sarif", RunSummary(report.findings)))
        assert [result["ruleId"] for result in sarif["runs"][0]["results"]] == ["DL105", "DL108"]
        assert render("github", RunSummary(report.findings)).count("::error ") == 2  # DL1xx: errors (dllint.severity)


@pytest.mark.probe
def test_a_static_finding_of_the_crash_is_confirmed_not_doubled(script, with_static):
    findings, report, data = with_static
    static = {finding.code: finding for finding in findings}
    assert static["DL105"].line == line_of(script, "torch.cuda.init()")
    assert static["DL108"].line == line_of(script, "multiprocessing.Pool(1)")
    for code in ("DL105", "DL108"):
        (only,) = by_code(report.findings, code)
        assert only is static[code] and only.source == "static"
        assert only.probe["verdict"] == "confirmed", only.probe
        assert only.probe["evidence"].startswith("epoch 2 failed at batch 1: ")
        assert only.probe["measurements"]["epoch"] == 2
    assert CUDA_ERROR in static["DL105"].probe["evidence"]
    assert [(f["code"], "source" in f) for f in data["findings"]] == [("DL105", False), ("DL108", False)]


SPAWN_SCRIPT = """
    class Scaled(Dataset):
        transform = None

        def __len__(self):
            return 8

        def __getitem__(self, index):
            x = torch.tensor([float(index)])
            return self.transform(x) if self.transform else x


    if __name__ == "__main__":
        def double(x):
            return 2 * x

        loader = DataLoader(Scaled(), batch_size=2, num_workers=1, multiprocessing_context="spawn")
        for epoch in range(2):
            for batch in loader:
                pass
            loader.dataset.transform = double
"""


@pytest.mark.probe
def test_a_spawn_worker_that_dies_unpickling_a_name_under_the_main_guard_is_dl107_from_its_last_words(tmp_path):
    """Only the dying worker's stderr says why (torch says it exited unexpectedly): ~10 s, two spawn starts."""
    script = write_script(tmp_path, SPAWN_SCRIPT)
    report, _ = probe(script, [], sweep_limit=0)  # no sweep of spawn workers: each one imports torch again
    (dl107,) = report.findings
    assert (dl107.code, dl107.source, dl107.line) == ("DL107", "runtime", line_of(script, "loader = DataLoader"))
    assert dl107.probe["evidence"] == ("epoch 2 failed at batch 1: a DataLoader worker died: AttributeError: "
                                       f"Can't get attribute 'double' on <module '__mp_main__' from '{script}'>")
    (failure,) = report.loaders[0].failures
    assert failure["worker_died"] and "exited unexpectedly" in failure["error"]
    assert "exited unexpectedly" in report.script_outcome and "in loader 1's epoch 2 (batch 1)" in report.script_outcome


# -- the classifier, on the messages the checks read -----------------------------------------------


@pytest.mark.parametrize("text, code", [
    ("Caught RuntimeError in DataLoader worker process 0. RuntimeError: Cannot re-initialize CUDA in forked "
     "subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method", "DL105"),
    ("Caught AssertionError in DataLoader worker process 1. AssertionError: daemonic processes are not allowed "
     "to have children", "DL108"),
    ("TypeError: cannot pickle '_thread.lock' object", "DL104"),
    ("TypeError: cannot pickle 'generator' object", "DL104"),
    ("_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f>: attribute lookup <lambda> on __main__ "
     "failed", "DL102"),
    ("AttributeError: Can't pickle local object 'main.<locals>.collate'", "DL103"),
    ("AttributeError: Can't get local object 'main.<locals>.Local'", "DL103"),
    ("AttributeError: Can't get attribute 'Data' on <module '__mp_main__' from 'train.py'>", "DL107"),
    ("AttributeError: Can't get attribute 'Data' on <module '__main__' (built-in)>", "DL106"),
    ("Caught ValueError in DataLoader worker process 0. ValueError: sample 3 is corrupt", None),
    ("DataLoader worker (pid(s) 4242) exited unexpectedly", None),
    ("ValueError: main.<locals>.f returned None", None),
])
def test_a_crash_is_classified_by_the_rule_whose_error_it_is(text, code):
    assert crash_code(text) == code


def test_only_a_later_epoch_counts_and_a_dead_workers_last_words_are_read():
    anchor = Anchor("/p/train.py", 10, 12)
    died = {"epoch": 3, "batch": 2, "error": "RuntimeError: DataLoader worker (pid(s) 7) exited unexpectedly",
            "worker_died": True,
            "worker_said": "AttributeError: Can't get attribute 'Data' on <module '__mp_main__' from 'train.py'>"}
    first = {**died, "epoch": 1}
    (result,) = crash_results(4, [first, died, died], anchor)
    assert (result.code, result.verdict, result.loader, result.anchors) == ("DL107", "confirmed", 4, [anchor])
    assert result.evidence == f"epoch 3 failed at batch 2: a DataLoader worker died: {died['worker_said']}"
    assert crash_results(4, [{**died, "worker_said": None}], anchor) == []


def test_a_static_finding_in_the_datasets_own_file_is_the_one_a_crash_confirms(tmp_path):
    """The dataset in data.py, the loader in train.py: the worker's failing line pairs them."""
    from dllint.probe.pairing import attach_verdicts, runtime_findings
    from probe_helpers import finding

    data, train = str(tmp_path / "data.py"), str(tmp_path / "train.py")
    failure = {"epoch": 2, "batch": 1, "error": f"Caught RuntimeError in DataLoader worker process 0. {CUDA_ERROR}",
               "worker_frame": [data, 12]}
    results = crash_results(1, [failure], Anchor(train, 30, 30))
    static = finding("DL105", data, 12)
    unclaimed, _ = attach_verdicts([static], results, "never", {1: Anchor(train, 30, 30)}, {1: "loader 1 at train.py:30"})
    assert static.probe["verdict"] == "confirmed" and static.probe["measurements"]["loader"] == "loader 1 at train.py:30"
    assert runtime_findings(unclaimed, {}) == []
    elsewhere = finding("DL105", str(tmp_path / "other.py"), 12)  # a file the crash never went through
    unclaimed, _ = attach_verdicts([elsewhere], crash_results(1, [failure], Anchor(train, 30, 30)), "never",
                                   {1: Anchor(train, 30, 30)})
    assert elsewhere.probe["verdict"] == "not reached"
    assert [(f.code, f.line, f.source) for f in runtime_findings(unclaimed, {})] == [("DL105", 30, "runtime")]
