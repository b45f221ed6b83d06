"""``POST /retrieve``: plain batched retrieval in the shape Search-R1's retriever server answers.

Search-R1, verl's search tool and SkyRL's search environment train a model
against an HTTP retriever that takes ``{"queries": [...], "topk": k,
"return_scores": bool}`` and answers ``{"result": [...]}``, one list per query
in the order asked. This module is that contract over a served thresher index:

* each query is one hybrid search (BM25 and dense fused by RRF, the search
  ``search_corpus`` runs in hybrid mode) on the collection, with the server's
  ``retrieval.where`` / ``retrieval.path`` filter; no episode, no policy;
* a document is ``{"id": chunk_id, "contents": "title\\ntext"}`` (the chunk's
  document title, a newline, the chunk's text);
* with ``return_scores`` each hit is ``{"document": doc, "score": s}`` (the fused
  score, highest first); without it each hit is the document itself, as
  Search-R1's server answers;
* ``topk`` and the number of queries are bounded by the server
  (:class:`RetrieveLimits`): past them the request is refused (413) before any
  search runs; an empty or unsearchable query is refused (400) naming its position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from thresher.corpus.document import Chunk
from thresher.corpus.sanitize import invalid_path
from thresher.errors import InputError
from thresher.harness.episode import check_searchable
from thresher.index.filters import DocFilter
from thresher.index.store import Store

__all__ = [
    "RetrieveLimits",
    "RetrieveRequest",
    "TooManyQueries",
    "check_request",
    "contents",
    "retrieve",
]

#: ``topk`` when a request gives none (Search-R1's server default)
DEFAULT_TOPK = 3


class TooManyQueries(InputError):
    """A ``/retrieve`` batch or ``topk`` over the server's limits (HTTP 413)."""

    http_status = 413
    code = "batch_too_large"


class RetrieveRequest(BaseModel):
    """The body of ``POST /retrieve`` (Search-R1's retriever request, plus ``collection_name``)."""

    model_config = ConfigDict(extra="ignore")

    queries: list[str] = Field(min_length=1, description="the queries, one search each")
    topk: int | None = Field(
        default=None,
        ge=1,
        description=f"documents per query (default {DEFAULT_TOPK}); at most the server's "
        "max_retrieve_topk",
    )
    return_scores: bool = Field(
        default=False,
        description='each hit as {"document": ..., "score": s} (true) or the document alone',
    )
    collection_name: str | None = Field(
        default=None, description="the collection (index) to search; default: the server's first"
    )


@dataclass(frozen=True, slots=True)
class RetrieveLimits:
    """What one ``/retrieve`` request may ask for.

    Attributes:
        max_queries: queries in one request.
        max_topk: documents per query.
        max_query_chars: characters in one query.
    """

    max_queries: int = 64
    max_topk: int = 50
    max_query_chars: int = 4000


def check_request(body: RetrieveRequest, limits: RetrieveLimits) -> int:
    """The request's ``topk`` once the whole request is within ``limits``.

    Raises:
        TooManyQueries: more queries or a larger ``topk`` than the limits allow, or a
            query over ``max_query_chars``.
        InputError: a query that is empty, has no letter or digit, or holds text that
            is not valid Unicode (each message names the query's position).
    """
    if len(body.queries) > limits.max_queries:
        raise TooManyQueries(
            f"{len(body.queries)} queries in one request, over this server's limit of "
            f"{limits.max_queries}; split the batch (or start the server with a larger "
            "--max-retrieve-queries)"
        )
    topk = DEFAULT_TOPK if body.topk is None else body.topk
    if topk > limits.max_topk:
        raise TooManyQueries(
            f"topk {topk} is over this server's limit of {limits.max_topk}; ask for fewer "
            "documents (or start the server with a larger --max-retrieve-topk)"
        )
    for i, query in enumerate(body.queries):
        if len(query) > limits.max_query_chars:
            raise TooManyQueries(
                f"queries[{i}] has {len(query)} characters, over this server's limit of "
                f"{limits.max_query_chars}; shorten it"
            )
        if invalid_path(query):
            raise InputError(
                f"queries[{i}] holds text that is not valid Unicode (a lone surrogate such "
                "as '\\ud800'); send UTF-8 text"
            )
        if not query.strip():
            raise InputError(f"queries[{i}] is empty; send the text to search for")
        try:
            check_searchable(query)
        except InputError as exc:
            raise InputError(f"queries[{i}]: {exc}") from None
    return topk


def contents(chunk: Chunk) -> str:
    """A chunk as Search-R1's ``contents``: its document's title, a newline, its text."""
    return f"{chunk.title}\n{chunk.text}"


def retrieve(
    store: Store,
    queries: Sequence[str],
    topk: int,
    return_scores: bool,
    where: DocFilter | None = None,
) -> dict[str, Any]:
    """``{"result": [...]}``: one hybrid search per query, in the order asked.

    Args:
        store: the served index.
        queries: checked queries (:func:`check_request`).
        topk: documents per query (fewer when the index holds fewer).
        return_scores: hits as ``{"document", "score"}`` rather than the bare document.
        where: the server's document filter, if any.

    Raises:
        ThresherError: the index failed (the caller's error handler answers).
    """
    scope: dict[str, Any] = {} if where is None else {"where": where}
    result: list[list[dict[str, Any]]] = []
    for query in queries:
        hits = store.hybrid_search(query, k=topk, **scope)
        docs = [({"id": h.chunk.chunk_id, "contents": contents(h.chunk)}, h.score) for h in hits]
        if return_scores:
            result.append([{"document": doc, "score": score} for doc, score in docs])
        else:
            result.append([doc for doc, _ in docs])
    return {"result": result}
