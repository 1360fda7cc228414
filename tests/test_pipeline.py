"""The run pipeline: one path for check, --fix, --diff, --fix-only, stdin and the probe."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint import exit_codes, pipeline, runner
from dllint.cli import main
from dllint.config import Settings
from dllint.engine import Linter
from dllint.facts import file as facts_file  # where the engine finds FileFacts when a file is linted
from dllint.inputs import ADAPTERS, Input, load
from dllint.pipeline import RunOptions, run
from lint_helpers import lint_paths, lint_python_bytes, lint_text

SAFE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0, persistent_workers=True)\n"
SAFE_FIXED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=0)\n"
UNFIXABLE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=2, prefetch_factor=0)\n"
CLEAN = "import os\n"


def cli(*args: str, input: bytes | None = None, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), input=input)
    finally:
        os.chdir(old)


# -- one pipeline ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["fix", "diff", "fix-only"])
def test_fix_modes_run_through_the_runner(tmp_path, monkeypatch, mode):
    (tmp_path / "a.py").write_text(SAFE)
    seen = []
    real = runner.run_files
    monkeypatch.setattr(pipeline, "run_files", lambda paths, *a, **k: (seen.append(a[1]), real(paths, *a, **k))[1])
    outcome = run([str(tmp_path)], Settings(), RunOptions(mode=mode, no_cache=True))
    assert seen and seen[0].fix
    assert outcome.fixed == 1
    assert (tmp_path / "a.py").read_text() == (SAFE if mode == "diff" else SAFE_FIXED)


def test_fix_pool_and_in_process_agree(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MIN_FILES_FOR_POOL", 1)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_POOL", 1)
    texts = [SAFE, UNFIXABLE, CLEAN] * 3
    trees = []
    for jobs in (1, 2):
        root = tmp_path / f"j{jobs}"
        root.mkdir()
        for i, text in enumerate(texts):
            (root / f"m{i}.py").write_text(text)
        outcome = run([str(root)], Settings(), RunOptions(mode="fix", jobs=jobs, no_cache=True))
        trees.append(([p.read_text() for p in sorted(root.iterdir())], [(f.path.split("/")[-1], f.code) for f in outcome.findings], outcome.fixed))
    assert trees[0] == trees[1]
    assert trees[0][2] == 3


def test_fix_reuses_the_cache_and_skips_files_with_nothing_to_fix(tmp_path, monkeypatch):
    for name, text in (("fixable.py", SAFE), ("unfixable.py", UNFIXABLE), ("clean.py", CLEAN)):
        (tmp_path / name).write_text(text)
    cache_dir = tmp_path / "cache"
    options = RunOptions(cache_dir=str(cache_dir), jobs=1)
    checked = run([str(tmp_path)], Settings(), options)
    assert {f.code for f in checked.findings} == {"DL001", "DL005"}
    read = []
    real = runner.read_file
    monkeypatch.setattr(runner, "read_file", lambda path, *a: (read.append(Path(path).name), real(path, *a))[1])
    fixed = run([str(tmp_path)], Settings(), RunOptions(mode="fix", cache_dir=str(cache_dir), jobs=1))
    assert read == ["fixable.py"], "a file whose cached findings hold no fix is neither read nor parsed"
    assert fixed.fixed == 1 and [f.code for f in fixed.findings] == ["DL005"]
    assert (tmp_path / "fixable.py").read_text() == SAFE_FIXED


@pytest.mark.parametrize(
    "args",
    [
        ["--probe", "train.py", "--fix"],
        ["--probe", "train.py", "--diff"],
        ["--probe", "train.py", "--fix-only"],
        ["--diff", "--fix-only", "train.py"],
    ],
)
def test_conflicting_options_are_a_usage_error(tmp_path, args):
    (tmp_path / "train.py").write_text(SAFE)
    result = cli(*args, cwd=tmp_path)
    assert result.exit_code == exit_codes.ERROR
    assert "cannot be combined" in result.output
    assert (tmp_path / "train.py").read_text() == SAFE


def test_lint_paths_checks_files_without_a_cache(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SAFE)
    linter = Linter(Settings())
    [result] = lint_paths([str(script)], linter=linter)
    assert [f.code for f in result.findings] == ["DL001"]
    assert not list(tmp_path.glob("**/.dllint_cache"))


def test_the_probes_static_lint_is_per_file_with_the_project_index(tmp_path):
    from dllint.probe.command import static_findings

    script = tmp_path / "train.py"
    script.write_text(SAFE)
    assert [f.code for f in static_findings(str(script), Linter(Settings()))] == ["DL001"]
    assert not list(tmp_path.glob("**/.dllint_cache"))


# -- input adapters ---------------------------------------------------------------------------
def test_discovery_suffixes_come_from_the_adapters(tmp_path):
    from dllint.discovery import discover

    for suffix in ADAPTERS:
        (tmp_path / f"f{suffix}").write_text("")
    (tmp_path / "notes.txt").write_text("")
    found = discover([str(tmp_path)], Settings(project_root=str(tmp_path)))
    assert sorted(Path(p).suffix for p in found.files) == sorted(ADAPTERS)


def _tree(root: Path, *files: str) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


def test_discovery_walks_files_first_then_sorted_directories_and_never_into_a_link(tmp_path):
    from dllint.discovery import discover

    project = tmp_path / "proj"
    _tree(project, "b/z.py", "b/a/y.py", "a/x.py", "top.py", "venv/pyvenv.cfg", "venv/v.py", "build/g.py", "c/n.ipynb")
    _tree(tmp_path, "other/o.py")
    (project / "linked").symlink_to(tmp_path / "other", target_is_directory=True)
    (project / "link.py").symlink_to(project / "top.py")
    found = discover([str(project)], Settings(project_root=str(project)))
    assert [os.path.relpath(p, project) for p in found.files] == ["link.py", "top.py", "a/x.py", "b/z.py", "b/a/y.py", "c/n.ipynb"]


@pytest.mark.parametrize("given", [".", "./", "..", "../proj/b"])
def test_discovery_matches_patterns_against_paths_relative_to_the_root(tmp_path, monkeypatch, given):
    """`b/a` is excluded however the directory is reached, even from above the root (`..`)."""
    from dllint.discovery import discover

    project = tmp_path / "proj"
    _tree(project, "b/a/y.py", "b/z.py", "b/ab.py", "keep.py")
    _tree(tmp_path, "x/b/a/outside.py")  # above the root: not `b/a` relative to it
    monkeypatch.chdir(project)
    found = discover([given], Settings(project_root=str(project), extend_exclude=("b/a", "*b.py")))
    names = sorted(Path(p).name for p in found.files)
    expected = {".": ["keep.py", "z.py"], "./": ["keep.py", "z.py"], "..": ["keep.py", "outside.py", "z.py"], "../proj/b": ["z.py"]}
    assert names == expected[given]


def test_engine_lints_inputs_and_has_a_config_seam():
    linter = Linter(Settings())
    python = load("t.py", SAFE.encode())
    assert isinstance(python, Input) and python.kind == "python"
    assert [f.code for f in linter.lint(python).findings] == ["DL001"]
    config = Input("c.yaml", "config", "num_workers: 0\n", document=object())
    assert linter.lint(config).findings == []


def test_the_engine_knows_nothing_of_notebooks():
    import subprocess
    import sys

    source = (Path(__file__).resolve().parent.parent / "dllint" / "engine.py").read_text()
    assert "ipynb" not in source and "notebook import" not in source
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, dllint.engine; print(sorted(m for m in sys.modules if m.startswith('dllint.inputs')))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"


def test_project_reaches_the_facts_and_its_deps_the_result():
    from dllint.deps import Deps, SummaryDep

    class View:
        deps = Deps([SummaryDep("pkg/data.py", "d" * 64)])

    from dllint.rules import Rule

    seen = []

    class Spy(Rule):  # triggered by `DataLoader`, as rules are by default
        code, name, summary = "DL999", "spy", "sees what the facts see"

        def check(self, facts):
            seen.append(facts.project)
            return []

    linter = Linter(Settings(), rules=[Spy])
    result = linter.lint(load("t.py", SAFE.encode()), project=View())
    assert isinstance(seen[0], View)
    assert result.deps == Deps([SummaryDep("pkg/data.py", "d" * 64)])


# -- issue 12.1: stdin fixing never loses the input -------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe not utf-8 DataLoader\n",
        b"# -*- coding: nonexistent -*-\nfrom torch.utils.data import DataLoader\n",
        b"\x00\x01\x02DataLoader\x00",
        ("from torch.utils.data import DataLoader\nDataLoader(ds, shuffle=True, sampler=s)\n" + "def broken(:\n").encode(),
    ],
    ids=["not-utf8", "unknown-coding", "binary", "syntax-error"],
)
@pytest.mark.parametrize("mode", ["--fix", "--fix-only"])
def test_stdin_fix_prints_the_input_unchanged_when_it_cannot_fix(data, mode):
    result = CliRunner().invoke(main, [mode, "--no-cache", "-"], input=data)
    assert result.stdout_bytes == data
    assert "printed as it was" in result.stderr


# -- issue 12.5: no writing through links out of the tree -------------------------------------
def test_fix_does_not_write_through_a_link_out_of_the_directory(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text(SAFE)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.py").symlink_to(outside)
    (tree / "own.py").write_text(SAFE)
    (tree / "sub").mkdir()
    (tree / "inner_link.py").symlink_to(tree / "sub" / "target.py")
    (tree / "sub" / "target.py").write_text(SAFE)
    result = cli("--fix", "--no-cache", str(tree))
    assert outside.read_text() == SAFE, "the target outside the tree is left alone"
    assert (tree / "own.py").read_text() == SAFE_FIXED
    assert (tree / "sub" / "target.py").read_text() == SAFE_FIXED, "a link within the tree is followed"
    assert f"{tree / 'link.py'}: not fixed: a symbolic link to {outside}" in result.stderr
    assert f"{tree / 'link.py'}:3:" in result.stdout, "its findings are still reported"


def test_a_link_named_on_the_command_line_is_fixed(tmp_path):
    target = tmp_path / "elsewhere" / "t.py"
    target.parent.mkdir()
    target.write_text(SAFE)
    (tmp_path / "link.py").symlink_to(target)
    cli("--fix", "--no-cache", str(tmp_path / "link.py"))
    assert target.read_text() == SAFE_FIXED and (tmp_path / "link.py").is_symlink()


# -- issue 12.6: the size limit ----------------------------------------------------------------
@pytest.fixture
def limit_restored():
    """A run sets the process's default read limit to its max-file-size (dllint.files): put back
    after the test, so that a test after it in this process reads within the default (a project
    index built without a linter reads with it)."""
    from dllint import files

    before = files.default_limit()
    yield
    files.set_default_limit(before)


def test_a_file_over_max_file_size_is_one_dl000_and_never_read(tmp_path, limit_restored, monkeypatch):
    big = tmp_path / "big.py"
    big.write_text(SAFE + "x = 1\n" * 200)
    (tmp_path / "pyproject.toml").write_text('[tool.dllint]\nmax-file-size = "1KB"\n')
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: (opened.append(str(f)), real_open(f, *a, **k))[1])
    result = cli("--no-cache", "--format", "json", str(big), cwd=tmp_path)
    monkeypatch.undo()
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "DL000"
    assert "too large" in finding["message"] and "max-file-size" in finding["message"]
    assert str(big) not in opened
    assert cli("--no-cache", "--max-file-size", "1MB", str(big), cwd=tmp_path).exit_code == 1
    assert "DL001" in cli("--no-cache", "--max-file-size", "1MB", str(big), cwd=tmp_path).stdout


def test_max_file_size_applies_to_stdin_and_rejects_nonsense(tmp_path, limit_restored):
    result = cli("--no-cache", "--max-file-size", "10", "-", input=SAFE.encode())
    assert "DL000" in result.stdout and "too large" in result.stdout
    assert cli("--max-file-size", "lots", "-", input=b"").exit_code == exit_codes.ERROR
    (tmp_path / "pyproject.toml").write_text("[tool.dllint]\nmax-file-size = -3\n")
    (tmp_path / "a.py").write_text(CLEAN)
    bad = cli("a.py", cwd=tmp_path)
    assert bad.exit_code == exit_codes.ERROR and "max-file-size" in bad.stderr


# -- issue 12.8: small honesty fixes -------------------------------------------------------------
def test_ctrl_c_exits_130(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(SAFE)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run", interrupted)
    result = cli("--no-cache", str(tmp_path))
    assert result.exit_code == exit_codes.INTERRUPTED == 130
    assert "Aborted" not in result.output


def test_a_newline_in_a_file_name_is_escaped(tmp_path):
    path = tmp_path / "evil\nx.py:1:1: DL999 forged.py"
    path.write_text(SAFE)
    result = cli("--no-cache", str(tmp_path))
    lines = [line for line in result.stdout.splitlines() if "DL" in line and ".py" in line]
    assert len(lines) == 1 and "evil\\nx.py" in lines[0]


def test_an_excluded_directory_says_so(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dllint]\nexclude = ["tests"]\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(SAFE)
    (tmp_path / "empty").mkdir()
    result = cli("--no-cache", "tests", cwd=tmp_path)
    assert "excluded" in result.stderr and "no Python files found" not in result.stderr
    assert "no Python files found in empty" in cli("--no-cache", "empty", cwd=tmp_path).stderr


# -- issue 12.9: the CLI's own help ------------------------------------------------------------------
def test_top_level_help_shows_the_check_options():
    result = cli("--help")
    for option in ("--select", "--fix", "--diff", "--format", "--max-file-size", "--probe", "explain", "rules"):
        assert option in result.output


def test_explain_by_name():
    by_name = cli("explain", "missing-main-guard")
    assert by_name.exit_code == 0 and by_name.output == cli("explain", "DL101").output
    assert cli("explain", "dl101").exit_code == 0
    assert cli("explain", "no-such-rule").exit_code == exit_codes.ERROR


# -- speed: the identifier gates, before and after parsing --------------------------------------
GATED = {
    "strings-and-comments": '"""Wraps a torch DataLoader."""\n# DataLoader(ds, num_workers=4)\nx = "DataLoader"\n',
    "escapes-and-raw": "x = b'DataLoader' + r'\\\\' + \"it's\" + 'DataLoader\\''\n",
    "escaped-triple-quote": 'x = """a \\""" DataLoader"""\n',
    "triple-single": "x = '''DataLoader \"quoted\" '''\n",
    "quotes-inside-triple": 'x = """say "DataLoader" or ""DataLoader"" """\n',
    "prefixes-not-f": "x = Rb\"DataLoader\" + bR'DataLoader' + u\"DataLoader\" + rb'''DataLoader'''\n",
}
LINTED = {
    "import": "from torch.utils.data import DataLoader\n",
    "attribute": "import torch\nloader = torch.utils.data.DataLoader(ds)\n",
    "f-string": 'x = f"{DataLoader}"\n',
    "f-string-nested-quotes": "x = f\"{y['k']}\" + DataLoader\n",
    "rf-and-Fr-strings": 'x = rf"{DataLoader}" + Fr"{DataLoader}"\n',
    "escaped-newline": 'x = "a\\\nb"; DataLoader\n',
    "parameter": "def build(DistributedSampler=None):\n    pass\n",
}


@pytest.mark.parametrize("source", list(GATED.values()), ids=list(GATED))
def test_files_that_name_a_trigger_only_in_strings_are_not_parsed(monkeypatch, source):
    import dllint.engine as engine

    parsed = []
    real = engine.ast.parse
    monkeypatch.setattr(engine.ast, "parse", lambda *a, **k: (parsed.append(1), real(*a, **k))[1])
    result = lint_text(Linter(Settings()), "t.py", source)
    monkeypatch.undo()
    assert not parsed and result.skipped
    real(source)  # the examples are valid Python


@pytest.mark.parametrize("source", list(LINTED.values()), ids=list(LINTED))
def test_files_that_name_a_trigger_in_code_get_facts(monkeypatch, source):
    import ast


    ast.parse(source)
    made = []
    real = facts_file.FileFacts
    monkeypatch.setattr(facts_file, "FileFacts", lambda *a, **k: (made.append(a[0]), real(*a, **k))[1])
    result = lint_text(Linter(Settings()), "t.py", source)
    assert made and not result.skipped


def test_the_tree_gate_catches_what_the_scan_lets_through(monkeypatch):
    """A trigger in an f-string's text (not its fields) passes the scan; the tree has no such identifier."""

    made = []
    monkeypatch.setattr(facts_file, "FileFacts", lambda *a, **k: made.append(1))
    result = lint_text(Linter(Settings()), "t.py", 'x = f"DataLoader {y}"\n')
    assert result.skipped and not made


def test_a_literal_trigger_in_a_string_still_gets_the_file_parsed(monkeypatch):
    """A rule that reads os.environ["WORLD_SIZE"] declares it: the gates then let the file through."""
    from dllint.rules import Rule

    class ReadsEnvironment(Rule):
        code, name, summary = "DL999", "reads-environment", "test rule"
        triggers = (b"WORLD_SIZE",)
        literal_triggers = (b"WORLD_SIZE",)

        def check(self, facts):
            return iter(())

    made = []
    real = facts_file.FileFacts
    monkeypatch.setattr(facts_file, "FileFacts", lambda *a, **k: (made.append(1), real(*a, **k))[1])
    source = 'import os\nsize = int(os.environ["WORLD_SIZE"])\n'
    assert not lint_text(Linter(Settings(), rules=[]), "t.py", source).findings
    lint_text(Linter(Settings(), rules=[ReadsEnvironment]), "t.py", source)
    assert made


def test_a_one_file_check_imports_only_what_it_uses(tmp_path):
    """The pre-commit case (one file, no config file) pays for no module it does not use:
    no pool, no cache, no TOML parser, no LibCST, no traceback formatting, no doc dedenting,
    no hashing or JSON (the project index needs them only for summaries it computes), no config
    tree (no config file read), no pkgutil. (The project index, and the pathlib it imports, are
    loaded: every run has a project root, the file's directory when no marker is above it.)"""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(SAFE)
    # Without site (-S): an editable install's finder, run from a .pth file, imports pathlib itself.
    import dllint

    places = [str(Path(dllint.__file__).resolve().parents[1]), *(p for p in sys.path if p.endswith("site-packages"))]
    code = (
        f"import sys; sys.path[:0] = {places!r}; before = set(sys.modules); from dllint.cli import main\n"
        "try:\n    main(['--no-cache', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('multiprocessing', 'concurrent.futures', 'dllint.cache', 'tomllib',"
        " 'libcst', 'traceback', 'textwrap', 'hashlib', 'json', 'dllint.configs.document', 'dllint.configs.blocks',"
        " 'pkgutil', 'importlib.util')"
        " if m in sys.modules and m not in before))"
    )
    loaded = subprocess.run([sys.executable, "-S", "-c", code, str(script)], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert loaded.stdout.strip().splitlines()[-1] == "[]"


# -- speed: the rule-aware gate (a trigger counts only where a rule that needs it could fire) ------
RULE_GATED = {
    # DL305's environment variables, but no loader constructed here: DL305 reports on a loader call
    "rank-without-loader": 'import os\nrank = int(os.environ["RANK"])\nworld = int(os.environ["WORLD_SIZE"])\n',
    # `Dataset` named, but by no class header: DL104 and DL304 look only at dataset classes defined here
    "dataset-in-a-hint": "from torch.utils.data import Dataset\n\n\ndef size(ds: Dataset) -> int:\n    return len(ds)\n",
    "dataset-class-named-only": "class CocoDataset:\n    pass\n\n\ndef make() -> 'Dataset':\n    return Dataset()\n",
    # `multiprocessing` without a loader or a starter of processes: DL101 has nothing to report
    "cpu-count": "import multiprocessing\n\nWORKERS = multiprocessing.cpu_count()\n",
}
RULE_LIVE = {
    "rank-with-loader": 'import os\nfrom torch.utils.data import DataLoader\nrank = int(os.environ["RANK"])\n',
    "dataset-base": "import torch\n\n\nclass Ds(torch.utils.data.Dataset):\n    pass\n",
    "dataset-base-on-lines": "from torch.utils.data import Dataset\n\n\nclass Ds(\n    object,\n    Dataset,\n):\n    pass\n",
    "dataset-alias": "from torch.utils.data import Dataset as Base\n\n\nclass Ds(Base):\n    pass\n",
    "pool": "import multiprocessing\n\nwith multiprocessing.Pool(4) as pool:\n    pool.map(print, range(4))\n",
    "custom-loader": "from mylib import FastLoader\nimport os\nrank = int(os.environ['RANK'])\nFastLoader(ds)\n",
}


def _parses(monkeypatch, source: str, settings: Settings | None = None) -> bool:
    import dllint.engine as engine

    parsed = []
    real = engine.ast.parse
    monkeypatch.setattr(engine.ast, "parse", lambda *a, **k: (parsed.append(1), real(*a, **k))[1])
    linter = Linter(settings or Settings(select=("ALL",), extend_loader_classes=("mylib.FastLoader",)))
    lint_python_bytes(linter, "t.py", source.encode())
    monkeypatch.undo()
    return bool(parsed)


@pytest.mark.parametrize("source", list(RULE_GATED.values()), ids=list(RULE_GATED))
def test_a_trigger_no_rule_could_fire_on_is_not_parsed(monkeypatch, source):
    assert not _parses(monkeypatch, source)
    assert Linter(Settings()).prefilter.screen(source.encode()) is None


@pytest.mark.parametrize("source", list(RULE_LIVE.values()), ids=list(RULE_LIVE))
def test_a_trigger_a_rule_could_fire_on_is_parsed(monkeypatch, source):
    assert _parses(monkeypatch, source)


def test_the_gate_follows_the_rules_enabled(monkeypatch):
    """`Dataset` in a hint alone: no rule could fire; with a loader too, DL305 still could not
    without a distributed trigger, the loader rules could."""
    source = RULE_GATED["dataset-in-a-hint"] + "from torch.utils.data import DataLoader\n"
    assert _parses(monkeypatch, source)
    assert not _parses(monkeypatch, source, Settings(select=("DL104", "DL304", "DL305")))


def test_only_the_rules_whose_triggers_are_in_the_file_run(monkeypatch):
    """A parsed file meets only the rules its bytes let through (the prefilter's contract, per
    rule): DL301 (`DistributedSampler`) and DL305 (a distributed trigger) never look at a loader
    script that names neither, and nothing they would have said is lost."""
    from dllint.rules import rule_by_code

    ran = []
    for code in ("DL201", "DL301", "DL305"):
        rule = rule_by_code(code)
        real = rule.check
        monkeypatch.setattr(rule, "check", lambda self, facts, real=real, code=code: (ran.append(code), real(self, facts))[1])
    source = "from torch.utils.data import DataLoader\nfor epoch in range(3):\n    for batch in DataLoader(ds, num_workers=2):\n        pass\n"
    findings = lint_python_bytes(Linter(Settings(select=("ALL",))), "t.py", source.encode()).findings
    assert ran == ["DL201"] and "DL204" in {f.code for f in findings}
    ran.clear()
    lint_python_bytes(Linter(Settings(select=("ALL",))), "t.py", ("import os\nos.environ['RANK']\n" + source).encode())
    assert ran == ["DL201", "DL305"]


def test_a_dataset_class_through_an_alias_still_fires():
    source = (
        "from torch.utils.data import Dataset as Base\n\n\nclass Ds(Base):\n"
        "    def __init__(self, path):\n        self.f = open(path)\n"
    )
    assert [f.code for f in lint_python_bytes(Linter(Settings(select=("DL104",))), "t.py", source.encode()).findings] == ["DL104"]


def test_a_gated_file_is_still_a_caller_the_project_index_finds(tmp_path, monkeypatch):
    """The gate skips linting a file, never the index's view of it: train.py names DL305's
    `RANK` and a `Dataset` hint but constructs no loader (not linted), and data.py's finding
    rests on train.py iterating build_loader's loader every epoch."""
    from dllint.per_file import lint as lint_bytes
    from dllint.project import ProjectIndex

    train = (
        "import os\nfrom torch.utils.data import Dataset\nfrom data import build_loader\n\n\n"
        "def main(dataset: Dataset, model, epochs):\n    rank = int(os.environ['RANK'])\n"
        "    loader = build_loader(dataset)\n    for epoch in range(epochs):\n        for batch in loader:\n            model(batch)\n"
    )
    data = (
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\ndef build_loader(dataset):\n"
        "    sampler = DistributedSampler(dataset)\n    return DataLoader(dataset, sampler=sampler, num_workers=4)\n"
    )
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "data.py").write_text(data)
    settings = Settings(select=("ALL",))
    assert not _parses(monkeypatch, train, settings)
    index = ProjectIndex(tmp_path, settings)
    result = lint_bytes(Linter(settings), str(tmp_path / "data.py"), data.encode(), index.view(str(tmp_path / "data.py")))
    assert [(f.line, f.code) for f in result.findings] == [(5, "DL301"), (6, "DL201")]
    assert str((tmp_path / "train.py").resolve()) in result.deps


def test_process_starts_resolve_no_call_in_a_file_that_cannot_start_one(monkeypatch):
    """Every starter of processes is spelled through `multiprocessing` or `ProcessPoolExecutor`:
    without either word, no call's name is resolved; with it, a starter is found as before."""
    import ast

    from dllint.facts import FileFacts
    from dllint.facts.processes import find_process_starts

    def facts_of(source: str) -> FileFacts:
        return FileFacts("t.py", source, ast.parse(source), Settings())

    plain = facts_of("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nprint(len(loader))\n")
    monkeypatch.setattr(FileFacts, "qualname", lambda self, node: pytest.fail("a call was resolved"))
    assert find_process_starts(plain) == []
    monkeypatch.undo()
    (start,) = find_process_starts(facts_of("import torch\n\ntorch.multiprocessing.spawn(run, nprocs=2)\n"))
    assert start.description == "`torch.multiprocessing.spawn(...)`"


def test_a_linted_file_leaves_no_cycles_for_the_collector():
    """The facts' analyses refer back to them; the engine empties the facts after the rules,
    so a file's tree is freed when its lint returns, not walked again by the cyclic collector."""
    import gc

    source = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
        "class Ds(Dataset):\n    def __init__(self, path):\n        self.f = open(path)\n\n\n"
        "def main(ds):\n    dist.init_process_group('nccl')\n    loader = DataLoader(ds, num_workers=2, shuffle=True)\n"
        "    for epoch in range(3):\n        for batch in loader:\n            print(batch)\n\n\nmain(Ds('x'))\n"
    )
    linter = Linter(Settings(select=("ALL",)))
    assert lint_text(linter, "t.py", source).findings  # the analyses ran
    gc.collect()
    lint_text(linter, "t.py", source)
    assert gc.collect() == 0


def test_only_calls_that_could_construct_a_loader_are_resolved(monkeypatch):
    """A loader's callee ends in a loader class's name, an import alias of one, a custom loader
    class's or a local subclass's; other calls are rejected before their names are resolved."""
    import ast

    from dllint.facts import FileFacts

    source = (
        "import torch.utils.data as tud\nfrom torch.utils.data import DataLoader as DL\nfrom mylib import FastLoader as FL\n"
        "import mylib\n\n\nclass Mine(DL):\n    pass\n\n\n"
        "loaders = [tud.DataLoader(ds), DL(ds), FL(ds), mylib.FastLoader(ds), Mine(ds)]\nprint(len(loaders), sum(range(3)))\n"
    )
    resolved = []
    real = FileFacts.qualname
    monkeypatch.setattr(FileFacts, "qualname", lambda self, node: (resolved.append(ast.unparse(node)), real(self, node))[1])
    facts = FileFacts("t.py", source, ast.parse(source), Settings(extend_loader_classes=frozenset({"mylib.FastLoader"})))
    assert [ast.unparse(loader.node.func) for loader in facts.loader_calls] == ["tud.DataLoader", "DL", "FL", "mylib.FastLoader", "Mine"]
    assert not {"print", "len", "sum", "range"} & set(resolved)


def test_an_import_of_a_trigger_needs_no_scan_and_a_docstring_import_is_still_skipped(monkeypatch):
    import dllint.prefilter as prefilter

    made = []
    real = facts_file.FileFacts
    monkeypatch.setattr(facts_file, "FileFacts", lambda *a, **k: (made.append(1), real(*a, **k))[1])
    monkeypatch.setattr(prefilter, "_code_scan", lambda names: pytest.fail("scanned"))
    assert not lint_text(Linter(Settings()), "t.py", "from torch.utils.data import DataLoader\n").skipped
    assert made
    made.clear()
    example = '"""Usage:\n\nfrom torch.utils.data import DataLoader\n"""\n\nx = 1\n'
    assert lint_text(Linter(Settings()), "t.py", example).skipped and not made  # parsed; the tree gate skips it


def test_the_gates_the_prefilter_found_are_not_searched_for_again(monkeypatch):
    """lint_bytes hands the prefilter's gates to lint_text (the triggers are ASCII: what the bytes
    hold, the text holds): the text is not searched for them a second time."""
    linter = Linter(Settings())
    searched = []
    from dllint.prefilter import Prefilter

    real = Prefilter.live_gates
    monkeypatch.setattr(Prefilter, "live_gates", lambda self, haystack: (searched.append(type(haystack)), real(self, haystack))[1])
    source = "from torch.utils.data import DataLoader\nDataLoader(ds, persistent_workers=True)\n"
    assert [f.code for f in lint_python_bytes(linter, "t.py", source.encode()).findings] == ["DL001"]
    assert searched == [bytes]


@pytest.mark.parametrize(
    ("source", "config"),
    [
        ("num_workers = 0\nbatch_size = 8\n", True),
        ("import os\nnum_workers = 0\n\ndef main():\n    pass\n", False),
        ("num_workers = 0\n\nclass C:\n    pass\n", False),
        ("def f():\n    pass\nnum_workers = 0\n", False),  # a first line's def: the regex decides
        ("num_workers = 0\nif True:\n    pass\n", False),
        ("num_workers = 0\nclassic = 1\ndefault = 2\n", True),  # names that start like keywords
    ],
)
def test_the_prefilter_lets_a_dict_config_through_and_a_script_not(source, config):
    prefilter = Linter(Settings()).prefilter.screen(source.encode(), "conf.py")
    assert (prefilter == ()) if config else (prefilter is None)


def test_importing_what_a_run_imports_compiles_no_regex():
    """Module-level patterns are compiled on first use (dllint.patterns): compiling costs 0.1-0.8
    ms a pattern, which every one-file run would pay at import for patterns it may never use."""
    import subprocess
    import sys

    code = (
        "import re, sys\n"
        "real = re.compile; compiled = []\n"
        "def spy(pattern, flags=0):\n"
        "    caller = sys._getframe(1).f_globals.get('__name__', '')\n"
        "    compiled.append(caller) if caller.startswith('dllint') else None\n"
        "    return real(pattern, flags)\n"
        "re.compile = spy\n"
        "import dllint.cli, dllint.pipeline, dllint.runner\n"
        "from dllint.rules import all_rules; all_rules()\n"
        "print(compiled)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_a_lazy_pattern_compiles_on_first_use_and_then_answers_directly():
    from dllint.patterns import LazyPattern

    pattern = LazyPattern(r"no(qa)", 2)  # re.IGNORECASE
    assert "search" not in vars(pattern)
    assert pattern.search("x NOQA").group(1) == "QA"
    assert "search" in vars(pattern) and pattern.sub("-", "noqa") == "-"


def test_no_module_level_import_runs_up_the_layers():
    """The orchestrators sit above what they call (benchmarks/layers.py: DESIGN.md's layers, the
    drivers in calling order); a lazy import inside a function is counted there, not held here."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "layers.py"
    spec = importlib.util.spec_from_file_location("layers", path)
    assert spec is not None and spec.loader is not None
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    assert [(name, target) for name, target, top in layers.up_imports() if top] == []
