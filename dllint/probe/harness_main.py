"""The probe's child process: ``python -m dllint.probe.harness_main CONFIG.json``.

The entry sits above both the harness and :mod:`dllint.probe.rank_children` (the ranks the
script starts itself, which build harnesses of their own), so that the harness never imports the
layer above it: this module installs the harness (:func:`dllint.probe.harness.install_harness`),
hooks the script's children (:func:`dllint.probe.rank_children.hook_children`), then runs the
target.
"""

from __future__ import annotations

import json
import os
import sys

import dllint.probe.descendants as descendants
import dllint.probe.rank_children as rank_children
from dllint.probe.guard import EventFile
from dllint.probe.harness import die_with_parent, install_harness
from dllint.probe.measure import describe_error


def main(config_path: str) -> None:
    die_with_parent()
    os.environ[descendants.ROLE_ENV] = "descendant"  # processes started from here report the loaders they build
    with open(config_path, encoding="utf-8") as stream:
        config = json.load(stream)
    events = EventFile(config["events"])  # no descriptor the script could write through or close
    harness = install_harness(config, events)
    ctx = harness.ctx
    rank_children.hook_children(harness, config)
    if config["mode"] == "script":
        outcome = harness.run_script(config["script"], config["args"])
    else:
        outcome = harness.run_factory(config["module"], config["function"])
    try:
        harness.finish()
    except BaseException as error:  # finishing must still report
        ctx.emit({"event": "note", "loader": None, "text": f"cleanup failed: {describe_error(error)}"})
    ctx.emit({"event": "script_end", **outcome})
    ctx.emit({"event": "done"})
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter shutdown: the user's threads or atexit handlers must not keep us alive.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
