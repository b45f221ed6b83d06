"""SingleShotPolicy: one search on the question, then the active documents by rank."""

from __future__ import annotations

from thresher.harness.episode import run_episode
from thresher.harness.policy import Policy
from thresher.harness.result import ExitReason
from thresher.policies import get_policy, policy_names
from thresher.policies.single_shot import SingleShotPolicy


def test_registered_and_a_policy():
    assert "single-shot" in policy_names()
    policy = get_policy("single-shot", top_k=3)
    assert isinstance(policy, SingleShotPolicy) and isinstance(policy, Policy)
    assert policy.top_k == 3


def test_searches_once_then_answers(store, config):
    policy = SingleShotPolicy(top_k=3)
    r = run_episode("Who founded the Halvard Glassworks?", store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED and r.turns == 2
    assert r.tool_calls == {"search_corpus": 1}
    assert r.doc_ids[0] == "glassworks" and len(r.documents) == 3
    assert all(d.justification.startswith("Rank ") for d in r.documents)
