"""Stores for batch jobs: a location sent to workers, opened once per process.

An open :class:`~thresher.index.store.Store` holds clients, files and a private
read copy: it cannot travel to another process. A :class:`StoreRef` (a location
and the settings) can; :meth:`StoreRef.open` opens it through the backend
registry (:func:`thresher.index.backends.open_store`) the first time a process
asks, and hands every later job in that process (any thread) the same store,
keyed by (location, settings). :func:`close_stores` closes what this process
opened (a runner: what its jobs opened). Local threads share one store; each Ray
worker process opens its own once.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field

from thresher.config import Config
from thresher.index.store import Store

__all__ = ["StoreRef", "StoreSource", "resolve_store", "open_keys", "close_stores"]

_lock = threading.Lock()
_open: dict[tuple[str, str], Store] = {}


def _settings_key(config: Config) -> str:
    text = json.dumps(config.to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class StoreRef:
    """Where a job finds its index: a folder or ``http(s)://`` URL, and the settings.

    Attributes:
        location: an index folder or a Chroma server URL (as ``--index`` takes).
        config: the settings the store is opened with.
    """

    location: str
    config: Config = field(default_factory=Config)

    def open(self) -> Store:
        """This process's store for the location and settings (opened on first use).

        Raises:
            as :func:`thresher.index.backends.open_store`.
        """
        key = (self.location, _settings_key(self.config))
        with _lock:
            store = _open.get(key)
            if store is None:
                from thresher.index.backends import open_store

                store = _open[key] = open_store(self.location, self.config)
            return store


#: what batch code accepts: an open store (threads of this process only) or a reference
StoreSource = Store | StoreRef


def resolve_store(source: StoreSource) -> Store:
    """The open store of ``source`` (a :class:`StoreRef` is opened once per process)."""
    return source.open() if isinstance(source, StoreRef) else source


def open_keys() -> frozenset[tuple[str, str]]:
    """The (location, settings) keys of the stores open in this process's cache now."""
    with _lock:
        return frozenset(_open)


def close_stores(keep: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Close the stores :meth:`StoreRef.open` opened in this process, except ``keep``.

    A runner passes the keys open when it started (:func:`open_keys`), so it closes
    only what its own jobs opened.
    """
    with _lock:
        stores = [_open.pop(key) for key in list(_open) if key not in keep]
    for store in stores:
        store.close()
