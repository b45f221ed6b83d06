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
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.errors import PatternRejectedError, ThresherError, UnknownIdError
from thresher.harness.policy import RerankRequest, SearchReranker
from thresher.harness.render import unescape_id
from thresher.index.fusion import fuse_scores
from thresher.index.store import Hit, Store

__all__ = [
    "Fetched",
    "check_arguments",
    "rank_by_similarity",
    "fetch",
    "rerank_search",
]

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
    total: for read_document, the document's chunk count; for grep_corpus, how many
        chunks matched (after exclusion) before the cut to the limit.
    capped: grep_corpus only: counting stopped at ``total`` (at least that many matched).
    error_code / error: set when the call failed (then ``hits`` is empty).
    """

    hits: tuple[Hit, ...] = ()
    total: int = 0
    error_code: str = ""
    capped: bool = False
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
        keys are ignored. ``prune_chunks`` also takes ``keep`` instead of
        ``chunk_ids``: every chunk in view but those is pruned.
    """
    key, kind = _REQUIRED[name]
    if not isinstance(arguments, dict):
        return {}, f"arguments must be an object with '{key}'"
    if name == "prune_chunks" and "keep" in arguments:
        return _keep_arguments(arguments)
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


def _keep_arguments(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``prune_chunks(keep=[...])``: prune every chunk in view but these (possibly none).

    The pruned ids are then named nowhere in the transcript (the trace records
    them): the form for a policy that will not recall what it drops.
    """
    if "chunk_ids" in arguments:
        return {}, "give either 'chunk_ids' (to prune) or 'keep' (to keep), not both"
    value = arguments["keep"]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return {}, "'keep' must be a list of chunk id strings (empty: prune every chunk)"
    return {"keep": [v.strip() for v in value]}, ""


def rank_by_similarity(
    chunks: Sequence[Chunk], scores: Sequence[tuple[float, float]], rrf_k: int
) -> list[Hit]:
    """Order a document's chunks by relevance to a query: RRF of their BM25 and dense orders.

    The fusion is :func:`thresher.index.fusion.fuse_scores` with ``rrf_k``
    (``config.retrieval.rrf_k``); ties keep document order.
    """
    fused = fuse_scores([s[0] for s in scores], [s[1] for s in scores], rrf_k)
    return [
        Hit(
            chunk=chunks[f.item],
            score=f.score,
            method="get",
            bm25_rank=f.bm25_rank,
            dense_rank=f.dense_rank,
            bm25_score=float(scores[f.item][0]),
            dense_score=float(scores[f.item][1]),
        )
        for f in fused
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
    question: str = "",
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
        question: the episode's question: grep hits are scored against it (grep
            has no query of its own).

    Returns:
        A :class:`Fetched` with hits, or with ``error_code`` set
        (``pattern_rejected``, ``unknown_id``, ``tool_error``, ``tool_failed``).
    """
    start = time.perf_counter()
    try:
        if name == "search_corpus":
            hits = _search(arguments["query"], store, config, seen)
            return Fetched(tuple(hits), elapsed_s=time.perf_counter() - start)
        if name == "grep_corpus":
            hits, total, capped = _grep(arguments["pattern"], store, config, seen, question)
            elapsed = time.perf_counter() - start
            return Fetched(tuple(hits), total, capped=capped, elapsed_s=elapsed)
        if name == "read_document":
            hits, total = _read(arguments["doc_id"], store, config, in_context, current_query)
            return Fetched(tuple(hits), total, elapsed_s=time.perf_counter() - start)
        return Fetched(error_code="unknown_tool", error=f"'{name}' does not touch the index")
    except PatternRejectedError as exc:
        return _failed("pattern_rejected", f"pattern refused: {exc}", start)
    except UnknownIdError as exc:
        return _failed("unknown_id", str(exc), start)
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing tool never ends the episode
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)


def _search(query: str, store: Store, config: Config, seen: Collection[str]) -> list[Hit]:
    """``search_corpus``: the configured retriever(s); the policy's rerank comes later
    (:func:`rerank_search`, on the episode's thread)."""
    search = _SEARCHES[config.retrieval.mode]
    return search(store, query, k=config.retrieval.candidates, exclude=seen, **filtered(config))


def rerank_search(
    fetched: Fetched, query: str, question: str, store: Store, reranker: SearchReranker
) -> Fetched:
    """A ``search_corpus`` result reordered (and possibly cut) by the policy; never raises.

    The harness calls it on the episode's own thread, in call order, once the
    call's fetch is in: a policy's rerank never runs beside another, and sees
    the turn's searches in the order the policy proposed them. A failed fetch
    passes through; a rerank that raises fails the call as a fetch would
    (``tool_error`` for a typed error, such as the store's, else ``tool_failed``).
    """
    if fetched.error_code:
        return fetched
    start = time.perf_counter()

    def score_against_question(chunk_ids: Sequence[str]) -> list[tuple[float, float]]:
        return store.similarity(question or query, list(chunk_ids)) if chunk_ids else []

    request = RerankRequest(query, question or query, fetched.hits, score_against_question)
    try:
        hits = tuple(reranker.rerank(request))
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing rerank fails its call only
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)
    return replace(fetched, hits=hits, elapsed_s=fetched.elapsed_s + time.perf_counter() - start)


def _grep(
    pattern: str, store: Store, config: Config, seen: Collection[str], question: str
) -> tuple[list[Hit], int, bool]:
    """``grep_corpus``: at most 5 matches, how many matched (and whether counting stopped
    there), scored against the question."""
    limit = min(5, config.grep.limit)
    found = store.grep(pattern, limit=limit, exclude=seen, **filtered(config))
    hits = list(found.hits[:limit])
    if hits and question:
        scores = store.similarity(question, [h.chunk.chunk_id for h in hits])
        hits = [
            replace(h, bm25_score=float(b), dense_score=float(d))
            for h, (b, d) in zip(hits, scores, strict=True)
        ]
    return hits, max(found.total, len(hits)), found.capped


def _read(
    doc_id: str, store: Store, config: Config, in_context: Collection[str], current_query: str
) -> tuple[list[Hit], int]:
    """``read_document``: the chunks not in view, ranked against the current query.

    A doc id is read as a transcript name: its escaped form (``&lt;``, ``&#xa;``)
    stands for the id it escapes when that exists, else the id is taken as written.
    """
    plain = unescape_id(doc_id)
    try:  # the name as the transcript showed it first (an escaped-id twin cannot win)
        chunks = store.read_document(plain, **filtered(config))
    except UnknownIdError:
        if plain == doc_id:
            raise
        chunks = store.read_document(doc_id, **filtered(config))
    rest = [c for c in chunks if c.chunk_id not in in_context]
    scores = store.similarity(current_query, [c.chunk_id for c in rest]) if rest else []
    return rank_by_similarity(rest, scores, config.retrieval.rrf_k), len(chunks)


def filtered(config: Config) -> dict[str, Any]:
    """``{"where": DocFilter}`` for a Store call when ``retrieval.where`` or
    ``retrieval.path`` is set, else ``{}`` (so a store without filters still serves)."""
    from thresher.index.filters import DocFilter

    where = DocFilter.parse(config.retrieval.where, config.retrieval.path)
    return {} if where is None else {"where": where}


def _failed(code: str, message: str, start: float) -> Fetched:
    return Fetched(error_code=code, error=message, elapsed_s=time.perf_counter() - start)
