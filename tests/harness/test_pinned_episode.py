"""An episode reads one index generation: a delete committed while it runs shows in the
next episode, not in the rest of this one (the harness pins a store that declares
``PinsGeneration``), so its searches, reads and recalls agree with each other."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import iter_episode, run_episode
from thresher.harness.trace import ToolResult
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.scripted import ScriptedPolicy

from .small_corpus import corpus, corpus_config

Q = "In which province is the town where the Halvard Glassworks was founded?"


@pytest.fixture
def own_store(tmp_path: Path):
    """A store over its own copy of the test corpus (this test deletes from it)."""
    from thresher.index.backends import ingest

    ingest(corpus(), tmp_path / "index", corpus_config(), progress=False)
    s = EmbeddedStore(tmp_path / "index", corpus_config())
    yield s
    s.close()


def _search_then_read() -> ScriptedPolicy:
    return ScriptedPolicy(
        [
            Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
            Proposal(tool_calls=(call("read_document", doc_id="marrowick"),)),
            answer(),
        ]
    )


def _results(trace) -> list[ToolResult]:  # type: ignore[no-untyped-def]
    return [e for e in trace if isinstance(e, ToolResult)]


def test_a_delete_committed_mid_episode_shows_in_the_next_episode(own_store) -> None:
    config = corpus_config()
    stream = iter_episode(Q, own_store, _search_then_read(), config)
    for event in stream:
        if isinstance(event, ToolResult) and event.tool == "search_corpus":
            own_store.delete_documents(["marrowick"])  # a commit while the episode runs
    result = stream.result
    assert result is not None
    search, read = _results(result.trace)
    assert search.status == "ok" and read.status == "ok"
    assert read.shown and all(cid.startswith("marrowick") for cid in read.shown)
    after = run_episode(Q, own_store, _search_then_read(), config)
    _, gone = _results(after.trace)
    assert gone.status == "error" and gone.code == "unknown_id"
