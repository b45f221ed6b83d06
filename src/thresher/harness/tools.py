"""The five tools, one :class:`~thresher.harness.toolspec.ToolSpec` each, and their executors.

This module is the only code that calls the Store. ``fetch`` runs one retrieval
call (``search_corpus``, ``grep_corpus``, ``read_document``) through its spec's
executor and returns raw hits or an error; it never raises. What the policy is
shown (dedup, exclusion, cutting to the budget) is decided afterwards, purely,
by the spec's transition (:mod:`thresher.harness.transitions`).
``prune_chunks`` and ``recall_chunks`` need no I/O: the cache serves them.

Everything else about a tool is derived from :data:`TOOLS`: the allow-list
(:data:`TOOL_NAMES`), the tools refused past the hard cutoff
(:data:`RETRIEVAL_TOOLS`), the argument check (:func:`check_arguments`), the
schemas a model is sent (:func:`tool_schemas`), and every text about a tool (the
prompts' tool list and guides, the MCP server's descriptions, the docs' tool table:
:mod:`thresher.harness.toolspec`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.errors import PatternRejectedError, ThresherError, UnknownIdError
from thresher.harness.policy import RerankRequest, SearchReranker
from thresher.harness.render import unescape_id
from thresher.harness.toolspec import Argument, Fetched, FetchScope, ResultView, ToolSpec
from thresher.harness.transitions import (
    apply_prune,
    apply_recall,
    grep_header,
    read_header,
    retrieval_result,
    search_header,
)
from thresher.index.fusion import fuse_scores
from thresher.index.store import Hit, Store

__all__ = [
    "TOOLS",
    "TOOL_NAMES",
    "RETRIEVAL_TOOLS",
    "INLINE_TOOLS",
    "SEARCHES",
    "Fetched",
    "check_arguments",
    "tool_spec",
    "tool_schemas",
    "rank_by_similarity",
    "fetch",
    "rerank_search",
]


def check_arguments(name: str, arguments: Any) -> tuple[dict[str, Any], str]:
    """Validate and normalize a call's arguments (the harness's side of ``ToolSpec.check``).

    Args:
        name: a tool name from the allow-list.
        arguments: what the policy sent.

    Returns:
        ``(normalized, "")`` or ``({}, reason)``. Strings are stripped, blank ids
        dropped; a single id string for prune/recall becomes a one-item list; unknown
        extra keys are ignored. ``prune_chunks`` also takes ``keep`` instead of
        ``chunk_ids`` (every chunk in view but those is pruned), from a policy in
        process only: it is not offered to models.
    """
    normalized, problem = tool_spec(name).check(arguments)
    return normalized, "" if problem is None else problem.message


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
SEARCHES: dict[str, Callable[..., list[Hit]]] = {
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
    """Run one retrieval call against the Store through its spec's executor; never raises.

    Args:
        name: ``search_corpus``, ``grep_corpus`` or ``read_document``.
        arguments: checked arguments (see :func:`check_arguments`).
        store: the index.
        config: retrieval, grep and episode settings.
        seen, in_context, current_query, question: see
            :class:`~thresher.harness.toolspec.FetchScope`.

    Returns:
        A :class:`Fetched` with hits, or with ``error_code`` set
        (``pattern_rejected``, ``unknown_id``, ``tool_error``, ``tool_failed``,
        ``unknown_tool``).
    """
    start = time.perf_counter()
    spec = _BY_NAME.get(name)
    if spec is None or spec.execute is None:
        return Fetched(error_code="unknown_tool", error=f"'{name}' does not touch the index")
    scope = FetchScope(seen, in_context, current_query, question)
    try:
        fetched = spec.execute(arguments, store, config, scope)
        return replace(fetched, elapsed_s=time.perf_counter() - start)
    except PatternRejectedError as exc:
        return _failed("pattern_rejected", f"pattern refused: {exc}", start)
    except UnknownIdError as exc:
        return _failed("unknown_id", str(exc), start)
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing tool never ends the episode
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)


def run_search(
    arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope
) -> Fetched:
    """``search_corpus``: the configured retriever(s); the policy's rerank comes later
    (:func:`rerank_search`, on the episode's thread)."""
    search = SEARCHES[config.retrieval.mode]
    k = config.retrieval.candidates
    return Fetched(
        tuple(search(store, arguments["query"], k=k, exclude=scope.seen, **filtered(config)))
    )


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


def run_grep(arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope) -> Fetched:
    """``grep_corpus``: at most ``grep.limit`` matches, how many matched (and whether
    counting stopped there), scored against the question."""
    limit = config.grep.limit
    found = store.grep(arguments["pattern"], limit=limit, exclude=scope.seen, **filtered(config))
    hits = list(found.hits[:limit])
    if hits and scope.question:
        scores = store.similarity(scope.question, [h.chunk.chunk_id for h in hits])
        hits = [
            replace(h, bm25_score=float(b), dense_score=float(d))
            for h, (b, d) in zip(hits, scores, strict=True)
        ]
    return Fetched(tuple(hits), max(found.total, len(hits)), capped=found.capped)


def run_read(arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope) -> Fetched:
    """``read_document``: the chunks not in view, ranked against the current query.

    A doc id is read as a transcript name: its escaped form (``&lt;``, ``&#xa;``)
    stands for the id it escapes when that exists, else the id is taken as written.
    """
    doc_id = arguments["doc_id"]
    plain = unescape_id(doc_id)
    try:  # the name as the transcript showed it first (an escaped-id twin cannot win)
        chunks = store.read_document(plain, **filtered(config))
    except UnknownIdError:
        if plain == doc_id:
            raise
        chunks = store.read_document(doc_id, **filtered(config))
    rest = [c for c in chunks if c.chunk_id not in scope.in_context]
    scores = store.similarity(scope.current_query, [c.chunk_id for c in rest]) if rest else []
    return Fetched(tuple(rank_by_similarity(rest, scores, config.retrieval.rrf_k)), len(chunks))


def filtered(config: Config) -> dict[str, Any]:
    """``{"where": DocFilter}`` for a Store call when ``retrieval.where`` or
    ``retrieval.path`` is set, else ``{}`` (so a store without filters still serves)."""
    from thresher.index.filters import DocFilter

    where = DocFilter.parse(config.retrieval.where, config.retrieval.path)
    return {} if where is None else {"where": where}


def _failed(code: str, message: str, start: float) -> Fetched:
    return Fetched(error_code=code, error=message, elapsed_s=time.perf_counter() - start)


_MODE_WORDS = {
    "hybrid": "by keywords and meaning (BM25 and dense retrieval, fused)",
    "bm25": "by keywords (BM25)",
    "dense": "by meaning (dense retrieval)",
}


def _describe_search(config: Config) -> str:
    return (
        f"Search the corpus {_MODE_WORDS[config.retrieval.mode]}. "
        "Chunks you have already been shown are never returned again, so repeating a "
        "query only yields weaker matches: rephrase instead."
    )


def _search_behaviour(config: Config) -> str:
    r, b, e = config.retrieval, config.budget, config.episode
    how = {
        "hybrid": "BM25 and dense retrieval in parallel, fused by reciprocal rank fusion "
        f"(k={r.rrf_k})",
        "bm25": "BM25 alone",
        "dense": "dense retrieval alone",
    }[r.mode]
    return (
        f"{how}; the top {r.candidates} candidates, reordered by the policy when it "
        f"declares a reranker; at most {e.search_results} new chunks cut to "
        f"{b.per_call_tokens} tokens; chunks already seen this episode are excluded"
    )


_CHUNK_IDS = "ids exactly as written in the id attribute of <chunk> blocks"

#: the tools, in the order models are shown them (names as in the Context-1 report)
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="search_corpus",
        arguments=(Argument("query", "text", "one focused sub-query"),),
        describe=_describe_search,
        behaviour=_search_behaviour,
        apply=retrieval_result,
        execute=run_search,
        view=ResultView(search_header, search_results=True, sets_query=True),
        direct=lambda c: (
            "Hybrid search (BM25 and dense, fused by reciprocal rank fusion) over the "
            "index: the best k chunks for a query, with their text."
        ),
    ),
    ToolSpec(
        name="grep_corpus",
        arguments=(Argument("pattern", "text", "a regular expression"),),
        describe=lambda c: (
            f"Find chunks whose text matches a regular expression (at most {c.grep.limit}, "
            "unseen chunks only). Use it for exact names, numbers and phrases."
        ),
        behaviour=lambda c: (
            f"regular expression over the corpus, at most {c.grep.limit} chunks "
            f"(`grep.limit`), seen chunks excluded; pattern size ({c.grep.max_pattern_chars} "
            f"characters) and run time ({c.grep.timeout_s:g} s) bounded"
        ),
        apply=retrieval_result,
        execute=run_grep,
        view=ResultView(grep_header),
        guide="for exact names or numbers",
        direct=lambda c: (
            "Regular-expression search over the index's chunks (bounded in size and time): "
            "the first matching chunks in corpus order and how many matched."
        ),
    ),
    ToolSpec(
        name="read_document",
        arguments=(Argument("doc_id", "text", "a doc attribute of a <chunk> block"),),
        describe=lambda c: (
            "Read the rest of one document: its chunks you have not seen, most relevant to "
            "your current query first, cut to the remaining budget."
        ),
        behaviour=lambda c: (
            "a whole document's chunks not in view, ranked against the current query "
            "and cut to the remaining budget"
        ),
        apply=retrieval_result,
        execute=run_read,
        view=ResultView(read_header, whole_document=True),
        guide="to see more of a promising document",
        direct=lambda c: "Every chunk of one document, in order, by its doc_id.",
    ),
    ToolSpec(
        name="prune_chunks",
        arguments=(
            Argument("chunk_ids", "ids", _CHUNK_IDS),
            Argument(
                "keep",
                "ids",
                "prune every chunk in view but these (in-process policies only)",
                offered=False,
                may_be_empty=True,
            ),
        ),
        describe=lambda c: (
            "Remove chunks you no longer need from your context to free token budget. "
            "Pruned chunks can be brought back with recall_chunks."
        ),
        behaviour=lambda c: (
            "remove chunks from the active context (validated: unknown and already-pruned "
            "ids are reported, not silently ignored)"
        ),
        apply=apply_prune,
    ),
    ToolSpec(
        name="recall_chunks",
        arguments=(Argument("chunk_ids", "ids", _CHUNK_IDS),),
        describe=lambda c: (
            "Bring previously pruned chunks back into your context by id (no new search)."
        ),
        behaviour=lambda c: "thresher's addition: bring pruned chunks back from the cache",
        apply=apply_recall,
    ),
)

_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
#: the tool allow-list
TOOL_NAMES: tuple[str, ...] = tuple(_BY_NAME)
#: tools that add new corpus text: run concurrently, refused past the hard cutoff
RETRIEVAL_TOOLS: frozenset[str] = frozenset(s.name for s in TOOLS if s.retrieval)
#: the retrieval tools a store that searches inline
#: (:class:`~thresher.index.store.SearchesInline`) runs on the episode's thread: a
#: search and a document read, about a millisecond each from memory; a grep's regex
#: scan can take tens of milliseconds, so it keeps a worker, beside them
INLINE_TOOLS: frozenset[str] = frozenset({"search_corpus", "read_document"})


def tool_spec(name: str) -> ToolSpec:
    """The spec of the tool ``name`` (raises ``KeyError`` for a name off the allow-list)."""
    return _BY_NAME[name]


def tool_schemas(config: Config | None = None) -> list[dict[str, Any]]:
    """The tools' JSON Schemas as a model is sent them, in :data:`TOOLS` order (fresh copies)."""
    cfg = config or Config()
    return [spec.schema(cfg) for spec in TOOLS]
