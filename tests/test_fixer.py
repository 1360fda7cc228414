"""The fixer on texts: what it refuses, what it reports, what it leaves alone."""

from __future__ import annotations

import pytest

import dllint.fixer as fixer
from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_source, lint_text
from dllint.findings import Finding, SetArgument
from dllint.fixer import fix_text
from dllint.inputs import Input
from dllint.output import RunSummary
from dllint.output.text import render_text
from dllint.rules import rule_by_code


def linter(*codes: str) -> Linter:
    return Linter(Settings(), rules=[rule_by_code(code) for code in codes])


EPOCHS = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=2)\nfor epoch in range(3):\n"


def test_code_libcst_rejects_keeps_its_findings_and_loses_its_fixes(monkeypatch):
    """A fix that needs the whole module (hoisting a lambda to module level). What LibCST rejects
    and Python compiles is rare (code Python does not compile is one DL000: see below); LibCST's
    refusal is simulated."""
    import libcst

    def rejects(*args, **kwargs):
        raise libcst.CSTValidationError("simulated")

    monkeypatch.setattr(fixer.FileState, "parse", rejects)
    text = EPOCHS.replace("num_workers=2)", "num_workers=2, collate_fn=lambda b: b)") + "    pass\n"
    result = fix_text("t.py", text, linter("DL102"))
    assert result.text == text and not result.fixed
    ((finding, reason),) = result.failed
    assert finding.code == "DL102" and "LibCST cannot parse" in reason and "CSTValidationError" in reason
    assert [f.code for f in result.remaining] == ["DL102"]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("    for* batch in loader:\n        pass\n", "DL000 syntax error: starred assignment target must be in a list or tuple at line 5 column 8"),
        ("    x = 1\n    global x\n", "DL000 syntax error: name 'x' is assigned to before global declaration at line 6 column 5"),
    ],
)
def test_code_python_does_not_compile_is_one_dl000_and_is_not_fixed(statement, message):
    """``ast`` parses it, Python refuses to compile it: fixing it is one DL000 at the compiler's
    position, and nothing is tried (LibCST and ``symtable`` would fail half-way, with a
    traceback). A check does not compile (half a parse more per file with findings)."""
    text = EPOCHS.replace("num_workers=2)", "num_workers=2, collate_fn=lambda b: b)") + statement
    assert "DL102" in {f.code for f in lint_source(text, path="t.py")}
    result = fix_text("t.py", text, Linter(Settings()), unsafe=True)
    assert result.text == text and not result.fixed and not result.failed
    assert [f"{f.code} {f.message}" for f in result.remaining] == [message]


@pytest.mark.parametrize("where", ["module", "function"])
def test_an_argument_is_set_where_libcst_rejects_another_statement(where, monkeypatch):
    """Setting an argument parses only the statement holding the finding: what LibCST rejects
    elsewhere in the file is kept as it is, and does not stop the fix. (Code Python compiles
    and LibCST rejects is rare: LibCST's refusal of a statement is simulated.)"""
    import libcst

    parse_module = libcst.parse_module

    def rejects_marked(source, *args, **kwargs):
        if "rejected_by_libcst" in source:
            raise libcst.CSTValidationError("simulated")
        return parse_module(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", rejects_marked)
    text = EPOCHS + "    for batch in loader:\n        rejected_by_libcst = batch\n"
    if where == "function":
        text = "import os\n\ndef train(ds):\n" + "".join(f"    {line}\n" if line else "\n" for line in text.splitlines())
    result = fix_text("t.py", text, linter("DL201"))
    assert result.text == text.replace("num_workers=2)", "num_workers=2, persistent_workers=True)")
    assert [f.code for f in result.fixed] == ["DL201"] and not result.failed and not result.remaining


@pytest.mark.parametrize("error", [RecursionError("deep"), ValueError("odd"), SyntaxError("libcst parser")])
def test_any_libcst_failure_while_parsing_drops_the_fixes(monkeypatch, error):
    def refuse(text, local_to=()):
        raise error

    monkeypatch.setattr(fixer.FileState, "parse", staticmethod(refuse))
    text = EPOCHS + "    for batch in loader:\n        pass\n"
    result = fix_text("t.py", text, linter("DL201"))
    assert result.text == text and len(result.failed) == 1 and type(error).__name__ in result.failed[0][1]


# -- fixes that depend on a resolved value ------------------------------------------------
def codes_and_fixes(text: str, code: str) -> list:
    return [f.fix for f in lint_source(text, Settings(select=(code,))) if f.code == code]


def epochs(loader_args: str) -> str:
    return f"from torch.utils.data import DataLoader\nloader = DataLoader(ds, {loader_args})\nfor e in range(3):\n    for b in loader:\n        pass\n"


@pytest.mark.parametrize(
    ("workers", "value"),
    [
        ("8", "True"),
        ("n", "n > 0"),
        ("n if gpu else 0", "(n if gpu else 0) > 0"),
        ("a or b", "(a or b) > 0"),
        ("min(8,\n    cpus)", "min(8, cpus) > 0"),  # one line
        ("-n", "-n > 0"),
    ],
)
def test_dl201_assumes_workers_only_where_the_count_is_a_literal(workers, value):
    (fix,) = codes_and_fixes(epochs(f"num_workers={workers}"), "DL201")
    assert fix.applicability == "safe" and fix.edit == SetArgument("persistent_workers", value)


def test_dl201_from_a_splat_dict_tests_the_count_the_call_reads():
    text = "opts = dict(num_workers=args.workers)\n" + epochs("**opts")
    (fix,) = codes_and_fixes(text, "DL201")
    assert fix.applicability == "safe"
    assert fix.edit == SetArgument("persistent_workers", 'opts.get("num_workers", 0) > 0')


def test_dl201_from_a_splat_of_an_expression_says_it_assumes_workers():
    text = epochs("**dict(num_workers=args.workers)")
    (fix,) = codes_and_fixes(text, "DL201")
    assert fix.applicability == "unsafe" and "right only while" in fix.message


def test_dl201_is_silent_on_a_negative_worker_count():
    findings = lint_source(epochs("num_workers=-1"))
    codes = {f.code for f in findings}
    assert "DL005" in codes and "DL201" not in codes


# -- hoisting -------------------------------------------------------------------------------
LAMBDA = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2, collate_fn=lambda b: b)\n"


@pytest.mark.parametrize(("notebook", "applicability"), [(False, "safe"), (True, "unsafe")])
def test_dl102_hoisting_is_not_safe_in_a_notebook(notebook, applicability):
    # a notebook-level def is what DL106 reports: spawn workers cannot import it either
    (finding,) = [f for f in lint_text(linter("DL102"), "nb.ipynb", LAMBDA, notebook=notebook).findings if f.code == "DL102"]
    assert finding.fix.applicability == applicability


LOCAL = "from torch.utils.data import DataLoader, Dataset\n\n\ndef main(ds, size):\n{}    return DataLoader({}, num_workers=2{})\n"


@pytest.mark.parametrize(
    ("definition", "dataset", "extra", "fixable"),
    [
        ("    class Local(Dataset):\n        def __len__(self):\n            return 8\n", "Local()", "", True),
        ("    class Local(Dataset):\n        def __len__(self):\n            return size\n", "Local()", "", False),  # reads a local
        ("    def collate(b, pad=size):\n        return b\n", "ds", ", collate_fn=collate", False),  # default is a local
        ("    n = 0\n    def collate(b):\n        nonlocal n\n        return b\n", "ds", ", collate_fn=collate", False),
        ("    def pad(b):\n        return b\n    def collate(b):\n        return pad(b)\n", "ds", ", collate_fn=collate", False),
        ("    def collate(b):\n        return [x + size for x in b]\n", "ds", ", collate_fn=collate", True),
    ],
)
def test_dl103_advertises_a_fix_only_where_it_applies(definition, dataset, extra, fixable):
    text = LOCAL.format(definition, dataset, extra)
    (finding,) = [f for f in lint_source(text, Settings(select=("DL103",))) if f.code == "DL103"]
    assert (finding.fix is not None) == fixable
    result = fix_text("t.py", text, linter("DL103"), unsafe=True)
    assert bool(result.fixed) == fixable and not result.failed


def test_dl103_binds_the_whole_object_when_the_closure_calls_its_method():
    text = (
        "from torch.utils.data import DataLoader\n\n\nclass Module:\n    def pad(self, b):\n        return b\n\n"
        "    def loader(self, ds):\n        def collate(b):\n            return self.pad(b)\n\n"
        "        return DataLoader(ds, num_workers=2, collate_fn=collate)\n"
    )
    result = fix_text("t.py", text, linter("DL103"), unsafe=True)
    assert "functools.partial(collate, self=self)" in result.text  # a bound method would pickle self anyway


# -- what the fixes introduced ------------------------------------------------------------
def finding(code: str, line: int) -> Finding:
    return Finding("t.py", line, 1, line, 5, code, "name", f"{code} message")


def test_findings_beyond_what_was_found_less_what_was_fixed_are_new():
    before_text, after_text = "a\nb\nc\n", "x\na\nb\nc\nd\n"
    before = [finding("DL201", 1), finding("DL102", 2), finding("DL102", 3)]
    fixed = [finding("DL201", 1), finding("DL102", 2)]
    after = [finding("DL102", 4), finding("DL106", 5), finding("DL201", 1)]
    assert fixer.introduced_by_fixes(before_text, before, after_text, after, fixed) == [finding("DL201", 1), finding("DL106", 5)]


def test_a_fixed_text_with_only_old_findings_has_nothing_new():
    text = EPOCHS + "    for batch in loader:\n        pass\n"
    result = fix_text("t.py", text + "DataLoader(ds, num_workers=0, persistent_workers=True)\n", linter("DL201", "DL001", "DL101"))
    assert result.fixed and result.introduced == []


def test_the_summary_counts_new_problems_apart():
    findings = [finding("DL101", 1), finding("DL106", 5)]
    text = render_text(RunSummary(findings, files_checked=1, fixed=2, introduced=1, extra={"fix_mode": True}))
    assert text.endswith("Found 3 problems (2 fixed, 1 remaining, 1 new).")
    text = render_text(RunSummary(findings, files_checked=1, fixed=2, extra={"fix_mode": True}))
    assert text.endswith("Found 4 problems (2 fixed, 2 remaining).")


def test_hoisting_a_lambda_in_a_notebook_counts_its_dl106_as_new():
    text = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2, collate_fn=lambda b: b)\nfor b in loader:\n    pass\n"
    cells = Input("nb.ipynb", "python", text, notebook=True)  # a notebook's code cells joined
    result = fix_text("nb.ipynb", text, Linter(Settings()), unsafe=True, input=cells)
    assert [f.code for f in result.fixed] == ["DL102"]
    assert [f.code for f in result.introduced] == ["DL106"] and result.introduced[0] in result.remaining


def test_without_the_relint_the_text_and_what_was_fixed_are_the_same_and_nothing_is_linted(monkeypatch):
    """``relint=False`` (the JSON output's edits): the fixed text is not linted again."""
    text = EPOCHS + "    for batch in loader:\n        pass\n"
    relinted = fix_text("t.py", text, linter("DL201"), unsafe=True)
    assert relinted.fixed and "persistent_workers=True" in relinted.text and relinted.remaining == []
    lints = []
    original = fixer.CSTEdits.lint
    monkeypatch.setattr(fixer.CSTEdits, "lint", lambda self, new: lints.append(new) or original(self, new))
    findings = lint_text(linter("DL201"), "t.py", text).findings
    alone = fix_text("t.py", text, linter("DL201"), unsafe=True, findings=findings, max_passes=1, relint=False)
    assert (alone.text, [f.code for f in alone.fixed]) == (relinted.text, [f.code for f in relinted.fixed])
    assert lints == [] and alone.remaining == [] and alone.introduced == []
