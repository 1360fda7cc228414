"""The runner: the same findings whatever the jobs and the cache, in the order of the paths given."""

from __future__ import annotations

import gc
import io
import json
import os
import shutil

import pytest
from click.testing import CliRunner

from dllint import runner
from dllint.cache import Cache
from dllint.cli import main
from dllint.config import Settings
from dllint.engine import Linter
from dllint.progress import ProgressLine
from dllint.rules import all_rules
from lint_helpers import lint_python_bytes, run_lint
from tests.conftest import FIXTURES

SETTINGS = Settings(select=("ALL",))


def fixture_files() -> list[str]:
    found = sorted(str(p) for p in FIXTURES.glob("DL[0-9][0-9][0-9]/*.py"))
    found += sorted(str(p) for p in FIXTURES.glob("notebooks/**/*.ipynb"))
    assert len(found) > 10
    return found


def as_rows(results) -> list[tuple]:
    return [(r.path, [f.to_dict() for f in r.findings], r.errors) for r in results]


@pytest.fixture
def pool_always(monkeypatch):
    """Send even a handful of small files through the worker pool, a chunk each."""
    monkeypatch.setattr(runner, "MIN_FILES_FOR_POOL", 1)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_POOL", 0)
    monkeypatch.setattr(runner, "CHUNK_BYTES", 1)


def test_same_findings_cold_warm_jobs1_jobs2(tmp_path, pool_always):
    files = fixture_files()
    reference = as_rows(run_lint(files, SETTINGS, jobs=1))
    assert any(findings for _, findings, _ in reference)
    assert as_rows(run_lint(files, SETTINGS, jobs=2)) == reference
    codes = tuple(sorted(r.code for r in Linter(SETTINGS).rules))
    cold_cache = Cache(tmp_path / "cache", SETTINGS, codes)
    assert as_rows(run_lint(files, SETTINGS, jobs=2, cache=cold_cache)) == reference
    assert cold_cache.stats.hits == 0
    warm_cache = Cache(tmp_path / "cache", SETTINGS, codes)
    assert as_rows(run_lint(files, SETTINGS, jobs=2, cache=warm_cache)) == reference
    assert warm_cache.stats.hits == len(files) and warm_cache.stats.misses == 0
    warm_serial = Cache(tmp_path / "cache", SETTINGS, codes)
    assert as_rows(run_lint(files, SETTINGS, jobs=1, cache=warm_serial)) == reference


def test_results_follow_the_order_of_paths(pool_always):
    files = fixture_files()
    shuffled = files[::-1][::2] + files[::-1][1::2]
    results = run_lint(shuffled, SETTINGS, jobs=2)
    assert [r.path for r in results] == shuffled


def test_a_missing_file_is_a_finding_not_a_crash(tmp_path, pool_always):
    good = tmp_path / "ok.py"
    good.write_text("import torch\n")
    results = run_lint([str(good), str(tmp_path / "gone.py")], SETTINGS, jobs=2)
    assert results[0].findings == []
    assert [f.code for f in results[1].findings] == ["DL000"]


def shared_chunks(monkeypatch) -> list[list[str]]:
    """The chunks a run hands to its pool, as lists of paths (recorded in this process)."""
    handed: list[list[str]] = []
    real = runner._Pool.add

    def add(self, chunk, *args):
        handed.append([path for _, path, _ in chunk])
        return real(self, chunk, *args)

    monkeypatch.setattr(runner._Pool, "add", add)
    return handed


def test_only_files_past_the_prefilter_are_handed_on_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_POOL", 0)
    monkeypatch.setattr(runner, "CHUNK_BYTES", 200)
    loader = "from torch.utils.data import DataLoader\nDataLoader(ds, persistent_workers=True)\n"  # DL001
    paths = []
    for i in range(12):
        path = tmp_path / f"f{i:02}.py"
        path.write_text(loader + "x = 1\n" * i if i % 3 else "import os\n")  # every third file: nothing to parse
        paths.append(str(path))
    handed = shared_chunks(monkeypatch)
    results = run_lint(paths, SETTINGS, jobs=2)
    assert sorted(p for chunk in handed for p in chunk) == [p for i, p in enumerate(paths) if i % 3]
    assert len(handed) > 1 and all(len(chunk) <= 3 for chunk in handed)
    assert [bool(r.findings) for r in results] == [bool(i % 3) for i in range(12)]
    assert [r.skipped for r in results] == [not i % 3 for i in range(12)]


def _die(chunk, task, want_fingerprint):
    os._exit(3)  # a worker killed mid-run (out of memory, kill -9)


def test_a_dead_workers_chunks_are_linted_here(monkeypatch, pool_always):
    files = fixture_files()
    reference = as_rows(run_lint(files, SETTINGS, jobs=1))
    monkeypatch.setattr(runner, "_run_chunk", _die)
    assert as_rows(run_lint(files, SETTINGS, jobs=2)) == reference


def test_little_to_parse_stays_in_this_process_whatever_the_jobs(tmp_path, monkeypatch):
    big_but_unrelated = tmp_path / "big.py"
    big_but_unrelated.write_text("x = 1\n" * 200_000)  # 1.2 MB that the prefilter rules out
    small = tmp_path / "train.py"
    small.write_text("from torch.utils.data import DataLoader\nDataLoader(ds, persistent_workers=True)\n")
    monkeypatch.setattr(runner, "_pool_context", lambda: pytest.fail("a pool was started"))
    results = run_lint([str(big_but_unrelated), str(small)], SETTINGS, jobs=2)
    assert results[0].skipped and [f.code for f in results[1].findings]


def test_cli_output_is_the_same_for_every_jobs_and_cache_setting(tmp_path, pool_always):
    tree = tmp_path / "src"
    shutil.copytree(FIXTURES, tree, ignore=shutil.ignore_patterns("probe", "fix", "*.ipynb"))
    cli = CliRunner()
    outputs = []
    for extra in (["--no-cache", "--jobs", "1"], ["--no-cache", "--jobs", "2"], ["--jobs", "2"], ["--jobs", "2"], ["--jobs", "1"]):
        result = cli.invoke(
            main,
            ["check", str(tree), "--select", "ALL", "--format", "json", "--cache-dir", str(tmp_path / "c"), *extra],
        )
        assert result.exit_code == 1, result.output
        outputs.append(json.loads(result.stdout))
    assert all(out == outputs[0] for out in outputs[1:])
    assert list((tmp_path / "c").rglob("*.json")), "the cached runs wrote a cache"


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2)\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "a.py", "--no-cache"])
    assert result.exit_code in (0, 1), result.output
    assert not (tmp_path / ".dllint_cache").exists()
    result = CliRunner().invoke(main, ["check", "a.py"])
    assert (tmp_path / ".dllint_cache").is_dir()
    assert (tmp_path / ".dllint_cache" / ".gitignore").is_file()


@pytest.mark.parametrize("rule", [r for r in all_rules() if r.code != "DL000"], ids=lambda r: r.code)
def test_triggers_never_hide_an_invalid_example(rule):
    """Through the byte prefilter (lint_bytes), each INVALID example of a rule still fires it."""
    linter = Linter(Settings(select=(rule.code,)), rules=[rule])
    for example in rule.invalid:
        assert linter.prefilter.screen(example.encode()) is not None, f"{rule.code}: triggers {rule.triggers} miss {example!r}"
        result = lint_python_bytes(linter, "example.py", example.encode())
        assert not result.skipped


def test_a_screened_file_is_not_screened_again_while_its_bytes_are_the_same(tmp_path, monkeypatch):
    """The parent screens a file once; whoever lints it takes the open gates along, and screens
    again only bytes that changed in between (their CRC-32 differs)."""
    from dllint.prefilter import Prefilter

    script = tmp_path / "train.py"
    script.write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, persistent_workers=True)\n")
    linter = Linter(SETTINGS)
    screened = runner.screen(str(script), linter, want_fingerprint=False)
    assert isinstance(screened, runner.Screened) and screened.gates
    screens: list[bytes] = []
    real = Prefilter.screen
    monkeypatch.setattr(Prefilter, "screen", lambda self, data, path="": (screens.append(data), real(self, data, path))[1])
    outcome, _ = runner.process(str(script), linter, runner.CHECK, False, screened=screened)
    assert [f.code for f in outcome.findings] == ["DL001"] and screens == []
    script.write_text(script.read_text() + "DataLoader(ds, num_workers=0, persistent_workers=True)\n")  # edited since
    outcome, _ = runner.process(str(script), linter, runner.CHECK, False, screened=screened)
    assert len(screens) == 1 and [(f.line, f.code) for f in outcome.findings] == [(2, "DL001"), (3, "DL001")]



@pytest.mark.parametrize("task", [runner.CHECK, runner.Task(fix=True)])
def test_a_file_the_prefilter_settles_asks_nothing_of_the_project(tmp_path, task):
    """Most of a project's files never reach the parser: they are settled before a view of the
    project is made for them (resolving the path costs more than screening the bytes); a file
    that passes gets its view."""
    from dllint.project import ProjectIndex

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0, persistent_workers=True)\n")
    index = ProjectIndex(str(tmp_path), SETTINGS)
    viewed: list[str] = []
    real = index.view
    index.view = lambda path: (viewed.append(os.path.basename(path)), real(path))[1]  # type: ignore[method-assign]
    linter = Linter(SETTINGS)
    outcome, _ = runner.process(str(tmp_path / "util.py"), linter, task, False, index)
    assert outcome.skipped and viewed == []
    outcome, _ = runner.process(str(tmp_path / "train.py"), linter, task, False, index)
    assert not outcome.skipped and viewed == ["train.py"]

class FakeTerminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_only_on_a_terminal_and_for_text_output():
    assert ProgressLine.for_run("text", FakeTerminal(False)) is None
    for fmt in ("json", "sarif", "github"):
        assert ProgressLine.for_run(fmt, FakeTerminal(True)) is None
    line = ProgressLine.for_run("text", FakeTerminal(True))
    assert line is not None


def test_progress_waits_before_drawing_then_erases_itself():
    stream = FakeTerminal(True)
    line = ProgressLine(stream, delay=3600)
    line(5, 10)
    assert stream.getvalue() == ""
    line = ProgressLine(stream, delay=0, interval=0)
    line(5, 10)
    line(10, 10)
    assert "10/10 files checked" in stream.getvalue()
    line.finish()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_default_jobs_is_the_usable_cores(monkeypatch):
    for cores, expected in ((1, 1), (2, 2), (8, 8)):
        monkeypatch.setattr(runner, "usable_cores", lambda: cores)
        assert runner.default_jobs() == expected


def test_ctrl_c_stops_the_pool_and_its_workers(tmp_path, pool_always):
    import multiprocessing
    import time

    files = []
    for i in range(16):
        path = tmp_path / f"m{i}.py"
        path.write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2)\n" * 50)
        files.append(str(path))

    def interrupt(done, total):
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_lint(files, SETTINGS, jobs=2, progress=interrupt)
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_chunks_no_worker_started_are_taken_back_at_the_end():
    """Once this process has linted its share, it lints the chunks still waiting for a worker
    rather than wait for one to reach them; a running chunk is left to its worker."""
    from dllint.runner import CHECK, _Pool

    class Future:
        def __init__(self, started):
            self.started = started

        def cancel(self):
            return not self.started

    pool = _Pool(2, CHECK, False, Settings(), None)
    running, waiting = Future(True), Future(False)
    pool.submitted = {running: [(0, "a.py", None)], waiting: [(1, "b.py", None)]}
    pool.reclaim()
    assert list(pool.queue) == [[(1, "b.py", None)]] and list(pool.submitted) == [running]


def test_the_collector_is_off_during_a_run_and_as_it_was_after(tmp_path, monkeypatch):
    """A run lints with the cyclic collector off (what survives a lint is not traversed after
    every file), collects once garbage piles up past COLLECT_AFTER, and leaves it as found."""
    import gc

    from dllint import gc_pause

    states: list[bool] = []
    original = runner.process

    def spy(*args, **kwargs):
        states.append(gc.isenabled())
        cycle: list[object] = []
        cycle.append(cycle)  # garbage only the collector frees
        return original(*args, **kwargs)

    collections: list[int] = []
    monkeypatch.setattr(runner, "process", spy)
    monkeypatch.setattr(gc_pause, "COLLECT_AFTER", 0)  # every file's garbage is enough

    def watch(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n")
    gc.callbacks.append(watch)  # (the gc module reads its own list: it cannot be monkeypatched)
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            states.clear()
            collections.clear()
            run_lint([str(tmp_path / n) for n in ("a.py", "b.py", "c.py")], Settings(), jobs=1)
            assert states == [False, False, False]
            assert gc.isenabled() is enabled
            assert collections.count(2) == 3  # a full collection after each file
    finally:
        gc.enable()
        gc.callbacks.remove(watch)


def test_the_collector_is_off_while_the_cache_and_the_project_are_read(tmp_path, monkeypatch):
    """Loading the cache, reconciling it with the project and saving it make many objects and
    few cycles: the collector is off for them too, and on again after the run."""
    import gc

    from dllint.project.index import ProjectIndex

    states: dict[str, bool] = {}
    for owner, name in ((Cache, "_load"), (Cache, "save"), (ProjectIndex, "reconcile")):
        original = getattr(owner, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            states[_name] = gc.isenabled()
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, spy)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n")
    codes = tuple(sorted(r.code for r in Linter(SETTINGS).rules))
    assert gc.isenabled()
    runner.run_files([str(tmp_path / "a.py")], SETTINGS, jobs=1, cache=Cache(tmp_path / "c", SETTINGS, codes), project_root=str(tmp_path))
    assert states == {"_load": False, "reconcile": False, "save": False}
    assert gc.isenabled()


def _output_of_a_run(script: str, tmp_path) -> list[str]:
    """The lines ``script`` prints, run in a new interpreter with a one-loader file as its argument."""
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "a.py")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_process_that_ran_files_leaves_the_collector_nothing_to_do_at_exit(tmp_path):
    """At the interpreter's exit the collector's last passes would walk everything a run left
    (10 ms of a one-file run in a big project): every object is frozen first, out of their
    reach; the handler is registered once however many runs a process makes."""
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))  # runs after dllint's (last in, first out)\n"
        "from dllint import runner\n"
        "from dllint.config import Settings\n"
        "before = atexit._ncallbacks()\n"
        "for _ in range(3):\n"
        "    runner.run_files([sys.argv[1]], Settings(), jobs=1)\n"
        "print('handlers added:', atexit._ncallbacks() - before, 'frozen now:', gc.get_freeze_count() > 0)\n"
    )
    assert _output_of_a_run(script, tmp_path) == ["handlers added: 1 frozen now: False", "frozen at exit: True"]


def test_the_dllint_program_leaves_the_collector_off_to_its_exit_and_a_caller_gets_it_back(tmp_path):
    """The ``dllint`` program makes one run and exits: the collector, off during the run, is not
    turned back on (its first collection walked everything the run left). A caller invoking the
    command in its own process (click's test runner) gets it back on."""
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('collector on at exit:', gc.isenabled()))\n"
        "from dllint.cli import main\n"
        "sys.argv = ['dllint', '--no-cache', '-q', sys.argv[1]]\n"
        "main()\n"
    )
    assert _output_of_a_run(script, tmp_path) == ["collector on at exit: False"]
    assert gc.isenabled()
    result = CliRunner().invoke(main, ["--no-cache", "-q", str(tmp_path / "a.py")])
    assert result.exit_code == 0 and gc.isenabled()


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_screen_takes_the_bytes_the_joined_text_read(tmp_path, monkeypatch, jobs):
    """A run over most of a project's files joins their text first (what its cross-file
    questions search) and screens each file from it: a file is read once, not for the screen
    and again for the join; the findings and the fingerprints kept are those of reading each file.
    In one process too (``--jobs 1``): it read every file, then the join read them all again."""
    from dllint.project.search import TextIndex

    (tmp_path / "pyproject.toml").write_text("")
    factory = "from torch.utils.data import DataLoader\n\n\ndef build_loader(ds):\n    return DataLoader(ds, num_workers=4)\n"
    caller = "from data import build_loader\n\n\ndef main(ds):\n    for epoch in range(3):\n        for b in build_loader(ds):\n            pass\n"
    (tmp_path / "data.py").write_text(factory)
    (tmp_path / "train.py").write_text(caller)
    for i in range(4):
        (tmp_path / f"util{i}.py").write_text(f"def add{i}(a, b):\n    return a + b\n")
    paths = sorted(str(p) for p in tmp_path.glob("*.py"))
    codes = tuple(sorted(r.code for r in Linter(SETTINGS).rules))
    reference = as_rows(runner.run_files(paths, SETTINGS, jobs=1, project_root=str(tmp_path)))
    assert any(findings for _, findings, _ in reference)
    joins: list[str] = []
    real_join = TextIndex.join
    monkeypatch.setattr(TextIndex, "join", lambda self: (joins.append(self.files.root), real_join(self))[1])
    read: list[str] = []
    real_read = runner.read_file
    monkeypatch.setattr(runner, "read_file", lambda path, *rest: read.append(os.path.basename(path)) or real_read(path, *rest))
    cache = Cache(tmp_path / "cache", SETTINGS, codes)
    assert as_rows(runner.run_files(paths, SETTINGS, jobs=jobs, cache=cache, project_root=str(tmp_path))) == reference
    assert len(joins) == 1 and read == ["data.py"]  # read again by its lint only (the one the screen lets through)
    warm = Cache(tmp_path / "cache", SETTINGS, codes)
    assert as_rows(runner.run_files(paths, SETTINGS, jobs=jobs, cache=warm, project_root=str(tmp_path))) == reference
    assert warm.stats.hits == len(paths) and len(joins) == 1  # a warm run screens nothing: no join either


def test_a_run_without_a_project_never_lints_with_an_earlier_runs_index(tmp_path, pool_always):
    """Forked workers get this run's project index (built once, before the fork), never one an
    earlier run of the same process left behind: without a project, no file reads another."""
    factory = "from torch.utils.data import DataLoader\n\n\ndef build_loader(ds):\n    return DataLoader(ds, num_workers=4)\n"
    caller = "from data import build_loader\n\n\ndef main(ds):\n    for epoch in range(3):\n        for b in build_loader(ds):\n            pass\n"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data.py").write_text(factory)
    (tmp_path / "train.py").write_text(caller)
    paths = [str(tmp_path / "data.py"), str(tmp_path / "train.py")]
    with_project = runner.run_files(paths, SETTINGS, jobs=2, project_root=str(tmp_path))
    assert any(outcome.deps for outcome in with_project)
    alone = runner.run_files(paths, SETTINGS, jobs=2)
    assert [bool(outcome.deps) for outcome in alone] == [False, False]
