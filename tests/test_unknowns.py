"""Why a place was left unknown is recorded with it (issue 32: "unknown is silent", and a test
can name the reason for a silence)."""

from __future__ import annotations

import ast
import textwrap

from dllint.config import Settings
from dllint.facts import FileFacts

SOURCE = textwrap.dedent(
    """\
    import external
    from torch.utils.data import DataLoader

    outside = DataLoader(ds, num_workers=4)
    external.fit(outside)
    nested = DataLoader(DataLoader(ds, num_workers=4), num_workers=2)
    known = DataLoader(ds, num_workers=4)
    for batch in known:
        pass


    class Task:
        def get_train_loader(self):
            return DataLoader(ds, num_workers=4)
    """
)


def test_each_unknown_place_says_why():
    facts = FileFacts("train.py", SOURCE, ast.parse(SOURCE), Settings(select=("ALL",)))
    found = sorted(
        (loader.node.lineno, loader.node.col_offset, node.lineno, why)
        for loader in facts.loader_calls
        for node, why in facts.usage.unknowns(loader)
    )
    assert found == [
        (4, 10, 5, "handed to external.fit() outside the project"),
        (6, 20, 6, "given to a loader as its dataset or sampler"),
        (14, 15, 14, "returned by get_train_loader(), which a trainer outside the project calls when it needs a loader"),
    ]


def _function_calls(root, name):
    """:func:`function_calls` of ``lib.py``'s ``name``, as the project in ``root`` sees it."""
    from dllint.facts.values import function_calls
    from dllint.project import ProjectIndex

    settings = Settings(select=("ALL",))
    path = root / "lib.py"
    text = path.read_text()
    facts = FileFacts(str(path), text, ast.parse(text), settings, project=ProjectIndex(root, settings).view(str(path)))
    function = next(n for n in facts.tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return function_calls(facts, function)


def test_other_files_callers_none_read_or_unreadable(tmp_path):
    """No other caller, callers whose arguments are read, and callers that cannot be read (a
    file that hands the function on as a callback) are three different answers."""
    (tmp_path / "lib.py").write_text(
        "def alone(device):\n    pass\n\n\ndef called(device):\n    pass\n\n\ndef handed(device):\n    pass\n\n\nalone('cuda')\n"
    )
    (tmp_path / "run.py").write_text("from lib import called, handed\n\ncalled('cuda')\nrunner.register(handed)\n")
    alone = _function_calls(tmp_path, "alone")
    assert (len(alone.here), alone.elsewhere.readable, alone.elsewhere.calls) == (1, True, ())
    called = _function_calls(tmp_path, "called")
    assert (called.here, called.elsewhere.readable) == ([], True)
    assert [dict(c.constants) for c in called.elsewhere.calls] == [{"0": "cuda"}]
    handed = _function_calls(tmp_path, "handed")
    assert (handed.elsewhere.readable, handed.decided) == (False, False)


def test_the_calls_read_are_evidence_where_another_importer_makes_none(tmp_path):
    """A file that imports a function and never calls it leaves "what every call passes"
    unknown, but the calls that are read still say what some call passes, with the command-line
    option a keyword comes from (DL102 on a loader subclass built in another file)."""
    from dllint.project import ProjectIndex

    (tmp_path / "lib.py").write_text("def make(ds, num_workers):\n    pass\n")
    (tmp_path / "run.py").write_text(
        "import argparse\nfrom lib import make\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--workers', type=int, default=0)\nargs = parser.parse_args()\n"
        "loader = make(None, num_workers=args.workers)\nfor batch in loader:\n    pass\n"
    )
    (tmp_path / "model.py").write_text("from lib import make\n")
    view = ProjectIndex(tmp_path, Settings(select=("ALL",))).view(str(tmp_path / "lib.py"))
    assert view.calls_elsewhere("make") is None
    [call] = view.calls_elsewhere("make", complete=False)
    assert (dict(call.constants), dict(call.options)) == ({"0": None, "num_workers": 0}, {"num_workers": "--workers"})
