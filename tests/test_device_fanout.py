"""A device handed down through many callers: tracing it stays bounded (found linting dllint's own
sources: a parameter every function hands on, ``facts``, fanned out at every level of
``device_kinds._parameter_kind`` and the lint ran for minutes). The answer is the same as the
unbounded trace's; the work grows with the functions, not with the paths between them."""

from __future__ import annotations

import dllint.facts.device_kinds as device_kinds
from dllint.config import Settings
from dllint.engine import Linter
from lint_helpers import lint_path

LEVELS, FAN = 6, 4  # 4**6 = 4,096 call paths from the main guard down to train()


def _fan_script() -> str:
    lines = [
        "import torch", "from torch.utils.data import DataLoader, TensorDataset", "",
        "LOADER = DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, num_workers=2)", "", "",
        "def train(loader, device):", "    for epoch in range(3):", "        for (x,) in loader:", "            x.to(device)", "",
    ]
    below = ["train(LOADER, device)"]
    for level in range(1, LEVELS + 1):
        names = [f"level{level}_{i}" for i in range(FAN)]
        for name in names:  # each function of a level calls every function of the level below
            lines += ["", f"def {name}(device):", *(f"    {call}" for call in below), ""]
        below = [f"{name}(device)" for name in names]
    cuda = "(torch.device('cuda'))"
    lines += ["", 'if __name__ == "__main__":', *("    " + call.replace("(device)", cuda) for call in below)]
    return "\n".join(lines) + "\n"


def test_a_device_handed_through_thousands_of_call_paths_is_traced_once_per_function(tmp_path, monkeypatch):
    path = tmp_path / "fan.py"
    path.write_text(_fan_script())
    calls = []
    traced = device_kinds.cuda_device_kind

    def counted(*args, **kwargs):
        calls.append(1)
        return traced(*args, **kwargs)

    monkeypatch.setattr(device_kinds, "cuda_device_kind", counted)
    result = lint_path(Linter(Settings(select=("ALL",))), str(path))
    assert [(f.code, f.line, f.column) for f in result.findings] == [("DL201", 4, 10), ("DL206", 4, 10)]
    functions = 1 + LEVELS * FAN
    # Once per function, parameter and depth, each asking its FAN callers: 218,448 traces before.
    assert len(calls) <= functions * (device_kinds.MAX_DEPTH + 2) * FAN
