"""Reading a source file into text, its lines as ``ast`` counts them, and the DL000 findings when
reading or parsing fails."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from typing import NamedTuple

from dllint.files import Unreadable, read_bytes
from dllint.findings import Finding
from dllint.patterns import LazyPattern


class Decoded(NamedTuple):
    text: str | None
    error: Finding | None = None


def unreadable(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, line, column, line, column, "DL000", "unreadable-file", message)


def read_source(path: str) -> bytes | Finding:
    """The file's bytes, or the DL000 finding that says why it cannot be read."""
    try:
        return read_bytes(path)
    except Unreadable as exc:
        return unreadable(path, f"cannot read file: {exc.reason}")


def decode(path: str, data: bytes) -> Decoded:
    """Decode honouring a PEP 263 coding line (UTF-8 by default); errors become DL000."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return Decoded(None, unreadable(path, f"cannot decode file: {exc}"))
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line, column = _byte_position(data, getattr(exc, "start", 0))
        reason = f"not valid {encoding}" if isinstance(exc, UnicodeDecodeError) else f"unknown encoding {encoding}"
        return Decoded(None, unreadable(path, f"cannot decode file: {reason} at line {line} column {column}", line, column))
    if text.startswith("\ufeff"):
        text = text[1:]
    return Decoded(text)


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def syntax_error(path: str, exc: SyntaxError) -> Finding:
    line = exc.lineno or 1
    column = exc.offset or 1
    return unreadable(path, f"syntax error: {exc.msg} at line {line} column {column}", line, max(column, 1))


# What a parse says its text comes from: never the linted path. Python 3.11 reads an error's line back
# from a real file to count its column, and the text linted (an editor's buffer, stdin, a notebook's
# cells) is not always that file's: a shorter line there cut the column short.
NOT_A_FILE = "<unknown>"


def parse_module(text: str) -> ast.Module:
    """``ast.parse`` without Python's own warnings about the user's code on stderr (an invalid
    escape sequence, ``is`` with a literal): they are the user's compiler's to give, not dllint's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=NOT_A_FILE)


def compile_error(path: str, text: str) -> Finding | None:
    """The DL000 of code that ``ast`` parses but Python will not compile (``global x`` after
    ``x = 1``, ``return`` outside a function): Python refuses to run it. Asked by the fixer
    before it changes a file (LibCST and ``symtable`` would fail half-way); a check does not
    ask, as compiling costs about half a parse on every file with findings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, NOT_A_FILE, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return syntax_error(path, exc)
        except (ValueError, RecursionError, MemoryError) as exc:
            return unreadable(path, f"cannot compile file: {exc}")
    return None


def same_line_endings(before: str, after: str) -> str:
    """``after`` with ``before``'s line ending when ``before`` has one kind only: LibCST writes
    the lines it makes with its own (a lone-CR file came back with mixed endings and without its
    last one), a notebook cell is rebuilt with ``\\n``. Mixed endings are left as the edits wrote them."""
    style = _sole_line_ending(before)
    if style is None or (style == "\n" and "\r" not in after and after.endswith("\n") == before.endswith("\n")):
        return after
    lines = after.replace("\r\n", "\n").replace("\r", "\n")
    if style != "\n":
        lines = lines.replace("\n", style)
    if before.endswith(style) and not lines.endswith(style):
        lines += style
    return lines


def _sole_line_ending(text: str) -> str | None:
    crlf = text.count("\r\n")
    counts = (("\r\n", crlf), ("\r", text.count("\r") - crlf), ("\n", text.count("\n") - crlf))
    used = [style for style, count in counts if count]
    return used[0] if len(used) == 1 else None


LINE_BREAK = LazyPattern(r"\r\n|\r|\n")


def line_starts(source: str) -> list[int]:
    """The offset each line starts at (line ``n`` at index ``n - 1``), lines counted as ``ast`` does."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(source))]


def split_lines(source: str) -> list[str]:
    """Lines where ``ast`` counts them: at \\n, \\r\\n and \\r only. ``str.splitlines`` also
    splits at form feeds, U+2028 and the like, which a string literal may hold: every line
    after one would be off by one (its noqa and its columns read from the wrong line)."""
    lines = LINE_BREAK.split(source)
    if lines and lines[-1] == "":
        lines.pop()  # the break that ends the last line starts no new one
    return lines
