"""The result of an episode: ranked documents, why it ended, usage, and the trace.

Every episode returns a :class:`Result`, never None: on a cap or an error it
is *partial*, ranking the documents still in the active context by how well
they were retrieved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from thresher.corpus.document import Chunk
from thresher.harness.state import EpisodeState, LineageRecord
from thresher.harness.trace import TraceEvent

__all__ = [
    "ExitReason",
    "ResultDocument",
    "Usage",
    "Result",
    "partial_ranking",
    "rank_by_retrieval",
    "documents_from_final",
]


class ExitReason(StrEnum):
    """Why an episode ended."""

    ANSWERED = "answered"
    MAX_TURNS = "max_turns"
    MAX_CALLS = "max_calls"
    BUDGET = "budget"
    TIMEOUT = "timeout"
    POLICY_ERROR = "policy_error"
    ENDPOINT_UNAVAILABLE = "endpoint_unavailable"  # the policy's backend (LLM endpoint) stayed down
    INVALID_INPUT = "invalid_input"
    CANCELLED = "cancelled"  # the caller stopped it (run_episode's should_stop)
    TOOLS_FAILED = "tools_failed"  # an answer with no documents after every retrieval call failed
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class ResultDocument:
    """One ranked supporting document, as handed to the answering model.

    Attributes:
        doc_id: the document's id in the index.
        title: its title.
        chunk_ids: the chunks that support it (named in the answer, else those in
            the active context); all were in view when the episode ended.
        text: those chunks' text, joined by blank lines.
        justification: why it supports the answer, 1-3 sentences of evidence.
        rank: 1-based position, best first.
        score: never rises with rank and compares documents within this result only:
            the policy's probabilities fit to its answer order when it scored every
            document (isotonic regression), else ``1 / rank``
            (:func:`thresher.harness.replies.rank_scores`). None only in results read
            from traces written before scores were filled in.
    """

    doc_id: str
    title: str
    chunk_ids: tuple[str, ...]
    text: str
    justification: str
    rank: int
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "chunk_ids": list(self.chunk_ids),
            "text": self.text,
            "justification": self.justification,
            "rank": self.rank,
            "score": self.score,
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens: last count sent, peak over the episode, the budget, endpoint totals."""

    used: int
    peak: int
    budget: int
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "used": self.used,
            "peak": self.peak,
            "budget": self.budget,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class Result:
    """What ``run_episode`` and ``thresher.search`` return: always one, never None.

    Attributes:
        question: the question asked.
        documents: the ranked supporting documents (the final answer; on a partial
            result, the active context ranked by retrieval).
        exit_reason: why the episode ended (:class:`ExitReason`).
        partial: True when the episode ended without a final answer (a cap, an error).
        usage: tokens: last count sent, peak, budget, endpoint-reported totals.
        turns: turns taken. tool_calls: calls run, per tool name.
        wall_s: wall time in seconds.
        trace: every event of the episode (write it with ``trace.write_jsonl``).
        message: what ended the episode, in words (empty when answered).
    """

    question: str
    documents: tuple[ResultDocument, ...]
    exit_reason: ExitReason
    partial: bool
    usage: Usage
    turns: int
    tool_calls: dict[str, int]
    wall_s: float
    trace: tuple[TraceEvent, ...] = field(repr=False, default=())
    message: str = ""

    @property
    def doc_ids(self) -> list[str]:
        """Ranked document ids."""
        return [d.doc_id for d in self.documents]

    def to_dict(self, *, with_trace: bool = False) -> dict[str, Any]:
        """JSON-safe form; the trace (event dicts) only when asked."""
        out: dict[str, Any] = {
            "question": self.question,
            "documents": [d.to_dict() for d in self.documents],
            "exit_reason": self.exit_reason.value,
            "partial": self.partial,
            "message": self.message,
            "usage": self.usage.to_dict(),
            "turns": self.turns,
            "tool_calls": dict(self.tool_calls),
            "wall_s": self.wall_s,
        }
        if with_trace:
            out["trace"] = [e.to_dict() for e in self.trace]
        return out


def rank_by_retrieval(
    active: Iterable[tuple[Chunk, LineageRecord | None]], limit: int, *, turn_first: bool = False
) -> list[tuple[str, list[str], int]]:
    """Documents of the given chunks ranked by their best retrieval: the one owner of that order.

    A chunk's key is (rank in the call that found it, turn, position in ``active``);
    a document takes its best chunk's key. Pure.

    Args:
        active: chunks in view with their origin lineage, in the order they entered.
        limit: keep at most this many documents.
        turn_first: key on (turn, rank, position) instead: every chunk of an earlier
            turn first (a search repeated to show more continues the first one's list).

    Returns:
        ``(doc_id, chunk_ids, best_rank)`` tuples, best first.
    """
    best: dict[str, tuple[int, int, int]] = {}
    chunks: dict[str, list[str]] = {}
    for order, (chunk, origin) in enumerate(active):
        key = (origin.rank, origin.turn, order) if origin else (10**9, 10**9, order)
        if turn_first:
            key = (key[1], key[0], order)
        chunks.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
        best[chunk.doc_id] = min(best.get(chunk.doc_id, key), key)
    ranked = sorted(best, key=lambda d: best[d])[:limit]
    return [(doc, chunks[doc], best[doc][0]) for doc in ranked]


def partial_ranking(state: EpisodeState, limit: int) -> list[dict[str, Any]]:
    """The documents of the active context ranked by :func:`rank_by_retrieval`.

    Returns resolved-document dicts (``doc_id, title, chunk_ids,
    justification="", rank``), at most ``limit``: what a partial Result holds.
    """
    active = [
        (chunk, state.lineage.origin(cid))
        for cid in state.context.ids()
        if (chunk := state.cache.get(cid)) is not None
    ]
    out = []
    for rank, (doc, chunk_ids, _) in enumerate(rank_by_retrieval(active, limit), 1):
        first = state.cache.get(chunk_ids[0])
        out.append(
            {
                "doc_id": doc,
                "title": first.title if first else "",
                "chunk_ids": chunk_ids,
                "justification": "",
                "rank": rank,
            }
        )
    return out


def documents_from_final(
    state: EpisodeState, resolved: list[dict[str, Any]]
) -> tuple[ResultDocument, ...]:
    """ResultDocuments (with chunk text from the cache) from resolved-document dicts."""
    docs = []
    for d in resolved:
        texts = [c.text for c in (state.cache.get(i) for i in d["chunk_ids"]) if c is not None]
        docs.append(
            ResultDocument(
                doc_id=d["doc_id"],
                title=d.get("title", ""),
                chunk_ids=tuple(d["chunk_ids"]),
                text="\n\n".join(texts),
                justification=d.get("justification", ""),
                rank=int(d["rank"]),
                score=d.get("score"),
            )
        )
    return tuple(docs)
