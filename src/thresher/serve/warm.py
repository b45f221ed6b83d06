"""Warm-up before a server says it is ready: the first request then costs what any
request costs.

Opening an index reads little; the first search pays for the rest: the query
embedder's ONNX session and tokenizer, the vectors and record pages,
the BM25 pages. The local policy's first episode loads its scorer and imports
what its final ranking needs. :func:`warm_up` does that work once, at start-up.
"""

from __future__ import annotations

import contextlib

from thresher.config import Config
from thresher.errors import ThresherError
from thresher.index.store import Store

__all__ = ["warm_up", "OFFLINE_POLICIES"]

#: policies whose warm-up episode runs offline (no model endpoint is called)
OFFLINE_POLICIES = frozenset({"local"})
_QUESTION = "Which river runs through the oldest city?"


def warm_up(store: Store, policy: str, config: Config) -> None:
    """Run one hybrid search on ``store`` and, for an offline ``policy``, one episode.

    Nothing is kept but the warmed caches; a failure here is left for the first
    request to report (a warm-up never stops a server from starting).
    """
    with contextlib.suppress(ThresherError):
        store.hybrid_search(_QUESTION, k=5)
    if policy in OFFLINE_POLICIES:
        import thresher

        with contextlib.suppress(ThresherError):
            thresher.search(_QUESTION, index=store, policy=policy, config=config)
