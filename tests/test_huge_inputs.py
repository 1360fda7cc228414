"""Huge generated inputs: the analysis does work proportional to the file, not to findings x line length.

The bounds below are generous (several times what the linear code needs on a loaded 2-core
machine) and far below what the quadratic code took: they catch a regression, not noise.
"""

from __future__ import annotations

import gc
import time

import pytest

from dllint.config import Settings
from dllint.engine import Linter
from dllint.facts import ColumnMap
from dllint.gc_pause import collector_paused
from lint_helpers import lint_text

HEADER = "from torch.utils.data import DataLoader\n"


def lint(source: str):
    linter = Linter(Settings())
    start = time.process_time()
    result = lint_text(linter, "huge.py", source)
    return result, time.process_time() - start


def test_many_findings_on_one_long_non_ascii_line():
    """Each finding used to re-encode the whole line, and decode it up to the finding, for its column:
    2,000 findings after 1 MB of non-ASCII text on one line took 12 s of CPU (0.5 s now)."""
    padding = 'text = "' + "é" * 1_000_000 + '"; '
    statements = "; ".join(f"l{i} = DataLoader(text, num_workers=0, persistent_workers=True)" for i in range(2000))
    source = HEADER + padding + statements + "\n"
    result, seconds = lint(source)
    assert seconds < 3, f"{seconds:.1f} s of CPU for 2,000 findings on one line"
    assert result.errors == []
    assert len(result.findings) == 2000
    last = result.findings[-1]
    assert last.column == len(padding + statements) - len("persistent_workers=True)") + 1


def test_noqa_on_a_long_line_is_read_once_and_still_applies():
    """The line's noqa comment used to be searched for once per finding: 61 s of CPU here (1 s now)."""
    statements = "; ".join(f"l{i} = DataLoader(ds, num_workers=0, persistent_workers=True)" for i in range(1000))
    source = HEADER + statements + "  # noqa: DL001 " + "x" * 2_000_000 + "\n"
    result, seconds = lint(source)
    assert result.findings == []
    assert seconds < 8, f"{seconds:.1f} s of CPU to apply one noqa to 1,000 findings"


def test_one_megabyte_one_line_list_lints_in_seconds():
    """The issue's case: 1 MB on one line took 11 s and 521 MB."""
    data = "x = [" + ", ".join(str(i) for i in range(150_000)) + "]\n"
    source = HEADER + data + "DataLoader(x, num_workers=0, persistent_workers=True)\n"
    assert len(source) > 1_000_000
    result, seconds = lint(source)
    assert [f.code for f in result.findings] == ["DL001"]
    assert seconds < 15, f"{seconds:.1f} s of CPU for a 1 MB one-line list"


@pytest.mark.parametrize("block", [1, 2, 3, 4096])
def test_columns_on_non_ascii_lines_match_characters(monkeypatch, block):
    monkeypatch.setattr(ColumnMap, "BLOCK", block)
    line = "é€😀a\u07ff\u0800bé😀€" * 5
    columns = ColumnMap([line, "ascii only"])
    offset = 0
    for index, char in enumerate(line + " "):
        assert columns.column(1, offset) == index + 1
        offset += len(char.encode("utf-8"))
    assert columns.column(2, 6) == 7


def test_columns_match_what_findings_report_on_a_non_ascii_line():
    source = HEADER + "données = [1]; loader = DataLoader(données, num_workers=0, persistent_workers=True)\n"
    (finding,) = lint_text(Linter(Settings()), "x.py", source).findings
    line = source.splitlines()[1]
    assert finding.column == line.index("persistent_workers") + 1
    assert finding.end_column == line.index("persistent_workers") + len("persistent_workers=True") + 1


def test_the_collector_is_paused_while_linting_and_restored_after():
    seen = []

    @collector_paused
    def probe():
        seen.append(gc.isenabled())

    assert gc.isenabled()
    probe()
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        probe()  # a caller that paused it keeps it paused
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_many_loaders_with_resolved_worker_counts_scale_linearly():
    """Each DL201 fix quoted `args.workers` with ast.get_source_segment, which splits the whole file
    per call, and each loader tried every module name as an alias of itself: 1,000 loaders
    (0.1 MB) took 16 s of CPU, 2,000 took 64 s; now 0.3 s and 0.6 s."""
    header = (
        "import argparse\nfrom torch.utils.data import DataLoader\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--workers', type=int, default=4)\n"
        "args = parser.parse_args()\n"
    )
    body = "".join(
        f"loader{i} = DataLoader(ds, num_workers=args.workers)\nfor epoch in range(3):\n    for b in loader{i}:\n"
        "        pass\n"
        for i in range(1500)
    )
    result, seconds = lint(header + body)
    assert seconds < 5, f"{seconds:.1f} s of CPU for 1,500 loaders"
    fixes = [f for f in result.findings if f.code == "DL201"]
    assert len(fixes) == 1500 and all(f.fix is not None for f in fixes)


def test_lines_are_counted_where_ast_counts_them():
    """A U+2028 or form feed inside a string is no line break to ast; str.splitlines made every
    later line one off, so a noqa was read from the line above and columns from the wrong text."""
    source = (
        HEADER + 's = "a\u2028b\x0cc"\n'
        "é = 1; loader = DataLoader([1], num_workers=0, persistent_workers=True)  # noqa: DL001\n"
        "é = 1; loader = DataLoader([1], num_workers=0, persistent_workers=True)\n"
    )
    (finding,) = lint_text(Linter(Settings()), "x.py", source).findings
    assert (finding.line, finding.column) == (4, source.split("\n")[3].index("persistent") + 1)
