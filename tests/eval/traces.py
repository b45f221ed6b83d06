"""Hand-built traces for attribution and metric tests (what a real episode would record)."""

from __future__ import annotations

from typing import Any

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.corpus.ids import content_hash
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    QueryState,
    ToolResult,
    Trace,
    TraceEvent,
)


def chunk_dict(chunk_id: str, text: str | None = None) -> dict[str, Any]:
    doc, _, pos = chunk_id.rpartition("#")
    body = text if text is not None else f"Text of {doc}."
    return Chunk(chunk_id, doc, int(pos), doc, body, 0, len(body), content_hash(body)).to_dict()


class TraceBuilder:
    """Appends events turn by turn; ``texts`` gives chunk texts by chunk id."""

    def __init__(self, question: str = "q?", texts: dict[str, str] | None = None) -> None:
        self.trace = Trace([EpisodeStart(question=question, config=Config().to_dict())])
        self.texts = texts or {}
        self.seen: set[str] = set()
        self.turn = -1
        self.calls: dict[str, int] = {}
        self.used = 100

    def next_turn(self, used: int | None = None) -> TraceBuilder:
        self.turn += 1
        self.used = used if used is not None else self.used + 400
        self.trace.append(QueryState(turn=self.turn, used=self.used, counted=self.used))
        return self

    def _result(self, tool: str, **fields: Any) -> TraceBuilder:
        n = self.calls.get(tool, 0)
        self.calls[tool] = n + 1
        self.trace.append(ToolResult(turn=self.turn, call_id=f"{tool}-{n}", tool=tool, **fields))
        return self

    def search(self, query: str, chunk_ids: list[str]) -> TraceBuilder:
        new = [chunk_dict(c, self.texts.get(c)) for c in chunk_ids if c not in self.seen]
        self.seen.update(chunk_ids)
        return self._result(
            "search_corpus", arguments={"query": query}, shown=list(chunk_ids),
            new_chunks=new, query=query,
        )  # fmt: skip

    def prune(self, chunk_ids: list[str]) -> TraceBuilder:
        return self._result("prune_chunks", arguments={"chunk_ids": chunk_ids}, pruned=chunk_ids)

    def recall(self, chunk_ids: list[str]) -> TraceBuilder:
        return self._result(
            "recall_chunks", arguments={"chunk_ids": chunk_ids}, shown=chunk_ids,
            recalled=chunk_ids,
        )  # fmt: skip

    def final(self, doc_ids: list[str], exit_reason: str = "answered") -> list[TraceEvent]:
        docs = [
            {"doc_id": d, "title": d, "chunk_ids": [c for c in self.seen if c.startswith(d + "#")],
             "justification": "", "rank": i}
            for i, d in enumerate(doc_ids, 1)
        ]  # fmt: skip
        if exit_reason == "answered":
            self.trace.append(FinalEvent(turn=self.turn, documents=docs))
        self.trace.append(
            EpisodeEnd(
                turn=self.turn, exit_reason=exit_reason, partial=exit_reason != "answered",
                turns=self.turn + 1, tool_calls=dict(self.calls),
                usage={"used": self.used, "peak": self.used, "budget": 32768},
                wall_s=0.5, documents=docs,
            )
        )  # fmt: skip
        return self.trace.events()
