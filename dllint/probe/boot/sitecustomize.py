"""Installs the probe's file guard in every Python process the probe starts, then the real sitecustomize.

The runner puts this directory first on the harness's PYTHONPATH; each process
started under the probe (DataLoader workers under spawn or forkserver, Python
programs the script launches) inherits it. A Python child that would not
inherit it (``-E``, ``-I``, ``-S``, an emptied environment) has its command
line rewritten to install the guard all the same
(:mod:`dllint.probe.interpreters`). Outside a probe run
(``DLLINT_PROBE_SCRATCH`` unset) it only hands over to the environment's own
sitecustomize.

Under ``--launcher``, a process the launcher started to run the script as one rank runs it here,
probed, and exits (:func:`dllint.probe.launched.run_if_rank`): last, once the environment's own
sitecustomize has run.
"""

import importlib
import os
import sys

if os.environ.get("DLLINT_PROBE_SCRATCH"):
    from dllint.probe.hooks import install_probe_hooks

    install_probe_hooks()

# The environment's own sitecustomize (a distribution or virtualenv may ship one).
_here = os.path.dirname(os.path.abspath(__file__))
_saved_path = list(sys.path)
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]
_ours = sys.modules.pop("sitecustomize", None)
try:
    importlib.import_module("sitecustomize")
except ImportError:
    sys.modules["sitecustomize"] = _ours  # type: ignore[assignment]  # None too, as it was
finally:
    sys.path[:] = _saved_path

if os.environ.get("DLLINT_PROBE_LAUNCH"):
    from dllint.probe.launched import run_if_rank

    run_if_rank()
