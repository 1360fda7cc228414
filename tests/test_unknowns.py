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
