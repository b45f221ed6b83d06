"""The exits: every way an episode ends is one named predicate in ``EXITS``, checked in
priority order, and the loop can be driven from outside with the same trace."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import EXITS, episode_loop, run_episode
from thresher.harness.observation import Observation
from thresher.harness.result import ExitReason, Result
from thresher.harness.trace import TraceEvent
from thresher.policies.scripted import ScriptedPolicy

Q = "In which province is the town where the Halvard Glassworks was founded?"

SCRIPT = [
    Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),), hop=1),
    Proposal(tool_calls=(call("grep_corpus", pattern="Marrowick"), call("nope", x=1))),
    Proposal(text="no calls, no answer"),  # refused: the next turn's notice
    answer(("marrowick", "Places Marrowick in Tessaly."), ("glassworks#0", "Founded there.")),
]


def test_the_exits_are_declared_once_in_priority_order() -> None:
    names = [stop.name for stop in EXITS]
    assert len(set(names)) == len(names)
    priorities = [stop.priority for stop in EXITS]
    assert priorities == sorted(priorities) and len(set(priorities)) == len(priorities)
    phases = [stop.when for stop in EXITS]
    assert phases == sorted(phases, key=["start", "reply", "turn"].index)


def test_an_answer_on_the_last_allowed_turn_ends_answered_not_max_turns(store, config) -> None:
    capped = config.override({"episode.max_turns": 1})
    result = run_episode(Q, store, ScriptedPolicy([answer()]), capped)
    assert result.exit_reason is ExitReason.ANSWERED and not result.partial


def test_refusals_in_a_row_end_the_episode_before_the_turn_cap(store, config) -> None:
    capped = config.override({"episode.max_turns": 2, "episode.max_refused_in_a_row": 2})
    script = [Proposal(text="nothing"), Proposal(text="nothing again")]
    result = run_episode(Q, store, ScriptedPolicy(script), capped)
    assert result.exit_reason is ExitReason.POLICY_ERROR
    assert result.message.startswith("2 refused proposals in a row")


def _comparable(trace: tuple[TraceEvent, ...]) -> list[dict[str, Any]]:
    """The events without what depends on the clock."""
    out = []
    for event in trace:
        data = asdict(event)
        for key in ("t", "started_at", "elapsed_s", "wall_s"):
            data.pop(key, None)
        out.append({"type": event.type, **data})
    return out


def test_a_loop_driven_from_outside_records_what_run_episode_records(store, config) -> None:
    """The caller asks the policy (here: the same script) and sends each reply back."""
    expected = run_episode(Q, store, ScriptedPolicy(SCRIPT), config)
    replies = ScriptedPolicy(SCRIPT)
    loop = episode_loop(Q, store, ScriptedPolicy(SCRIPT), config)
    observations = 0
    sent: Any = None
    while True:
        try:
            item = loop.send(sent)
        except StopIteration as done:
            result: Result = done.value
            break
        sent = None
        if isinstance(item, Observation):
            observations += 1
            sent = (replies.propose(item), 0.0)
    assert observations == expected.turns == len(SCRIPT)
    assert result.exit_reason is expected.exit_reason is ExitReason.ANSWERED
    assert [d.doc_id for d in result.documents] == [d.doc_id for d in expected.documents]
    assert _comparable(result.trace) == _comparable(expected.trace)
