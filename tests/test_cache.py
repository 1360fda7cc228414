"""The cache: reused only while nothing that decides findings changed; never trusted blindly."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dllint import runner
from dllint.cache import Cache, code_parts, decode_deps, decode_finding, encode_deps, encode_finding
from dllint.config import Settings
from dllint.deps import CallersDep, ConfigDep, ConfigFileDep, Deps, LoaderClassesDep, SummaryDep
from dllint.findings import Finding, Fix, NotKept, SetArgument
from lint_helpers import run_lint

SETTINGS = Settings()
CODES = ("DL101", "DL201")
BAD = (
    "from torch.utils.data import DataLoader\n"
    "def train(ds):\n"
    "    loader = DataLoader(ds, num_workers=4)\n"
    "    for epoch in range(10):\n"
    "        for batch in loader:\n"
    "            pass\n"
)
GOOD = "import os\nprint(os.getcwd())\n"


@pytest.fixture
def tree(tmp_path):
    files = []
    for i in range(6):
        path = tmp_path / "src" / f"m{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(BAD if i % 2 else GOOD)
        files.append(str(path))
    return tmp_path, files


@pytest.fixture
def lint_counter(monkeypatch):
    """Counts the files looked at afresh, not served from the cache (in-process: jobs=1): read,
    screened, linted if the prefilter lets them through."""
    linted: list[str] = []
    real = runner.process

    def counting(path, *args, **kwargs):
        linted.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner, "process", counting)
    return linted


def run(files, directory, settings=SETTINGS):
    cache = Cache(directory, settings, CODES)
    results = run_lint(files, settings, jobs=1, cache=cache)
    return [[f.to_dict() for f in r.findings] for r in results], cache


def test_warm_run_lints_nothing_and_a_changed_file_alone(tree, lint_counter):
    root, files = tree
    cold, _ = run(files, root / "c")
    assert len(lint_counter) == len(files)
    lint_counter.clear()
    warm, cache = run(files, root / "c")
    assert warm == cold and lint_counter == [] and cache.stats.hits == len(files)

    with open(files[0], "w") as handle:
        handle.write(BAD)  # GOOD -> BAD
    os.utime(files[0], ns=(1, 1))  # a stat the cache has not seen, whatever the clock's resolution
    again, cache = run(files, root / "c")
    assert lint_counter == [files[0]]
    assert again[0] and again[1:] == cold[1:]


WARM_RUN = """
import sys
from dllint.cli import main
try:
    main(["check", "--exit-zero", "--cache-dir", sys.argv[1], sys.argv[2]])
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules if m.startswith("dllint"))), file=sys.stderr)
"""


def test_a_run_whose_files_are_all_cached_or_screened_out_imports_no_rule_and_no_file_analysis(tree):
    """What a warm run needs is the catalog's codes (the cache's key) and the rules' triggers (the
    prefilter's), the cache and the project's records: the rules and the file analyses
    (``dllint.facts.file``) are imported only for a file that may hold a finding."""
    root, files = tree
    command = [sys.executable, "-c", WARM_RUN, str(root / "c"), str(root)]
    cold = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    warm = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    with open(files[0], "a") as handle:
        handle.write("print('no loader here')\n")  # changed, and screened out: nothing in it to check
    screened = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    with open(files[1], "a") as handle:
        handle.write("# changed\n")  # a file with a loader: linted, its rules imported
    linted = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    assert warm.stdout == cold.stdout == screened.stdout and "DL201" in warm.stdout
    assert linted.stdout.count("DL201") == cold.stdout.count("DL201")

    def lint_modules(run):
        return [m for m in run.stderr.split() if m.startswith("dllint.rules.dl") or m == "dllint.facts.file"]

    assert "dllint.facts.file" in lint_modules(cold) and "dllint.rules.dl201_non_persistent_workers" in lint_modules(linted)
    assert lint_modules(warm) == [] and lint_modules(screened) == []


def test_a_lookup_reads_the_stat_the_run_already_took_of_the_file(tree, monkeypatch):
    """The project's stat table is taken before the lookups: a lookup given it stats nothing
    again, and reads the file's stat there by its absolute path."""
    root, files = tree
    monkeypatch.chdir(root)
    relative = os.path.relpath(files[1], root)
    cold, cache = run([relative], root / "c")
    cache = Cache(root / "c", SETTINGS, CODES)
    asked = []
    real = os.stat(files[1])
    moved = os.stat_result((real.st_mode, real.st_ino, real.st_dev, real.st_nlink, real.st_uid, real.st_gid, real.st_size,
                            real.st_atime, real.st_mtime + 1, real.st_ctime))  # a stat the entry was not stored at
    hit = cache.lookup_entry(relative, taken_stat=lambda key: asked.append(key) or moved)
    assert asked == [files[1]] and hit is not None and [[f.to_dict() for f in hit.findings]] == cold
    assert cache.stats.rehashed_hits == 1 and cache.stats.hits == 0  # the taken stat was compared, not the disk's


def test_touched_but_unchanged_file_is_not_relinted(tree, lint_counter):
    root, files = tree
    run(files, root / "c")
    lint_counter.clear()
    os.utime(files[1], ns=(10**18, 10**18))
    _, cache = run(files, root / "c")
    assert lint_counter == [] and cache.stats.rehashed_hits == 1
    lint_counter.clear()
    _, cache = run(files, root / "c")  # the new stat was remembered: no hash this time
    assert cache.stats.hits == len(files) and cache.stats.rehashed_hits == 0


def test_other_settings_use_another_cache(tree, lint_counter):
    root, files = tree
    run(files, root / "c")
    lint_counter.clear()
    run(files, root / "c", Settings(max_workers=2))
    assert len(lint_counter) == len(files)


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\xffnot json",
        b'{"format": 1, "files": ',
        b"[]",
        b'{"format": 1, "files": {"/x.py": [1, 2]}}',
        b'{"format": 1, "files": {"/x.py": ["1", 2, "a", []]}}',
        b"",
    ],
    ids=["binary", "truncated", "wrong-type", "short-entry", "bad-entry", "empty"],
)
def test_corrupted_cache_file_is_rebuilt(tree, lint_counter, content):
    root, files = tree
    cold, cache = run(files, root / "c")
    Path(cache.path).write_bytes(content)
    lint_counter.clear()
    again, cache = run(files, root / "c")
    assert again == cold and len(lint_counter) == len(files) and cache.stats.discarded
    json.loads(Path(cache.path).read_bytes())  # rewritten whole
    lint_counter.clear()
    _, cache = run(files, root / "c")
    assert lint_counter == [] and cache.stats.hits == len(files)


def test_corrupted_findings_in_a_valid_file_are_relinted(tree, lint_counter):
    root, files = tree
    cold, cache = run(files, root / "c")
    data = json.loads(Path(cache.path).read_bytes())
    key = os.path.abspath(files[1])
    data["files"][key][5] = [["not", "a", "finding"]]
    Path(cache.path).write_text(json.dumps(data))
    lint_counter.clear()
    again, _ = run(files, root / "c")
    assert again == cold and lint_counter == [files[1]]


def test_findings_round_trip_but_never_their_code():
    """A fix's applicability and message come back (the report shows them); its edit, which is
    code (a ``set-argument`` value), is never stored: ``--fix`` lints the file again for it."""
    fix = Fix("safe", "Add it", SetArgument("persistent_workers", "__import__('os')"))
    finding = Finding("a.py", 3, 5, 3, 9, "DL201", "non-persistent-workers", "msg", fix, cell=2)
    row = json.loads(json.dumps(encode_finding(finding)))
    assert "__import__" not in json.dumps(row)
    back = decode_finding("a.py", row)
    assert back.fix == Fix("safe", "Add it", NotKept())
    back.fix = fix
    assert back == finding


def _concurrent_run(files: list[str], directory: str, seed: int) -> None:
    for _ in range(5):
        run_lint(files[seed % 2 :: 2] if seed % 3 else files, SETTINGS, jobs=1, cache=Cache(directory, SETTINGS, CODES))


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_concurrent_runs_never_corrupt_the_cache(tree):
    root, files = tree
    directory = str(root / "c")
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_concurrent_run, args=(files, directory, seed)) for seed in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    cache = Cache(directory, SETTINGS, CODES)
    results = run_lint(files, SETTINGS, jobs=1, cache=cache)
    assert not cache.stats.discarded
    assert cache.stats.misses == 0, "every file was stored by one of the runs"
    assert [bool(r.findings) for r in results] == [bool(i % 2) for i in range(len(files))]
    leftovers = [p for p in (root / "c").rglob("*") if p.name.endswith(".dllint-tmp")]
    assert leftovers == []


# -- keyed by content: a same-size edit with the mtime restored is seen (issue 12.8) ---------------
@pytest.mark.parametrize("how", ["cp -p", "touch -r"])
def test_same_size_edit_with_the_mtime_restored_is_relinted(tree, lint_counter, how):
    root, files = tree
    run(files, root / "c")
    lint_counter.clear()
    target = files[1]  # BAD: findings
    before = os.stat(target)
    edited = BAD.replace("num_workers=4", "num_workers=0")  # same size, no DL201 any more
    assert len(edited) == len(BAD)
    if how == "cp -p":  # a new file copied over the old one, its times copied too
        source = root / "edited.py"
        source.write_text(edited)
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(source, target)
    else:  # the same file rewritten, then its mtime set back
        with open(target, "w") as handle:
            handle.write(edited)
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    results, _ = run(files, root / "c")
    assert lint_counter == [target]
    assert results[1] == []


# -- the project index's API: deps -------------------------------------------------
def test_findings_with_deps_are_valid_only_while_every_dep_is(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(BAD)
    st = os.stat(path)
    finding = Finding(str(path), 3, 5, 3, 9, "DL201", "non-persistent-workers", "msg")
    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    from dllint.per_file import fingerprint

    cache.store_fingerprint(str(path), fingerprint(st, path.read_bytes()), [finding], Deps([SummaryDep("data.py", "a" * 64)]))
    cache.save()
    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    assert cache.lookup(str(path)) is None, "deps nobody checked are not trusted"
    assert cache.lookup(str(path), deps_valid=lambda deps: deps == Deps([SummaryDep("data.py", "b" * 64)])) is None
    assert cache.lookup(str(path), deps_valid=lambda deps: deps == Deps([SummaryDep("data.py", "a" * 64)])) == [finding]
    hit = cache.lookup_entry(str(path), deps_valid=lambda deps: True)
    assert hit is not None and hit.deps == Deps([SummaryDep("data.py", "a" * 64)])


def test_deps_keep_their_stored_format_and_read_back_typed():
    """The JSON a cache written before typed deps holds: each kind reads back as itself."""
    stored = {
        "/p/data.py": "a" * 64,
        "/p/conf.yaml": "config:" + "b" * 64,
        "/p/_base_.py": "config-file",
        "\0mentions:build_loader\0DataLoader": "",
        "\0mentions:def \udcff": "",
        "\0loader-classes": "c" * 64,
    }
    deps = decode_deps(stored)
    assert list(deps) == [
        SummaryDep("/p/data.py", "a" * 64),
        ConfigDep("/p/conf.yaml", "b" * 64),
        ConfigFileDep("/p/_base_.py"),
        CallersDep(b"build_loader", b"DataLoader"),
        CallersDep(b"def \xff"),
        LoaderClassesDep("c" * 64),
    ]
    assert encode_deps(deps) == stored


def test_runner_stores_and_returns_deps(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(BAD)

    from dllint.project import NullProject

    class View(NullProject):
        deps = Deps([SummaryDep(str(tmp_path / "data.py"), "c" * 64)])

    class Index:
        def view(self, path):
            return View()

        def deps_valid(self, deps):
            return deps == View.deps

        def taken_stat(self, path):
            return None

        def use_records(self, cache):
            pass

        def reconcile(self, cache):
            pass

        def remember_files(self, cache, deps_stored):
            pass

    monkeypatch.setattr(runner, "project_index", lambda settings, root=None: Index())
    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    [result] = run_lint([str(path)], SETTINGS, jobs=1, cache=cache)
    assert result.deps == View.deps
    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    assert cache.lookup_entry(str(path), deps_valid=lambda deps: deps == View.deps).deps == View.deps


def test_a_dropped_entry_stays_dropped_when_merged_with_the_file_on_disk(tmp_path):
    """``drop`` (a dependency changed) must not be undone by the save's merge with what is on
    disk, where the entry still is; meta is saved and merged like entries."""
    path = tmp_path / "train.py"
    path.write_text(BAD)
    from dllint.per_file import fingerprint

    finding = Finding(str(path), 3, 5, 3, 9, "DL201", "non-persistent-workers", "msg")
    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    cache.store_fingerprint(str(path), fingerprint(os.stat(path), path.read_bytes()), [finding], Deps([CallersDep(b"build")]))
    cache.put_meta("project-files:/p", {"/p/a.py": [1, 2, 3]})
    cache.save()

    cache = Cache(tmp_path / "c", SETTINGS, CODES)
    assert list(cache.entries_deps()) == [(str(path), Deps([CallersDep(b"build")]))]
    assert cache.meta("project-files:/p") == {"/p/a.py": [1, 2, 3]}
    cache.drop(str(path))
    cache.save()
    again = Cache(tmp_path / "c", SETTINGS, CODES)
    assert again.lookup(str(path), deps_valid=lambda deps: True) is None
    assert again.meta("project-files:/p") == {"/p/a.py": [1, 2, 3]}


def test_a_save_merges_what_another_run_wrote_and_reads_back_only_then(tmp_path, monkeypatch):
    """The save reads the cache file again only when another run replaced it since this run
    loaded it (a megabyte JSON decode on a large project); either way nothing is lost."""
    from dllint.per_file import fingerprint

    paths = []
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(GOOD)
        paths.append(str(tmp_path / name))
    stamp = {p: fingerprint(os.stat(p), open(p, "rb").read()) for p in paths}
    first = Cache(tmp_path / "c", SETTINGS, CODES)
    first.store_fingerprint(paths[0], stamp[paths[0]], [])
    first.save()
    reads: list[int] = []
    real = Cache._read
    monkeypatch.setattr(Cache, "_read", lambda self, directory: reads.append(1) or real(self, directory))
    mine, other = Cache(tmp_path / "c", SETTINGS, CODES), Cache(tmp_path / "c", SETTINGS, CODES)
    assert mine.lookup(paths[0]) == [] and other.lookup(paths[0]) == []
    mine.store_fingerprint(paths[1], stamp[paths[1]], [])
    mine.save()
    assert len(reads) == 2  # each loaded once; the save found its file unchanged
    other.store_fingerprint(paths[2], stamp[paths[2]], [])
    other.save()
    assert len(reads) == 3  # replaced since `other` loaded it: read back and merged
    again = Cache(tmp_path / "c", SETTINGS, CODES)
    assert [again.lookup(p) for p in paths] == [[], [], []]


def test_the_code_fingerprint_covers_modules_in_subpackages(tmp_path):
    """A development checkout's edit to any module, however deep (``facts/flow/records.py``
    shapes the summaries a cached result rests on), makes another cache; caches are not read."""
    (tmp_path / "facts" / "flow" / "__pycache__").mkdir(parents=True)
    (tmp_path / "engine.py").write_text("x = 1\n")
    (tmp_path / "facts" / "flow" / "records.py").write_text("y = 2\n")
    (tmp_path / "facts" / "flow" / "__pycache__" / "records.cpython-311.py").write_text("")
    (tmp_path / "facts" / "notes.txt").write_text("")
    before = code_parts(tmp_path)
    assert [p.split(":")[0] for p in before] == ["engine.py", os.path.join("facts", "flow", "records.py")]
    (tmp_path / "facts" / "flow" / "records.py").write_text("y = 22\n")
    assert code_parts(tmp_path) != before
