"""The project root with and without a marker file, and where the cache goes (issue 24, points 3-4)."""

from __future__ import annotations


from dllint.discovery import find_project_root
from tests.project_helpers import write_tree
from tests.test_cli import run

ENGINE = """\
    def train_one_epoch(model, loader):
        for batch in loader:
            model(batch)
    """
TRAIN = """\
    from torch.utils.data import DataLoader
    from engine import train_one_epoch


    def main(model, dataset):
        loader = DataLoader(dataset, batch_size=8, num_workers=4)
        for epoch in range(10):
            train_one_epoch(model, loader)
    """


def test_markerless_root_is_the_directory_of_the_paths(tmp_path):
    write_tree(tmp_path, {"code/train.py": TRAIN, "code/engine.py": ENGINE, "code/sub/x.py": ""})
    code = str((tmp_path / "code").resolve())
    assert find_project_root([str(tmp_path / "code/train.py")]) == code
    assert find_project_root([str(tmp_path / "code")]) == code
    assert find_project_root([str(tmp_path / "code/train.py"), str(tmp_path / "code/sub/x.py")]) == code
    assert find_project_root([]) is None
    (tmp_path / "code/sub/setup.py").write_text("")
    assert find_project_root([str(tmp_path / "code/sub/x.py")]) == str((tmp_path / "code/sub").resolve())


def test_markerless_two_file_project_follows_the_import(tmp_path):
    """`from engine import train_one_epoch` is resolved from the script's own directory, as Python
    does, with no pyproject.toml/setup.py/.git above it: the per-epoch loader is reported."""
    write_tree(tmp_path, {"code/train.py": TRAIN, "code/engine.py": ENGINE, "elsewhere/.keep": ""})
    expected = "train.py:6:14: DL201 [*] workers restart every epoch: add persistent_workers=True"
    for args, cwd in (
        (["code/train.py"], tmp_path),  # the file alone, from above
        (["train.py"], tmp_path / "code"),  # from the script's directory
        ([str(tmp_path / "code")], tmp_path / "elsewhere"),  # the directory, from elsewhere
    ):
        result = run(*args, "--no-cache", cwd=cwd)
        assert result.exit_code == 1, result.output
        assert expected in result.output, (args, result.output)


def test_cache_lives_at_the_project_root_not_the_current_directory(tmp_path):
    write_tree(tmp_path, {"proj/train.py": TRAIN, "proj/engine.py": ENGINE, "home/.keep": ""})
    run(str(tmp_path / "proj/train.py"), cwd=tmp_path / "home")
    assert (tmp_path / "proj/.dllint_cache").is_dir()  # no marker: the directory of the paths given
    assert not (tmp_path / "home/.dllint_cache").exists()
    write_tree(tmp_path, {"repo/pyproject.toml": "", "repo/src/train.py": TRAIN})
    run(str(tmp_path / "repo/src/train.py"), cwd=tmp_path / "home")
    assert (tmp_path / "repo/.dllint_cache").is_dir()  # the marker's directory
    assert not (tmp_path / "repo/src/.dllint_cache").exists()
    assert not (tmp_path / "home/.dllint_cache").exists()
    run(str(tmp_path / "repo/src/train.py"), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path / "home")
    assert (tmp_path / "c").is_dir()  # --cache-dir still wins
