"""dllint: find, fix and prove PyTorch DataLoader mistakes."""

__version__ = "0.1.0"
