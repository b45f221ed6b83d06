"""thresher.search: the library entry point over a real index."""

from __future__ import annotations

import pytest

import thresher
from thresher.errors import ConfigError, IndexNotFoundError
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.result import ExitReason
from thresher.harness.state import replay
from thresher.harness.trace import read_jsonl
from thresher.policies.scripted import ScriptedPolicy


def test_lazy_top_level_search_runs_the_default_policy(store, config, tmp_path):
    seen = []
    result = thresher.search(
        "Who founded the Halvard Glassworks?",
        index=store,
        config=config,
        trace=tmp_path / "t.jsonl",
        on_event=seen.append,
    )
    assert result.exit_reason is ExitReason.ANSWERED and result.doc_ids[0] == "glassworks"
    events = read_jsonl(tmp_path / "t.jsonl")
    assert events == list(result.trace) == seen
    assert replay(events).final[0]["doc_id"] == "glassworks"


def test_policy_object_and_config_overrides(store):
    policy = ScriptedPolicy(
        [Proposal(tool_calls=(call("grep_corpus", pattern="Tessaly"),)), answer()]
    )
    result = thresher.search("q?", index=store, policy=policy, config={"budget.total": 4000})
    assert result.usage.budget == 4000 and result.exit_reason is ExitReason.ANSWERED


def test_empty_question_is_a_result_not_an_exception(store):
    result = thresher.search("", index=store)
    assert result.exit_reason is ExitReason.INVALID_INPUT and result.documents == ()


def test_unknown_policy_and_bad_config_are_typed_errors(store):
    with pytest.raises(ConfigError, match="unknown policy 'nope'.*single-shot"):
        thresher.search("q", index=store, policy="nope")
    with pytest.raises(ConfigError):
        thresher.search("q", index=store, config={"budget.nope": 1})


def test_unknown_index_is_a_typed_error(tmp_path):
    with pytest.raises(IndexNotFoundError):
        thresher.search("q", index=tmp_path / "no-index-here")


def test_searching_streams_the_episode_and_a_block_left_early_writes_a_cancelled_trace(
    store, config, tmp_path
):
    script = [Proposal(tool_calls=(call("grep_corpus", pattern="Tessaly"),)), answer()]
    with thresher.searching(
        "q?", index=store, policy=ScriptedPolicy(script), config=config
    ) as episode:
        read = list(episode)
    assert episode.result is not None and read == list(episode.result.trace)
    assert episode.result.exit_reason is ExitReason.ANSWERED

    streaming = thresher.searching(
        "q?", index=store, policy=ScriptedPolicy(script), config=config, trace=tmp_path / "t.jsonl"
    )
    with pytest.raises(KeyError), streaming as episode:  # a reader's own error: the trace is kept
        for event in episode:
            if event.type == "tool_result":
                raise KeyError("the reader broke")
    events = read_jsonl(tmp_path / "t.jsonl")
    assert events[-1].type == "episode_end" and events[-1].exit_reason == "cancelled"
    assert replay(events).exit_reason == "cancelled"
