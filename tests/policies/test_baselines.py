"""Baselines as policies of the same harness: single-retriever, reranked, no-prune."""

from __future__ import annotations

import pytest

from thresher.api import search
from thresher.harness.episode import run_episode
from thresher.harness.result import ExitReason
from thresher.policies import get_policy, policy_names
from thresher.policies.baselines import (
    Bm25SingleShotPolicy,
    DenseSingleShotPolicy,
    hybrid_rerank_policy,
    no_prune_policy,
)

QUESTION = "In which province is the town where the Halvard Glassworks was founded?"


def test_registered():
    assert {"bm25", "dense", "hybrid-rerank", "no-prune", "local", "single-shot"} <= set(
        policy_names()
    )


@pytest.mark.parametrize("mode", ["bm25", "dense"])
def test_single_retriever_search(store, config, mode):
    policy = Bm25SingleShotPolicy() if mode == "bm25" else DenseSingleShotPolicy()
    r = run_episode(QUESTION, store, policy, config.override({"retrieval.mode": mode}))
    assert r.exit_reason is ExitReason.ANSWERED and set(r.tool_calls) == {"search_corpus"}
    assert _searched(r) == {QUESTION}  # repeated until 10 documents are in view
    assert "glassworks" in r.doc_ids[:3]
    start = r.trace[0]
    assert start.config["retrieval"]["mode"] == mode


def test_api_applies_a_policys_retrieval_mode(store, config):
    r = search(QUESTION, store, "bm25", config)
    start = r.trace[0]
    assert start.config["retrieval"]["mode"] == "bm25"
    assert r.exit_reason is ExitReason.ANSWERED


def test_unknown_mode_is_refused_when_the_config_loads(config):
    import pytest

    from thresher.errors import ConfigError

    with pytest.raises(ConfigError, match="retrieval.mode must be one of 'hybrid', 'bm25'"):
        config.override({"retrieval.mode": "nope"})


def _searched(result) -> set[str]:
    return {e.arguments["query"] for e in result.trace if e.type == "tool_result"}


def test_hybrid_rerank_searches_only_the_question(store, config):
    r = run_episode(QUESTION, store, hybrid_rerank_policy(config=config), config)
    assert r.exit_reason is ExitReason.ANSWERED and set(r.tool_calls) == {"search_corpus"}
    assert _searched(r) == {QUESTION} and len(r.documents) == 10
    assert "glassworks" in r.doc_ids[:3]


def test_no_prune_hops_without_pruning(store, config):
    policy = get_policy("no-prune", config=config, stop_at=1.01)
    assert policy.name == "no-prune"
    r = run_episode(QUESTION, store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED
    assert r.tool_calls.get("search_corpus", 0) >= 2 and "prune_chunks" not in r.tool_calls
    assert no_prune_policy(config=config).prune is False
