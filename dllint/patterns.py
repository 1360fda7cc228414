"""Regular expressions compiled on first use.

Compiling a pattern costs 0.1-0.8 ms (2-3 M instructions for one with groups and
``IGNORECASE``), and a module-level ``re.compile`` is paid at import by every run, the one-file
run of a pre-commit hook included, whether or not the run ever uses the pattern (``# dllint:
noqa`` comments, sizes in a config, a control character in a path).
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, made on first use; its methods (``search``, ``finditer``...)
    are then found on this object directly."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        value = getattr(re.compile(self.pattern, self.flags), name)
        setattr(self, name, value)  # the next lookup finds it here, without __getattr__
        return value
