"""What both adapters call: one question to ranked documents, in-process or over HTTP."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from thresher.errors import ConfigError

__all__ = ["Searcher"]


class Searcher:
    """Runs one episode per question and returns the Result as a dict.

    Give ``index`` (a folder or Chroma server URL: the episode runs here, on a
    Store opened once) or ``url`` (a running ``thresher serve``).

    Args:
        index: the index to search in-process.
        url: the thresher server to ask instead.
        policy: the policy (in-process: any name ``thresher.search`` takes; over HTTP:
            one the server allows; None: the server's default).
        config: settings (in-process: any; over HTTP: what the server lets a request set).
        collection_name: the server's collection (HTTP only).
        api_key: the server's key (HTTP only).
        k: how many documents each search returns (``episode.k``; over HTTP at most the
            server's cap); None: the policy's own number.
    """

    def __init__(
        self,
        index: str | None = None,
        url: str | None = None,
        policy: str | None = None,
        config: Mapping[str, Any] | None = None,
        collection_name: str | None = None,
        api_key: str | None = None,
        k: int | None = None,
    ) -> None:
        if (index is None) == (url is None):
            raise ConfigError("give either index= (search in-process) or url= (a thresher server)")
        self.index, self.url = index, url
        self.policy, self.config = policy, dict(config or {})
        self.collection_name, self.api_key = collection_name, api_key
        self.k = k
        self._store: Any = None
        self._lock = threading.Lock()

    def __call__(self, question: str, k: int | None = None) -> dict[str, Any]:
        """The Result of one episode for ``question`` (``documents`` ranked best first);
        ``k``: this call's number of documents (None: the searcher's ``k``)."""
        k = self.k if k is None else k
        if self.url is not None:
            from thresher.serve.client import ThresherClient

            return ThresherClient(self.url, self.api_key).search(
                question,
                collection_name=self.collection_name,
                policy=self.policy,
                config=self.config or None,
                k=k,
            )
        from thresher.api import resolve_config, search

        config = resolve_config(self.config)
        result = search(
            question, index=self._open(config), policy=self.policy or "local", config=config, k=k
        )
        return result.to_dict()

    def _open(self, config: Any) -> Any:
        from thresher.index.backends import open_store

        with self._lock:
            if self._store is None:
                self._store = open_store(str(self.index), config)
            return self._store

    def close(self) -> None:
        """Close the in-process Store, if one was opened."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
