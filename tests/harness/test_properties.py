"""Invariants over random action sequences (hypothesis), on the real test index.

For random scripts of searches, greps, reads, prunes, recalls, garbage and
final answers, with valid and invalid ids and several budgets:

* cache, lineage and trace only grow;
* every pruned chunk is recallable, with its lineage as when it was found;
* what is sent never exceeds the budget, and the usage line is its exact count;
* every proposal appears in the trace with its outcome;
* replay (through JSONL) at every turn equals the live state.
"""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from thresher.harness.actions import FinalAnswer, Proposal, RankedDocument, ToolCall
from thresher.harness.budget import TranscriptCounter
from thresher.harness.episode import run_episode
from thresher.harness.result import ExitReason, Result
from thresher.harness.state import replay
from thresher.harness.tools import CallContext, recall_result
from thresher.harness.trace import (
    EpisodeEnd,
    FinalEvent,
    ProposalEvent,
    Refusal,
    ToolResult,
    event_from_dict,
)
from thresher.policies.scripted import ScriptedPolicy
from thresher.tokens import get_counter

QUERIES = ["glassworks", "Marrowick province", "lighthouse Cape Orrin", "market town salt",
           "Tessaly history Vennor", "Kestrin lens", "Harbour notice"]  # fmt: skip
PATTERNS = ["Cape Orrin", "market town", "Tessaly", "(a", r"glass\w+", "zzz-no-match"]
DOCS = ["glassworks", "tessaly-history", "marrowick", "no-such-doc", "town-03", "hostile"]
KINDS = ["active", "pruned", "cached", "unknown"]

ids = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 40)), min_size=1, max_size=4)
action = st.one_of(
    st.tuples(st.just("search_corpus"), st.sampled_from(QUERIES)),
    st.tuples(st.just("grep_corpus"), st.sampled_from(PATTERNS)),
    st.tuples(st.just("read_document"), st.sampled_from(DOCS)),
    st.tuples(st.just("prune_chunks"), ids),
    st.tuples(st.just("recall_chunks"), ids),
)
turn_spec = st.one_of(
    st.tuples(st.just("calls"), st.lists(action, min_size=1, max_size=4)),
    st.tuples(st.just("garbage"), st.sampled_from(["text", "empty", "both"])),
    st.tuples(
        st.just("final"),
        st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 40)), max_size=3),
    ),
)
scripts = st.lists(turn_spec, min_size=1, max_size=7)
budgets = st.sampled_from([500, 700, 900, 1200, 2500, 32_768])


def pick(obs, kind: str, i: int) -> str:
    pools = {
        "active": [a.chunk_id for a in obs.active],
        "pruned": list(obs.pruned),
        "cached": list(obs.cache),
    }
    pool = pools.get(kind, [])
    return pool[i % len(pool)] if pool else f"ghost#{i}"


def to_action(spec):
    def act(obs):
        kind = spec[0]
        if kind == "garbage":
            return {
                "text": "just prose, no answer",
                "empty": Proposal(),
                "both": Proposal(
                    tool_calls=(ToolCall("search_corpus", {"query": "x"}),), final=FinalAnswer(())
                ),
            }[spec[1]]
        if kind == "final":
            docs = tuple(RankedDocument(pick(obs, k, i), "because") for k, i in spec[1])
            return Proposal(final=FinalAnswer(docs))
        calls = []
        for n, (name, arg) in enumerate(spec[1]):
            if name == "search_corpus":
                args = {"query": arg}
            elif name == "grep_corpus":
                args = {"pattern": arg}
            elif name == "read_document":
                args = {"doc_id": arg}
            else:
                args = {"chunk_ids": [pick(obs, k, i) for k, i in arg]}
            calls.append(ToolCall(name, args, f"c{n}"))
        return Proposal(tool_calls=tuple(calls), hop=obs.turn)

    return act


def is_prefix(short, long) -> bool:
    return list(long[: len(short)]) == list(short)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(script=scripts, budget=budgets)
def test_invariants_hold_for_random_action_sequences(store, config, script, budget):
    cfg = config.override({"budget.total": budget, "budget.reply_reserve": 100})
    policy = ScriptedPolicy([to_action(s) for s in script])
    snapshots = []
    result = run_episode(
        "Which province is the Halvard Glassworks town in?",
        store,
        policy,
        cfg,
        on_turn=lambda s: snapshots.append(copy.deepcopy(s)),
    )
    # always a Result with a typed exit reason, ending the trace
    assert isinstance(result, Result) and isinstance(result.exit_reason, ExitReason)
    assert isinstance(result.trace[-1], EpisodeEnd)
    assert result.exit_reason is not ExitReason.ERROR, result.message
    event(f"exit={result.exit_reason.value}")
    event(f"hard cutoff reached={any(o.usage.hard for o in policy.observations)}")

    # replay through JSONL equals the live state at every turn, and at the end
    events = [event_from_dict(json.loads(json.dumps(e.to_dict()))) for e in result.trace]
    assert events == list(result.trace)
    for t, snap in enumerate(snapshots):
        assert replay(events, t) == snap
    final = replay(events)

    # cache, lineage and trace only grow
    states = [*snapshots, final]
    for before, after in zip(states, states[1:], strict=False):
        assert is_prefix(before.cache.ids(), after.cache.ids())
        assert is_prefix(before.trace.events(), after.trace.events())
        for cid in before.cache.ids():
            assert is_prefix(before.lineage.history(cid), after.lineage.history(cid))
            assert before.cache.get(cid) == after.cache.get(cid)

    # every pruned chunk is recallable, its lineage intact
    found = {rec["chunk_id"]: rec for e in events if isinstance(e, ToolResult) for rec in e.lineage}
    for cid in final.pruned:
        assert cid in final.cache and cid not in final.context
        assert final.lineage.origin(cid).to_dict() == found[cid]
    if final.pruned:
        tc = TranscriptCounter(get_counter())
        ctx = CallContext(final.turn, None, (), 10**9, 10**9, 10, tc)
        call = ToolCall("recall_chunks", {"chunk_ids": list(final.pruned)}, "check")
        assert recall_result(call, final, ctx).recalled == list(final.pruned)

    # what is sent never exceeds the budget; the usage line is its exact count
    tc = TranscriptCounter(get_counter())
    for obs in policy.observations:
        assert obs.usage.used <= budget
        assert tc.messages(obs.messages) + obs.usage.correction == obs.usage.used
        assert obs.notices[0] == f"[Token usage: {obs.usage.used}/{budget}]"

    # every proposal appears in the trace with its outcome
    proposals = [e for e in events if isinstance(e, ProposalEvent)]
    assert len(proposals) == len(policy.observations)
    for p in proposals:
        same_turn = [e for e in events if e.turn == p.turn and e.seq > p.seq]
        if not p.valid:
            assert any(isinstance(e, Refusal) for e in same_turn)
        elif p.proposal["final"] is not None:
            assert any(isinstance(e, FinalEvent) for e in same_turn)
        else:
            results = [e.call_id for e in same_turn if isinstance(e, ToolResult)]
            assert results == [c["call_id"] for c in p.proposal["tool_calls"]]
