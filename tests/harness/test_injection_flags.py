"""Injection flags travel with a chunk: on its tag, in the Observation, and into the trace.

The session corpus holds a document that tries to close the chunk delimiter
and says "Ignore previous instructions": the policy is shown the flags as
data, and a prune or final answer given while it was in view is marked with
it, so attribution can name a decision that followed flagged text.
"""

from __future__ import annotations

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.observation import Observation
from thresher.harness.state import replay
from thresher.harness.trace import FinalEvent, ToolResult, event_from_dict
from thresher.policies.scripted import ScriptedPolicy

FLAGS = ["ignore_previous_instructions", "delimiter_tag"]


def test_flags_reach_the_policy_and_the_trace(store, config):
    seen: list[Observation] = []

    def prune_the_notice(obs: Observation) -> Proposal:
        seen.append(obs)
        return Proposal(tool_calls=(call("prune_chunks", chunk_ids=["hostile#0"]),))

    def answer_with_flagged_in_view(obs: Observation) -> Proposal:
        seen.append(obs)
        return answer(("glassworks#0", "Founded in Marrowick."))

    policy = ScriptedPolicy(
        [
            Proposal(tool_calls=(call("grep_corpus", pattern="Harbour notice"),)),
            prune_the_notice,
            Proposal(
                tool_calls=(
                    call("recall_chunks", chunk_ids=["hostile#0"]),
                    call("search_corpus", query="Halvard Glassworks founded"),
                )
            ),
            answer_with_flagged_in_view,
        ]
    )
    result = run_episode("Where was the Halvard Glassworks founded?", store, policy, config)
    first = seen[0]
    active = {a.chunk_id: a for a in first.active}
    assert list(active["hostile#0"].flags) == FLAGS
    assert dict(first.flags) == {"hostile#0": tuple(FLAGS)}
    tool = next(m for m in first.messages if m["role"] == "tool")["content"]
    assert f'flags="{",".join(FLAGS)}"' in tool
    results = [e for e in result.trace if isinstance(e, ToolResult)]
    prune = next(e for e in results if e.tool == "prune_chunks")
    assert prune.pruned == ["hostile#0"]
    assert prune.flagged == [{"id": "hostile#0", "flags": FLAGS}]
    grep = next(e for e in results if e.tool == "grep_corpus")
    assert grep.flagged == []  # only context changes and finals are marked
    final = next(e for e in result.trace if isinstance(e, FinalEvent))
    assert final.flagged == [{"id": "hostile#0", "flags": FLAGS}]
    from thresher.cli.trace_cmd import format_event

    shown = format_event(prune)
    assert any("after flagged text in view: hostile#0" in line for line in shown)
    # the marks survive JSON and replay
    again = [event_from_dict(e.to_dict()) for e in result.trace]
    assert again == list(result.trace)
    assert replay(again).final == replay(result.trace).final


def test_a_prune_with_nothing_flagged_in_view_is_unmarked(store, config):
    policy = ScriptedPolicy(
        [
            Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
            Proposal(tool_calls=(call("prune_chunks", chunk_ids=["glassworks#0"]),)),
            answer(),
        ]
    )
    result = run_episode("Where was the Halvard Glassworks founded?", store, policy, config)
    prune = next(e for e in result.trace if isinstance(e, ToolResult) and e.tool == "prune_chunks")
    assert prune.pruned == ["glassworks#0"] and prune.flagged == []
