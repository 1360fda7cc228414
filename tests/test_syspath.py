"""The folders a file adds to sys.path, read without running it (dllint.project.syspath)."""

from __future__ import annotations

import os
import textwrap

import pytest

from dllint.project.syspath import path_additions

HERE = "/proj/tools/train.py"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import sys\nsys.path.insert(0, '../lib')\n", ["/proj/lib"]),
        ("import sys\nsys.path.append('/opt/code')\n", ["/opt/code"]),
        ("import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))\n", ["/proj/lib"]),
        ("import sys\nfrom pathlib import Path\nsys.path.append(str(Path(__file__).resolve().parents[1]))\n", ["/proj"]),
        ("import sys\nfrom pathlib import Path\nROOT = Path(__file__).parent.parent\nsys.path.insert(0, str(ROOT / 'src'))\n", ["/proj/src"]),
        ("import site\nsite.addsitedir('vendor')\n", ["/proj/tools/vendor"]),
        (
            """\
            import os.path as osp
            import sys

            def add_path(path):
                if path not in sys.path:
                    sys.path.insert(0, path)

            this_dir = osp.dirname(__file__)
            add_path(osp.join(this_dir, '..', 'lib'))
            add_path(osp.join(this_dir, '..', 'third_party'))
            """,
            ["/proj/lib", "/proj/third_party"],
        ),
        # What cannot be computed without running the file adds nothing.
        ("import os, sys\nsys.path.insert(0, os.environ['CODE'])\n", []),
        ("import sys\nsys.path.insert(0, get_root())\n", []),
        ("import sys\nroot = 'a'\nroot = 'b'\nsys.path.insert(0, root)\n", []),
        ("import sys\nprint(sys.path)\n", []),
        ("sys.path.insert(0, (\n", []),  # does not parse
    ],
)
def test_path_additions(source, expected):
    assert path_additions(HERE, textwrap.dedent(source).encode()) == [os.path.normpath(p) for p in expected]
