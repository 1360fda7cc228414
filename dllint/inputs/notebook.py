"""The notebook input adapter: code cells joined into one module, positions mapped back to cells.

The cells are linted as one module because that is what the kernel sees: a name
bound in cell 2 is visible in cell 5, and a loader's ``num_workers`` may come
from a cell above. Each cell is preceded by a marker comment line, so every
line of the module maps back to ``(cell, line in cell)`` and a fixed module
splits back into cells.

IPython syntax (``%magic``, ``!shell``, ``x = !cmd``, ``obj?``, ``%%cell``
magics, and ``pip install x`` that automagic runs as ``%pip``) is not Python: each such line is replaced by a placeholder of the same
line count (``pass`` at the same indentation where a statement stands, else a
comment) that carries the index of the original line, so line numbers hold and
a fix can put the original back.

A cell whose first line is indented runs as the kernel runs it: IPython removes that
indentation from every line that starts with it (its ``leading_indent`` transform) before
anything else, so ``  !ls`` or ``  x = 1`` alone in a cell is no syntax error. Findings in
such a cell are shifted back to the columns of the original lines, and a fix puts the
indentation back.

Cells are numbered as the notebook shows them: 1-based, markdown and raw cells
included.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Final

from dllint.findings import Finding
from dllint.inputs.base import Input, WriteBackError
from dllint.source import parse_module, same_line_endings, unreadable

KIND: Final = "python"
NOTEBOOK_SUFFIX = ".ipynb"

CELL_MARKER = "# dllint: cell {number}"
CELL_MARKER_RE = re.compile(r"^# dllint: cell (\d+)$")
MAGIC_PLACEHOLDER_RE = re.compile(r"^[ \t]*(?:pass  )?# dllint-magic (\d+)$")

# ``%magic``, ``!shell``, and their assigned forms ``files = !ls``, ``t = %timeit -o f()``.
LINE_MAGIC = re.compile(r"^[ \t]*(?:[%!]|[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!])")
# ``obj?``, ``obj??``, ``?obj``: object help, only ever on a bare dotted name.
HELP = re.compile(r"^[ \t]*(?:\?{1,2}[\w.]+|[\w.]+\?{1,2})[ \t]*$")
# IPython's default line magics (aliases included): with automagic on (the default), a line
# that starts with one of these names, unindented, runs as that magic (``pip install x``).
AUTOMAGICS = frozenset(
    "alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config cp debug dhist "
    "dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext loadpy logoff logon "
    "logstart logstate logstop ls lsmagic lx macro magic man matplotlib mkdir more mv notebook page pdb pdef pdoc pfile "
    "pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab quickref recall rehashx "
    "reload_ext rerun reset reset_selective rm rmdir run save sc set_env store sx system tb time timeit unalias "
    "unload_ext who who_ls whos xdel xmode".split()
)
AUTOMAGIC = re.compile(r"^([A-Za-z_]\w*)[ \t]+[^\s=(]")
# Cell magics whose body is Python that the kernel runs: lint the body, mask the magic line.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


@dataclass
class CodeCell:
    number: int  # 1-based position among all the notebook's cells
    index: int  # index into the JSON ``cells`` list
    source: str
    broken: bool = False  # a syntax error: left out of the module, never rewritten

    @property
    def indent(self) -> str:
        """The leading whitespace of the first non-blank line, which IPython strips from every
        line that starts with it before running the cell."""
        first = next((line for line in self.source.splitlines() if line.strip()), "")
        return first[: len(first) - len(first.lstrip(" \t"))]

    def lines(self) -> tuple[list[str], list[int]]:
        """The cell's lines as the kernel runs them, and the width removed from each."""
        indent = self.indent
        lines, shifts = [], []
        for line in self.source.splitlines():
            removed = len(indent) if indent and line.startswith(indent) else 0
            lines.append(line[removed:])
            shifts.append(removed)
        return lines, shifts


@dataclass
class Notebook:
    data: dict[str, Any]
    cells: list[CodeCell] = field(default_factory=list)
    magic_lines: list[str] = field(default_factory=list)  # originals of the placeholders, by index
    shifts: dict[int, int] = field(default_factory=dict)  # module line -> indentation removed (see CodeCell.lines)

    def module(self) -> tuple[str, list[tuple[int, int] | None]]:
        """The code cells as one module, and for each of its lines ``(cell, line)`` (None: a marker)."""
        lines: list[str] = []
        line_map: list[tuple[int, int] | None] = []
        self.shifts = {}
        for cell in self.cells:
            lines.append(CELL_MARKER.format(number=cell.number))
            line_map.append(None)
            cell_lines, shifts = cell.lines()
            if cell.broken:
                cell_lines = [""] * len(cell_lines)
            else:
                cell_lines = self._mask(cell_lines)
                self.shifts.update({len(lines) + n: shift for n, shift in enumerate(shifts, 1) if shift})
            lines.extend(cell_lines)
            line_map.extend((cell.number, n) for n in range(1, len(cell_lines) + 1))
        return "\n".join(lines) + "\n", line_map

    def _placeholder(self, original: str, statement: bool) -> str:
        self.magic_lines.append(original)
        index = len(self.magic_lines) - 1
        if statement:
            indent = original[: len(original) - len(original.lstrip(" \t"))]
            return f"{indent}pass  # dllint-magic {index}"
        return f"# dllint-magic {index}"

    def _mask(self, lines: list[str]) -> list[str]:
        first = next((i for i, line in enumerate(lines) if line.strip()), None)
        if first is not None and lines[first].lstrip().startswith("%%"):
            name = lines[first].lstrip()[2:].split(maxsplit=1)
            if name and name[0] in PYTHON_BODY_CELL_MAGICS:
                lines = list(lines)
                lines[first] = self._placeholder(lines[first], statement=True)
            else:  # %%bash, %%writefile, %%html...: the body is not Python
                return [self._placeholder(line, statement=False) for line in lines]
        masked = []
        continued = False  # the previous magic line ended with a backslash
        python = _Continuation()  # a line inside brackets or a string, or after a backslash, is Python
        for line in lines:
            if continued:
                masked.append(self._placeholder(line, statement=False))
                continued = line.endswith("\\")
            elif not python.open and (LINE_MAGIC.match(line) or HELP.match(line) or _automagic(line)):
                masked.append(self._placeholder(line, statement=True))
                continued = line.endswith("\\")
            else:
                masked.append(line)
                python.read(line)
        return masked

    def restore(self, module: str) -> dict[int, str] | None:
        """Split a (fixed) module back into cell sources by number; None when a marker was lost."""
        sources: dict[int, list[str]] = {}
        current: list[str] | None = None
        expected = [cell.number for cell in self.cells]
        seen = []
        for line in module.splitlines():
            marker = CELL_MARKER_RE.match(line)
            if marker:
                number = int(marker.group(1))
                seen.append(number)
                current = sources.setdefault(number, [])
                continue
            placeholder = MAGIC_PLACEHOLDER_RE.match(line)
            if placeholder and int(placeholder.group(1)) < len(self.magic_lines):
                line = self.magic_lines[int(placeholder.group(1))]
            if current is None:
                # Text a fix put above the first cell (a hoisted definition) belongs to it.
                current = sources.setdefault(expected[0], []) if expected else []
            current.append(line)
        if seen != expected:
            return None
        for cell in self.cells:
            if cell.indent and cell.number in sources:
                sources[cell.number] = _reindent(sources[cell.number], cell)
        return {number: "\n".join(lines) for number, lines in sources.items()}


class _Continuation:
    """Whether the next line of a cell continues a Python statement: inside an open bracket or
    a triple-quoted string, or after a backslash. Such a line is never a magic, even when it
    starts with ``%`` (``print('%d'`` then ``% (epoch + 1))`` on the next line)."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the triple quote a string spanning lines is open with
        self.backslash = False

    @property
    def open(self) -> bool:
        return self.depth > 0 or self.quote is not None or self.backslash

    def read(self, line: str) -> None:
        i, n = 0, len(line)
        while i < n:
            if self.quote is not None:
                end = line.find(self.quote, i)
                if end == -1:
                    return
                i, self.quote = end + 3, None
                continue
            char = line[i]
            if char == "#":
                break
            if char in "\"'":
                if line.startswith(char * 3, i):
                    self.quote, i = char * 3, i + 3
                    continue
                i = _string_end(line, i + 1, char)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        self.backslash = self.quote is None and line.rstrip().endswith("\\") and "#" not in line[i:]


def _automagic(line: str) -> bool:
    """``pip install torchviz``: an unindented line that is not Python on its own and starts
    with a line magic's name followed by its arguments (not ``pip = 3``, not ``pip(x)``), which
    IPython's automagic runs as ``%pip install torchviz``. Valid Python (``ls -l``) is left alone."""
    match = AUTOMAGIC.match(line)
    if match is None or match.group(1) not in AUTOMAGICS:
        return False
    try:
        compile(line, "<cell line>", "exec", dont_inherit=True)
    except SyntaxError:
        return True
    return False


def _string_end(line: str, i: int, quote: str) -> int:
    """The index after the string that opened before ``i`` with ``quote`` (its line's end if unclosed)."""
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == quote:
            return i + 1
        i += 1
    return i


def _reindent(lines: list[str], cell: CodeCell) -> list[str]:
    """Put back the indentation ``CodeCell.lines`` removed: on the same lines while the fix kept
    the line count, else on every non-blank line."""
    _, shifts = cell.lines()
    if len(lines) == len(shifts):
        return [cell.indent + line if shift else line for line, shift in zip(lines, shifts)]
    return [cell.indent + line if line.strip() else line for line in lines]


def _cell_error(path: str, cell: int, message: str) -> Finding:
    return replace(unreadable(path, message), cell=cell)


def read_notebook(path: str, data: bytes) -> Notebook | Finding:
    """Parse the notebook JSON; a DL000 finding when it is not a notebook dllint can read."""
    try:
        document = json.loads(data)
    except json.JSONDecodeError as exc:
        return unreadable(path, f"invalid notebook JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", exc.lineno, exc.colno)
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        return unreadable(path, f"invalid notebook JSON: {exc}")
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return unreadable(path, "not a Jupyter notebook: no 'cells' list at the top level (nbformat 4 expected)")
    version = document.get("nbformat")
    if type(version) is not int or version != 4:  # missing, "4", null, 3, 5: not the format dllint reads
        shown = "missing" if "nbformat" not in document else json.dumps(version)[:40]
        return unreadable(path, f"not a Jupyter notebook dllint can read: nbformat is {shown} (nbformat 4 expected)")
    notebook = Notebook(document)
    if not _is_python(document.get("metadata")):
        return notebook  # an R or Julia notebook: nothing for dllint
    for index, cell in enumerate(cells):
        number = index + 1
        if not isinstance(cell, dict):
            return _cell_error(path, number, f"invalid notebook: cell {number} is not a JSON object")
        if cell.get("cell_type") != "code" or not _is_python_cell(cell.get("metadata")):
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            return _cell_error(path, number, f"invalid notebook: the source of cell {number} is not a string or a list of strings")
        notebook.cells.append(CodeCell(number, index, source))
    return notebook


def _is_python(metadata: Any) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, field_name in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field_name), str):
            return section[field_name].lower() == "python"
    return True


def _is_python_cell(metadata: Any) -> bool:
    """VS Code stores a per-cell language (``sql``, ``markdown``) in code cells."""
    if isinstance(metadata, dict) and isinstance(metadata.get("vscode"), dict):
        language = metadata["vscode"].get("languageId")
        return not isinstance(language, str) or language == "python"
    return True


def _syntax_errors(path: str, notebook: Notebook) -> list[Finding]:
    """One DL000 per cell that does not parse; such cells are then left out, as the kernel
    would still run the others."""
    errors: list[Finding] = []
    for _ in range(len(notebook.cells)):
        text, line_map = notebook.module()
        notebook.magic_lines.clear()
        try:
            parse_module(text)
            return errors
        except SyntaxError as exc:
            position = line_map[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(line_map) else None
            if position is None:  # an error at the end of the module: the last cell left it open
                cell = next((c for c in reversed(notebook.cells) if not c.broken), None)
                position = (cell.number, max(1, len(cell.source.splitlines()))) if cell else (1, 1)
            number, line = position
            column = max(exc.offset or 1, 1) + notebook.shifts.get(exc.lineno or 0, 0)
            text_of_error = _cell_lines(exc.msg, line_map)
            culprit = _left_open(notebook, number)
            if culprit is not None:  # this cell parses alone: an earlier one ran into it
                number, line, column, exc = culprit
                text_of_error = exc.msg
            message = f"syntax error in cell {number}: {text_of_error} at line {line} column {column}"
            errors.append(replace(unreadable(path, message, line, column), cell=number))
            for cell in notebook.cells:
                if cell.number == number:
                    cell.broken = True
        except (ValueError, RecursionError, MemoryError) as exc:
            errors.append(unreadable(path, f"cannot parse notebook: {exc}"))
            notebook.cells.clear()
            return errors
    return errors


def _cell_lines(text: str, line_map: list[tuple[int, int] | None]) -> str:
    """Python's ``... on line 185`` (a line of the joined module) as the cell's own line."""
    def cell_line(match: re.Match[str]) -> str:
        number = int(match.group(1))
        position = line_map[number - 1] if 0 < number <= len(line_map) else None
        return f"on line {position[1]}" if position else match.group(0)
    return re.sub(r"on line (\d+)", cell_line, text)


def _left_open(notebook: Notebook, number: int) -> tuple[int, int, int, SyntaxError] | None:
    """Where the joined module's error shows at cell ``number`` but that cell parses on its own
    (the kernel compiles each cell alone): the nearest earlier cell that does not, with its own
    error (``def f(x):`` and only a comment, an exercise left blank, fails at the next cell)."""
    cells = [c for c in notebook.cells if not c.broken]
    at = next((i for i, c in enumerate(cells) if c.number == number), None)
    if at is None or _own_error(notebook, cells[at]) is not None:
        return None
    for cell in reversed(cells[:at]):
        error = _own_error(notebook, cell)
        if error is not None:
            lines = max(1, len(cell.source.splitlines()))
            return cell.number, min(max(error.lineno or 1, 1), lines), max(error.offset or 1, 1), error
    return None


def _own_error(notebook: Notebook, cell: CodeCell) -> SyntaxError | None:
    """The syntax error of ``cell`` compiled on its own (magics masked), None if it parses."""
    saved = list(notebook.magic_lines)
    try:
        parse_module("\n".join(notebook._mask(cell.lines()[0])) + "\n")
        return None
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):
        return None
    finally:
        notebook.magic_lines[:] = saved


def to_cell_positions(finding: Finding, line_map: list[tuple[int, int] | None], shifts: dict[int, int] | None = None) -> Finding:
    """A finding on the joined module, re-addressed to its cell (``shifts``: indentation
    removed from module lines, added back to the columns)."""
    start = line_map[finding.line - 1] if 0 < finding.line <= len(line_map) else None
    if start is None:
        return finding
    shifts = shifts or {}
    column = finding.column + shifts.get(finding.line, 0)
    end = line_map[finding.end_line - 1] if 0 < finding.end_line <= len(line_map) else None
    if end and end[0] == start[0]:
        end_line, end_column = end[1], finding.end_column + shifts.get(finding.end_line, 0)
    else:
        end_line, end_column = start[1], column
    return replace(finding, cell=start[0], line=start[1], column=column, end_line=end_line, end_column=end_column)


@dataclass
class PreparedNotebook:
    notebook: Notebook
    text: str  # the joined module, as linted and fixed
    line_map: list[tuple[int, int] | None]
    errors: list[Finding]  # DL000: unreadable notebook or cells that do not parse


def prepare(path: str, data: bytes) -> PreparedNotebook | Finding:
    notebook = read_notebook(path, data)
    if isinstance(notebook, Finding):
        return notebook
    errors = _syntax_errors(path, notebook)
    text, line_map = notebook.module()
    return PreparedNotebook(notebook, text, line_map, errors)


# -- the adapter ------------------------------------------------------------------------
@dataclass
class CellPositions:
    """Joined-module positions -> (cell, line in cell)."""

    line_map: list[tuple[int, int] | None]
    shifts: dict[int, int] = field(default_factory=dict)  # module line -> indentation removed

    def to_file(self, finding: Finding) -> Finding:
        return to_cell_positions(finding, self.line_map, self.shifts)


@dataclass
class _Origin:
    notebook: Notebook
    original: str  # the notebook's JSON text, for its layout
    bom: bool = False  # the file starts with a UTF-8 byte order mark: written back with it


def load(path: str, data: bytes, settings: object = None) -> Input | Finding:
    """The code cells as one module (findings are addressed back to cells), or a DL000."""
    prepared = prepare(path, data)
    if isinstance(prepared, Finding):
        return prepared
    return Input(
        path,
        KIND,
        prepared.text,
        positions=CellPositions(prepared.line_map, prepared.notebook.shifts),
        notebook=True,
        errors=prepared.errors,
        adapter=__name__,
        origin=_Origin(prepared.notebook, data.decode("utf-8-sig", "replace"), data.startswith(b"\xef\xbb\xbf")),
    )


def write_back(input: Input, new_text: str) -> bytes:
    """The notebook with only the sources of changed cells rewritten (each in its own form, a
    string or a list of lines); outputs, metadata, ``nbformat`` and the file's layout are kept."""
    origin = input.origin
    assert isinstance(origin, _Origin)
    sources = origin.notebook.restore(new_text)
    if sources is None:
        raise WriteBackError("the fix moved a cell boundary; notebook left as it was")
    document = copy.deepcopy(origin.notebook.data)
    for cell in origin.notebook.cells:
        new_source = sources.get(cell.number, "")
        if cell.broken or new_source == "\n".join(cell.source.splitlines()):
            continue
        if cell.source.endswith("\n"):
            new_source += "\n"
        new_source = same_line_endings(cell.source, new_source)  # a cell written with \r\n keeps it
        raw = document["cells"][cell.index]
        raw["source"] = new_source.splitlines(keepends=True) if isinstance(raw.get("source"), list) else new_source
    return dump_like(document, origin.original).encode("utf-8-sig" if origin.bom else "utf-8")


def cell_sources(document: str | bytes) -> list[str] | None:
    """Every cell's source (markdown cells too, numbered as the notebook shows them) of a
    notebook's JSON text or bytes; None when it is not one, or a cell has no source."""
    try:
        cells = json.loads(document.lstrip("\ufeff") if isinstance(document, str) else document)["cells"]
        return ["".join(c["source"]) if isinstance(c["source"], list) else str(c["source"]) for c in cells]
    except (ValueError, KeyError, TypeError):
        return None


def notebook_from_percent(source: str) -> bytes:
    """A notebook whose code cells are the ``# %%``-separated parts of ``source`` (the percent
    format of Jupytext and VS Code): how rule examples that only fire in notebooks are written."""
    cells: list[list[str]] = []
    for line in source.splitlines(keepends=True):
        if line.rstrip() == "# %%" or not cells:
            cells.append([])
            if line.rstrip() == "# %%":
                continue
        cells[-1].append(line)
    document = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": lines}
            for lines in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(document, indent=1) + "\n").encode()


def dump_like(document: dict[str, Any], original: str) -> str:
    """``document`` as JSON laid out as ``original`` is: its indentation, its escaping of
    non-ASCII text (Jupyter writes it raw), its final newline; keys keep their order."""
    layout = re.match(r"\{(\r?\n)([ \t]*)\"", original)
    indent: int | str | None = None
    if layout:
        whitespace = layout.group(2)
        indent = len(whitespace) if set(whitespace) <= {" "} else whitespace
    ensure_ascii = original.isascii() and "\\u" in original
    text = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
    if layout and layout.group(1) == "\r\n":
        text = text.replace("\n", "\r\n")
    if original.endswith("\n"):
        text += layout.group(1) if layout else "\n"
    return text
