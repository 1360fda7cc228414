"""YAML config files (Hydra/OmegaConf, NeMo, Lightning CLI, plain): the parsed, resolved
:class:`~dllint.configs.document.ConfigDocument` for the engine's config path.

The text is UTF-8 (a BOM is kept on write-back); fixes are text edits at the reported keys
(:mod:`dllint.configs.edits`), so writing back is encoding the fixed text.
"""

from __future__ import annotations

from typing import Final

from dllint.findings import Finding
from dllint.inputs.base import Input, WriteBackError
from dllint.source import unreadable

KIND: Final = "config"
BOM = b"\xef\xbb\xbf"


def load(path: str, data: bytes, settings: object = None) -> Input | Finding:
    from dllint.configs.read import read_config

    encoding = "utf-8-sig" if data.startswith(BOM) else "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return unreadable(path, f"cannot decode file: not valid utf-8 at byte {exc.start}")
    document = read_config(path, text)
    if isinstance(document, Finding):
        return document
    return Input(path, KIND, text, document=document, adapter=__name__, origin=encoding)


def write_back(input: Input, new_text: str) -> bytes:
    encoding = input.origin if isinstance(input.origin, str) else "utf-8"
    try:
        return new_text.encode(encoding)
    except UnicodeEncodeError as exc:  # pragma: no cover - the edits only add ASCII
        raise WriteBackError(f"the fixed text cannot be written in {encoding}: {exc}") from None
