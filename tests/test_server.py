"""`dllint server` through a real LSP client (pytest-lsp's, built on pygls) over stdio.

Each test starts the server as editors do (`python -m dllint server`), speaks the protocol to it
and checks what an editor would show: diagnostics, quick fixes applied to the buffer, hover.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
psutil = pytest.importorskip("psutil")

from lsprotocol import types  # noqa: E402

from dllint.server.convert import replacement  # noqa: E402
from dllint.server.state import index_root  # noqa: E402

TIMEOUT = 15

TRAIN = textwrap.dedent(
    """\
    from torch.utils.data import DataLoader

    dataset = list(range(64))


    def main():
        loader = DataLoader(dataset, batch_size=8, num_workers=4)
        for epoch in range(10):
            for batch in loader:
                pass
    """
)


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """An editor applying edits (they do not overlap) to ``text``."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        return offsets[position.line] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end) :]
    return text


class Editor:
    """A client session: open documents, their versions and what the server published."""

    def __init__(self, client, root: Path) -> None:
        self.client, self.root = client, root
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    async def diagnostics(self, uri: str, until=lambda d: True) -> list[types.Diagnostic]:
        """The diagnostics published for ``uri`` once ``until`` holds for them."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while True:
            found = self.client.diagnostics.get(uri)
            if found is not None and until(found):
                return list(found)
            if loop.time() > deadline:
                raise AssertionError(f"no diagnostics as expected for {uri}: {found}")
            await asyncio.sleep(0.02)

    def open(self, path: Path, language: str = "python", text: str | None = None, document: str | None = None) -> str:
        """Open ``path`` (its text on disk, or ``text``; at its URI, or ``document``)."""
        document = document or uri(path)
        self.versions[document] = 1
        self.texts[document] = path.read_text() if text is None else text
        self.client.diagnostics.pop(document, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=document, language_id=language, version=1, text=self.texts[document])
            )
        )
        return document

    def change(self, document: str, text: str) -> None:
        """The buffer becomes ``text`` (unsaved): one full-document change."""
        self.versions[document] += 1
        self.texts[document] = text
        self.client.diagnostics.pop(document, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=document, version=self.versions[document]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def actions(self, document: str, line: int, only: list[str] | None = None) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        )
        return [a for a in result or [] if isinstance(a, types.CodeAction)]


def session(root: Path, scenario, options: dict | None = None, env: dict[str, str] | None = None) -> None:
    """Start `dllint server`, initialize (VS Code's capabilities, notebooks included), run the
    scenario, shut down, and check the server exited and left no process behind."""

    async def run() -> None:
        client = pytest_lsp.make_test_lsp_client()
        await client.start_io(sys.executable, "-m", "dllint", "server", cwd=str(root), env=env)
        process = client._server
        children: list = []
        try:
            await client.initialize_session(
                types.InitializeParams(
                    capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
                    root_uri=uri(root),
                    workspace_folders=[types.WorkspaceFolder(uri=uri(root), name="project")],
                    initialization_options=options,
                )
            )
            children = psutil.Process(process.pid).children(recursive=True)
            await asyncio.wait_for(scenario(Editor(client, root)), TIMEOUT)
        finally:
            await client.shutdown_session()
            await client.stop()
        assert process.returncode == 0
        assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]

    asyncio.run(run())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def test_diagnostics_quick_fix_noqa_hover_and_fix_all(project: Path) -> None:
    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"
        assert found.severity == types.DiagnosticSeverity.Warning
        assert found.source == "dllint"
        assert found.code_description.href.endswith("docs/rules.md#dl201")
        assert (found.range.start.line, found.range.start.character) == (6, 13)
        assert found.message == "workers restart every epoch: add persistent_workers=True"

        hover = await editor.client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=train), position=types.Position(line=6, character=20))
        )
        assert hover is not None and "non-persistent-workers" in hover.contents.value

        actions = await editor.actions(train, 6)
        titles = [a.title for a in actions]
        assert titles == ["Fix DL201: Add `persistent_workers=True`", "Disable DL201 for this line", "dllint: fix all safe problems"]
        fixed = apply(editor.texts[train], actions[0].edit.changes[train])
        assert "DataLoader(dataset, batch_size=8, num_workers=4, persistent_workers=True)" in fixed
        noqa = apply(editor.texts[train], actions[1].edit.changes[train])
        assert noqa.splitlines()[6].endswith("num_workers=4)  # noqa: DL201")

        [fix_all] = await editor.actions(train, 0, only=["source.fixAll"])
        assert fix_all.kind == "source.fixAll.dllint"
        assert apply(editor.texts[train], fix_all.edit.changes[train]) == fixed

        editor.change(train, fixed)  # the editor applied the quick fix: the finding goes away
        assert await editor.diagnostics(train) == []
        editor.change(train, noqa)
        assert await editor.diagnostics(train) == []

    session(project, scenario)


def test_unsaved_edits_add_and_remove_findings(project: Path) -> None:
    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        await editor.diagnostics(train, lambda d: [x.code for x in d] == ["DL201"])
        with_lambda = editor.texts[train].replace("num_workers=4)", "num_workers=4, collate_fn=lambda b: b)")
        editor.change(train, with_lambda)
        found = await editor.diagnostics(train)
        assert sorted(d.code for d in found) == ["DL102", "DL201"]
        [lam] = [d for d in found if d.code == "DL102"]
        assert lam.severity == types.DiagnosticSeverity.Error
        assert lam.range.start == types.Position(line=6, character=73)
        one_pass = with_lambda.replace("    for epoch in range(10):\n        for batch in loader:\n            pass", "    for batch in loader:\n        pass")
        editor.change(train, one_pass)
        found = await editor.diagnostics(train)
        assert [d.code for d in found] == ["DL102"]
        assert (project / "train.py").read_text() == TRAIN  # nothing written

    session(project, scenario)


def test_a_change_in_another_file_rechecks_the_script(project: Path) -> None:
    (project / "engine.py").write_text(
        "def run(loader):\n    for epoch in range(10):\n        for batch in loader:\n            pass\n"
    )
    (project / "train.py").write_text(
        "from torch.utils.data import DataLoader\nfrom engine import run\n\n"
        "def main(dataset):\n    loader = DataLoader(dataset, num_workers=4)\n    run(loader)\n"
    )

    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        engine = editor.open(project / "engine.py")
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201" and found.range.start.line == 4
        editor.client.diagnostics.pop(train, None)
        editor.change(engine, "def run(loader):\n    for batch in loader:\n        pass\n")  # unsaved: one pass
        assert await editor.diagnostics(train, lambda d: not d) == []
        editor.client.diagnostics.pop(train, None)
        editor.change(engine, (project / "engine.py").read_text())  # and back
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"

    session(project, scenario)


def test_project_settings_reload_and_editor_settings(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.dllint]\nignore = ['DL201']\n")

    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        assert await editor.diagnostics(train) == []
        (project / "pyproject.toml").write_text("[tool.dllint]\nignore = []\n")
        editor.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=uri(project / "pyproject.toml"), type=types.FileChangeType.Changed)]
            )
        )
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"
        editor.client.diagnostics.pop(train, None)
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"dllint": {"ignore": ["DL2"]}})
        )
        assert await editor.diagnostics(train) == []

    session(project, scenario)


def test_unsafe_fixes_only_when_the_editor_allows_them(project: Path) -> None:
    (project / "train.py").write_text(
        "from torch.utils.data import DataLoader\n\nloader = DataLoader(list(range(8)), num_workers=2)\nfor batch in loader:\n    pass\n"
    )

    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL101"
        titles = [a.title for a in await editor.actions(train, 3)]
        assert titles == ["Disable DL101 for this line"]

    session(project, scenario)

    async def allowed(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        await editor.diagnostics(train, lambda d: len(d) > 0)
        actions = await editor.actions(train, 3)
        assert actions[0].title.startswith("Fix DL101") and actions[0].title.endswith("(unsafe: check the result)")
        fixed = apply(editor.texts[train], actions[0].edit.changes[train])
        assert 'if __name__ == "__main__":' in fixed
        editor.change(train, fixed)
        assert await editor.diagnostics(train) == []

    session(project, allowed, options={"dllint": {"unsafeFixes": True}})


def test_notebook_cells_get_their_own_diagnostics_and_fixes(project: Path) -> None:
    notebook = project / "explore.ipynb"
    cells = [
        (types.NotebookCellKind.Markup, "# Loading"),
        (types.NotebookCellKind.Code, "from torch.utils.data import DataLoader\nds = list(range(8))"),
        (types.NotebookCellKind.Code, "loader = DataLoader(ds, num_workers=2, collate_fn=lambda b: b)\nfor batch in loader:\n    pass"),
    ]
    cell_uris = [f"{uri(notebook)}#cell{i}" for i in range(len(cells))]

    async def scenario_open(editor: Editor) -> None:
        editor.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=uri(notebook),
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[types.NotebookCell(kind=k, document=u) for (k, _), u in zip(cells, cell_uris)],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(uri=u, language_id="python" if k == types.NotebookCellKind.Code else "markdown", version=1, text=t)
                    for (k, t), u in zip(cells, cell_uris)
                ],
            )
        )

    async def scenario(editor: Editor) -> None:
        await scenario_open(editor)
        found = await editor.diagnostics(cell_uris[2], lambda d: len(d) > 0)
        assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [("DL102", 0, 50)]
        assert await editor.diagnostics(cell_uris[1]) == []
        actions = await editor.actions(cell_uris[2], 0)
        assert [a.title for a in actions] == ["Disable DL102 for this line"]  # its fix is unsafe in a notebook

    session(project, scenario)

    async def unsafe_allowed(editor: Editor) -> None:
        await scenario_open(editor)
        await editor.diagnostics(cell_uris[2], lambda d: len(d) > 0)
        fix = (await editor.actions(cell_uris[2], 0))[0]
        assert fix.title.startswith("Fix DL102: Hoist the lambda") and fix.title.endswith("(unsafe: check the result)")
        assert sorted(fix.edit.changes) == [cell_uris[1], cell_uris[2]]  # the def goes above, in the cell of the imports
        sources = [apply(t, fix.edit.changes.get(u, [])) for (_, t), u in zip(cells, cell_uris)]
        assert sources[1].endswith("def collate(b):\n    return b\n\n")
        assert sources[2].startswith("loader = DataLoader(ds, num_workers=2, collate_fn=collate)")

    session(project, unsafe_allowed, options={"dllint": {"unsafeFixes": True}})


def test_yaml_config_diagnostics(project: Path) -> None:
    config = project / "conf.yaml"
    config.write_text("train_dataloader:\n  batch_size: 8\n  num_workers: 0\n  persistent_workers: true\n")

    async def scenario(editor: Editor) -> None:
        document = editor.open(config, language="yaml")
        [found] = await editor.diagnostics(document, lambda d: len(d) > 0)
        assert found.code == "DL001"
        assert found.severity == types.DiagnosticSeverity.Error
        assert found.range.start == types.Position(line=3, character=2)

    session(project, scenario)


def test_replacement_is_the_smallest_line_range() -> None:
    edit = replacement("a\nb\nc\n", "a\nB\nc\n", "utf-16")
    assert (edit.range.start.line, edit.range.end.line, edit.new_text) == (1, 2, "B\n")
    assert apply("a\nb", [replacement("a\nb", "a\nbc", "utf-16")]) == "a\nbc"
    assert replacement("x", "x", "utf-16") is None


def test_the_server_never_imports_torch(project: Path) -> None:
    """Linting in the server, a notebook and a config included, loads neither torch nor the probe."""
    code = (
        "import sys\n"
        "from dllint.server.app import server\n"
        "from dllint.server.state import Workspace\n"
        "from dllint.server.convert import notebook_bytes\n"
        "w = Workspace()\n"
        f"root = {str(project)!r}\n"
        "w.lint(root + '/train.py', open(root + '/train.py', 'rb').read())\n"
        "w.lint(root + '/nb.ipynb', notebook_bytes([('code', 'from torch.utils.data import DataLoader')]))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'psutil') or m.startswith('dllint.probe')))\n"
    )
    done = __import__("subprocess").run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


# -- limits (issue 36): one bad document, frame or parent never ends the session -------------
def hover_at(editor: Editor, document: str, line: int, character: int):
    return editor.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=document), position=types.Position(line=line, character=character))
    )


def test_a_buffer_over_max_file_size_is_refused_at_once(project: Path) -> None:
    """A 60 MB buffer is one DL000, as the command line skips such a file: not linted (it took
    194 s and 4.4 GB), and the server answers the other documents meanwhile."""
    huge = TRAIN + "data = [" + "1, " * (20 * 1024 * 1024) + "]\n"  # 60 MB

    async def scenario(editor: Editor) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        big = editor.open(project / "big.py", text=huge)
        [found] = await editor.diagnostics(big, lambda d: len(d) > 0)
        assert found.code == "DL000" and "file too large (60.0 MB, over max-file-size 4.0 MB)" in found.message
        train = editor.open(project / "train.py")
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"
        assert await hover_at(editor, train, 6, 20) is not None
        assert [a.title for a in await editor.actions(big, 6)] == []  # no fix of what is not linted
        assert loop.time() - began < 10
        assert psutil.Process(editor.client._server.pid).memory_info().rss < 1024**3

    session(project, scenario)


def test_a_uri_with_a_nul_byte_breaks_nothing_else(project: Path) -> None:
    async def scenario(editor: Editor) -> None:
        bad = editor.open(project / "train.py", document=uri(project) + "/bad%00name.py")
        train = editor.open(project / "train.py")
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"
        assert bad not in editor.client.diagnostics  # no file: nothing to say about it
        editor.change(train, editor.texts[train].replace("num_workers=4", "num_workers=4, persistent_workers=True"))
        assert await editor.diagnostics(train) == []

    session(project, scenario)


def test_a_frame_announcing_100_gb_is_refused_and_the_session_goes_on(project: Path) -> None:
    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py")
        await editor.diagnostics(train, lambda d: len(d) > 0)
        editor.client._server.stdin.write(b'Content-Length: 99999999999\r\n\r\n{"jsonrpc": "2.0", "method": "x"}')
        hover = await hover_at(editor, train, 6, 20)
        assert hover is not None and "non-persistent-workers" in hover.contents.value
        [refused] = [m.message for m in editor.client.log_messages if "refused" in m.message]
        assert refused == "dllint: a message of 99999999999 bytes was refused (the limit is 67108864); skipped to the next one"

    session(project, scenario)


def test_a_lone_surrogate_still_gives_diagnostics(project: Path) -> None:
    async def scenario(editor: Editor) -> None:
        text = TRAIN.replace("def main():", "def main():  # caf\ud800")
        train = editor.open(project / "train.py", text=text)
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201" and found.range.start == types.Position(line=6, character=13)
        [fix, *_] = await editor.actions(train, 6)
        assert "persistent_workers=True" in apply(text, fix.edit.changes[train])

    session(project, scenario)


def test_the_server_exits_when_the_editor_dies(project: Path) -> None:
    """``initialize.processId`` is watched: the editor killed with the pipes still open, the
    server ends within its poll (1 s) rather than running on."""
    editor_process = __import__("subprocess").Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    async def run() -> None:
        client = pytest_lsp.make_test_lsp_client()
        await client.start_io(sys.executable, "-m", "dllint", "server", cwd=str(project))
        server = client._server
        try:
            await client.initialize_session(
                types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=editor_process.pid, root_uri=uri(project))
            )
            editor_process.kill()
            editor_process.wait()
            await asyncio.wait_for(server.wait(), 5)
            assert server.returncode == 1
        finally:
            if server.returncode is None:
                server.kill()
            await client.stop()

    asyncio.run(run())


def test_a_loose_file_in_the_home_directory_is_linted_alone(tmp_path: Path) -> None:
    """No project marker above it, or one in the home directory itself (a dotfiles ``.git``):
    the home directory is never the project, so its tree is never indexed; the file is still
    linted. Here the epochs are in another file of the home directory, so no DL201."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "engine.py").write_text("def run(loader):\n    for epoch in range(10):\n        for batch in loader:\n            pass\n")
    (home / "train.py").write_text(
        "from torch.utils.data import DataLoader\nfrom engine import run\n\n"
        "def main(dataset):\n    loader = DataLoader(dataset, num_workers=4, collate_fn=lambda b: b)\n    run(loader)\n"
    )
    (home / "deep").mkdir()
    (home / "deep" / "unreadable.py").write_text("x = 1\n")
    (home / "deep" / "unreadable.py").chmod(0)

    async def scenario(editor: Editor) -> None:
        train = editor.open(home / "train.py")
        found = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert [d.code for d in found] == ["DL102"]

    session(home, scenario, env={**os.environ, "HOME": str(home)})


def test_no_filesystem_root_nor_home_directory_is_indexed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert not index_root("/")
    assert not index_root(str(tmp_path / "home"))
    assert not index_root(str(tmp_path))  # above the home directory
    assert index_root(str(tmp_path / "home" / "project"))
    assert index_root(str(tmp_path / "elsewhere"))


def test_a_two_megabyte_line_answers_code_actions_and_hover_in_bounded_time(project: Path) -> None:
    """A line of generated data is linted, never handed to LibCST (15 s and 1.3 GB to parse, and
    the fix minutes more): its fix is not offered, the rest answers."""
    data = ", ".join(str(i) for i in range(300_000))
    text = TRAIN.replace("    loader = DataLoader(", f"    data = [{data}]; loader = DataLoader(")

    async def scenario(editor: Editor) -> None:
        loop = asyncio.get_running_loop()
        train = editor.open(project / "train.py", text=text)
        [found] = await editor.diagnostics(train, lambda d: len(d) > 0)
        assert found.code == "DL201"
        began = loop.time()
        titles = [a.title for a in await editor.actions(train, 6)]
        assert titles == ["Disable DL201 for this line"]
        hover = await hover_at(editor, train, 6, found.range.start.character + 1)
        assert hover is not None and "non-persistent-workers" in hover.contents.value
        assert loop.time() - began < 10

    session(project, scenario)


# -- staleness (issue 34): a keystroke re-lints only what it may change ------------------------
FACTORY = "from torch.utils.data import DataLoader\n\n\ndef build_loader(dataset):\n    return DataLoader(dataset, batch_size=8, num_workers=4)\n"
CALLER = (
    "from data import build_loader\n\n\ndef main(dataset):\n    loader = build_loader(dataset)\n"
    "    for epoch in range(10):\n        for batch in loader:\n            pass\n"
)


class Published(dict):
    """The client's diagnostics by document, noting each document published (pytest-lsp's client
    stores every publishDiagnostics with ``diagnostics[uri] = ...``)."""

    def __init__(self, found: dict, uris: list[str]) -> None:
        super().__init__(found)
        self.uris = uris

    def __setitem__(self, key: str, value) -> None:
        self.uris.append(key)
        super().__setitem__(key, value)


def test_typing_in_an_unrelated_file_republishes_nothing_else(project: Path) -> None:
    """The factory's finding asked "who calls build_loader": 5 keystrokes in a file that names
    nothing involved re-publish nothing of it (they re-published it 5 times); a keystroke that
    adds a caller, or one in the caller, re-checks it."""
    (project / "data.py").write_text(FACTORY)
    (project / "train.py").write_text(CALLER)
    (project / "notes.py").write_text("x = 1\n")
    published: list[str] = []

    async def scenario(editor: Editor) -> None:
        data = editor.open(project / "data.py")
        [found] = await editor.diagnostics(data, lambda d: len(d) > 0)
        assert found.code == "DL201" and found.range.start.line == 4
        notes = editor.open(project / "notes.py")
        await editor.diagnostics(notes)
        await hover_at(editor, notes, 0, 0)  # every notification before it handled
        editor.client.diagnostics = Published(editor.client.diagnostics, published)
        text = "x = 1\n"
        for key in "y = 2":
            text += key
            editor.change(notes, text)
            await hover_at(editor, notes, 0, 0)
        assert published.count(notes) == 5 and published.count(data) == 0
        editor.change(notes, text + "\nfrom data import build_loader\nloader = build_loader([])\n")  # a new caller
        await hover_at(editor, notes, 0, 0)
        assert published.count(data) == 1
        train = editor.open(project / "train.py")
        await editor.diagnostics(train)
        editor.change(train, CALLER.replace("    for epoch in range(10):\n        for batch in loader:\n            pass\n", "    for batch in loader:\n        pass\n"))
        await hover_at(editor, train, 0, 0)
        assert published.count(data) == 2

    session(project, scenario)


def test_a_keystroke_in_a_buffer_keeps_the_projects_answers_true_without_searching_the_joined_text(tmp_path, monkeypatch):
    """Typing in an open buffer moves only that buffer's membership of each "which files name X"
    answer, and only its bindings in the import table; the answers equal a fresh index's."""
    from dllint.config import Settings
    from dllint.project import imports
    from dllint.server.index import BufferIndex

    monkeypatch.setattr(imports, "LAZY_SEARCHES", 0)  # the import table from the first question on
    (tmp_path / "helpers.py").write_text("def make():\n    return 1\n")
    (tmp_path / "a.py").write_text("from helpers import make\nmake()\n")
    typed = tmp_path / "b.py"
    typed.write_text("x = 1\n")
    index = BufferIndex(str(tmp_path), Settings())
    index.set_buffer(str(typed), b"x = 1\n")  # opened: out of the joined text from now on
    helpers = str(tmp_path / "helpers.py")
    assert [i.file for i in index.imports.importers(helpers, "make")] == [str(tmp_path / "a.py")]
    assert index.text.mentions(b"make") == sorted([helpers, str(tmp_path / "a.py")])
    joined = index.text._hay
    for text in (b"from helpers import make\nmake()\n", b"from helpers import mak\n", b"import helpers\nhelpers.make()\n"):
        index.set_buffer(str(typed), text)
        fresh = BufferIndex(str(tmp_path), Settings())
        fresh.set_buffer(str(typed), text)
        assert index.text._mentions[(b"make", None)] == fresh.text.mentions(b"make")  # kept, the buffer's place moved
        assert index.imports.importers(helpers, "make") == fresh.imports.importers(helpers, "make")
        assert index.text._hay is joined  # the joined text was not read again


class Lines(dict):
    """The client's diagnostics by document, noting the first line of each list published."""

    def __init__(self, found: dict, published: list[int]) -> None:
        super().__init__(found)
        self.published = published

    def __setitem__(self, key: str, value) -> None:
        self.published.append(value[0].range.start.line if value else -1)
        super().__setitem__(key, value)


def test_a_newer_change_supersedes_the_lint_of_older_versions(project: Path) -> None:
    """Eight versions sent back to back, as fast typing sends them: the versions a newer one
    arrived behind are never linted nor published; the last version's findings are, and a hover
    after them meets them. (Before, every version was linted and published in turn.)"""
    filler = "".join(f"def helper_{i}(x):\n    return [y * {i} for y in x if y]\n\n" for i in range(400))
    published: list[int] = []

    async def scenario(editor: Editor) -> None:
        train = editor.open(project / "train.py", text=TRAIN + filler)
        [first] = await editor.diagnostics(train, lambda d: len(d) > 0)
        await hover_at(editor, train, 0, 0)
        editor.client.diagnostics = Lines(editor.client.diagnostics, published)
        for shift in range(1, 9):  # version 1 + shift: the finding moves down by `shift` lines
            editor.versions[train] += 1
            editor.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=train, version=editor.versions[train]),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" * shift + TRAIN + filler)],
                )
            )
        hover = await hover_at(editor, train, 8 + first.range.start.line, 20)
        assert hover is not None and "non-persistent-workers" in hover.contents.value
        assert published[-1] == first.range.start.line + 8  # the newest version's finding
        assert len(published) < 4 and published == sorted(published)  # superseded versions: not published

    session(project, scenario)
