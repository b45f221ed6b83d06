"""ScriptedPolicy replays its actions in order and fails loudly when exhausted."""

from __future__ import annotations

import pytest

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.budget import UsageState
from thresher.harness.observation import Observation
from thresher.harness.policy import Policy
from thresher.policies.scripted import ScriptedPolicy, ScriptExhaustedError


def obs(turn: int) -> Observation:
    return Observation("q", turn, (), UsageState(1, 1, 0, 10, False, False))


def test_replays_proposals_and_callables_in_order():
    first = Proposal(tool_calls=(call("search_corpus", query="x"),))
    policy = ScriptedPolicy([first, lambda o: answer(f"doc-{o.turn}")])
    assert isinstance(policy, Policy) and policy.name == "scripted"
    assert policy.propose(obs(0)) is first
    assert policy.propose(obs(1)).final.documents[0].doc_id == "doc-1"
    assert [o.turn for o in policy.observations] == [0, 1]


def test_exhausted_script_raises_a_clear_error():
    policy = ScriptedPolicy([answer()])
    policy.propose(obs(0))
    with pytest.raises(ScriptExhaustedError, match="exhausted at turn 1"):
        policy.propose(obs(1))


def test_schemas_and_prompt_are_configurable():
    schema = {"type": "function", "function": {"name": "search_corpus"}}
    policy = ScriptedPolicy([], system_prompt="be brief", schemas=[schema])
    assert policy.system_prompt == "be brief" and policy.tool_schemas() == [schema]
