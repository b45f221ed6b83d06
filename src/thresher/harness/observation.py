"""What a policy is given each turn: the rendered messages and a structured view.

An LLM policy sends ``messages`` as is; an offline policy reads the
structured fields (active chunks with lineage and scores, last results,
usage) instead of parsing text. Observations are read-only snapshots: a
policy cannot change the harness state through them.

The trace records each turn's observation as its ``query_state`` event
(:func:`query_state`): the usage and notices, the active and pruned chunk ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from thresher.corpus.document import Chunk
from thresher.corpus.sanitize import chunk_flags
from thresher.harness.budget import UsageState
from thresher.harness.state import EpisodeState, LineageRecord
from thresher.harness.trace import QueryState, Refusal, ToolResult

__all__ = ["ActiveChunk", "ResultView", "Observation", "build_observation", "query_state"]


@dataclass(frozen=True, slots=True)
class ActiveChunk:
    """A chunk in the active context with how it was found (origin lineage).

    flags: the injection patterns its text (or document) matched
    (:func:`thresher.corpus.sanitize.chunk_flags`): data to weigh, never an order.
    """

    chunk: Chunk
    lineage: LineageRecord | None
    flags: tuple[str, ...] = ()

    @property
    def chunk_id(self) -> str:
        return self.chunk.chunk_id


@dataclass(frozen=True, slots=True)
class ResultView:
    """One tool call of the previous turn, structured."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    status: str
    code: str
    message: str
    chunks: tuple[Chunk, ...] = ()
    rejected: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class Observation:
    """One turn's input to a policy.

    Attributes:
        question: the user's question.
        turn: 0-based turn number.
        messages: the chat messages the policy is sent (exactly what is counted).
        usage: tokens of ``messages`` (+ tool schemas), budget and soft/hard flags.
        active: chunks in view, in the order they entered, with lineage.
        pruned: ids pruned and recallable.
        last_results: the previous turn's tool calls and what they returned.
        notices: this turn's notice lines (usage line first).
        refusals: the previous turn's refusals of the proposal as a whole.
        current_query: the last search query (else the question).
        cache: read-only view of every chunk fetched so far, by id.
        origins: how each cached chunk was first found (its origin lineage, with the
            call's query and the hit's ranks and scores), by id.
        hop: the policy's last reported hop (None if it reports none).
        flags: injection flags of every flagged cached chunk, by id (the same
            names the transcript shows as ``flags="…"`` on the chunk's tag).
        wall_time_left_s: seconds left of the episode's wall time when the policy is
            asked (None: no limit known); a policy that calls a model caps its timeout by it.
    """

    question: str
    turn: int
    messages: tuple[dict[str, Any], ...]
    usage: UsageState
    active: tuple[ActiveChunk, ...] = ()
    pruned: tuple[str, ...] = ()
    last_results: tuple[ResultView, ...] = ()
    notices: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    current_query: str = ""
    cache: Mapping[str, Chunk] = field(default_factory=dict)
    origins: Mapping[str, LineageRecord] = field(default_factory=dict)
    hop: int | None = None
    flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    wall_time_left_s: float | None = None

    def chunk(self, chunk_id: str) -> Chunk | None:
        """A cached chunk by id (None if never fetched)."""
        return self.cache.get(chunk_id)


def build_observation(
    state: EpisodeState,
    messages: list[dict[str, Any]],
    usage: UsageState,
    notices: list[str],
    *,
    hop: int | None = None,
) -> Observation:
    """Snapshot ``state`` for the policy (pure; copies what it exposes)."""
    turn = state.turn
    last: list[ResultView] = []
    refusals: list[Refusal] = []
    for event in state.trace:
        if event.turn != turn - 1:
            continue
        if isinstance(event, ToolResult):
            chunks = tuple(c for c in (state.cache.get(i) for i in event.shown) if c is not None)
            message = "\n".join(p for p in (event.header, event.footer) if p)
            last.append(
                ResultView(
                    event.call_id,
                    event.tool,
                    dict(event.arguments),
                    event.status,
                    event.code,
                    message,
                    chunks,
                    tuple(dict(r) for r in event.rejected),
                )
            )
        elif isinstance(event, Refusal):
            refusals.append(event)
    cache = MappingProxyType({c.chunk_id: c for c in state.cache.chunks()})
    flags = MappingProxyType(
        {cid: found for cid, chunk in cache.items() if (found := chunk_flags(chunk))}
    )
    active = tuple(
        ActiveChunk(chunk, state.lineage.origin(cid), flags.get(cid, ()))
        for cid in state.context.ids()
        if (chunk := state.cache.get(cid)) is not None
    )
    origins = MappingProxyType(
        {cid: origin for cid in cache if (origin := state.lineage.origin(cid)) is not None}
    )
    return Observation(
        question=state.question,
        turn=turn,
        messages=tuple(messages),
        usage=usage,
        active=active,
        pruned=tuple(state.pruned),
        last_results=tuple(last),
        notices=tuple(notices),
        refusals=tuple(refusals),
        current_query=state.current_query,
        cache=cache,
        origins=origins,
        hop=hop,
        flags=flags,
    )


def query_state(
    state: EpisodeState, turn: int, usage: UsageState, notices: list[str]
) -> QueryState:
    """The ``query_state`` event of ``turn``: its settled ``usage`` and ``notices``, and
    what ``state``'s context holds, as the trace records them."""
    return QueryState(
        turn=turn,
        used=usage.used,
        counted=usage.counted,
        correction=usage.correction,
        budget=usage.budget,
        soft=usage.soft,
        hard=usage.hard,
        notices=notices,
        active=state.context.ids(),
        pruned=list(state.pruned),
        current_query=state.current_query,
    )
