"""The episode reward for reinforcement learning: pure functions of a trace and a task.

Following the shape of the Context-1 report's reward (our own definitions
where the report gives no constants)::

    R = clamp( w_fbeta * F_beta(final docs, gold docs)
             + w_trajectory * trajectory_recall
             + answer_bonus * [a retrieved chunk contains the answer]
             - prune_streak_penalty * sum over prune-only streaks of max(0, L - free_prune_turns)
             - turn_penalty * max(0, turns - free_turns),
             low, high )

with, by default (:class:`RewardConfig`), ``w_fbeta = 0.7``, ``w_trajectory = 0.3``,
``answer_bonus = 1.0``, ``prune_streak_penalty = 0.1`` per turn past the first of a
streak (``free_prune_turns = 1``), ``turn_penalty = 0.01`` per turn
(``free_turns = 0``), and the range ``[low, high] = [-1, 2]`` (the largest
possible score is ``0.7 + 0.3 + 1.0 = 2``).

- ``F_beta`` (beta > 1 weighs recall over precision; the curriculum anneals
  beta from 4 to 2) is computed on document ids: the final answer's documents
  against the task's gold documents; 0 when either precision or recall is 0.
- ``trajectory_recall``: share of gold documents that any tool call returned
  during the episode (the retrieval cache), pruned or not.
- the answer bonus: some chunk a tool call returned contains the answer or an
  alias (normalized text, :func:`thresher.eval.metrics.answer_found`).
- a prune-only turn is a turn whose executed tool calls are all ``prune_chunks``
  (at least one); a streak is a maximal run of consecutive such turns.
- turns: the turns the episode observed (``query_state`` events).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from thresher.errors import InputError
from thresher.harness.trace import EpisodeEnd, FinalEvent, QueryState, ToolResult, TraceEvent
from thresher.tasks.answers import answer_found

__all__ = [
    "RewardConfig",
    "EpisodeFacts",
    "RewardBreakdown",
    "f_beta",
    "episode_facts",
    "prune_streaks",
    "reward",
]


@dataclass(frozen=True, slots=True)
class RewardConfig:
    """Weights, penalties and the clamp range of :func:`reward` (defaults: module docs)."""

    w_fbeta: float = 0.7
    w_trajectory: float = 0.3
    answer_bonus: float = 1.0
    prune_streak_penalty: float = 0.1
    free_prune_turns: int = 1
    turn_penalty: float = 0.01
    free_turns: int = 0
    low: float = -1.0
    high: float = 2.0


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """What the reward needs from one episode.

    Attributes:
        final_docs: the final answer's document ids, rank order (empty: none).
        retrieved: ``(doc_id, text)`` of every chunk tool calls returned, first arrival order.
        turn_tools: per observed turn, the names of the tool calls executed in it.
        turns: turns observed.
    """

    final_docs: tuple[str, ...]
    retrieved: tuple[tuple[str, str], ...]
    turn_tools: tuple[tuple[str, ...], ...]
    turns: int

    @property
    def seen_docs(self) -> set[str]:
        return {doc for doc, _ in self.retrieved}


@dataclass(frozen=True, slots=True)
class RewardBreakdown:
    """The reward and its parts (``total`` is clamped; ``raw`` is not)."""

    total: float
    raw: float
    f_beta: float
    beta: float
    trajectory_recall: float
    answer_retrieved: bool
    prune_penalty: float
    turn_penalty: float
    precision: float
    recall: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def f_beta(returned: Iterable[str], gold: Iterable[str], beta: float) -> tuple[float, float, float]:
    """``(F_beta, precision, recall)`` of a returned id set against a gold set.

    ``F_beta = (1 + beta^2) P R / (beta^2 P + R)``; 0 when P or R is 0.

    Raises:
        InputError: ``beta`` <= 0 or no gold ids.
    """
    if beta <= 0:
        raise InputError(f"beta must be positive, got {beta}")
    got, want = set(returned), set(gold)
    if not want:
        raise InputError("the task has no gold documents; a reward needs at least one")
    hit = len(got & want)
    if hit == 0:
        return 0.0, 0.0, 0.0
    p, r = hit / len(got), hit / len(want)
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r), p, r


def episode_facts(events: Sequence[TraceEvent]) -> EpisodeFacts:
    """Extract :class:`EpisodeFacts` from a trace (pure).

    The final documents come from the ``final`` event, else from ``episode_end``
    (a partial result's ranking).
    """
    final: list[str] | None = None
    end_docs: list[str] = []
    retrieved: dict[str, tuple[str, str]] = {}
    per_turn: dict[int, list[str]] = {}
    turns = 0
    for event in events:
        if isinstance(event, QueryState):
            turns += 1
            per_turn.setdefault(event.turn, [])
        elif isinstance(event, ToolResult):
            for chunk in event.new_chunks:
                cid = str(chunk.get("chunk_id", ""))
                if cid and cid not in retrieved:
                    retrieved[cid] = (str(chunk.get("doc_id", "")), str(chunk.get("text", "")))
            if event.status != "refused":
                per_turn.setdefault(event.turn, []).append(event.tool)
        elif isinstance(event, FinalEvent):
            final = [str(d["doc_id"]) for d in event.documents]
        elif isinstance(event, EpisodeEnd):
            end_docs = [str(d["doc_id"]) for d in event.documents]
    docs = final if final is not None else end_docs
    return EpisodeFacts(
        final_docs=tuple(dict.fromkeys(docs)),
        retrieved=tuple(retrieved.values()),
        turn_tools=tuple(tuple(per_turn[t]) for t in sorted(per_turn)),
        turns=turns,
    )


def prune_streaks(turn_tools: Sequence[Sequence[str]]) -> list[int]:
    """Lengths of the maximal runs of consecutive prune-only turns, in order."""
    streaks: list[int] = []
    run = 0
    for tools in turn_tools:
        if tools and all(t == "prune_chunks" for t in tools):
            run += 1
            continue
        if run:
            streaks.append(run)
        run = 0
    if run:
        streaks.append(run)
    return streaks


def _events(trace: Any) -> list[TraceEvent]:
    if hasattr(trace, "trace") and hasattr(trace, "exit_reason"):  # a harness Result
        events = list(trace.trace)
        if not events:
            raise InputError("the Result carries no trace; keep the trace to compute a reward")
        return events
    return list(trace)


def reward(
    trace: Any,
    task: Any,
    beta: float = 4.0,
    config: RewardConfig | None = None,
) -> RewardBreakdown:
    """The reward of one episode on one task (see the module docs for the formula).

    Args:
        trace: the episode's trace events (a list, a ``Trace``) or a harness ``Result``.
        task: an evaluation ``Task`` or a ``SynthTask`` (``gold_doc_ids``,
            ``answer``, ``answer_aliases``).
        beta: the F-beta weight (the curriculum's :meth:`~thresher.train.curriculum.Curriculum.beta`).
        config: weights and penalties.

    Returns:
        A :class:`RewardBreakdown`.

    Raises:
        InputError: no gold documents, ``beta`` <= 0, or a Result without a trace.
    """
    cfg = config or RewardConfig()
    facts = episode_facts(_events(trace))
    gold = list(task.gold_doc_ids)
    fb, p, r = f_beta(facts.final_docs, gold, beta)
    want = set(gold)
    traj = len(facts.seen_docs & want) / len(want)
    aliases = list(task.answer_aliases)
    found = bool(task.answer) and any(
        answer_found(text, task.answer, aliases) for _, text in facts.retrieved
    )
    prune_pen = cfg.prune_streak_penalty * sum(
        max(0, n - cfg.free_prune_turns) for n in prune_streaks(facts.turn_tools)
    )
    turn_pen = cfg.turn_penalty * max(0, facts.turns - cfg.free_turns)
    raw = (
        cfg.w_fbeta * fb
        + cfg.w_trajectory * traj
        + (cfg.answer_bonus if found else 0.0)
        - prune_pen
        - turn_pen
    )
    total = min(cfg.high, max(cfg.low, raw))
    return RewardBreakdown(total, raw, fb, beta, traj, found, prune_pen, turn_pen, p, r)
