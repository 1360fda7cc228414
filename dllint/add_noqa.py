"""``--add-noqa``: a ``# noqa: CODE`` comment on the line of each finding, as ``ruff --add-noqa``
writes them. Python files, notebooks (in the cell's source) and YAML configs (a YAML comment)
alike; a line that already has a ``# noqa: ...`` gets the codes merged into it. Run twice, the
second run adds nothing: the comments suppress what the first run found.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Iterable

from dllint.findings import Finding
from dllint.noqa import with_noqa

# Where a comment cannot go: an unreadable file (DL000) has no line of ours to annotate.
_SKIPPED = frozenset({"DL000"})


class Added(dict[str, int]):
    """Comments added per file (path -> count)."""

    @property
    def total(self) -> int:
        return sum(self.values())


def add_noqa(findings: Iterable[Finding], errors: list[str]) -> Added:
    """Annotate the files of ``findings``; a file that cannot be read or written is left as it
    was, with one line in ``errors``."""
    by_file: dict[str, dict[tuple[int | None, int], set[str]]] = defaultdict(lambda: defaultdict(set))
    for finding in findings:
        if finding.code not in _SKIPPED and finding.source == "static":
            by_file[finding.path][(finding.cell, finding.line)].add(finding.code)
    added = Added()
    for path, lines in by_file.items():
        try:
            added[path] = _annotate(path, lines)
        except (OSError, ValueError, UnicodeError) as exc:
            errors.append(f"{path}: noqa comments not added: {exc}")
    return added


def _annotate(path: str, lines: dict[tuple[int | None, int], set[str]]) -> int:
    from dllint.atomic import write_atomic
    from dllint.files import read_bytes

    data = read_bytes(path)
    if path.endswith(".ipynb"):
        new, count = _annotate_notebook(data.decode("utf-8-sig"), lines)
        encoded = new.encode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
    else:
        from dllint.fixer import source_encoding

        encoding = source_encoding(data) if not path.endswith((".yaml", ".yml")) else "utf-8"  # a BOM stays a BOM
        text = data.decode(encoding)
        new, count = _annotate_text(text, {line: codes for (_, line), codes in lines.items()}, path)
        encoded = new.encode(encoding)
    if count:
        write_atomic(path, encoded)
    return count


def _annotate_text(text: str, codes_by_line: dict[int, set[str]], path: str) -> tuple[str, int]:
    """The text with a comment on each line; in Python, a line where a comment would change the
    code (inside a string that spans lines, before a backslash continuation) is left without one."""
    lines = text.splitlines(keepends=True)
    unsafe = set() if path.endswith((".yaml", ".yml")) else _no_comment_lines(text)
    count = 0
    for line, codes in sorted(codes_by_line.items()):
        if 0 < line <= len(lines) and line not in unsafe:
            lines[line - 1] = with_noqa(lines[line - 1], codes)
            count += 1
    return "".join(lines), count


def _no_comment_lines(text: str) -> set[int]:
    """Lines whose end is inside a string token or a backslash continuation."""
    import io
    import tokenize

    unsafe = {n for n, line in enumerate(text.splitlines(), start=1) if line.rstrip().endswith("\\")}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                unsafe.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass  # a notebook cell's IPython syntax: the lines found so far
    return unsafe


def _annotate_notebook(text: str, lines: dict[tuple[int | None, int], set[str]]) -> tuple[str, int]:
    from dllint.inputs.notebook import dump_like

    document = json.loads(text)
    cells = document["cells"]
    by_cell: dict[int, dict[int, set[str]]] = defaultdict(dict)
    for (cell, line), codes in lines.items():
        if cell is not None and 0 < cell <= len(cells):
            by_cell[cell][line] = codes
    count = 0
    for cell, codes_by_line in by_cell.items():
        raw = cells[cell - 1]
        source = "".join(raw["source"]) if isinstance(raw["source"], list) else raw["source"]
        new, added = _annotate_text(source, codes_by_line, "cell.py")
        if added:
            raw["source"] = new.splitlines(keepends=True) if isinstance(raw["source"], list) else new
            count += added
    return dump_like(document, text) if count else text, count
