"""thresher: a harness for self-editing search agents.

The top-level names are imported lazily so that ``import thresher`` (and the
CLI's ``--help``) stay fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
