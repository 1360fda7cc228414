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
import re
import shutil
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from dllint.config import Settings
from dllint.engine import Linter
from dllint.fixer import fix_text
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
    assert sum(bool(LINTER.lint_text("f.py", s).findings) for s in SOURCES) > len(SOURCES) // 2


@settings(EXAMPLES, max_examples=300)
@given(programs())
def test_lint_never_raises(source):
    result = LINTER.lint_text("generated.py", source)
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
