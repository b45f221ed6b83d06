"""Stopping an episode from outside (``should_stop``): exit ``cancelled``, recorded in the trace.

A server whose client hung up stops the episode it was running; the trace must
say so, replay must rebuild it, and a policy still thinking must not hold the
episode open.
"""

from __future__ import annotations

import threading

from thresher.harness.actions import Proposal, call
from thresher.harness.episode import CANCELLED_MESSAGE, run_episode
from thresher.harness.result import ExitReason
from thresher.harness.state import replay
from thresher.harness.trace import EpisodeEnd, ProposalEvent, Refusal, read_jsonl, write_jsonl
from thresher.policies.scripted import ScriptedPolicy

Q = "In which province is the town where the Halvard Glassworks was founded?"


def search(query: str) -> Proposal:
    return Proposal(tool_calls=(call("search_corpus", query=query),))


def test_a_stop_before_a_turn_ends_the_episode_cancelled(store, config, tmp_path):
    stop = threading.Event()

    def first(observation):
        stop.set()  # the client goes away while turn 0 runs
        return search("Halvard Glassworks")

    policy = ScriptedPolicy([first, search("Marrowick province")])
    r = run_episode(Q, store, policy, config, should_stop=stop.is_set)
    assert r.exit_reason is ExitReason.CANCELLED and r.partial
    assert r.message == CANCELLED_MESSAGE
    assert r.turns == 1 and r.tool_calls == {"search_corpus": 1}  # turn 1 never ran
    end = r.trace[-1]
    assert isinstance(end, EpisodeEnd) and end.exit_reason == "cancelled"
    assert r.documents  # a partial result still ranks what was in view
    path = write_jsonl(r.trace, tmp_path / "t.jsonl")
    assert replay(read_jsonl(path)).exit_reason == "cancelled"


def test_a_stop_while_the_policy_thinks_does_not_wait_for_its_reply(store, config):
    stop = threading.Event()
    release = threading.Event()

    def slow(observation):
        stop.set()
        release.wait(30)  # a model that would take long to answer
        return search("never applied")

    try:
        r = run_episode(Q, store, ScriptedPolicy([slow]), config, should_stop=stop.is_set)
    finally:
        release.set()
    assert r.exit_reason is ExitReason.CANCELLED
    proposal, refusal = (e for e in r.trace if isinstance(e, ProposalEvent | Refusal))
    assert not proposal.valid and refusal.code == "cancelled"
    assert r.tool_calls == {}


def test_without_a_stop_the_episode_runs_as_before(store, config):
    never = threading.Event()
    policy = ScriptedPolicy([search("Halvard Glassworks")])
    r = run_episode(Q, store, policy, config, should_stop=never.is_set)
    assert r.exit_reason is ExitReason.POLICY_ERROR  # the script ran out, as without should_stop
