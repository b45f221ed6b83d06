"""Trace events to SSE events (pure): names, order, usage bookkeeping, the answer text."""

from __future__ import annotations

from thresher.harness.result import ExitReason, Result, ResultDocument, Usage
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    ProposalEvent,
    QueryState,
    Refusal,
    ToolResult,
)
from thresher.serve.events import EventMapper, answer_text, terminal_event

CHUNK = {"chunk_id": "a#0", "doc_id": "a", "title": "A", "text": "alpha", "source": "x"}


def trace():
    call = {"name": "search_corpus", "arguments": {"query": "q"}, "call_id": "c0"}
    return [
        EpisodeStart(seq=0, question="q?"),
        QueryState(seq=1, turn=0, used=100, budget=1000),
        ProposalEvent(seq=2, turn=0, proposal={"tool_calls": [call], "text": "look"}),
        ToolResult(seq=3, turn=0, call_id="c0", tool="search_corpus", shown=["a#0"],
                   new_chunks=[CHUNK], tokens=40, header="1 new chunk"),  # fmt: skip
        QueryState(seq=4, turn=1, used=150, budget=1000),
        ProposalEvent(seq=5, turn=1, valid=False, raw="garbage"),
        Refusal(seq=6, turn=1, code="malformed", message="not JSON"),
        QueryState(seq=7, turn=2, used=160, budget=1000),
        ProposalEvent(seq=8, turn=2, proposal={"tool_calls": [
            {"name": "prune_chunks", "arguments": {"chunk_ids": ["a#0"]}, "call_id": "p"}]}),
        ToolResult(seq=9, turn=2, call_id="p", tool="prune_chunks", pruned=["a#0"], tokens=5),
        QueryState(seq=10, turn=3, used=120, budget=1000),
        ProposalEvent(seq=11, turn=3, proposal={"final": {"documents": [
            {"doc_id": "a", "justification": "says <so>"}]}}),
        FinalEvent(seq=12, turn=3, documents=[{"doc_id": "a"}]),
        EpisodeEnd(seq=13, turn=3, exit_reason="answered"),
    ]  # fmt: skip


def test_events_map_to_actions_and_observations_in_trace_order():
    mapper = EventMapper()
    out = [sse for event in trace() for sse in mapper.map(event)]
    assert [(s.event, s.id) for s in out] == [
        ("action", "2"),
        ("observation", "3"),
        ("action", "5"),
        ("observation", "6"),
        ("action", "8"),
        ("observation", "9"),
        ("action", "11"),
    ]
    first, result = out[0].data, out[1].data
    assert first["kind"] == "tool_calls" and first["content"] == "look"
    assert first["tool_calls"] == [
        {"id": "c0", "name": "search_corpus", "arguments": {"query": "q"}}
    ]
    assert first["usage"] == {"used": 100, "budget": 1000}
    assert result["chunks"] == [{"chunk_id": "a#0", "doc_id": "a", "title": "A", "text": "alpha"}]
    assert result["usage"] == {"used": 140, "budget": 1000}  # the turn's count + this message
    assert out[2].data["kind"] == "refused" and out[2].data["raw"] == "garbage"
    assert out[3].data == {
        "turn": 1, "seq": 6, "kind": "refusal", "status": "refused", "code": "malformed",
        "content": "not JSON", "usage": {"used": 150, "budget": 1000},
    }  # fmt: skip
    assert out[5].data["pruned"] == ["a#0"]
    assert out[6].data["kind"] == "final"
    assert out[6].data["documents"] == [{"id": "a", "justification": "says <so>"}]


def test_a_reshown_chunk_keeps_its_text():
    mapper = EventMapper()
    mapper.map(
        ToolResult(seq=1, call_id="c", tool="search_corpus", shown=["a#0"], new_chunks=[CHUNK])
    )
    again = mapper.map(ToolResult(seq=2, call_id="r", tool="read_document", shown=["a#0"]))
    assert again[0].data["chunks"][0]["text"] == "alpha"


def result(reason: ExitReason) -> Result:
    doc = ResultDocument("d<1>", "T", ("d<1>#0",), "text", 'because "x" & <y>', 1, 0.5)
    return Result(
        "q", (doc,), reason, reason is not ExitReason.ANSWERED, Usage(1, 2, 3), 1, {}, 0.1
    )


def test_done_carries_documents_and_the_answer_in_context_1_form():
    done = terminal_event(result(ExitReason.ANSWERED), "t" * 32)
    assert done.event == "done" and done.data["trace_id"] == "t" * 32
    assert done.data["documents"][0]["id"] == "d<1>" and done.data["documents"][0]["rank"] == 1
    assert done.data["answer"] == (
        '<Document id="d&lt;1&gt;"><Justification>because "x" &amp; &lt;y&gt;'
        "</Justification></Document>"
    )
    assert terminal_event(result(ExitReason.MAX_TURNS), "x").event == "done"


def test_failed_episodes_end_with_error():
    for reason in (ExitReason.POLICY_ERROR, ExitReason.CANCELLED, ExitReason.ERROR):
        event = terminal_event(result(reason), "x")
        assert event.event == "error" and event.data["code"] == reason.value
    assert answer_text(result(ExitReason.POLICY_ERROR)).startswith("<Document")
