"""A chromadb collection opened on first use.

A small index answers searches and reads from its side files (BM25, grep, the
saved vectors and records of :mod:`thresher.index.embedded.saved_records`), so
the embedded store opens chromadb only when something needs it: a filter
(``where``), a document listing, a grep the side index cannot answer, a dense
search over HNSW, or an index without saved records. Importing chromadb and
starting its client cost about 0.8 CPU s, most of a CLI search that needs neither.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LazyCollection"]


class LazyCollection:
    """The collection ``open_collection()`` returns, opened once, on the first :meth:`get`
    (thread-safe; a failed open is tried again by the next call)."""

    def __init__(self, open_collection: Callable[[], Any]) -> None:
        self._open = open_collection
        self._lock = threading.Lock()
        self._collection: Any = None

    @classmethod
    def ready(cls, collection: Any) -> LazyCollection:
        """A source for a collection already open."""
        source = cls(lambda: collection)
        source._collection = collection
        return source

    @property
    def opened(self) -> bool:
        """Whether the collection has been opened."""
        return self._collection is not None

    def get(self) -> Any:
        """The collection, opened now if it was not yet (the opener's errors propagate)."""
        collection = self._collection
        if collection is not None:
            return collection
        with self._lock:
            if self._collection is None:
                self._collection = self._open()
            return self._collection
