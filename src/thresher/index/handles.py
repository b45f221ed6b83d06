"""Open stores kept for reuse across calls: what ``thresher.search(index=PATH)`` borrows.

Opening an index folder reads its BM25 index, and the first search loads the
query embedder and the vectors: most of a short search's time. So :func:`borrowed` keeps one open store per process for each index,
keyed by the resolved folder, its committed generation (what ``CURRENT``
names, with its manifest's inode and mtime: a folder built again reuses
names) and the store's own settings (``retrieval`` less its filters, and
``grep``); a server URL is keyed by the URL. The next call with the same key
reuses it. When a new generation commits, the next call opens it, and the old
store is closed as soon as no call uses it. :func:`close_indexes` drops every
kept store (a store still in use is closed when its call ends); it also runs
at interpreter exit.

One store serves several threads at once (stores are thread-safe, as the HTTP
server relies on); the lock here guards only the map of kept stores, never an
open or an episode.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import threading
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path

from thresher.config import Config
from thresher.index.store import Store

__all__ = ["REUSE_ENV", "reuse_default", "borrowed", "close_indexes", "kept_count"]

#: set to ``0`` (``false``, ``no``, ``off``) to open the index on every call
REUSE_ENV = "THRESHER_REUSE_INDEX"


@dataclass(slots=True)
class _Handle:
    store: Store
    generation: str
    users: int = 0
    retired: bool = False


_lock = threading.Lock()
_kept: dict[Hashable, _Handle] = {}


def reuse_default() -> bool:
    """Whether calls reuse open stores unless told otherwise (``$THRESHER_REUSE_INDEX``)."""
    value = os.environ.get(REUSE_ENV, "").strip().lower()
    return value not in {"0", "false", "no", "off"}


def _slot(location: str | Path, config: Config) -> tuple[Hashable, str]:
    """(what identifies the store apart from its generation, the generation now live)."""
    from thresher.index.backends import backend_for
    from thresher.index.embedded.layout import MANIFEST, current_generation

    backend = backend_for(location)
    settings = (dataclasses.replace(config.retrieval, where="", path=""), config.grep)
    if not backend.schemes:  # the folder backend
        generation = current_generation(Path(location))
        try:  # a folder removed and built again starts at gen-000001 again
            st = (generation / MANIFEST).stat()
        except OSError:
            return (backend.name, str(Path(location).resolve()), settings), generation.name
        marker = f"{generation.name}:{st.st_ino}:{st.st_mtime_ns}"
        return (backend.name, str(Path(location).resolve()), settings), marker
    return (backend.name, str(location), settings), ""


def _leave(handle: _Handle) -> bool:
    """Under the lock: one call stops using ``handle``; whether to close it now."""
    handle.users -= 1
    return handle.retired and handle.users == 0


def _retire(handle: _Handle) -> bool:
    """Under the lock: ``handle`` is no longer kept; whether to close it now."""
    handle.retired = True
    return handle.users == 0


@contextlib.contextmanager
def borrowed(location: str | Path, config: Config) -> Iterator[Store]:
    """The kept store for ``location`` (opened if none is kept, or the index has
    committed a newer generation), held for the ``with`` block.

    Args:
        location: an index folder or a server URL (as :func:`~thresher.index.backends.open_store`).
        config: the settings the store is opened with (its retrieval and grep sections key it).

    Raises:
        IndexNotFoundError, InputError, BackendUnavailableError, ConfigError: as
        :func:`~thresher.index.backends.open_store`.
    """
    from thresher.index.backends import open_store

    key, generation = _slot(location, config)
    to_close: list[Store] = []
    with _lock:
        handle = _kept.get(key)
        if handle is not None and handle.generation != generation:
            del _kept[key]
            if _retire(handle):
                to_close.append(handle.store)
            handle = None
        if handle is not None:
            handle.users += 1
    _close_all(to_close)
    if handle is None:
        fresh = _Handle(open_store(location, config), generation)  # outside the lock
        with _lock:
            current = _kept.get(key)
            if current is not None and current.generation == generation:
                handle = current  # another call opened it meanwhile: use theirs
                to_close.append(fresh.store)
            else:
                if current is not None and _retire(current):
                    to_close.append(current.store)
                handle = _kept[key] = fresh
            handle.users += 1
        _close_all(to_close)
    try:
        yield handle.store
    finally:
        with _lock:
            close_now = _leave(handle)
        if close_now:
            handle.store.close()


def _close_all(stores: list[Store]) -> None:
    while stores:
        stores.pop().close()


def close_indexes() -> None:
    """Close every kept store (one in use is closed when its call ends); the next
    ``thresher.search(index=...)`` opens its index again. Runs at interpreter exit."""
    with _lock:
        handles = list(_kept.values())
        _kept.clear()
        to_close = [h.store for h in handles if _retire(h)]
    _close_all(to_close)


def kept_count() -> int:
    """How many stores are kept open now."""
    with _lock:
        return len(_kept)


atexit.register(close_indexes)
