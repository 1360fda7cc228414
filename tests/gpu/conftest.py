"""End-to-end probe tests on a real GPU: skipped, cleanly, wherever CUDA is not available (CI has none).

Run them on a machine with an NVIDIA GPU: ``python -m pytest tests/gpu``.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

# Where a Linux machine's NVIDIA GPU shows (a driver, a container's passed-through devices, WSL2).
NVIDIA_SIGNS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")


def cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    if sys.platform == "linux" and not any(os.path.exists(sign) for sign in NVIDIA_SIGNS):
        return False  # no NVIDIA GPU: known without importing torch (2.5 CPU-s in every collecting process)
    import torch

    return torch.cuda.is_available()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs CUDA; skipped without it")


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    mine = [item for item in items if str(item.fspath).startswith(here)]
    if mine and not cuda_available():
        skip = pytest.mark.skip(reason="needs CUDA (an NVIDIA GPU and a CUDA build of torch)")
        for item in mine:
            item.add_marker(skip)
