"""Trace events round-trip through JSONL exactly; bad files give typed errors."""

from __future__ import annotations

import json

import pytest

from thresher.errors import InputError
from thresher.harness.trace import (
    TRACE_SCHEMA_VERSION,
    EpisodeStart,
    QueryState,
    ToolResult,
    Trace,
    event_from_dict,
    read_jsonl,
    write_jsonl,
)


def test_round_trip_is_exact(tmp_path):
    trace = Trace()
    trace.append(EpisodeStart(question="q?", config={"budget": {"total": 10}}, t=0.5))
    trace.append(QueryState(turn=0, used=5, notices=["[Token usage: 5/10]"], active=[]))
    trace.append(
        ToolResult(
            turn=0,
            call_id="c1",
            tool="search_corpus",
            arguments={"query": "x"},
            shown=["a#0"],
            new_chunks=[{"chunk_id": "a#0", "text": "é"}],
            duplicates=[["a#1", "a#0"]],
        )
    )
    assert [e.seq for e in trace] == [0, 1, 2]
    path = write_jsonl(trace, tmp_path / "t" / "trace.jsonl")
    assert read_jsonl(path) == trace.events()
    first = json.loads(path.read_text().splitlines()[0])
    assert first["v"] == TRACE_SCHEMA_VERSION and first["type"] == "episode_start"


def test_unknown_type_and_newer_version_are_refused(tmp_path):
    with pytest.raises(InputError, match="unknown trace event type"):
        event_from_dict({"type": "nope"})
    with pytest.raises(InputError, match="newer"):
        event_from_dict({"type": "episode_start", "v": TRACE_SCHEMA_VERSION + 1})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "episode_start"}\nnot json\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2"):
        read_jsonl(bad)
    with pytest.raises(InputError, match="cannot read"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_a_trace_from_before_the_model_fields_still_reads():
    """``episode_end.models`` and a proposal's ``model`` were added later, with defaults."""
    from thresher.eval.episode_metrics import episode_metrics
    from thresher.harness.actions import Proposal
    from thresher.harness.trace import EpisodeEnd
    from thresher.tasks.task import Task

    end = {"v": 1, "type": "episode_end", "seq": 1, "exit_reason": "answered", "wall_s": 1.5,
           "usage": {"used": 9, "peak": 9, "budget": 10, "prompt_tokens": 7,
                     "completion_tokens": 2}}  # fmt: skip
    old = [event_from_dict({"v": 1, "type": "episode_start", "question": "q?"}),
           event_from_dict(end)]  # fmt: skip
    assert isinstance(old[1], EpisodeEnd) and old[1].models == []
    m = episode_metrics(old, Task("t", "q?", "", gold_doc_ids=["d"]))
    assert (m.prompt_tokens, m.completion_tokens, m.models, m.wall_s) == (7, 2, [], 1.5)
    proposal = Proposal(text="x", model="gpt-4.1")
    assert Proposal.from_dict(proposal.to_dict()) == proposal
    assert "model" not in Proposal(text="x").to_dict()  # other policies' traces unchanged
    assert Proposal.from_dict({"text": "x"}).model == ""
