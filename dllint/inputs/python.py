"""Python source files: bytes decoded as PEP 263 says; written back in the same encoding."""

from __future__ import annotations

import io
import tokenize
from typing import Final

from dllint.findings import Finding
from dllint.inputs.base import Input, WriteBackError
from dllint.source import decode

KIND: Final = "python"


def load(path: str, data: bytes, settings: object = None) -> Input | Finding:
    decoded = decode(path, data)
    if decoded.error is not None:
        return decoded.error
    return Input(path, KIND, decoded.text or "", adapter=__name__, origin=source_encoding(data))


def write_back(input: Input, new_text: str) -> bytes:
    encoding = input.origin if isinstance(input.origin, str) else "utf-8"
    try:
        return new_text.encode(encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        raise WriteBackError(f"the fixed text cannot be written in {encoding}: {exc}") from None


def source_encoding(data: bytes) -> str:
    """The encoding to write a file back in: its PEP 263 one (``utf-8-sig`` keeps a BOM)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return "utf-8"
