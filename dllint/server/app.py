"""``dllint server``: a Language Server Protocol server over stdio (pygls).

Diagnostics on open, on every change of the unsaved buffer and on save, for Python files,
notebooks (LSP 3.17 notebook documents: one diagnostic list per cell) and YAML configs;
quick fixes (unsafe ones only when the editor allows them), ``source.fixAll.dllint`` and
"disable DLxxx for this line"; hover with the rule's documentation. The project index stays warm
for the session: a change to ``data.py`` re-checks the open script that iterates its loader.
The server never runs the probe, never imports torch and never writes a file: every change is
an edit the editor applies.

An edit is linted once no newer message waits (the input is read ahead: :mod:`dllint.server.stdio`):
a ``didChange`` that comes while older versions are still unlinted supersedes them, and only the
newest text is linted and published. Every other message lints what is pending first, so a code
action or hover always meets the findings of the text it is asked about.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any, Awaitable, Callable

from lsprotocol import types
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

from dllint import __version__
from dllint.configs.lint import YAML_SUFFIXES
from dllint.deps import Deps
from dllint.findings import Finding
from dllint.server import convert
from dllint.server.actions import FIX_ALL, code_actions, hover_text
from dllint.server.index import Changed
from dllint.server.state import EditorSettings, Workspace
from dllint.server.stdio import REFUSED, FrameReader, watch_parent

LANGUAGES = ("python", "yaml")
RETRY = 0.002  # seconds before a pending lint looks again whether a newer message came in
MAX_DEFER = 0.5  # seconds an edit's lint waits at most for the input to pause (a client that never stops sending)


class DllintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "dllint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
                    )
                ],
                save=True,
            ),
        )
        self.state = Workspace()
        self.findings: dict[str, list[Finding]] = {}  # document or notebook uri -> its last findings
        self.deps: dict[str, Deps] = {}  # document or notebook uri -> what its last lint read elsewhere
        self.pending: dict[str, None] = {}  # documents edited since their last lint, oldest first
        self.input_waiting: Callable[[], bool] = lambda: False  # a newer message is in (FrameReader.waiting)
        self._retry: asyncio.TimerHandle | None = None
        self._pending_since = 0.0  # (loop time) when the oldest pending edit came

    @property
    def encoding(self) -> str:
        """The position encoding agreed with the client (UTF-16 unless it offered another)."""
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # -- documents ---------------------------------------------------------------------
    def is_cell(self, uri: str) -> bool:
        return self.workspace.get_notebook_document(cell_uri=uri) is not None

    def text_of(self, uri: str) -> str:
        """The text the editor holds (lone surrogates replaced: see :func:`convert.valid_text`)."""
        return convert.valid_text(self.workspace.get_text_document(uri).source)

    def lint_document(self, uri: str) -> None:
        if self.is_cell(uri):
            notebook = self.workspace.get_notebook_document(cell_uri=uri)
            if notebook is not None:
                self.lint_notebook(notebook.uri)
            return
        path = convert.path_of(uri)
        if path is None:
            return
        text = self.text_of(uri)
        result = self.state.lint(path, text.encode("utf-8"))
        self.report_errors(result.errors)
        self.findings[uri], self.deps[uri] = result.findings, result.deps
        lines = text.splitlines(keepends=True)
        diagnostics = [convert.diagnostic(f, lines, self.encoding) for f in result.findings]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def notebook_data(self, notebook: types.NotebookDocument) -> bytes:
        cells = []
        for cell in notebook.cells:
            kind = "code" if cell.kind == types.NotebookCellKind.Code else "markdown"
            cells.append((kind, self.text_of(cell.document)))
        return convert.notebook_bytes(cells, notebook.metadata if isinstance(notebook.metadata, dict) else None)

    def lint_notebook(self, notebook_uri: str) -> None:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        path = convert.path_of(notebook_uri)
        if notebook is None or path is None:
            return
        result = self.state.lint(path, self.notebook_data(notebook))
        self.report_errors(result.errors)
        self.findings[notebook_uri], self.deps[notebook_uri] = result.findings, result.deps
        by_cell: dict[str, list[types.Diagnostic]] = {cell.document: [] for cell in notebook.cells}
        for finding in result.findings:
            index = (finding.cell or 1) - 1
            if 0 <= index < len(notebook.cells):
                cell_uri = notebook.cells[index].document
                lines = self.text_of(cell_uri).splitlines(keepends=True)
                by_cell[cell_uri].append(convert.diagnostic(finding, lines, self.encoding))
        for cell_uri, diagnostics in by_cell.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=diagnostics))

    # -- edits: the newest version only ---------------------------------------------------
    def edited(self, uri: str) -> None:
        """``uri`` changed: lint its text once no newer message waits (a newer version supersedes it)."""
        if not self.pending:
            self._pending_since = asyncio.get_running_loop().time()
        self.pending[uri] = None
        self.lint_when_idle()

    def lint_when_idle(self) -> None:
        if not self.pending:
            return
        loop = asyncio.get_running_loop()
        if self.input_waiting() and loop.time() - self._pending_since < MAX_DEFER:
            if self._retry is None:
                self._retry = loop.call_later(RETRY, self._retried)
            return
        self.lint_pending()

    def _retried(self) -> None:
        self._retry = None
        self.lint_when_idle()

    def lint_pending(self) -> None:
        """Lint each document edited since its last lint, at its newest text, and re-check the
        open documents that rest on it."""
        while self.pending:
            uri = next(iter(self.pending))
            del self.pending[uri]
            if uri not in self.workspace.text_documents:
                continue
            changed = self.buffer_changed(uri, self.text_of(uri).encode("utf-8"))
            self.lint_document(uri)
            self.lint_open(except_uri=uri, changed=changed)

    def lint_open(self, except_uri: str | None = None, all_of_them: bool = False, changed: Changed | None = None) -> None:
        """Re-check the open documents whose findings rest on what changed elsewhere (all of them
        when settings changed); ``changed``: the files changed and their texts, when known."""
        for uri in list(self.workspace.text_documents):
            if uri != except_uri and not self.is_cell(uri) and self.wanted(uri) and (all_of_them or self.stale(uri, changed)):
                self.lint_document(uri)
        for uri in list(self.workspace.notebook_documents):
            if uri != except_uri and (all_of_them or self.stale(uri, changed)):
                self.lint_notebook(uri)

    def stale(self, uri: str, changed: Changed | None = None) -> bool:
        path = convert.path_of(uri)
        deps = self.deps.get(uri)
        return path is None or deps is None or (bool(deps) and self.state.stale(path, deps, changed))

    def forget(self, uri: str) -> None:
        """Drop a closed document's or notebook's last findings and what they read."""
        self.findings.pop(uri, None)
        self.deps.pop(uri, None)

    def wanted(self, uri: str) -> bool:
        document = self.workspace.get_text_document(uri)
        path = convert.path_of(uri) or ""
        return document.language_id in LANGUAGES or path.endswith((".py", *YAML_SUFFIXES))

    def buffer_changed(self, uri: str, text: bytes | None) -> Changed | None:
        """Tell the project index what the editor holds for ``uri`` (None: closed); what changed,
        when it is known."""
        path = convert.path_of(uri)
        if path is None:
            return {}
        if text is None:
            self.state.close(path)
            return None
        return self.state.open(path, text)

    def report_errors(self, errors: list[str]) -> None:
        for error in errors:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"dllint: {error}"))


server = DllintServer()


def _settings(server: DllintServer, data: Any) -> None:
    editor, problems = EditorSettings.from_json(data)
    for problem in problems:
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"dllint: {problem}"))
    server.state.editor = editor
    server.state.reload()


@server.feature(types.INITIALIZE)
def initialize(ls: DllintServer, params: types.InitializeParams) -> None:
    _settings(ls, params.initialization_options)
    if isinstance(params.process_id, int) and 0 < params.process_id < 2**31:
        watch_parent(params.process_id)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: DllintServer, params: types.DidChangeConfigurationParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    _settings(ls, params.settings)
    ls.lint_open(all_of_them=True)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: DllintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    uri = params.text_document.uri
    if ls.is_cell(uri) or not ls.wanted(uri):
        return
    ls.buffer_changed(uri, ls.text_of(uri).encode("utf-8"))
    ls.lint_document(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: DllintServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.is_cell(uri) or not ls.wanted(uri):
        return
    ls.edited(uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: DllintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    path = convert.path_of(params.text_document.uri) or ""
    if ls.state.is_config_file(path):
        ls.state.reload()
        ls.lint_open(all_of_them=True)
    elif not ls.is_cell(params.text_document.uri) and ls.wanted(params.text_document.uri):
        ls.lint_document(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: DllintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.is_cell(uri):
        return
    ls.pending.pop(uri, None)
    ls.lint_pending()
    ls.buffer_changed(uri, None)
    ls.forget(uri)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.lint_open()


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: DllintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    ls.lint_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: DllintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    ls.lint_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: DllintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    ls.lint_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: DllintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    ls.forget(params.notebook_document.uri)
    for cell in params.cell_text_documents:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: DllintServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    reload = False
    for change in params.changes:
        path = convert.path_of(change.uri)
        if path is None:
            continue
        if ls.state.is_config_file(path):
            reload = True
        ls.state.disk_changed(path)
    if reload:
        ls.state.reload()
    ls.lint_open(all_of_them=True)  # rare, and a new file may be what an import was missing


# -- code actions and hover ------------------------------------------------------------
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL], resolve_provider=False
    ),
)
def code_action(ls: DllintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    ls.lint_pending()  # (edits first: this message meets their findings)
    return code_actions(ls, params)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: DllintServer, params: types.HoverParams) -> types.Hover | None:
    ls.lint_pending()  # (edits first: this message meets their findings)
    text = hover_text(ls, params.text_document.uri, params.position)
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


@server.feature(REFUSED)
def refused_frame(ls: DllintServer, params: Any) -> None:
    ls.window_log_message(
        types.LogMessageParams(
            type=types.MessageType.Error,
            message=f"dllint: a message of {params.length} bytes was refused (the limit is {params.limit}); skipped to the next one",
        )
    )


def main() -> None:
    """pygls's ``start_io``, reading through the bounded :class:`FrameReader`."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    def off_loop(read: Callable[[], bytes]) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(server.thread_pool, read)

    reader = FrameReader.read_ahead(sys.stdin.fileno(), off_loop)
    server.input_waiting = reader.waiting
    try:
        asyncio.run(run_async(server._stop_event, reader, server.protocol, error_handler=server.report_server_error))
    except (BrokenPipeError, KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
