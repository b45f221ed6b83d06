"""The tool executor: argument checks, and the only code that calls the Store.

``fetch`` runs one retrieval call (``search_corpus``, ``grep_corpus``,
``read_document``) against the Store and returns raw hits or an error; it
never raises. What the policy is shown (dedup, exclusion, cutting to the
budget) is decided afterwards, purely, in :mod:`thresher.harness.transitions`.
``prune_chunks`` and ``recall_chunks`` need no I/O: the cache serves them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.errors import PatternRejectedError, ThresherError, UnknownIdError
from thresher.index.store import Hit, Store

__all__ = [
    "Reranker",
    "Fetched",
    "check_arguments",
    "rank_by_similarity",
    "fetch",
]

#: ``(query, hits) -> hits`` reordered; the default keeps the fused order
Reranker = Callable[[str, list[Hit]], list[Hit]]

_REQUIRED: dict[str, tuple[str, type]] = {
    "search_corpus": ("query", str),
    "grep_corpus": ("pattern", str),
    "read_document": ("doc_id", str),
    "prune_chunks": ("chunk_ids", list),
    "recall_chunks": ("chunk_ids", list),
}


@dataclass(frozen=True, slots=True)
class Fetched:
    """Raw output of one retrieval call.

    hits: candidates in the order to show them (after rerank).
    total: for read_document, the document's chunk count.
    error_code / error: set when the call failed (then ``hits`` is empty).
    """

    hits: tuple[Hit, ...] = ()
    total: int = 0
    error_code: str = ""
    error: str = ""
    elapsed_s: float = 0.0


def check_arguments(name: str, arguments: Any) -> tuple[dict[str, Any], str]:
    """Validate and normalize a call's arguments.

    Args:
        name: a tool name from the allow-list.
        arguments: what the policy sent.

    Returns:
        ``(normalized, "")`` or ``({}, reason)``. Strings are stripped; a
        single id string for prune/recall becomes a one-item list; unknown extra
        keys are ignored.
    """
    key, kind = _REQUIRED[name]
    if not isinstance(arguments, dict):
        return {}, f"arguments must be an object with '{key}'"
    value = arguments.get(key)
    if kind is list and isinstance(value, str):
        value = [value]
    if kind is str:
        if not isinstance(value, str) or not value.strip():
            return {}, f"'{key}' must be a non-empty string"
        return {key: value.strip()}, ""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return {}, f"'{key}' must be a non-empty list of chunk id strings"
    return {key: [v.strip() for v in value]}, ""


def rank_by_similarity(chunks: Sequence[Chunk], scores: Sequence[tuple[float, float]]) -> list[Hit]:
    """Order a document's chunks by relevance to a query.

    Reciprocal rank fusion (k=60) of the BM25 and dense orders,
    score = 1/(60 + rank_bm25) + 1/(60 + rank_dense); ties keep document order.
    """
    n = len(chunks)
    by_bm25 = sorted(range(n), key=lambda i: (-scores[i][0], i))
    by_dense = sorted(range(n), key=lambda i: (-scores[i][1], i))
    rb = {i: r for r, i in enumerate(by_bm25, 1)}
    rd = {i: r for r, i in enumerate(by_dense, 1)}
    fused = {i: 1.0 / (60 + rb[i]) + 1.0 / (60 + rd[i]) for i in range(n)}
    order = sorted(range(n), key=lambda i: (-fused[i], i))
    return [
        Hit(
            chunk=chunks[i],
            score=fused[i],
            method="get",
            bm25_rank=rb[i],
            dense_rank=rd[i],
            bm25_score=float(scores[i][0]),
            dense_score=float(scores[i][1]),
        )
        for i in order
    ]


#: ``retrieval.mode`` -> the Store method ``search_corpus`` runs
_SEARCHES: dict[str, Callable[..., list[Hit]]] = {
    "hybrid": lambda store, query, **kw: store.hybrid_search(query, **kw),
    "bm25": lambda store, query, **kw: store.bm25_search(query, **kw),
    "dense": lambda store, query, **kw: store.dense_search(query, **kw),
}


def fetch(
    name: str,
    arguments: dict[str, Any],
    store: Store,
    config: Config,
    *,
    seen: Collection[str],
    in_context: Collection[str],
    current_query: str,
    reranker: Reranker | None = None,
) -> Fetched:
    """Run one retrieval call against the Store; never raises.

    Args:
        name: ``search_corpus``, ``grep_corpus`` or ``read_document``.
        arguments: checked arguments (see :func:`check_arguments`).
        store: the index.
        config: retrieval, grep and episode settings.
        seen: chunk ids excluded from search and grep (the retrieval cache).
        in_context: chunk ids read_document leaves out (already visible).
        current_query: what read_document ranks a document's chunks against.
        reranker: optional reorder of search candidates.

    Returns:
        A :class:`Fetched` with hits, or with ``error_code`` set
        (``pattern_rejected``, ``unknown_id``, ``tool_error``, ``tool_failed``).
    """
    start = time.perf_counter()
    try:
        total = 0
        if name == "search_corpus":
            query = arguments["query"]
            search = _SEARCHES.get(config.retrieval.mode)
            if search is None:
                return _failed(
                    "tool_error",
                    f"retrieval.mode '{config.retrieval.mode}' is not one of "
                    f"{', '.join(_SEARCHES)}; fix the setting",
                    start,
                )
            hits = search(store, query, k=config.retrieval.candidates, exclude=seen)
            if reranker is not None:
                hits = list(reranker(query, list(hits)))
        elif name == "grep_corpus":
            limit = min(5, config.grep.limit)
            hits = store.grep(arguments["pattern"], limit=limit, exclude=seen)[:limit]
        elif name == "read_document":
            chunks = store.read_document(arguments["doc_id"])
            total = len(chunks)
            rest = [c for c in chunks if c.chunk_id not in in_context]
            scores = store.similarity(current_query, [c.chunk_id for c in rest]) if rest else []
            hits = rank_by_similarity(rest, scores)
        else:
            return Fetched(error_code="unknown_tool", error=f"'{name}' does not touch the index")
    except PatternRejectedError as exc:
        return _failed("pattern_rejected", f"pattern refused: {exc}", start)
    except UnknownIdError as exc:
        return _failed("unknown_id", str(exc), start)
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing tool never ends the episode
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)
    return Fetched(tuple(hits), total, elapsed_s=time.perf_counter() - start)


def _failed(code: str, message: str, start: float) -> Fetched:
    return Fetched(error_code=code, error=message, elapsed_s=time.perf_counter() - start)
