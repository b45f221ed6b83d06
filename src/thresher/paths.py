"""Where thresher keeps its caches: one root, named by one environment variable.

The root is ``$THRESHER_CACHE`` when it is set, else the user's cache folder for
thresher as :mod:`platformdirs` gives it (``$XDG_CACHE_HOME/thresher``, else
``~/.cache/thresher`` on Linux; ``~/Library/Caches/thresher`` on macOS;
``%LOCALAPPDATA%\\thresher\\Cache`` on Windows). Each cache is a folder under it
(:data:`CacheKind`): ``eval-index`` (pooled indexes of task files), ``models``
(model files derived from the packaged ones), ``server-bm25`` (a Chroma server
collection's BM25 side index).
Nothing here creates a folder.

A deprecated alias, honoured for one release with a :class:`FutureWarning`:
``THRESHER_CACHE_DIR`` (the root, as ``THRESHER_CACHE``, which wins when both are
set).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Literal

__all__ = ["CACHE_ENV", "CacheKind", "cache_root", "cache_dir"]

#: the environment variable naming the root of every cache
CACHE_ENV = "THRESHER_CACHE"
#: the caches, each a folder of that name under the root
CacheKind = Literal["eval-index", "models", "server-bm25"]
#: deprecated variable -> what it names (``root``: the root; a kind: that folder)
_ALIASES: dict[str, str] = {"THRESHER_CACHE_DIR": "root"}
_warned: set[str] = set()


def _alias(name: str) -> str | None:
    """The value of the deprecated variable ``name`` (warned about once per process)."""
    value = os.environ.get(name)
    if not value:
        return None
    if name not in _warned:
        _warned.add(name)
        what = "the cache root" if _ALIASES[name] == "root" else f"{CACHE_ENV}/{_ALIASES[name]}"
        warnings.warn(
            f"{name} is deprecated and will be removed in the next release; set {CACHE_ENV} "
            f"(the root of every thresher cache; {name} named {what}) instead",
            FutureWarning,
            stacklevel=3,
        )
    return value


def cache_root() -> Path:
    """The root of every cache: ``$THRESHER_CACHE``, else the deprecated
    ``$THRESHER_CACHE_DIR``, else the platform's user cache folder for thresher."""
    explicit = os.environ.get(CACHE_ENV) or _alias("THRESHER_CACHE_DIR")
    if explicit:
        return Path(explicit)
    import platformdirs

    return platformdirs.user_cache_path("thresher", appauthor=False)


def cache_dir(kind: CacheKind) -> Path:
    """The folder of one cache: ``cache_root() / kind``."""
    return cache_root() / kind
