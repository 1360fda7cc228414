"""One YAML config file read as the rules see it: parsed, then resolved (bases, defaults,
interpolation); a DL000 finding when it does not parse.

It sits with the readers, below the input adapters that call it (:mod:`dllint.inputs.yaml`)
and the fixer that re-reads a fixed text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dllint.configs.document import ConfigDocument
    from dllint.findings import Finding


def read_config(path: str, text: str) -> ConfigDocument | Finding:
    """The resolved document of a YAML file, or the DL000 finding saying where it fails."""
    # Imported here: PyYAML and the resolver load only when a run reads a config.
    from dllint.configs.inherit import resolve_document
    from dllint.configs.yaml_reader import YamlError, read_yaml
    from dllint.source import unreadable

    document = read_yaml(path, text)
    if isinstance(document, YamlError):
        return unreadable(path, document.message, document.line, document.column)
    return resolve_document(document)
