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
