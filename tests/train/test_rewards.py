"""The reward against traces whose every term is computed by hand."""

from __future__ import annotations

import pytest

from thresher.errors import InputError
from thresher.harness.result import ExitReason, Result, Usage
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    ProposalEvent,
    QueryState,
    ToolResult,
    TraceEvent,
)
from thresher.tasks.task import Task
from thresher.train.rewards import RewardConfig, episode_facts, f_beta, prune_streaks, reward

TASK = Task("t1", "Where was the inventor of QX-1 born?", "Marrowick", [], ["d1", "d2", "d3"])


def chunk(doc: str, n: int, text: str) -> dict:
    return {"chunk_id": f"{doc}#{n}", "doc_id": doc, "position": n, "title": doc, "text": text}


def search(turn: int, *chunks: dict) -> ToolResult:
    return ToolResult(
        turn=turn,
        call_id=f"t{turn}c0",
        tool="search_corpus",
        arguments={"query": "q"},
        shown=[c["chunk_id"] for c in chunks],
        new_chunks=list(chunks),
    )


def prune(turn: int, *ids: str) -> ToolResult:
    return ToolResult(
        turn=turn, call_id=f"t{turn}c0", tool="prune_chunks", arguments={"chunk_ids": list(ids)},
        pruned=list(ids),
    )  # fmt: skip


def trace(final_docs: list[str]) -> list[TraceEvent]:
    """4 turns: search (d1, d2 holding the answer, d9), prune, prune, final answer."""
    return [
        EpisodeStart(question=TASK.question),
        QueryState(turn=0),
        ProposalEvent(turn=0, proposal={"tool_calls": [], "text": ""}),
        search(
            0,
            chunk("d1", 0, "Patent QX-1 names Orvel Kestrin."),
            chunk("d2", 0, "Orvel Kestrin was born in Marrowick."),
            chunk("d9", 0, "Caddow Ferry is a town."),
        ),
        QueryState(turn=1),
        prune(1, "d9#0"),
        QueryState(turn=2),
        prune(2, "d2#0"),
        QueryState(turn=3),
        FinalEvent(turn=3, documents=[{"doc_id": d} for d in final_docs]),
        EpisodeEnd(turn=3, exit_reason="answered", documents=[{"doc_id": d} for d in final_docs]),
    ]


def test_f_beta_by_hand() -> None:
    f, p, r = f_beta(["d1", "d9"], ["d1", "d2", "d3"], 4.0)
    # P = 1/2, R = 1/3: F4 = 17 * (1/6) / (16/2 + 1/3) = 17/50
    assert (p, r) == (0.5, pytest.approx(1 / 3))
    assert f == pytest.approx(17 / 50)
    assert f_beta(["d1", "d9"], ["d1", "d2", "d3"], 2.0)[0] == pytest.approx(15 / 42)
    assert f_beta(["d1"], ["d1"], 1.0)[0] == 1.0
    assert f_beta([], ["d1"], 4.0) == (0.0, 0.0, 0.0)
    with pytest.raises(InputError):
        f_beta(["d1"], [], 4.0)
    with pytest.raises(InputError):
        f_beta(["d1"], ["d1"], 0.0)


def test_reward_of_a_hand_computed_trace() -> None:
    r = reward(trace(["d1", "d9"]), TASK, beta=4.0)
    # 0.7 * 17/50 + 0.3 * 2/3 + 1.0 (d2 holds "Marrowick") - 0.1 * (2 - 1) - 0.01 * 4
    assert r.f_beta == pytest.approx(0.34)
    assert r.trajectory_recall == pytest.approx(2 / 3)
    assert r.answer_retrieved is True
    assert r.prune_penalty == pytest.approx(0.1)
    assert r.turn_penalty == pytest.approx(0.04)
    assert r.total == pytest.approx(0.238 + 0.2 + 1.0 - 0.1 - 0.04)
    assert r.raw == r.total


def test_beta_changes_only_the_f_term() -> None:
    four, two = reward(trace(["d1", "d9"]), TASK, 4.0), reward(trace(["d1", "d9"]), TASK, 2.0)
    assert two.total - four.total == pytest.approx(0.7 * (15 / 42 - 17 / 50))


def test_no_answer_chunk_no_bonus() -> None:
    task = Task("t2", "q", "Vennor", [], ["d1", "d2", "d3"])
    r = reward(trace(["d1", "d2", "d3"]), task, beta=4.0)
    assert r.answer_retrieved is False and r.f_beta == 1.0
    assert r.total == pytest.approx(0.7 + 0.3 * 2 / 3 - 0.1 - 0.04)


def test_clamped_below_and_above() -> None:
    events: list[TraceEvent] = [EpisodeStart(question="q")]
    events.append(QueryState(turn=0))
    events.append(search(0, chunk("d9", 0, "nothing here")))
    for turn in range(1, 31):
        events += [QueryState(turn=turn), prune(turn, "d9#0")]
    r = reward(events, TASK)
    # 0 + 0 + 0 - 0.1 * 29 - 0.01 * 31 = -3.21, clamped to -1
    assert r.raw == pytest.approx(-3.21) and r.total == -1.0
    generous = RewardConfig(answer_bonus=5.0, turn_penalty=0.0, prune_streak_penalty=0.0)
    assert reward(trace(["d1", "d2", "d3"]), TASK, config=generous).total == 2.0


def test_prune_streaks_and_facts() -> None:
    assert prune_streaks([["search_corpus"], ["prune_chunks"], ["prune_chunks", "prune_chunks"], [], ["prune_chunks"]]) == [2, 1]  # fmt: skip
    assert prune_streaks([["prune_chunks", "search_corpus"]]) == []
    facts = episode_facts(trace(["d1"]))
    assert facts.final_docs == ("d1",) and facts.turns == 4
    assert facts.seen_docs == {"d1", "d2", "d9"}


def test_a_partial_result_without_final_uses_episode_end() -> None:
    events = [e for e in trace(["d1", "d2"]) if not isinstance(e, FinalEvent)]
    assert episode_facts(events).final_docs == ("d1", "d2")


def test_reward_of_a_result() -> None:
    events = tuple(trace(["d1", "d9"]))
    result = Result("q", (), ExitReason.ANSWERED, False, Usage(0, 0, 0), 4, {}, 0.0, events)
    assert reward(result, TASK).total == pytest.approx(reward(list(events), TASK).total)
    empty = Result("q", (), ExitReason.ANSWERED, False, Usage(0, 0, 0), 4, {}, 0.0, ())
    with pytest.raises(InputError, match="no trace"):
        reward(empty, TASK)
