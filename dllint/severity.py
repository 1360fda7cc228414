"""How serious a finding is, by its rule's family: one table every output and the language
server read (GitHub's ``::error``/``::warning``, SARIF's ``level``, JSON's ``severity``, the
editor's diagnostic severity).

- DL000 (a file that cannot be linted), DL0xx (torch rejects the settings) and DL1xx (workers
  crash under spawn): errors, the run fails;
- DL2xx (slow loading): warnings;
- DL3xx (silently wrong under distributed training: repeated or unshuffled data): errors.
"""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning"]

_WARNING_FAMILIES = ("DL2",)


def severity(code: str) -> Severity:
    return "warning" if code.startswith(_WARNING_FAMILIES) else "error"
