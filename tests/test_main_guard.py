"""DL101's fix, the pure part: which module-level statements stay when a script moves under
``if __name__ == "__main__":``."""

from __future__ import annotations

import ast
import textwrap

import pytest

from dllint.fixes.main_guard import statements_that_stay


def stays(source: str) -> list[str]:
    """The first line of each statement that stays."""
    tree = ast.parse(textwrap.dedent(source))
    return [ast.unparse(stmt).splitlines()[0] for stmt, stay in zip(tree.body, statements_that_stay(tree.body)) if stay]


def test_docstring_imports_definitions_and_constants_stay():
    source = '''
        """Train."""
        import torch
        from torch.utils.data import DataLoader
        BATCH = 32
        SIZES = (BATCH, 2 * BATCH)
        def collate(b):
            return b
        class Squares:
            pass
        loader = DataLoader(range(8), batch_size=BATCH, num_workers=2)
        for b in loader:
            print(b)
    '''
    assert stays(source) == ["'Train.'", "import torch", "from torch.utils.data import DataLoader", "BATCH = 32", "SIZES = (BATCH, 2 * BATCH)", "def collate(b):", "class Squares:"]


def test_setup_before_the_last_import_stays():
    source = "import sys\nsys.path.insert(0, 'src')\nimport model\nrun = model.main()\n"
    assert stays(source) == ["import sys", "sys.path.insert(0, 'src')", "import model"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a base class, a decorator, a default computed at import: they stay with the definition
        ("base = make_base()\nclass D(base):\n    pass\nx = D()\n", ["base = make_base()", "class D(base):"]),
        ("register = Registry()\n@register\ndef f():\n    pass\nf()\n", ["register = Registry()", "@register"]),
        ("size = compute()\ndef f(n=size):\n    pass\nf()\n", ["size = compute()", "def f(n=size):"]),
        # what a method body reads is read when it runs (under the guard): it moves
        ("cfg = load()\nclass D:\n    def get(self):\n        return cfg\nD()\n", ["class D:"]),
    ],
)
def test_what_a_definition_needs_when_defined_stays(source, expected):
    assert stays(source) == expected


def test_a_name_bound_twice_moves_with_all_its_bindings():
    source = "def f():\n    pass\nf = wrap(f)\nN = 1\nN = 2\nf()\n"
    assert stays(source) == []


def test_an_existing_guard_does_not_stay_and_its_names_do_not_count():
    source = "import os\nloader = make()\nif __name__ == '__main__':\n    loader = make(2)\n"
    assert stays(source) == ["import os"]


def test_an_import_block_in_try_stays_but_not_one_with_code():
    source = "try:\n    import yaml\nexcept ImportError:\n    yaml = None\ntry:\n    run()\nexcept Exception:\n    pass\n"
    assert stays(source) == ["try:"]
