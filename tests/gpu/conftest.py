"""End-to-end probe tests on a real GPU: skipped, cleanly, wherever CUDA is not available (CI has none).

Run them on a machine with an NVIDIA GPU: ``python -m pytest tests/gpu``.
"""

from __future__ import annotations

import os

import pytest


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
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
