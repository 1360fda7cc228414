"""Worker-side code followed across files: a dataset's ``__iter__`` that hands its stream to
a method of the object it holds, defined by a mixin of another module (DL302), and worker
code that reads the epoch the trainer advances two files away (DL201)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from project_helpers import lint_in_project, write_tree
from dllint.config import Settings
from dllint.facts.worker_code import is_abstract
from dllint.project import ProjectIndex, summarize
from dllint.project import base as index_module  # the index's limits

SETTINGS = Settings(select=("ALL",))

CORE = """\
from torch.utils.data import DataLoader, IterableDataset


class Chunks(IterableDataset):
    def __init__(self, task):
        self.task = task

    def __iter__(self):
        return self.task.samples()


class Task:
    def samples(self):
        raise NotImplementedError

    def loader(self):
        return DataLoader(Chunks(self), batch_size=32, num_workers=4)
"""
MIXIN = """\
from core import Task
from seeding import rng


class SamplesMixin(Task):
    def samples(self):
        r = rng()
        while True:
            yield r.random()
"""
SEEDING = """\
import random

from torch.utils.data import get_worker_info


def rng():
    info = get_worker_info()
    return random.Random(info.id if info else -1)
"""
UNSHARDED = SEEDING.replace("info = get_worker_info()\n    ", "info = None\n    ").replace(
    "from torch.utils.data import get_worker_info\n", ""
)


write = write_tree


def lint(index: ProjectIndex, path: Path):
    return lint_in_project(index, path, SETTINGS)


def codes(result, code: str) -> list[int]:
    return [f.line for f in result.findings if f.code == code]


def test_summary_records_what_worker_side_rules_follow():
    text = textwrap.dedent(
        """\
        from seeding import rng

        class Mixin:
            def samples(self):
                r = rng(self.model)
                yield from self.source.rows(r)

            def epoch(self):
                return self.trainer.current_epoch

            def placeholder(self):
                raise NotImplementedError
        """
    )
    summary = summarize("mixin.py", text, SETTINGS)
    samples = summary.functions["Mixin.samples"]
    assert samples.onward == ["0:seeding.rng", ".rows"]  # other modules first, then obj.m()
    assert not samples.worker_info and not samples.epoch_state and not samples.abstract
    assert summary.functions["Mixin.epoch"].epoch_state
    assert summary.functions["Mixin.placeholder"].abstract


def test_placeholders():
    def first(text: str) -> ast.AST:
        return ast.parse(textwrap.dedent(text)).body[0]

    assert is_abstract(first('def f(self):\n    """Doc."""\n    raise NotImplementedError("say")\n'))
    assert is_abstract(first('def f(self):\n    msg = f"Missing {self}"\n    raise NotImplementedError(msg)\n'))
    assert not is_abstract(first("def f(self):\n    if self.x:\n        raise NotImplementedError\n    return 1\n"))
    assert not is_abstract(first("def f(self):\n    raise ValueError\n"))


def test_sharding_found_in_a_mixin_of_another_module(tmp_path):
    write(tmp_path, {"core.py": CORE, "mixin.py": MIXIN, "seeding.py": SEEDING})
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "core.py")
    assert codes(result, "DL302") == []
    # the answer depends on the mixin's and the seeding module's summaries
    assert {Path(p).name for p in result.deps.paths()} >= {"mixin.py", "seeding.py"}

    (tmp_path / "seeding.py").write_text(UNSHARDED)
    fresh = ProjectIndex(tmp_path, SETTINGS)
    assert not fresh.deps_valid(result.deps)
    assert codes(lint(fresh, tmp_path / "core.py"), "DL302") == [8]


def test_stream_handed_to_code_not_in_view_is_undecidable(tmp_path):
    """No class of the project defines the method: silent. Defined by a mixin that consults
    nothing: fires. A built-in's method name: the built-in's, fires."""
    write(tmp_path, {"core.py": CORE.replace("raise NotImplementedError", "raise NotImplementedError\n")})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL302") == []

    write(tmp_path, {"mixin.py": "class M:\n    def samples(self):\n        yield from [1, 2]\n"})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL302") == [8]

    write(tmp_path, {"core.py": CORE.replace("self.task.samples()", "iter(self.task.values())")})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL302") == [8]


def test_a_common_method_name_is_not_followed(tmp_path, monkeypatch):
    """More files define ``samples`` than MAX_CANDIDATES: which one runs cannot be told; none
    of them is summarized, and the stream is not in view (silent)."""
    monkeypatch.setattr(index_module, "MAX_CANDIDATES", 2)
    others = {f"other_{i}.py": "class O:\n    def samples(self):\n        yield 1\n" for i in range(3)}
    write(tmp_path, {"core.py": CORE, **others})
    index = ProjectIndex(tmp_path, SETTINGS)
    assert codes(lint(index, tmp_path / "core.py"), "DL302") == []
    assert index.summarized == 0


def test_only_files_defining_the_method_are_summarized(tmp_path):
    unrelated = {f"unrelated_{i}.py": f"def f{i}(x):\n    return x.samples\n" for i in range(20)}
    write(tmp_path, {"core.py": CORE, "mixin.py": MIXIN, "seeding.py": SEEDING, **unrelated})
    index = ProjectIndex(tmp_path, SETTINGS)
    lint(index, tmp_path / "core.py")
    assert index.summarized == 2  # mixin.py (defines samples), seeding.py (what it calls)


EPOCH_SEEDING = SEEDING.replace("def rng():", "def rng(model):").replace(
    "info.id if info else -1", "hash((info.id if info else -1, model.current_epoch))"
)
LIGHTNING_CORE = CORE.replace(
    "from torch.utils.data", "import lightning as L\nfrom torch.utils.data"
).replace("class Task:", "class Task(L.LightningDataModule):").replace("def loader(self)", "def train_dataloader(self)")


def test_epoch_read_two_files_away_keeps_workers_restarting(tmp_path):
    """``__iter__`` -> the mixin's ``samples`` -> ``seeding.rng(model)`` reading
    ``model.current_epoch``: DL201 is silent; seeded by worker only, it fires."""
    write(
        tmp_path,
        {"core.py": LIGHTNING_CORE, "mixin.py": MIXIN.replace("rng()", "rng(self.model)"), "seeding.py": EPOCH_SEEDING},
    )
    result = lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py")
    assert codes(result, "DL201") == []
    assert "seeding.py" in {Path(p).name for p in result.deps.paths()}

    write(tmp_path, {"seeding.py": SEEDING.replace("def rng():", "def rng(model):")})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL201") == [18]


def test_epoch_read_followed_only_so_deep(tmp_path, monkeypatch):
    """The chain of calls followed across files is bounded (MAX_REACH_DEPTH)."""
    chain = {
        f"hop{i}.py": f"from hop{i + 1} import f{i + 1}\n\ndef f{i}(model):\n    return f{i + 1}(model)\n" for i in range(6)
    }
    chain["hop6.py"] = "def f6(model):\n    return model.current_epoch\n"
    mixin = "from core import Task\nfrom hop0 import f0\n\nclass M(Task):\n    def samples(self):\n        yield f0(self.model)\n"
    write(tmp_path, {"core.py": LIGHTNING_CORE, "mixin.py": mixin, **chain})
    monkeypatch.setattr(index_module, "MAX_REACH_DEPTH", 10)
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL201") == []
    monkeypatch.setattr(index_module, "MAX_REACH_DEPTH", 3)
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "core.py"), "DL201") == [18]


def test_a_mixin_added_later_re_lints_the_dataset(tmp_path):
    """Warm run: a new file that defines the method the stream is handed to (a file the first
    lint never read) brings the verdict back into question; here it consults nothing: fires."""
    from tests.test_project import check_project

    root = tmp_path / "project"
    write(root, {"pyproject.toml": "", "core.py": CORE})
    cache = tmp_path / "cache"
    assert check_project(root, cache)["core.py"] == []  # the stream's code is not in view
    write(root, {"mixin.py": "class M:\n    def samples(self):\n        yield from [1, 2]\n"})
    assert (8, "DL302") in check_project(root, cache)["core.py"]
