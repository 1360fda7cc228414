"""What every Python process started under the probe installs in itself, before the script runs.

Called by the boot directory's sitecustomize in each process a probe run starts (the harness, its
DataLoader workers under spawn or forkserver, Python programs the script launches), and by a harness
forked from a template (:mod:`dllint.probe.template`), which started before any run and so ran
sitecustomize without the probe's variables set.
"""

from __future__ import annotations

import os

from dllint.probe.descendants import watch_loaders
from dllint.probe.guard import SCRATCH_ENV, install_from_environment
from dllint.probe.interpreters import install as guard_children


def install_probe_hooks() -> None:
    """Under a probe run (its scratch variable set): the file guard, the loader watch, the guard of child
    interpreters."""
    if not os.environ.get(SCRATCH_ENV):
        return
    install_from_environment()
    watch_loaders()
    guard_children()
