"""The project index: summaries, roots, callers, dependencies between files' findings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from project_helpers import lint_in_project, write_tree
from dllint.config import Settings
from dllint.project import ProjectIndex, find_project_root, summarize

SETTINGS = Settings(select=("ALL",))

DATA = """\
from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, sampler=sampler, num_workers=4)
"""
TRAIN = """\
from data import build_loader


def main(dataset, model, epochs):
    loader = build_loader(dataset)
    for epoch in range(epochs):
        for batch in loader:
            model(batch)
"""


write = write_tree


def lint(index: ProjectIndex, path: Path):
    return lint_in_project(index, path, SETTINGS)


def codes(result) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in result.findings]


def test_summary_names_every_function_and_summarizes_those_asked_for(tmp_path, monkeypatch):
    """A query names one function of a module: only it is summarized (a big module's others never are)."""
    import dllint.facts.flow.summary as summary_module

    write(tmp_path, {"train.py": TRAIN, "data.py": DATA})
    summary = summarize(str(tmp_path / "train.py"), TRAIN, SETTINGS)
    assert [c.target for c in summary.calls] == ["0:data.build_loader"]
    assert summary.calls[0].effects.per_epoch
    asked: list[str] = []
    original = summary_module._function
    monkeypatch.setattr(summary_module, "_function", lambda facts, node, method: asked.append(node.name) or original(facts, node, method))
    data = summarize(str(tmp_path / "data.py"), DATA + "\ndef unrelated(x):\n    for _ in x:\n        pass\n", SETTINGS)
    assert sorted(data.functions) == ["build_loader", "unrelated"] and "unrelated" in data.functions
    assert asked == []
    assert data.functions["build_loader"].returns[0].kind == "loader"
    assert data.functions.get("build_loader") is data.functions["build_loader"]
    assert asked == ["build_loader"]


def test_a_function_that_cannot_be_summarized_is_one_nothing_is_known_of(tmp_path, monkeypatch):
    import dllint.facts.flow.summary as summary_module

    def broken(facts, node, method):
        raise RecursionError("too deep")

    monkeypatch.setattr(summary_module, "_function", broken)
    data = summarize(str(tmp_path / "data.py"), DATA, SETTINGS)
    assert data.functions["build_loader"].effects == {} and data.functions["build_loader"].params == ["dataset"]


def test_parameter_effects():
    text = textwrap.dedent(
        """
        import helpers

        def fit(loader, epochs):
            for epoch in range(epochs):
                for batch in loader:
                    pass

        def once(loader):
            return [b for b in loader]

        def keep(self_like, loader):
            self_like.loader = loader

        def passthrough(loader):
            return loader

        def hand_on(loader):
            helpers.consume(loader)

        class Trainer:
            def run(self, loader):
                loader.sampler.set_epoch(0)
        """
    )
    summary = summarize("m.py", text, SETTINGS)
    effects = {name: f.effects for name, f in summary.functions.items()}
    assert effects["fit"]["loader"].per_epoch
    assert effects["once"]["loader"].iterations == 1 and not effects["once"]["loader"].per_epoch
    assert effects["keep"]["loader"].stores
    assert effects["passthrough"]["loader"].returns
    assert effects["hand_on"]["loader"].follow == [["0:helpers.consume", "0", False]]
    assert effects["Trainer.run"]["loader"].set_epoch
    assert summary.functions["Trainer.run"].parameter("0", bound=True) == "loader"


def test_project_root_is_nearest_marker(tmp_path):
    write(tmp_path, {"repo/pyproject.toml": "", "repo/src/pkg/train.py": "", "other/x.py": ""})
    assert find_project_root([str(tmp_path / "repo/src/pkg/train.py")]) == str((tmp_path / "repo").resolve())
    (tmp_path / "repo/src/.git").mkdir()
    assert find_project_root([str(tmp_path / "repo/src/pkg")]) == str((tmp_path / "repo/src").resolve())
    # no marker: the directory of the path (unless a marker sits above the temporary directory)
    assert find_project_root([str(tmp_path / "other/x.py")]) in (str((tmp_path / "other").resolve()), *map(str, tmp_path.resolve().parents))


def test_calls_followed_across_files(tmp_path):
    write(tmp_path, {"train.py": TRAIN, "data.py": DATA})
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "data.py")
    assert codes(result) == [(5, "DL301"), (6, "DL201")]
    assert set(result.deps.paths()) == {str((tmp_path / "train.py").resolve())}


def test_one_file_run_summarizes_only_files_that_name_the_function(tmp_path):
    files = {f"unrelated_{i}.py": f"def f{i}(x):\n    return x\n" for i in range(30)}
    files.update({"train.py": TRAIN, "data.py": DATA})
    write(tmp_path, files)
    index = ProjectIndex(tmp_path, SETTINGS)
    lint(index, tmp_path / "data.py")
    assert index.summarized == 1  # train.py: the only other file whose bytes say build_loader
    index = ProjectIndex(tmp_path, SETTINGS)
    lint(index, tmp_path / "unrelated_3.py")
    assert index.summarized == 0


def test_only_files_that_call_the_function_or_rename_it_are_summarized(tmp_path):
    """A file that names ``build_loader`` without calling it (a comment, a docstring) is not
    summarized; one that imports it under another name and calls that is."""
    renamed = TRAIN.replace("from data import build_loader", "from data import build_loader as make_loader")
    write(tmp_path, {"data.py": DATA, "train.py": renamed.replace("build_loader(dataset)", "make_loader(dataset)"),
                     "notes.py": '"""See data.build_loader for the loaders."""\n'})
    index = ProjectIndex(tmp_path, SETTINGS)
    assert codes(lint(index, tmp_path / "data.py")) == [(5, "DL301"), (6, "DL201")]
    assert index.summarized == 1  # train.py


def test_only_files_that_build_the_dataset_are_summarized_for_its_loaders(tmp_path):
    """DL304 across files reads the loaders built over a dataset class in other files: a file
    that names the class and DataLoader without calling the class is not summarized."""
    root = Path(__file__).resolve().parents[1] / "fixtures" / "project" / "held_rng"
    write(tmp_path, {name: (root / name).read_text() for name in ("speech.py", "train.py")})
    write(tmp_path, {"docs.py": '"""SpeechDataset feeds a DataLoader in train.py."""\n'})
    index = ProjectIndex(tmp_path, SETTINGS)
    assert [code for _, code in codes(lint(index, tmp_path / "speech.py"))] == ["DL304"]
    assert index.summarized == 2  # train.py, and speech.py to resolve the class train.py builds


def test_another_files_code_that_python_warns_about_is_summarized_silently(tmp_path, capfd):
    """A caller with an invalid escape sequence (a warning when Python compiles it; an error
    under ``-W error``) is summarized as the lint parses: no warning, and its calls are read."""
    import warnings

    write(tmp_path, {"data.py": DATA, "train.py": TRAIN + 'PATTERN = "\\d+"\n'})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "data.py"))
    assert found == [(5, "DL301"), (6, "DL201")]
    assert "escape" not in capfd.readouterr().err


def test_findings_depend_on_the_files_they_read(tmp_path):
    """Any change to a file a lint read invalidates its findings (what the cache checks before
    reusing them); the files no lint read do not."""
    write(tmp_path, {"train.py": TRAIN, "data.py": DATA, "other.py": "x = 1\n"})
    index = ProjectIndex(tmp_path, SETTINGS)
    deps = lint(index, tmp_path / "data.py").deps
    assert ProjectIndex(tmp_path, SETTINGS).deps_valid(deps)
    (tmp_path / "other.py").write_text("x = 2\n")
    assert ProjectIndex(tmp_path, SETTINGS).deps_valid(deps)
    train = tmp_path / "train.py"
    train.write_text(TRAIN.replace("    for epoch in range(epochs):\n        for batch", "    if epochs:\n        for batch"))
    fresh = ProjectIndex(tmp_path, SETTINGS)
    assert not fresh.deps_valid(deps)
    assert codes(lint(fresh, tmp_path / "data.py")) == []


def test_command_line_worker_count_named_in_crash_messages():
    from lint_helpers import lint_source

    source = textwrap.dedent(
        """
        import argparse
        from torch.utils.data import DataLoader
        parser = argparse.ArgumentParser()
        parser.add_argument("--dataloader_num_workers", type=int, default=0)
        args = parser.parse_args()
        loader = DataLoader(ds, collate_fn=lambda b: b, num_workers=args.dataloader_num_workers)
        for batch in loader:
            pass
        """
    )
    found = {f.code: f.message for f in lint_source(source, SETTINGS)}
    assert found["DL102"].endswith("(when --dataloader_num_workers > 0)")
    assert found["DL101"].endswith("(when --dataloader_num_workers > 0)")
    assert "DL102" not in {f.code for f in lint_source(source.replace("args.dataloader_num_workers", "0"), SETTINGS)}


def test_batches_copied_to_cuda_by_a_caller_in_another_file(tmp_path):
    write(
        tmp_path,
        {
            # With workers: a summary says the batches are copied to CUDA, not whether the copies
            # are blocking (DL206 needs that only for a loader without workers).
            "data.py": "import torch\nfrom torch.utils.data import DataLoader\n\n\ndef build(ds):\n    return DataLoader(ds, batch_size=8, num_workers=2)\n",
            "train.py": "import torch\nfrom data import build\n\n\ndef main(ds, model):\n"
            "    for x, y in build(ds):\n        model(x.cuda(non_blocking=True), y)\n",
        },
    )
    index = ProjectIndex(tmp_path, SETTINGS)
    result = lint(index, tmp_path / "data.py")
    assert codes(result) == [(6, "DL206")]
    assert "torch.cuda.is_available()" in result.findings[0].fix.message


def test_summary_records_what_functions_return():
    text = textwrap.dedent(
        """
        from torch.utils.data import DataLoader, RandomSampler, Sampler

        class Forever(Sampler):
            def __iter__(self):
                while True:
                    yield 0

        def build_loader(ds, workers=4):
            loader = DataLoader(ds, shuffle=True, num_workers=8)
            return loader

        def build_sampler(ds):
            return RandomSampler(ds)

        def build_forever():
            return Forever()
        """
    )
    summary = summarize("m.py", text, SETTINGS)
    (loader,) = summary.functions["build_loader"].returns
    assert (loader.kind, loader.args) == ("loader", {"shuffle": True, "num_workers": 8})
    assert [(r.kind, r.random, r.endless) for r in summary.functions["build_sampler"].returns] == [("sampler", True, False)]
    assert [(r.kind, r.endless) for r in summary.functions["build_forever"].returns] == [("sampler", True)]
    assert summary.classes["Forever"].endless


# -- the run: project root, cache, dependencies ---------------------------------------------
def check_project(root: Path, cache_dir: Path, monkeypatch=None, paths=None):
    """One ``dllint check`` run over the project (in-process), with a cache."""
    from dllint.pipeline import RunOptions, run

    options = RunOptions(jobs=1, cache_dir=str(cache_dir))
    outcome = run([str(p) for p in (paths or [root])], SETTINGS, options)
    return {Path(o.path).name: [(f.line, f.code) for f in o.findings] for o in outcome.files}


def test_cached_findings_follow_the_files_they_read(tmp_path, relinted):
    """A file's cached findings are invalidated when a file they read changes, and not when a
    file they never read does."""
    root = tmp_path / "project"
    write(root, {"pyproject.toml": "", "train.py": TRAIN, "data.py": DATA, "other.py": "x = 1\n"})
    cache = tmp_path / "cache"
    assert check_project(root, cache)["data.py"] == [(5, "DL301"), (6, "DL201")]

    linted = relinted
    linted.clear()
    (root / "other.py").write_text("x = 2\n")
    assert check_project(root, cache)["data.py"] == [(5, "DL301"), (6, "DL201")]
    assert linted == ["other.py"]  # data.py's findings still hold: it never read other.py

    linted.clear()
    (root / "train.py").write_text(TRAIN.replace("model(batch)", "loss = model(batch)  # a comment"))
    assert check_project(root, cache)["data.py"] == [(5, "DL301"), (6, "DL201")]
    assert sorted(linted) == ["data.py", "train.py"]  # any change to a file it read: re-linted

    linted.clear()
    (root / "train.py").write_text(TRAIN.replace("    for epoch in range(epochs):\n        for batch", "    if epochs:\n        for batch"))
    assert check_project(root, cache)["data.py"] == []
    assert sorted(linted) == ["data.py", "train.py"]


FACTORY = """\
from torch.utils.data import DataLoader


def build_loader(dataset):
    return DataLoader(dataset, num_workers=4)
"""


def test_a_new_caller_in_a_file_never_read_invalidates_cached_findings(tmp_path, relinted):
    """A returned loader with no caller is silent; a caller added later in a new file, or in a
    file that only named the factory in a comment, must bring the finding back on a warm run."""
    root = tmp_path / "project"
    write(root, {"pyproject.toml": "", "data.py": FACTORY, "notes.py": "# build_loader: see data.py\n"})
    cache = tmp_path / "cache"
    assert check_project(root, cache)["data.py"] == []

    linted = relinted
    linted.clear()
    write(root, {"unrelated.py": "x = 1\n"})
    assert check_project(root, cache)["data.py"] == []
    assert linted == ["unrelated.py"]  # the project changed, but nothing new names build_loader

    linted.clear()
    write(root, {"notes.py": TRAIN.replace("from data", "# build_loader: see data.py\nfrom data")})
    assert check_project(root, cache)["data.py"] == [(5, "DL201")]
    assert sorted(linted) == ["data.py", "notes.py"]

    linted.clear()
    (root / "notes.py").unlink()
    write(root, {"train.py": TRAIN})
    assert check_project(root, cache)["data.py"] == [(5, "DL201")]
    assert sorted(linted) == ["data.py", "train.py"]  # another file now calls it: looked at again
    (root / "train.py").unlink()
    assert check_project(root, cache)["data.py"] == []


def test_project_root_from_the_paths(tmp_path):
    root = tmp_path / "project"
    write(root, {"setup.cfg": "", "pkg/__init__.py": "", "pkg/train.py": TRAIN.replace("from data", "from pkg.data"), "pkg/data.py": DATA})
    found = check_project(root, tmp_path / "cache", paths=[root / "pkg" / "data.py"])
    assert found == {"data.py": [(5, "DL301"), (6, "DL201")]}


def test_project_root_option(tmp_path):
    """Without a marker file the project is the directory of the paths given; --project-root names another."""
    from click.testing import CliRunner

    from dllint.cli import main

    root = tmp_path / "scripts"
    write(root, {"train.py": TRAIN, "data.py": DATA})
    data = str(root / "data.py")
    alone = CliRunner().invoke(main, ["check", data, "--no-cache", "--select", "DL301", "--project-root", str(root / "x")])
    assert "DL301" not in alone.output  # the loader is returned; no caller in view
    markerless = CliRunner().invoke(main, ["check", data, "--no-cache", "--select", "DL301"])
    assert "data.py:5:15: DL301" in markerless.output  # the root is data.py's directory: train.py is seen
    found = CliRunner().invoke(main, ["check", data, "--no-cache", "--select", "DL301", "--project-root", str(root)])
    assert "data.py:5:15: DL301" in found.output


FIXTURE_PROJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "project"


def test_re_iterated_by_names_the_caller_that_receives_the_loader():
    """A factory branching on a task name: each loader's message names the caller whose
    constant reaches its return, never a caller that receives another task's loader."""
    root = FIXTURE_PROJECTS / "task_factory"
    result = lint(ProjectIndex(root, SETTINGS), root / "data.py")
    messages = {f.line: f.message for f in result.findings if f.code == "DL201"}
    assert messages == {
        9: "workers restart every epoch (re-iterated by pretrain.py:5): add persistent_workers=True",
        18: "workers restart every epoch (re-iterated by pretrain.py:15): add persistent_workers=True",
    }


def test_a_summary_records_the_constants_a_call_passes():
    text = "from data import get_loader\n\ndef main(n):\n    for b in get_loader('pretrain', n, split=None, *rest):\n        pass\n"
    (call,) = summarize("t.py", text, SETTINGS).calls
    assert call.args == {"0": "pretrain", "split": None}


def test_a_file_read_again_counts_once_with_its_last_digest():
    from dllint.deps import CallersDep, Deps, SummaryDep

    deps = Deps([SummaryDep("/p/data.py", "ab12"), CallersDep(b"build_loader"), SummaryDep("/p/data.py", "cd34")])
    assert list(deps) == [SummaryDep("/p/data.py", "cd34"), CallersDep(b"build_loader")]
    assert "/p/data.py" in deps and deps.paths() == ["/p/data.py"] and deps.asks_callers()
    assert not Deps([SummaryDep("/p/data.py", "ab12")]).asks_callers()


def test_a_factory_called_from_too_many_files_is_not_followed(tmp_path, monkeypatch):
    """A name called in more files than MAX_CALLER_FILES is a common one: its callers are not read
    (each would be summarized), as for a function no other file calls: its loader, not evidently a
    training one, is not reported."""
    from dllint.project import base

    monkeypatch.setattr(base, "MAX_CALLER_FILES", 3)
    factory = "from torch.utils.data import DataLoader\n\n\ndef build_loader(dataset):\n    return DataLoader(dataset, num_workers=4)\n"
    files = {"data.py": factory, "pyproject.toml": ""}
    files.update({f"train{i}.py": TRAIN for i in range(3)})
    write(tmp_path, files)
    index = ProjectIndex(tmp_path, SETTINGS)
    [finding] = [f for f in lint(index, tmp_path / "data.py").findings if f.code == "DL201"]  # three callers: followed
    assert "re-iterated by" in finding.message
    write(tmp_path, {"train3.py": TRAIN})
    index = ProjectIndex(tmp_path, SETTINGS)
    assert [f for f in lint(index, tmp_path / "data.py").findings if f.code == "DL201"] == []  # four: not read, silent


def test_a_non_blocking_copy_in_another_file_is_named_in_the_message(tmp_path):
    """DL206 on a loader without workers: the copy that asks for non_blocking=True is in
    another file; the message says what pinning does for it (its blocking twin is silent)."""
    write(tmp_path, {
        "utils.py": "def to_gpu(x):\n    return x.cuda(non_blocking=True)\n\n\ndef to_device(x):\n    return x.cuda()\n",
        "train.py": (
            "from torch.utils.data import DataLoader\nfrom utils import to_device, to_gpu\n\n\n"
            "def main(ds):\n    fast = DataLoader(ds, batch_size=4)\n    slow = DataLoader(ds, batch_size=4)\n"
            "    for epoch in range(3):\n        for x, y in fast:\n            to_gpu(x)\n"
            "        for x, y in slow:\n            to_device(x)\n"
        ),
    })
    result = lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "train.py")
    [found] = [f for f in result.findings if f.code == "DL206"]
    assert (found.line, found.column) == (6, 12)
    assert "non_blocking=True from pageable memory, which makes those copies synchronous" in found.message
    assert str((tmp_path / "utils.py").resolve()) in result.deps


WRAPPER = "from torch.utils.data import DataLoader\n\n\ndef make(ds, klass=DataLoader, **kwargs):\n    return klass(ds, **kwargs)\n"
WRAPPER_CALLER = (
    "def main(ds):\n    loader = make(ds, batch_size=4, num_workers=4)\n"
    "    for epoch in range(3):\n        for batch in loader:\n            pass\n"
)


@pytest.mark.parametrize(
    "files",
    [
        {"train.py": WRAPPER + "\n\n" + WRAPPER_CALLER},
        {"data.py": WRAPPER, "train.py": "from data import make\n\n\n" + WRAPPER_CALLER},
    ],
    ids=["same-file", "called-from-another-file"],
)
def test_the_wrappers_loader_is_fixed_in_the_wrapper_and_the_fix_holds(tmp_path, files):
    """DL201 on ``klass(ds, **kwargs)`` of the project's wrapper (its calls, in its own file or
    another, pass num_workers): the fix adds persistent_workers=True there; the result parses,
    lints clean, and a second fix changes nothing."""
    from dllint.pipeline import RunOptions, run

    write(tmp_path, {"pyproject.toml": "", **files})
    wrapper = tmp_path / next(iter(files))
    paths = [str(tmp_path / name) for name in files]
    options = RunOptions(mode="fix", jobs=1, no_cache=True)
    run(paths, SETTINGS, options)
    fixed = wrapper.read_text()
    assert fixed == files[wrapper.name].replace("klass(ds, **kwargs)", "klass(ds, **kwargs, persistent_workers=True)")
    compile(fixed, wrapper.name, "exec")
    check = run(paths, SETTINGS, RunOptions(jobs=1, no_cache=True))
    assert [f.code for o in check.files for f in o.findings] == []
    run(paths, SETTINGS, options)
    assert wrapper.read_text() == fixed


def test_a_content_seen_before_is_not_summarized_again(tmp_path):
    """An editor's buffer going back and forth (typing, undo): each content is summarized once."""
    from dllint.server.index import BufferIndex

    write(tmp_path, {"train.py": TRAIN, "data.py": DATA})
    index = BufferIndex(str(tmp_path), SETTINGS)
    train = str((tmp_path / "train.py").resolve())
    edited = TRAIN.replace("model(batch)", "model(batch)  # 1").encode()
    for data in (TRAIN.encode(), edited, TRAIN.encode(), edited):
        index.set_buffer(train, data)
        assert [c.target for c in index.summaries.summary(train)[0].calls] == ["0:data.build_loader"]
    assert index.summarized == 2


def test_a_longer_name_in_another_file_does_not_name_the_function(tmp_path):
    """``make_shared(...)`` in another file does not call ``make``: the wrapper's calls are
    still all in its own file (and a file that does say ``make`` keeps them out of view)."""
    wrapper = (
        "from torch.utils.data import DataLoader\n\n\n"
        "def make(ds, klass=DataLoader, **kwargs):\n    return klass(ds, **kwargs)\n\n\n"
        "def main(ds):\n    loader = make(ds, batch_size=4, num_workers=4)\n"
        "    for epoch in range(3):\n        for batch in loader:\n            pass\n"
    )
    write(tmp_path, {"train.py": wrapper, "other.py": "def make_shared(x):\n    return x\n\n\nmake_shared(1)\n"})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "train.py")) == [(5, "DL201")]
    write(tmp_path, {"other.py": "from train import make\n\nmake([], num_workers=0)\n"})
    assert codes(lint(ProjectIndex(tmp_path, SETTINGS), tmp_path / "train.py")) == []


def test_a_namesake_in_a_file_that_does_not_import_it_is_not_a_caller(tmp_path):
    """Issue 32's reproduction: ``unrelated.py`` defines its own ``make``; the only call of
    ``infunc.make`` passes ``num_workers=0``, so no multi-worker loader exists: no DL201."""
    from dllint.project import ProjectIndex

    write_tree(tmp_path, {
        "infunc.py": """\
            from torch.utils.data import Dataset, DataLoader
            class DS(Dataset):
                def __len__(self): return 10
                def __getitem__(self, i): return i
            def make(batch_size=4, num_workers=0):
                return DataLoader(DS(), batch_size=batch_size, num_workers=num_workers)
            def main():
                loader = make(batch_size=2, num_workers=0)
                for epoch in range(3):
                    for b in loader:
                        pass
            """,
        "unrelated.py": "def make():\n    pass\n",
        "caller.py": "from other import make\nmake(num_workers=4)\n",
        "other.py": "def make(num_workers=0):\n    pass\n",
    })
    settings = Settings(select=("ALL",))
    index = ProjectIndex(tmp_path, settings)
    result = lint_in_project(index, tmp_path / "infunc.py", settings)
    assert [f.code for f in result.findings] == ["DL203"]  # (opt-in) a loader without workers, iterated per epoch
    assert index.imports.importers(str(tmp_path / "other.py"), "make") == [(str(tmp_path / "caller.py"), "make")]
    assert index.imports.importers(str(tmp_path / "infunc.py"), "make") == []


def test_the_projects_files_are_its_python_files_and_notebooks_outside_hidden_build_and_linked_folders(tmp_path):
    """The listing walks the root as os.walk would: hidden, virtual-environment and build folders
    are skipped, a link to a folder is not followed (a link to a file is a file), and the list is
    sorted."""
    from dllint.project.files import ProjectFiles

    write(tmp_path, {"b/train.py": "", "a/nb.ipynb": "{}", "a/notes.txt": "", ".hidden/x.py": "", "venv/y.py": "",
                     "build/z.py": "", "pkg/sub/__pycache__/c.py": "", "pkg/sub/m.py": "", "outside/o.py": ""})
    (tmp_path / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "alias.py").symlink_to(tmp_path / "b" / "train.py")
    found = ProjectFiles(str(tmp_path)).paths()
    assert found == [str(tmp_path / p) for p in ("a/nb.ipynb", "alias.py", "b/train.py", "outside/o.py", "pkg/sub/m.py")]


def test_importers_that_never_spell_the_method_asked_are_not_summarized(tmp_path):
    """"Who calls ``Builder.build``" reads the files importing ``Builder``: one whose bytes never
    spell ``build`` calls no such method and is not summarized (most importers of a class), nor
    one that spells it only as ``super().build``; one that calls it on an instance is, and its
    call is found."""
    write(tmp_path, {
        "data.py": "class Builder:\n    def build(self, dataset):\n        return dataset\n",
        "train.py": "from data import Builder\n\ndef main(ds):\n    b = Builder()\n    loader = b.build(ds)\n    for batch in loader:\n        pass\n",
        "registry.py": "from data import Builder\n\nBUILDERS = [Builder]\n",
        "sub.py": "from data import Builder\n\nclass Sub(Builder):\n    def build(self, dataset):\n        return super().build(dataset)\n",
    })
    index = ProjectIndex(tmp_path, SETTINGS)
    data = str((tmp_path / "data.py").resolve())
    assert index.imports.importer_files(data, "Builder.build") == sorted(str((tmp_path / n).resolve()) for n in ("registry.py", "sub.py", "train.py"))
    callers = index.queries.callers_of(data, "Builder.build")
    assert [(Path(path).name, call.line) for path, call in callers] == [("train.py", 5)]
    assert index.summarized == 1  # train.py


def test_a_keystroke_that_changes_no_class_header_rebuilds_no_class_text(tmp_path, monkeypatch):
    """An open buffer's class headers are scanned again only when its bytes change, and the
    project's class text (and the loader class names read from it) is rebuilt only when the
    buffer's class headers change."""
    from dllint.project import search
    from dllint.server.index import BufferIndex

    write(tmp_path, {"data.py": DATA, "loaders.py": "from torch.utils.data import DataLoader\nclass Fast(DataLoader):\n    pass\n"})
    index = BufferIndex(tmp_path, SETTINGS)
    buffer = str((tmp_path / "train.py").resolve())
    (tmp_path / "train.py").write_text(TRAIN)
    index.file_changed(buffer)
    scanned: list[int] = []
    real = search.scan_classes
    monkeypatch.setattr(search, "scan_classes", lambda data, *span: scanned.append(len(data)) or real(data, *span))
    index.set_buffer(buffer, TRAIN.encode())
    first = index.text.loader_class_names()
    assert b"Fast" in first[0] and len(scanned) == 2  # the joined text (joined anew without the buffer), the buffer
    index.set_buffer(buffer, (TRAIN + "# typing\n").encode())
    assert index.text.loader_class_names() is first and len(scanned) == 3  # the buffer alone
    index.set_buffer(buffer, (TRAIN + "# typing\n").encode())
    assert index.text.loader_class_names() is first and len(scanned) == 3  # the same bytes: nothing scanned
    index.set_buffer(buffer, (TRAIN + "class Faster(Fast):\n    pass\n").encode())
    assert b"Faster" in index.text.loader_class_names()[0] and len(scanned) == 4


def test_files_adding_to_sys_path_are_found_before_workers_fork(tmp_path, monkeypatch):
    """``prepare`` (run before a pool forks) also finds the files that add to ``sys.path``: a
    forked worker answers from its copy instead of searching the project's bytes again, and the
    answer is the one an index that was not prepared gives."""
    root = tmp_path / "project"
    write_tree(root, {
        "pyproject.toml": "",
        "_init_paths.py": "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n",
        "train.py": "import _init_paths\nfrom helpers import make\n",
        "lib/helpers.py": "def make():\n    pass\n",
    })
    train = str((root / "train.py").resolve())
    expected = ProjectIndex(root, SETTINGS).imports.added_folders(train)
    assert expected == [str((root / "lib").resolve())]

    index = ProjectIndex(root, SETTINGS)
    index.prepare()
    searched: list[bytes] = []
    monkeypatch.setattr(index.text, "mentions", lambda needle, gate=None: searched.append(needle) or [])
    assert index.imports.added_folders(train) == expected and searched == []


def test_a_file_adding_to_sys_path_is_parsed_once_for_all_its_importers(tmp_path, monkeypatch):
    """Every script importing ``_init_paths`` asks which folders it adds: the module is parsed
    for the first one, the others get the same answer without a parse."""
    from dllint.project import imports

    root = tmp_path / "project"
    write_tree(root, {
        "pyproject.toml": "",
        "_init_paths.py": "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n",
        "train.py": "import _init_paths\nfrom helpers import make\n",
        "test.py": "import _init_paths\nfrom helpers import make\n",
        "lib/helpers.py": "def make():\n    pass\n",
    })
    parsed: list[str] = []
    real = imports.path_additions
    monkeypatch.setattr(imports, "path_additions", lambda path, data: parsed.append(path) or real(path, data))
    index = ProjectIndex(root, SETTINGS)
    lib = [str((root / "lib").resolve())]
    assert [index.imports.added_folders(str((root / name).resolve())) for name in ("train.py", "test.py")] == [lib, lib]
    assert parsed == [str((root / "_init_paths.py").resolve())]


def test_the_class_scan_of_joined_bytes_reads_what_each_files_scan_reads():
    """The joined text is a ``bytearray``: its class text holds ``bytes`` names (they key sets),
    the same as the files' own scans, on the alias and header shapes the scan's quick paths meet."""
    from dllint.project.class_text import ClassText, scan as scan_classes

    files = [
        b"from .x import Base as B, a.b as c\nimport torch.utils.data  as   tud\n",
        b"with open(f) as fh:\n    pass\nexcept E  as e:\n",
        b"class A(B, (C)):\n    pass\nclass D(E):\n    pass\nclass F():\n    pass\n",
        b"x = 1 # alias\n as y\n" + b"w" * 200 + b" as z\n",
    ]
    joined = bytearray(b"\0".join(files))
    found = scan_classes(joined)
    each = ClassText()
    for data in files:
        each.update(scan_classes(data))
    assert found == each and all(type(word) is bytes for word in found.leads_to)
    assert found.leads_to[b"Base"] == {b"B"} and found.leads_to[b"data"] == {b"tud"} and b"fh" in found.aliases
    assert found.leads_to[b"E"] == {b"D", b"e"} and found.leads_to[b"C"] == {b"A"} and b"fh" not in str(found.leads_to).encode()


def test_import_scan_reads_every_statement_shape():
    """The import table's statement reader (its plain-name fast path and its pattern) on the
    shapes it meets: aliases, dotted names, relative levels, stars, parentheses over lines, a
    backslash continuation, a comment inside parentheses, a non-ASCII name, a name that starts
    with a digit (no identifier: left to the pattern) and an empty part."""
    from dllint.project.imports import scan

    source = textwrap.dedent(
        """\
        import os, torch.utils.data as tud, a.b.c
        from . import helpers
        from ..pkg.sub import (make,
            build as b,
            Other,  # a comment
        )
        from .data import *
        from x import y, \\
            z as w
        from m import café, 1bad
        import q,
        def f():
            from inner import thing
        """
    ).encode()
    found = [(b.local, b.target, b.key) for b in scan("f.py", source)]
    assert found == [
        ("os", "0:os", "os"),
        ("tud", "0:torch.utils.data", "data"),
        ("a", "0:a.b.c", "c"),
        ("helpers", "1:helpers", "helpers"),
        ("make", "2:pkg.sub.make", "make"),
        ("b", "2:pkg.sub.build", "build"),
        ("Other", "2:pkg.sub.Other", "Other"),
        ("*", "1:data", "data"),
        ("y", "0:x.y", "y"),
        ("w", "0:x.z", "z"),
        ("café", "0:m.café", "café"),
        ("1bad", "0:m.1bad", "1bad"),
        ("q", "0:q", "q"),
        ("thing", "0:inner.thing", "thing"),
    ]


def test_the_stat_table_as_kept_tells_each_moved_or_new_file_and_nothing_else():
    """The stat table ``reconcile`` compares with is kept packed (paths joined by NUL, the stats
    as 64-bit integers in hexadecimal): read back after JSON, it names the files whose stat moved or
    that it did not hold, whatever the order; a stat past 64 bits is kept as plain integers."""
    import json

    from dllint.project.files import moved_since, packed

    table = {"/p/a.py": [1_700_000_000_123_456_789, 10, 5], "/p/new\nline.py": [2, 20, 6], "/p/c.py": [-3, 0, 7]}
    kept = json.loads(json.dumps(packed(table)))
    assert isinstance(kept["stats"], str)
    assert moved_since(kept, dict(table)) == []
    assert moved_since(kept, {**table, "/p/c.py": [-3, 0, 8]}) == ["/p/c.py"]
    assert moved_since(kept, {"/p/d.py": [4, 4, 4], "/p/c.py": [-3, 0, 7], "/p/a.py": [1, 10, 5]}) == ["/p/d.py", "/p/a.py"]
    assert moved_since(kept, {"/p/a.py": table["/p/a.py"]}) == []  # a file gone is no moved file
    huge = {"/p/a.py": [1, 2, 2**64 - 1]}
    kept_huge = json.loads(json.dumps(packed(huge)))
    assert kept_huge["stats"] == [1, 2, 2**64 - 1]
    assert moved_since(kept_huge, huge) == [] and moved_since(kept_huge, {"/p/a.py": [1, 2, 3]}) == ["/p/a.py"]


@pytest.mark.parametrize(
    "kept",
    [
        None,
        {"/p/a.py": [1, 2, 3]},  # the form earlier versions kept
        {"paths": "/p/a.py", "stats": "not hexadecimal"},
        {"paths": "/p/a.py", "stats": "0102"},  # not whole 64-bit numbers
        {"paths": "/p/a.py\0/p/b.py", "stats": "010000000000000002000000000000000300000000000000"},  # three numbers for two files
        {"paths": "/p/a.py", "stats": [1, 2, "3"]},
        {"paths": 7, "stats": ""},
    ],
)
def test_a_kept_stat_table_that_is_not_one_reads_as_none(kept):
    """Not a packed table: ``reconcile`` then drops every finding that asked who names X."""
    from dllint.project.files import moved_since

    assert moved_since(kept, {"/p/a.py": [1, 2, 3]}) is None


def test_findings_kept_with_a_stat_table_of_another_form_are_not_trusted(tmp_path):
    """A cache whose stat table is not one this version packs (an older version's) cannot say
    which files changed since: the findings that asked who calls a factory are linted again."""
    import json

    from dllint import runner
    from dllint.cache import Cache
    from dllint.engine import Linter

    root = tmp_path / "proj"
    write(root, {"pyproject.toml": "", "data.py": DATA, "train.py": TRAIN})
    codes = tuple(sorted(r.code for r in Linter(SETTINGS).rules))
    paths = [str(root / "data.py")]

    def run() -> Cache:
        cache = Cache(tmp_path / "c", SETTINGS, codes)
        runner.run_files(paths, SETTINGS, jobs=1, cache=cache, project_root=str(root))
        return cache

    first = run()
    assert first.stats.misses == 1
    assert run().stats.hits == 1  # nothing changed
    [stored] = (tmp_path / "c").rglob("*.json")
    raw = json.loads(stored.read_text())
    [key] = [k for k in raw["meta"] if k.startswith("project-files:")]
    raw["meta"][key] = {p: [1, 2, 3] for p in raw["meta"][key]["paths"].split("\0")}
    stored.write_text(json.dumps(raw))
    again = run()
    assert again.stats.hits == 0 and again.stats.misses == 1
    assert run().stats.hits == 1  # kept packed again
