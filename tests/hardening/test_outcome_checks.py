"""The judge's issue-23 checks see what they look for, on doctored traces."""

from __future__ import annotations

from thresher.harness.trace import EpisodeEnd, FinalEvent, ToolResult
from thresher.synth.attacks.outcome_checks import id_breaches, outcome_breaches


def _chunk(cid: str, doc: str) -> dict:
    return {"chunk_id": cid, "doc_id": doc, "title": "", "text": "t", "metadata": {}}


def _shown(*pairs: tuple[str, str], tool: str = "search_corpus", **kw) -> ToolResult:
    return ToolResult(
        tool=tool, shown=[c for c, _ in pairs], new_chunks=[_chunk(c, d) for c, d in pairs], **kw
    )


def test_answered_with_no_documents_or_after_every_tool_failed_is_a_breach():
    end = EpisodeEnd(exit_reason="answered", documents=[])
    assert outcome_breaches([end]) == ["termination: answered with no documents"]
    failed = ToolResult(tool="search_corpus", status="error", code="timeout")
    doc = {"doc_id": "a", "chunk_ids": ["a#0"]}
    lines = outcome_breaches([failed, EpisodeEnd(exit_reason="answered", documents=[doc])])
    assert lines == ["termination: answered although every retrieval call failed"]
    assert outcome_breaches([failed, EpisodeEnd(exit_reason="tools_failed")]) == []


def test_ids_that_resolve_to_another_document_are_breaches():
    real, twin = "n <v2>", "n &lt;v2&gt;"
    shown = _shown((f"{real}#0", real))
    read = _shown((f"{twin}#0", twin), tool="read_document", arguments={"doc_id": "n &lt;v2&gt;"})
    assert any("read_document" in line for line in id_breaches([shown, read]))
    never = FinalEvent(documents=[{"doc_id": "x", "chunk_ids": []}])
    assert id_breaches([shown, never]) == ["ids: the answer ranks 'x', never shown to the policy"]
    stolen = FinalEvent(documents=[{"doc_id": real, "chunk_ids": [f"{twin}#0"]}])
    assert any("of another" in line for line in id_breaches([shown, read, stolen]))
    good = FinalEvent(documents=[{"doc_id": real, "chunk_ids": [f"{real}#0"]}])
    assert id_breaches([shown, good]) == []
