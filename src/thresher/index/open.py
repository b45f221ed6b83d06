"""``open_store``, kept importable from here: it lives in :mod:`thresher.index.backends`,
the registry that maps a location (a folder, or ``http(s)://``) to its backend."""

from __future__ import annotations

from thresher.index.backends import open_store

__all__ = ["open_store"]
