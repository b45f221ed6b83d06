"""State stores: append-only stores have no removal; apply() is the only transition."""

from __future__ import annotations

from thresher.corpus.document import Chunk
from thresher.corpus.ids import content_hash
from thresher.harness.state import (
    ActiveContext,
    EpisodeState,
    Lineage,
    LineageRecord,
    RetrievalCache,
)
from thresher.harness.trace import EpisodeStart, QueryState, ToolResult


def _chunk(cid: str, text: str) -> Chunk:
    doc, _, pos = cid.partition("#")
    return Chunk(cid, doc, int(pos), doc, text, 0, len(text), content_hash(text))


def test_append_only_stores_expose_no_removal():
    for store in (RetrievalCache(), Lineage()):
        for name in ("remove", "pop", "discard", "clear", "__delitem__"):
            assert not hasattr(store, name)
    assert hasattr(ActiveContext(), "remove")


def test_cache_keeps_first_chunk_per_hash():
    cache = RetrievalCache()
    assert cache.add(_chunk("a#0", "same"))
    assert cache.add(_chunk("b#0", "same"))
    assert not cache.add(_chunk("a#0", "other"))
    assert cache.first_with_hash(content_hash("same")) == "a#0"
    assert cache.get("a#0").text == "same"


def test_apply_tool_result_then_prune_then_show_again():
    state = EpisodeState()
    state.apply(EpisodeStart(question="q", config={"budget": {"total": 100}}))
    state.apply(QueryState(turn=0, used=10, notices=["[Token usage: 10/100]"]))
    rec = LineageRecord("a#0", "a", 0, None, "search_corpus", "c1", "q", 1, 0.5)
    state.apply(
        ToolResult(
            turn=0,
            call_id="c1",
            tool="search_corpus",
            query="q",
            shown=["a#0"],
            new_chunks=[_chunk("a#0", "x").to_dict()],
            lineage=[rec.to_dict()],
        )
    )
    assert state.context.ids() == ["a#0"] and state.current_query == "q"
    state.apply(QueryState(turn=1, used=20))
    state.apply(ToolResult(turn=1, call_id="c2", tool="prune_chunks", pruned=["a#0"]))
    assert "a#0" not in state.context and state.pruned == {"a#0": 1}
    assert "a#0" in state.cache and state.lineage.origin("a#0") == rec
    state.apply(ToolResult(turn=1, call_id="c3", tool="recall_chunks", shown=["a#0"]))
    assert state.context.placement("a#0") == (1, "c3") and state.pruned == {}
    assert state.tool_calls == {"search_corpus": 1, "prune_chunks": 1, "recall_chunks": 1}
    assert [len(t.outcomes) for t in state.turns] == [1, 2]
    assert state.peak == 20 and len(state.trace) == 6
