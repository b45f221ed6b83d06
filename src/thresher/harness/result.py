"""The result of an episode: ranked documents, why it ended, usage, and the trace.

Every episode returns a :class:`Result`, never None: on a cap or an error it
is *partial*, ranking the documents still in the active context by how well
they were retrieved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from thresher.harness.state import EpisodeState
from thresher.harness.trace import TraceEvent

__all__ = [
    "ExitReason",
    "ResultDocument",
    "Usage",
    "Result",
    "partial_ranking",
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
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class ResultDocument:
    """One ranked supporting document.

    chunk_ids: the chunks that support it (named in the answer, else those in
    context, else every cached chunk of it); text: those chunks' text joined.
    """

    doc_id: str
    title: str
    chunk_ids: tuple[str, ...]
    text: str
    justification: str
    rank: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "chunk_ids": list(self.chunk_ids),
            "text": self.text,
            "justification": self.justification,
            "rank": self.rank,
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
    """What ``run_episode`` and ``thresher.search`` return."""

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


def partial_ranking(state: EpisodeState, limit: int) -> list[dict[str, Any]]:
    """Documents of the active context ranked by their best retrieval.

    A chunk's key is (rank in the call that found it, turn, arrival order);
    a document takes its best chunk's key. Returns resolved-document dicts
    (``doc_id, title, chunk_ids, justification="", rank``), at most ``limit``.
    """
    order = {cid: i for i, cid in enumerate(state.cache.ids())}
    best: dict[str, tuple[int, int, int]] = {}
    chunks: dict[str, list[str]] = {}
    for cid in state.context.ids():
        chunk = state.cache.get(cid)
        if chunk is None:
            continue
        origin = state.lineage.origin(cid)
        key = (origin.rank, origin.turn, order[cid]) if origin else (10**9, 10**9, order[cid])
        doc = chunk.doc_id
        chunks.setdefault(doc, []).append(cid)
        best[doc] = min(best.get(doc, key), key)
    ranked = sorted(best, key=lambda d: best[d])[:limit]
    out = []
    for rank, doc in enumerate(ranked, 1):
        first = state.cache.get(chunks[doc][0])
        out.append(
            {
                "doc_id": doc,
                "title": first.title if first else "",
                "chunk_ids": chunks[doc],
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
            )
        )
    return tuple(docs)
