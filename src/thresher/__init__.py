"""thresher: a harness for self-editing search agents.

The top-level names are imported lazily so that ``import thresher`` (and the
CLI's ``--help``) stay fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "search"]

#: lazily imported top-level names -> (module, attribute)
_LAZY = {"search": ("thresher.api", "search")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'thresher' has no attribute '{name}'")
