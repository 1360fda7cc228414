"""Framework hooks and base classes followed across the project's files."""

from __future__ import annotations

import textwrap
from pathlib import Path

from project_helpers import lint_in_project, write_tree
from dllint.config import Settings
from dllint.deps import Deps
from dllint.project import ProjectIndex, summarize

SETTINGS = Settings(select=("ALL",))

BASE = """\
from lightning.pytorch import LightningModule


class ModelPT(LightningModule):
    def train_dataloader(self):
        return self._train_dl

    def test_dataloader(self):
        return self._test_dl
"""
MIDDLE = """\
from core.base import ModelPT


class ASRModel(ModelPT):
    pass
"""
MODEL = """\
from torch.utils.data import DataLoader

from models.asr import ASRModel


class CTCModel(ASRModel):
    def setup_training_data(self, dataset):
        self._train_dl = DataLoader(dataset, num_workers=4)
"""


write = write_tree


def lint(index: ProjectIndex, path: Path):
    return lint_in_project(index, path, SETTINGS)


def codes(result) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in result.findings]


def project(tmp_path: Path, base: str = BASE) -> Path:
    write(tmp_path, {"core/__init__.py": "", "core/base.py": base, "models/__init__.py": "", "models/asr.py": MIDDLE, "models/ctc.py": MODEL})
    return tmp_path / "models" / "ctc.py"


def test_summary_records_the_hooks_a_class_defines_and_binds():
    text = textwrap.dedent(
        """
        from functools import partial

        class DataModule:
            def __init__(self):
                self.val_dataloader = partial(self._val, shuffle=False)
                self.predict_dataloader = self._predict

            def train_dataloader(self):
                if self._train_dl is None:
                    return None
                return self._train_dl

            def _val(self, shuffle):
                return self._val_dl

            def _predict(self):
                return build()
        """
    )
    hooks = summarize("m.py", text, SETTINGS).classes["DataModule"].hooks
    assert hooks == {"train_dataloader": ["_train_dl"], "val_dataloader": ["_val_dl"], "predict_dataloader": []}


def test_bases_followed_through_files_to_the_framework_class(tmp_path):
    ctc = project(tmp_path)
    index = ProjectIndex(tmp_path, SETTINGS)
    ancestors = index.definitions.ancestors(str(ctc.resolve()), "0:models.asr.ASRModel", deps := Deps())
    assert [c.bases for c in ancestors] == [["0:core.base.ModelPT"], ["lightning.pytorch.LightningModule"]]
    assert ancestors[1].hooks == {"train_dataloader": ["_train_dl"], "test_dataloader": ["_test_dl"]}
    assert set(deps.paths()) == {str((tmp_path / "models/asr.py").resolve()), str((tmp_path / "core/base.py").resolve())}


def test_loader_stored_for_a_hook_of_a_base_class_in_another_file(tmp_path):
    ctc = project(tmp_path)
    result = lint(ProjectIndex(tmp_path, SETTINGS), ctc)
    assert codes(result) == [(8, "DL201")]
    assert "train_dataloader()" in result.findings[0].message
    assert set(result.deps.paths()) >= {str((tmp_path / "models/asr.py").resolve()), str((tmp_path / "core/base.py").resolve())}
    # Stored for the test hook instead: one pass.
    ctc.write_text(MODEL.replace("self._train_dl", "self._test_dl").replace("num_workers=4", "shuffle=True, num_workers=4"))
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), ctc)) == []


def test_base_not_a_framework_class(tmp_path):
    ctc = project(tmp_path, BASE.replace("from lightning.pytorch import LightningModule", "LightningModule = object").replace("(LightningModule)", ""))
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), ctc)) == []


def test_findings_follow_the_base_class_file(tmp_path):
    """The base class's file is a dependency: a hook that now returns another attribute
    invalidates the findings, and the fresh lint says what the new hook means."""
    ctc = project(tmp_path)
    deps = lint(ProjectIndex(tmp_path, SETTINGS), ctc).deps
    base = tmp_path / "core" / "base.py"
    assert ProjectIndex(tmp_path, SETTINGS).deps_valid(deps)
    base.write_text(BASE.replace("return self._train_dl", "return self._other_dl"))
    fresh = ProjectIndex(tmp_path, SETTINGS)
    assert not fresh.deps_valid(deps)
    assert codes(lint(fresh, ctc)) == []


def test_cached_findings_relinted_when_the_base_class_changes(tmp_path):
    from dllint.pipeline import RunOptions, run

    root = tmp_path / "project"
    (root / "pyproject.toml").parent.mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    ctc = project(root)

    def check() -> list[tuple[int, str]]:
        outcome = run([str(root)], SETTINGS, RunOptions(jobs=1, cache_dir=str(tmp_path / "cache")))
        return next([(f.line, f.code) for f in o.findings] for o in outcome.files if Path(o.path).name == "ctc.py")

    assert check() == [(8, "DL201")]
    (root / "core" / "base.py").write_text(BASE.replace("def train_dataloader", "def unused"))
    assert check() == []
    assert ctc.exists()


def test_a_loader_subclass_imported_under_another_name_is_a_loader(tmp_path):
    """A call's name is tested against the names that may be loader classes before its target
    is resolved: an alias of a loader subclass is a loader, an alias of another class is not."""
    import ast

    from dllint.facts import FileFacts

    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/loaders.py": "from torch.utils.data import DataLoader\n\n\nclass FastLoader(DataLoader):\n    pass\n\n\nclass Plain:\n    pass\n",
        "pkg/train.py": "import pkg.loaders as m\nfrom pkg.loaders import FastLoader as FL, Plain as P\n\nFL(range(3))\nP(range(3))\nm.FastLoader(range(3))\n",
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    path = tmp_path / "pkg" / "train.py"
    text = path.read_text()
    facts = FileFacts(str(path), text, ast.parse(text), SETTINGS, project=index.view(str(path)))
    calls = [node.value for node in facts.tree.body if isinstance(node, ast.Expr)]
    assert [facts.loader_kind(call.func) for call in calls] == [True, None, True]
