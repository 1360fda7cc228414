"""Properties over generated programs: the fixtures, mutated the way real code varies.

- linting never raises and never reports an internal error;
- ``--fix --unsafe-fixes`` never turns a parsable program into an unparsable one;
- fixing is idempotent: a second pass over the fixed text changes nothing.

Programs are fixtures with a few line edits (delete, duplicate, insert a loader-related
line, swap call arguments, change a literal) and wrappers (a loop, a function, a class, a
guard around the whole file). Hypothesis is derandomized with no example database, so CI
runs the same programs every time; the example counts keep the file near half a minute.
"""

from __future__ import annotations

import ast
import atexit
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from dllint.config import Settings
from dllint.engine import Linter
from dllint.fixer import fix_text
from lint_helpers import lint_text
from tests.conftest import FIXTURES

# Hypothesis caches what it learns under ./.hypothesis even with no example database, from the
# moment a test is collected: keep that out of the checkout.
HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="dllint-hypothesis-")
set_hypothesis_home_dir(HYPOTHESIS_HOME)
atexit.register(shutil.rmtree, HYPOTHESIS_HOME, True)


def _fixture_sources() -> list[str]:
    sources = []
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_bytes().decode("utf-8", "replace")
        if "DataLoader" in text and "after" not in path.name:
            sources.append(text)
    return sources


SOURCES = _fixture_sources()

SNIPPETS = (
    "loader = DataLoader(ds, num_workers=0, persistent_workers=True)",
    "loader = DataLoader(ds, batch_size=4, num_workers=4)",
    "loader = DataLoader(ds, sampler=sampler, shuffle=True)",
    "loader = DataLoader(ds, batch_sampler=bs, batch_size=2, drop_last=True)",
    "loader = DataLoader(ds, collate_fn=lambda b: b, num_workers=2)",
    "loader = DataLoader(ds, num_workers=os.cpu_count(), pin_memory=False)",
    "for batch in loader:\n    batch = batch.cuda()",
    "for epoch in range(3):\n    for batch in DataLoader(ds, num_workers=2):\n        pass",
    "it = iter(loader)",
    "sampler = DistributedSampler(ds)",
    "sampler.set_epoch(epoch)",
    "def collate(batch):\n    return batch",
    "if __name__ == '__main__':\n    main()",
    "import torch\nfrom torch.utils.data import DataLoader, Dataset, IterableDataset",
    "class Ds(Dataset):\n    def __getitem__(self, i):\n        return self.rng.random()",
    "return loader",
    "yield batch",
    "global loader",
    "del loader",
    "x = (",
    "lambda: None",
    "pass  # noqa: DL201",
    "# dllint: noqa",
    "'''",
)
LITERALS = ("0", "1", "-1", "2", "8", "64", "True", "False", "None", "'spawn'", "os.cpu_count()", "args.workers")
WRAPPERS = (
    "for _ in range(2):",
    "while True:",
    "def wrapper():",
    "async def wrapper():",
    "class Wrapper:",
    "if __name__ == '__main__':",
    "if cond:",
    "with context():",
    "try:",
)
NUMBER_OR_BOOL = re.compile(r"\b(?:\d+|True|False|None)\b")
TWO_ARGUMENTS = re.compile(r"\(([^(),]+), ([^(),]+)")


def _indent_of(lines: list[str], index: int) -> str:
    line = lines[min(index, len(lines) - 1)] if lines else ""
    return line[: len(line) - len(line.lstrip())]


@st.composite
def programs(draw) -> str:
    lines = draw(st.sampled_from(SOURCES)).splitlines()
    for _ in range(draw(st.integers(0, 4))):
        if not lines:
            break
        kind = draw(st.sampled_from(("delete", "duplicate", "insert", "swap", "literal")))
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "delete":
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "insert":
            indent = _indent_of(lines, at)
            snippet = draw(st.sampled_from(SNIPPETS))
            lines[at:at] = [indent + s for s in snippet.splitlines()]
        elif kind == "swap":
            lines[at] = TWO_ARGUMENTS.sub(r"(\2, \1", lines[at], count=1)
        else:
            literal = draw(st.sampled_from(LITERALS))
            lines[at] = NUMBER_OR_BOOL.sub(literal, lines[at], count=1)
    if draw(st.booleans()):
        header = draw(st.sampled_from(WRAPPERS))
        body = ["    " + line if line.strip() else line for line in lines] or ["    pass"]
        lines = [header, *body] + (["finally:", "    pass"] if header == "try:" else [])
    return "\n".join(lines) + "\n"


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


LINTER = Linter(Settings(select=("ALL",)))
EXAMPLES = settings(
    derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=False
)


def test_the_generator_reaches_the_rules():
    """The mutated programs must still be programs the rules fire on, or the properties test nothing."""
    assert len(SOURCES) > 50
    assert sum(bool(lint_text(LINTER, "f.py", s).findings) for s in SOURCES) > len(SOURCES) // 2


@settings(EXAMPLES, max_examples=300)
@given(programs())
def test_lint_never_raises(source):
    result = lint_text(LINTER, "generated.py", source)
    assert result.errors == []
    assert all(f.line >= 1 and f.column >= 1 for f in result.findings)


@settings(EXAMPLES, max_examples=120)
@given(programs())
def test_fix_keeps_code_parsable_and_is_idempotent(source):
    first = fix_text("generated.py", source, LINTER, unsafe=True)
    assert first.errors == []
    if _parses(source):
        assert _parses(first.text), f"--fix --unsafe-fixes broke the code:\n{first.text}"
    else:
        assert first.text == source  # an unparsable file is never touched
    second = fix_text("generated.py", first.text, LINTER, unsafe=True)
    assert second.errors == []
    assert second.text == first.text, "a second --fix pass changed the code again"


# -- YAML: anchors, aliases (cycles included), merge keys, deep nesting ---------------------
YAML_KEYS = ("num_workers", "batch_size", "persistent_workers", "pin_memory", "shuffle", "train_loader", "loader", "dataset", "defaults", "_target_", "<<", "x")
YAML_SCALARS = ("0", "2", "64", "-1", "true", "false", "null", "~", "0x40", "1" + "0" * 5000, "'${loader.num_workers}'", "'${.x}'", "torch.utils.data.DataLoader", "config", "_self_")


@st.composite
def yaml_documents(draw) -> str:
    """Flow-style YAML: containers may carry an anchor; any value may be an alias to an anchor
    already opened, an enclosing one included (a cycle)."""
    anchors: list[str] = []
    budget = [draw(st.integers(5, 60))]

    def node(depth: int) -> str:
        budget[0] -= 1
        if anchors and draw(st.integers(0, 4)) == 0:
            return "*" + draw(st.sampled_from(anchors))
        kind = draw(st.sampled_from(("scalar", "scalar", "mapping", "sequence"))) if budget[0] > 0 and depth < 12 else "scalar"
        if kind == "scalar":
            return draw(st.sampled_from(YAML_SCALARS))
        anchor = ""
        if draw(st.booleans()):
            name = f"a{len(anchors)}"
            anchors.append(name)
            anchor = f"&{name} "
        size = draw(st.integers(0, 4))
        if kind == "sequence":
            return anchor + "[" + ", ".join(node(depth + 1) for _ in range(size)) + "]"
        keys = draw(st.lists(st.sampled_from(YAML_KEYS), min_size=size, max_size=size, unique=True))
        return anchor + "{" + ", ".join(f"{key}: {node(depth + 1)}" for key in keys) + "}"

    top = [f"{key}: {node(0)}" for key in draw(st.lists(st.sampled_from(YAML_KEYS), min_size=1, max_size=5, unique=True))]
    nesting = draw(st.sampled_from((0, 0, 0, 50, 400)))
    if nesting:
        top.append("deep: " + "[" * nesting + "{num_workers: 64, batch_size: 1}" + "]" * nesting)
    return "\n".join(top) + "\n"


@settings(EXAMPLES, max_examples=100)
@given(yaml_documents())
def test_yaml_lint_and_fix_never_raise_and_stay_fast(document):
    from dllint.per_file import fix as fix_file
    from dllint.per_file import lint as lint_bytes

    start = time.process_time()
    result = lint_bytes(LINTER, "generated.yaml", document.encode())
    assert result.errors == []
    assert all(f.line >= 1 and f.column >= 1 for f in result.findings)
    fixed = fix_file(LINTER, "generated.yaml", document.encode(), unsafe=True)
    assert fixed.errors == []
    assert time.process_time() - start < 10, "aliases walked without a memo?"


# -- file-system states: symlinks, FIFOs, read-only files, other owners, a planted cache ----
FIXABLE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=2, persistent_workers=False)\nfor epoch in range(3):\n    for batch in loader:\n        pass\n"
ENTRY_KINDS = ("fixable", "fixable", "clean", "link-inside", "link-outside", "dangling", "loop", "fifo", "read-only", "other-owner", "dir-link")
CACHE_STATES = ("none", "entry-link", "gitignore-dangling", "lock-fifo", "entry-fifo")


@contextmanager
def _deadline(seconds: int):
    """A hang (a FIFO read or opened for writing) fails the example instead of the suite."""
    def expire(signum, frame):
        raise TimeoutError(f"no result within {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _build_tree(root: Path, kinds: list[str]) -> None:
    (root / "project").mkdir()
    outside = root / "outside.py"
    outside.write_text(FIXABLE)
    for i, kind in enumerate(kinds):
        path = root / "project" / f"f{i}.py"
        if kind in ("fixable", "read-only", "other-owner"):
            path.write_text(FIXABLE)
            if kind == "read-only":
                path.chmod(0o444)
            elif kind == "other-owner" and os.geteuid() == 0:
                os.chown(path, 1234, 1234)
                path.chmod(0o640)
        elif kind == "clean":
            path.write_text("x = 1\n")
        elif kind == "link-inside":
            (root / "project" / f"t{i}.txt").write_text(FIXABLE)
            path.symlink_to(f"t{i}.txt")
        elif kind == "link-outside":
            path.symlink_to(outside)
        elif kind == "dangling":
            path.symlink_to(root / "nowhere.py")
        elif kind == "loop":
            path.symlink_to(path.name)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            (root / "elsewhere").mkdir(exist_ok=True)
            (root / "elsewhere" / "e.py").write_text(FIXABLE)
            (root / "project" / f"d{i}").symlink_to(root / "elsewhere")


def _plant(cache_file: Path, state: str, victim: Path) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    if state == "entry-link":
        cache_file.symlink_to(victim)
    elif state == "gitignore-dangling":
        (cache_file.parent.parent / ".gitignore").symlink_to(victim.parent / "created-by-gitignore")
    elif state == "lock-fifo":
        os.mkfifo(cache_file.with_suffix(".lock"))
    elif state == "entry-fifo":
        os.mkfifo(cache_file)


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: kind, owner, mode and, for regular files, the content."""
    found = {}
    for path in sorted(root.rglob("*")):
        st_ = os.lstat(path)
        content = path.read_bytes() if stat.S_ISREG(st_.st_mode) else None
        found[str(path.relative_to(root))] = (stat.S_IFMT(st_.st_mode), st_.st_uid, st_.st_gid, stat.S_IMODE(st_.st_mode), content)
    return found


@settings(EXAMPLES, max_examples=50)
@given(st.lists(st.sampled_from(ENTRY_KINDS), min_size=1, max_size=6), st.sampled_from(CACHE_STATES))
def test_fix_over_any_file_system_state_loses_nothing_and_escapes_nowhere(kinds, cache_state):
    """``--fix`` over a directory of symlinks (inside, outside, dangling, looping), FIFOs,
    read-only files and files of another owner, with a planted cache: it ends; nothing outside
    the project changes; no temporary file stays; owner, group and mode are kept; fixing again
    changes nothing."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        _build_tree(root, kinds)
        project = root / "project"
        os.chdir(project)
        try:
            _fix_twice_and_compare(root, project, cache_state)
        finally:
            os.chdir(here)


def _not_read_only(errors: list[str]) -> list[str]:
    return [e for e in errors if not e.endswith("cannot write the fixed file: read-only (mode 444): left as it is")]


def _fix_twice_and_compare(root: Path, project: Path, cache_state: str) -> None:
    from dllint.pipeline import RunOptions, cache_for, run

    settings_ = Settings(project_root=str(project))
    linter = Linter(settings_)
    options = RunOptions(mode="fix", unsafe_fixes=True, jobs=1, cache_dir=str(project / ".cache"), project_root=str(project))
    victim = root / "victim.txt"
    victim.write_text("precious\n")
    cache_file = Path(cache_for(settings_, linter, options).path)  # (a string: the cache imports no pathlib)
    _plant(cache_file, cache_state, victim)
    outside_before = {k: v for k, v in _snapshot(root).items() if not k.startswith("project")}
    owners_before = {k: v[:4] for k, v in _snapshot(project).items() if v[0] == stat.S_IFREG and not k.startswith(".cache")}
    with _deadline(60):
        first = run(["."], settings_, options, linter=linter)
        assert _not_read_only(first.errors) == []  # a 0444 file is left as it is, and said so
        after_first = _snapshot(project)
        second = run(["."], settings_, options, linter=linter)
    assert _not_read_only(second.errors) == [] and not second.changed, "a second --fix changed the files again"
    assert {k: v for k, v in _snapshot(root).items() if not k.startswith("project")} == outside_before
    assert not [k for k in _snapshot(root) if k.endswith(".dllint-tmp")]
    for name, before in owners_before.items():
        assert after_first[name][:4] == before, f"{name}: owner, group or mode changed"
    # The victim is outside the project (compared above); a planted entry link is replaced once
    # the run has something to store.
    links = [path.name for path in (project / ".cache").rglob("*") if path.is_symlink()]
    planted = {"gitignore-dangling": [".gitignore"], "entry-link": [] if first.files else [cache_file.name]}
    assert links == planted.get(cache_state, [])
