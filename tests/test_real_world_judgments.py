"""The hand judgments of benchmarks/real_world_judgments.py stay consistent with their documents."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
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


def load_real_world():
    spec = importlib.util.spec_from_file_location("real_world", BENCHMARKS / "real_world.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_each_miss_is_listed_once_with_a_described_shape():
    module = load_judgments()
    misses = module.misses_by_key()  # raises on a miss listed twice or also judged as a finding
    assert len(misses) == len(module.MISSES)
    described = set(re.findall(r"^## (\w+):", (BENCHMARKS / "FALSE_POSITIVE_SHAPES.md").read_text(), re.MULTILINE))
    for (source, where, code), (shape, reason) in misses.items():
        assert source in module.MISS_AUDITED, source
        assert re.fullmatch(r"DL\d{3}", code), (source, where)
        assert re.fullmatch(r".+:\d+", where), (source, where)
        assert shape in described and reason, (source, where)


def test_the_sources_read_for_misses_are_the_fourth_to_sixteenth_sets():
    module = load_real_world()
    sets = [*module.FOURTH, *module.FIFTH, *module.SIXTH, *module.SEVENTH, *module.EIGHTH, *module.NINTH, *module.TENTH,
            *module.ELEVENTH, *module.TWELFTH, *module.THIRTEENTH, *module.FOURTEENTH, *module.FIFTEENTH,
            *module.SIXTEENTH]
    assert {repo.key for repo in sets} == load_judgments().MISS_AUDITED


def test_a_mirror_checkout_unpacks_files_with_non_ascii_names(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "第一章.ipynb").write_text("{}")
    (work / "train.py").write_text("x = 1\n")
    (work / "notes.txt").write_text("not linted\n")

    def git(*args):
        return subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True, text=True).stdout

    git("init", "--quiet")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "c")
    commit = git("rev-parse", "HEAD").strip()
    mirror = tmp_path / "mirror"
    (mirror / "owner+course").mkdir(parents=True)
    (work / ".git").rename(mirror / "owner+course" / "repo")  # a bare copy, as the mirror keeps them
    module = load_real_world()
    tree = module.checkout(module.Repo("owner/course", commit, "course"), tmp_path / "src", mirror)
    assert sorted(p.name for p in tree.iterdir()) == ["train.py", "第一章.ipynb"]
