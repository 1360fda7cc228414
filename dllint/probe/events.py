"""The events the harness writes and the runner reads: one JSON object a line, ``{"event": KIND, ...}``.

The runner trusts no line: the events file is the probe's, but the script runs in the process
that writes it. :func:`parse_event` keeps only objects of a known kind with the fields the
report reads, of the types it reads them as, and shows every control character in their text
as ``\\xNN`` (an escape sequence in a script's error message must not reach the terminal).
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 and C1 control characters but newline and tab.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# The fields the runner reads from each kind of event, and their JSON types. A kind not listed
# here is kept as it is: the runner reads nothing from it that it does not look up with a default.
REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "loader": {"id": int, "call_site": str},
    "progress": {"step": str},
    "write": {"handled": str, "text": str},
    "note": {"text": str},
    "loader_error": {"loader": int, "error": str},
    "first_batch": {"loader": int},
    "step": {"loader": int},
    "epoch_failed": {"loader": int, "error": str},
    "table": {"loader": int, "title": str, "columns": list, "rows": list},
    "result": {"code": str, "verdict": str, "evidence": str},
    "child_loader": {"pid": int},
    "script_end": {"how": str, "detail": str},
    "rank_info": {"rank": int},
}


def printable(value: Any) -> Any:
    """``value`` (an event's JSON) with every control character in its strings shown as ``\\xNN``."""
    if isinstance(value, str):
        return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
    if isinstance(value, list):
        return [printable(item) for item in value]
    if isinstance(value, dict):
        return {printable(key): printable(item) for key, item in value.items()}
    return value


def parse_event(line: str) -> dict[str, Any] | None:
    """One line of the events file as an event, or None for anything that is not one: JSON that
    is not an object, an object without a kind, or a kind without the fields the report reads."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return None
    for name, kind in REQUIRED.get(event["event"], {}).items():
        value = event.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            return None
    return printable(event)
