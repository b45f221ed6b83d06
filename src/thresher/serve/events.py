"""Trace events as the server-sent events of Chroma's hosted search agent API.

Chroma's hosted search agent streams ``POST /search`` as server-sent events named
``action``, ``observation``, ``done`` and ``error``, and writes its final answer as
``<Document id=…><Justification>…</Justification></Document>`` blocks. Those
names and that answer form are what the public material shows; the fields inside
each event are not published, so the payloads below are thresher's, documented
in ``docs/serving.md`` and built from the trace (``docs/trace-schema.md``):

* ``action``: one per proposal: the tool calls the policy asked for, or its final
  answer, or what it sent when the proposal was refused; with the token usage
  the policy saw.
* ``observation``: one per applied result: a tool result (the chunks shown,
  pruned, recalled, per-id refusals) or a refusal, with the tokens it added and
  the running context size.
* ``done``: the ranked documents with justifications, the answer text, the exit
  reason and usage; sent when the episode produced its documents.
* ``error``: the episode failed (a policy or endpoint error, invalid input, an
  internal error) or could not run; it carries the exit reason and message, and
  the partial documents when there are any.

:class:`EventMapper` is pure: it holds only what an event needs from earlier ones
(the usage line of the turn, the chunks already seen), so a trace replays into
the same stream as the live run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from thresher.harness.result import ExitReason, Result
from thresher.harness.trace import (
    FinalEvent,
    ProposalEvent,
    QueryState,
    Refusal,
    ToolResult,
    TraceEvent,
)

__all__ = [
    "SSE_EVENTS",
    "FAILED_EXITS",
    "SseEvent",
    "EventMapper",
    "answer_text",
    "document_payload",
    "terminal_event",
    "result_payload",
]

#: every event name this server sends, in the order an episode's stream uses them
SSE_EVENTS = ("action", "observation", "done", "error")
#: exit reasons that end the stream with ``error`` instead of ``done``
FAILED_EXITS = frozenset(
    {
        ExitReason.POLICY_ERROR,
        ExitReason.ENDPOINT_UNAVAILABLE,
        ExitReason.INVALID_INPUT,
        ExitReason.CANCELLED,
        ExitReason.TOOLS_FAILED,
        ExitReason.ERROR,
    }
)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its name, JSON payload and id (the trace seq, when one)."""

    event: str
    data: dict[str, Any]
    id: str | None = None


def _chunk_view(chunk: dict[str, Any]) -> dict[str, Any]:
    return {
        "chunk_id": chunk.get("chunk_id", ""),
        "doc_id": chunk.get("doc_id", ""),
        "title": chunk.get("title", ""),
        "text": chunk.get("text", ""),
    }


@dataclass
class EventMapper:
    """Turns trace events, in order, into SSE events (many trace events map to none).

    Attributes:
        chunks: chunk dicts seen so far by id (a re-shown chunk is not in ``new_chunks``).
        used, budget: the running context size (the turn's count, plus the tool
            messages applied since) and the budget.
    """

    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: int = 0
    budget: int = 0

    def usage(self) -> dict[str, int]:
        return {"used": self.used, "budget": self.budget}

    def map(self, event: TraceEvent) -> list[SseEvent]:
        """The SSE events for one trace event (empty for the ones a client does not see)."""
        if isinstance(event, QueryState):
            self.used, self.budget = event.used, event.budget
            return []
        if isinstance(event, ProposalEvent):
            return [SseEvent("action", self._action(event), str(event.seq))]
        if isinstance(event, ToolResult):
            for chunk in event.new_chunks:
                self.chunks[str(chunk.get("chunk_id"))] = chunk
            self.used += event.tokens
            return [SseEvent("observation", self._tool_result(event), str(event.seq))]
        if isinstance(event, Refusal):
            data = {
                "turn": event.turn,
                "seq": event.seq,
                "kind": "refusal",
                "status": "refused",
                "code": event.code,
                "content": event.message,
                "usage": self.usage(),
            }
            return [SseEvent("observation", data, str(event.seq))]
        if isinstance(event, FinalEvent):
            return []  # the accepted answer goes out as ``done``, with the documents' text
        return []

    def _action(self, event: ProposalEvent) -> dict[str, Any]:
        proposal = event.proposal or {}
        final = proposal.get("final")
        kind = "refused" if not event.valid else ("final" if final is not None else "tool_calls")
        calls = [
            {"id": c.get("call_id", ""), "name": c.get("name", ""), "arguments": c.get("arguments")}
            for c in proposal.get("tool_calls") or []
        ]
        data: dict[str, Any] = {
            "turn": event.turn,
            "seq": event.seq,
            "kind": kind,
            "valid": event.valid,
            "content": proposal.get("text") or "",
            "tool_calls": calls,
            "usage": self.usage(),
        }
        if final is not None:
            data["documents"] = [
                {"id": d.get("doc_id", ""), "justification": d.get("justification", "")}
                for d in final.get("documents") or []
            ]
        if not event.valid:
            data["raw"] = event.raw
        return data

    def _tool_result(self, event: ToolResult) -> dict[str, Any]:
        return {
            "turn": event.turn,
            "seq": event.seq,
            "kind": "tool_result",
            "call_id": event.call_id,
            "tool": event.tool,
            "arguments": dict(event.arguments),
            "status": event.status,
            "code": event.code,
            "content": "\n".join(p for p in (event.header, event.footer) if p),
            "chunks": [_chunk_view(self.chunks.get(cid, {"chunk_id": cid})) for cid in event.shown],
            "pruned": list(event.pruned),
            "recalled": list(event.recalled),
            "rejected": [dict(r) for r in event.rejected],
            "tokens": event.tokens,
            "usage": self.usage(),
        }


def answer_text(result: Result) -> str:
    """The final answer in Context-1's form: one ``<Document id=…>`` block per document."""
    return "\n".join(
        f"<Document id={quoteattr(d.doc_id)}><Justification>{escape(d.justification)}"
        "</Justification></Document>"
        for d in result.documents
    )


def document_payload(result: Result) -> list[dict[str, Any]]:
    """The ranked documents of a Result, as ``done`` and the JSON reply carry them."""
    return [{"id": d.doc_id, **d.to_dict()} for d in result.documents]


def result_payload(result: Result, trace_id: str) -> dict[str, Any]:
    """An episode's outcome as the API's ``done`` event and the MCP ``search`` tool give it."""
    return {
        "trace_id": trace_id,
        "exit_reason": result.exit_reason.value,
        "partial": result.partial,
        "message": result.message,
        "documents": document_payload(result),
        "answer": answer_text(result),
        "usage": result.usage.to_dict(),
        "turns": result.turns,
        "tool_calls": dict(result.tool_calls),
        "wall_s": round(result.wall_s, 6),
    }


def terminal_event(result: Result, trace_id: str) -> SseEvent:
    """``done`` for an episode that produced its documents, ``error`` for one that failed."""
    data = result_payload(result, trace_id)
    if result.exit_reason in FAILED_EXITS:
        data["code"] = result.exit_reason.value
        return SseEvent("error", data)
    return SseEvent("done", data)
