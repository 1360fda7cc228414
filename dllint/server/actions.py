"""Code actions and hover: each finding's fix as a quick fix, "fix all safe", a ``# noqa``.

Edits are computed from the text the editor holds and handed to it as a ``WorkspaceEdit``;
nothing is written here. A quick fix on a Python file applies that one finding's fix; in a
notebook or a YAML config it applies its rule's fixes in the whole document (their fixes are
computed on the whole document), and its title says so when there are several.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from dllint.configs.lint import YAML_SUFFIXES
from dllint.findings import Finding
from dllint.inputs.notebook import cell_sources
from dllint.fixer import fix_text, is_selected
from dllint.fixes.layout import MAX_FIXED_LINE, overlong_line
from dllint.rules import has_fix, rule_by_code
from dllint.server import convert

if TYPE_CHECKING:
    from dllint.server.app import DllintServer

FIX_ALL = "source.fixAll.dllint"


def code_actions(ls: DllintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    owner = notebook.uri if notebook is not None else uri
    findings = ls.findings.get(owner, [])
    only = params.context.only
    actions: list[types.CodeAction] = []
    if only is None or any(k.startswith(types.CodeActionKind.QuickFix) for k in only):
        lines = ls.text_of(uri).splitlines(keepends=True)  # split once for every finding in range
        for finding in _in_range(ls, uri, findings, params.range):
            actions += _quick_fixes(ls, uri, owner, finding, findings, lines)
    if only is None or any(FIX_ALL.startswith(k) or k.startswith(FIX_ALL) for k in only):
        fix_all = _fix_all(ls, owner, findings)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def _in_range(ls: DllintServer, uri: str, findings: list[Finding], area: types.Range) -> list[Finding]:
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    cell = None
    if notebook is not None:
        cell = next(i + 1 for i, c in enumerate(notebook.cells) if c.document == uri)
    first, last = area.start.line + 1, area.end.line + 1
    return [f for f in findings if f.cell == cell and f.line <= last and max(f.end_line, f.line) >= first]


def _quick_fixes(
    ls: DllintServer, uri: str, owner: str, finding: Finding, findings: list[Finding], lines: list[str]
) -> list[types.CodeAction]:
    """The finding's fix and its ``# noqa``; ``lines``: ``uri``'s text, split keeping line ends."""
    actions = []
    diagnostic = convert.diagnostic(finding, lines, ls.encoding)
    allowed = finding.fix is not None and (finding.fix.applicability == "safe" or ls.state.editor.unsafe_fixes)
    allowed = allowed and not any(len(line) > MAX_FIXED_LINE for line in lines[finding.line - 1 : max(finding.end_line, finding.line)])
    if allowed and has_fix(finding):
        edit = _fix_edit(ls, owner, finding)
        if edit is not None:
            same = sum(f.code == finding.code and is_selected(f, True) for f in findings)
            title = f"Fix {finding.code}: {finding.fix.message}"  # type: ignore[union-attr]
            if finding.fix.applicability == "unsafe":  # type: ignore[union-attr]
                title += " (unsafe: check the result)"
            if same > 1 and (finding.cell is not None or _is_config(owner)):
                title += f" ({same} in this document)"
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=edit,
                    is_preferred=finding.fix.applicability == "safe",  # type: ignore[union-attr]
                )
            )
    noqa = convert.noqa_edit(lines, finding.line, finding.code, ls.encoding)
    if noqa is not None:
        actions.append(
            types.CodeAction(
                title=f"Disable {finding.code} for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=types.WorkspaceEdit(changes={uri: [noqa]}),
            )
        )
    return actions


def _is_config(uri: str) -> bool:
    return uri.endswith(YAML_SUFFIXES)


def _fix_all(ls: DllintServer, owner: str, findings: list[Finding]) -> types.CodeAction | None:
    if not any(is_selected(f, ls.state.editor.unsafe_fixes) for f in findings):
        return None
    python = ls.workspace.get_notebook_document(notebook_uri=owner) is None and not _is_config(owner)
    if python and overlong_line(ls.text_of(owner)) is not None:
        return None  # a line of generated code: LibCST would take minutes (the command line refuses it too)
    edit = _document_edit(ls, owner, ls.state.editor.unsafe_fixes, None, findings)
    if edit is None:
        return None
    return types.CodeAction(title="dllint: fix all safe problems" if not ls.state.editor.unsafe_fixes else "dllint: fix all problems", kind=FIX_ALL, edit=edit)


def _fix_edit(ls: DllintServer, owner: str, finding: Finding) -> types.WorkspaceEdit | None:
    unsafe = finding.fix is not None and finding.fix.applicability == "unsafe"
    if finding.cell is None and not _is_config(owner):
        return _one_fix(ls, owner, finding, unsafe)
    return _document_edit(ls, owner, unsafe, finding)


def _one_fix(ls: DllintServer, uri: str, finding: Finding, unsafe: bool) -> types.WorkspaceEdit | None:
    """That one finding's fix, on the buffer's text (one pass: the finding's rule alone)."""
    path = convert.path_of(uri)
    if path is None:
        return None
    linter = ls.state.rule_linter(path, finding.code)
    text = ls.text_of(uri)
    result = fix_text(path, text, linter, unsafe=unsafe, findings=[finding], max_passes=1)
    edit = convert.replacement(text, result.text, ls.encoding)
    return None if edit is None else types.WorkspaceEdit(changes={uri: [edit]})


def _document_edit(
    ls: DllintServer, owner: str, unsafe: bool, only: Finding | None, findings: list[Finding] | None = None
) -> types.WorkspaceEdit | None:
    """The edit of the whole document; ``findings``: its current ones (published with the text it holds)."""
    path = convert.path_of(owner)
    if path is None:
        return None
    notebook = ls.workspace.get_notebook_document(notebook_uri=owner)
    data = ls.notebook_data(notebook) if notebook is not None else ls.text_of(owner).encode("utf-8")
    outcome = ls.state.fix(path, data, unsafe, only, findings)
    if outcome.new_bytes is None:
        return None
    if notebook is None:
        edit = convert.replacement(ls.text_of(owner), outcome.new_bytes.decode("utf-8"), ls.encoding)
        return None if edit is None else types.WorkspaceEdit(changes={owner: [edit]})
    sources = cell_sources(outcome.new_bytes)
    if sources is None or len(sources) != len(notebook.cells):
        return None  # a fix that adds or removes cells is not an edit of the open cells
    changes: dict[str, list[types.TextEdit]] = {}
    for cell, source in zip(notebook.cells, sources):
        edit = convert.replacement(ls.text_of(cell.document), source, ls.encoding)
        if edit is not None:
            changes[cell.document] = [edit]
    return types.WorkspaceEdit(changes=changes) if changes else None


def hover_text(ls: DllintServer, uri: str, where: types.Position) -> str | None:
    """The documentation of the rules reported at ``where``."""
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    owner = notebook.uri if notebook is not None else uri
    area = types.Range(start=where, end=where)
    lines = ls.text_of(uri).splitlines(keepends=True)
    texts: list[str] = []
    for finding in _in_range(ls, uri, ls.findings.get(owner, []), area):
        shown = convert.diagnostic(finding, lines, ls.encoding).range
        if (shown.start.line, shown.start.character) <= (where.line, where.character) <= (shown.end.line, shown.end.character):
            rule = rule_by_code(finding.code)
            if rule is not None and finding.code not in "".join(texts):
                texts.append(f"**{rule.code}** ({rule.name}): {rule.summary}\n\nFix: {rule.fix_safety}.\n\n{rule.docs()}")
    return "\n\n---\n\n".join(texts) or None
