"""The hand judgments of benchmarks/real_world_judgments.py stay consistent with their documents."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_judgments():
    spec = importlib.util.spec_from_file_location("real_world_judgments", BENCHMARKS / "real_world_judgments.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_finding_is_judged_once_with_a_known_verdict():
    module = load_judgments()
    table = module.by_key()  # raises on a finding judged twice
    assert len(table) == len(module.JUDGMENTS)
    for (source, where, code), (verdict, shape, reason) in table.items():
        assert verdict in {"true", "false", "debatable"}, (source, where)
        assert re.fullmatch(r"DL\d{3}", code), (source, where)
        assert re.fullmatch(r".+:\d+", where), (source, where)
        assert reason, (source, where)
        # a false positive always has a shape; a true positive never does
        assert bool(shape) == (verdict == "false") or verdict == "debatable", (source, where)


def test_every_shape_named_by_a_judgment_is_described():
    described = set(re.findall(r"^## (\w+):", (BENCHMARKS / "FALSE_POSITIVE_SHAPES.md").read_text(), re.MULTILINE))
    named = {shape for *_, shape, _ in load_judgments().JUDGMENTS if shape}
    assert named <= described, named - described
