"""Lone surrogates (text UTF-8 cannot encode) at the harness's entrances and in its trace."""

from __future__ import annotations

import json

import pytest

import thresher
from thresher.config import Config
from thresher.corpus.sanitize import has_surrogate, invalid_path, safe_json, scrub
from thresher.errors import ConfigError
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.result import ExitReason
from thresher.harness.trace import read_jsonl, write_jsonl
from thresher.policies.scripted import ScriptedPolicy


def test_a_question_with_a_lone_surrogate_ends_invalid_input_and_its_trace_is_written(
    store, tmp_path
):
    path = tmp_path / "t.jsonl"
    result = thresher.search("a \ud800 glassworks", index=store, trace=path)
    assert result.exit_reason is ExitReason.INVALID_INPUT
    assert "Unicode" in result.message
    events = read_jsonl(path)
    assert events[0].question == "a \ufffd glassworks"


def test_a_model_s_tool_arguments_with_a_lone_surrogate_are_replaced(store, tmp_path):
    policy = ScriptedPolicy(
        [Proposal(tool_calls=(call("search_corpus", query="\ud800 glassworks"),)), answer()]
    )
    path = tmp_path / "t.jsonl"
    result = thresher.search("Who founded the glassworks?", index=store, policy=policy, trace=path)
    assert result.exit_reason is ExitReason.ANSWERED
    text = path.read_text(encoding="utf-8")
    assert not has_surrogate(text)
    proposal = next(e for e in read_jsonl(path) if e.type == "proposal")
    assert proposal.proposal["tool_calls"][0]["arguments"]["query"] == "\ufffd glassworks"


def test_the_trace_writer_never_fails_on_text_and_reads_back_the_same(tmp_path):
    from thresher.harness.trace import Refusal

    events = [Refusal(code="x", message="lone \udc80 here, and é")]
    path = write_jsonl(events, tmp_path / "t.jsonl")
    assert read_jsonl(path) == events
    assert json.loads(safe_json({"a": "é"})) == {"a": "é"} and "é" in safe_json("é")


def test_config_text_with_a_lone_surrogate_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="Unicode"):
        Config().override({"retrieval.mode": "\ud800"})
    cfg = tmp_path / "c.json"
    cfg.write_text('{"llm": {"model": "\\ud800"}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="Unicode"):
        Config.load(cfg)


def test_helpers():
    assert scrub("a\ud800b") == "a\ufffdb" and scrub("ok") == "ok"
    assert invalid_path({"config": {"x": ["ok", "\udfff"]}}) == "config.x[1]"
    assert invalid_path({"q": "fine"}) is None
