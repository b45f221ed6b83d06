"""The episode's state stores, changed only by applying trace events.

| store | contents | mutability |
|---|---|---|
| :class:`ActiveContext` | chunks the policy currently sees | prunable |
| :class:`RetrievalCache` | every chunk fetched this episode, by id | append-only |
| :class:`Lineage` | how each chunk was found (turn, hop, call, query, parents) | append-only |
| :class:`~thresher.harness.trace.Trace` | every event | append-only |

The append-only stores expose no removal method. :meth:`EpisodeState.apply`
is the single transition function: the live loop and :func:`replay` both call it.
The trace carries every chunk's content the first time it enters the cache, every
lineage record and every context change, so replaying a trace rebuilds exactly the
live state: cache, lineage, active context, the rendered transcript and the trace
itself. A ``sample`` event (a reply's token ids, for training) changes no store: it
is kept in the trace only, so a trace replays to the same state with or without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from thresher.corpus.document import Chunk
from thresher.errors import InputError
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    ProposalEvent,
    QueryState,
    ToolResult,
    Trace,
    TraceEvent,
    UsageReport,
)

__all__ = [
    "LineageRecord",
    "ActiveContext",
    "RetrievalCache",
    "Lineage",
    "ToolOutcome",
    "TurnRecord",
    "EpisodeState",
    "replay",
    "turn_count",
]


@dataclass(frozen=True, slots=True)
class LineageRecord:
    """How a chunk was found.

    Attributes:
        chunk_id, doc_id: the chunk and its document.
        turn: the turn of the call that returned it.
        hop: the policy's hop counter at that turn (None if it keeps none).
        tool, call_id: the call that returned it.
        query: the call's query, pattern or document id.
        rank: 1-based position in that call's result list.
        score: the retrieval score there (None for reads without scores).
        bm25_rank, dense_rank: 1-based rank in each retriever's list (None if absent).
        bm25_score, dense_score: raw BM25 and cosine scores against the call's query
            (for grep, against the episode's question; None if absent).
        parents: chunk ids the call was derived from (from the proposal).
        duplicate_of: set when the chunk's text equals an already shown chunk's.
    """

    chunk_id: str
    doc_id: str
    turn: int
    hop: int | None
    tool: str
    call_id: str
    query: str
    rank: int
    score: float | None = None
    parents: tuple[str, ...] = ()
    duplicate_of: str | None = None
    bm25_rank: int | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    dense_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "turn": self.turn,
            "hop": self.hop,
            "tool": self.tool,
            "call_id": self.call_id,
            "query": self.query,
            "rank": self.rank,
            "score": self.score,
            "parents": list(self.parents),
            "duplicate_of": self.duplicate_of,
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "bm25_score": self.bm25_score,
            "dense_score": self.dense_score,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LineageRecord:
        return cls(**{**data, "parents": tuple(data.get("parents") or ())})


class ActiveContext:
    """Chunk ids the policy sees, each with where it is shown in full.

    A placement is ``(turn, call_id)``: the tool message that renders the
    chunk's text. Everywhere else the transcript shows a one-line stub.
    """

    def __init__(self) -> None:
        self._where: dict[str, tuple[int, str]] = {}

    def add(self, chunk_id: str, turn: int, call_id: str) -> None:
        """Show ``chunk_id`` in full at ``(turn, call_id)`` (moves it if already active)."""
        self._where.pop(chunk_id, None)
        self._where[chunk_id] = (turn, call_id)

    def remove(self, chunk_id: str) -> None:
        """Take ``chunk_id`` out of view (a prune). Raises ``KeyError`` if not active."""
        del self._where[chunk_id]

    def placement(self, chunk_id: str) -> tuple[int, str] | None:
        return self._where.get(chunk_id)

    def ids(self) -> list[str]:
        """Active chunk ids in the order they (last) entered the context."""
        return list(self._where)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._where

    def __len__(self) -> int:
        return len(self._where)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._where))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActiveContext) and list(self._where.items()) == list(
            other._where.items()
        )

    def __repr__(self) -> str:
        return f"ActiveContext({self.ids()!r})"


class RetrievalCache:
    """Every chunk fetched this episode, by id, in arrival order. Append-only."""

    def __init__(self) -> None:
        self._chunks: dict[str, Chunk] = {}
        self._by_hash: dict[str, str] = {}

    def add(self, chunk: Chunk) -> bool:
        """Store ``chunk`` unless its id is known; returns True when it was new."""
        if chunk.chunk_id in self._chunks:
            return False
        self._chunks[chunk.chunk_id] = chunk
        self._by_hash.setdefault(chunk.content_hash, chunk.chunk_id)
        return True

    def get(self, chunk_id: str) -> Chunk | None:
        return self._chunks.get(chunk_id)

    def first_with_hash(self, content_hash: str) -> str | None:
        """The first cached chunk id whose text has this hash."""
        return self._by_hash.get(content_hash)

    def ids(self) -> list[str]:
        return list(self._chunks)

    def chunks(self) -> list[Chunk]:
        return list(self._chunks.values())

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._chunks

    def __len__(self) -> int:
        return len(self._chunks)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._chunks))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RetrievalCache) and list(self._chunks.items()) == list(
            other._chunks.items()
        )

    def __repr__(self) -> str:
        return f"RetrievalCache({len(self)} chunks)"


class Lineage:
    """Lineage records per chunk; the first is the chunk's origin. Append-only."""

    def __init__(self) -> None:
        self._records: dict[str, list[LineageRecord]] = {}

    def add(self, record: LineageRecord) -> None:
        self._records.setdefault(record.chunk_id, []).append(record)

    def origin(self, chunk_id: str) -> LineageRecord | None:
        """How the chunk was first found, or None."""
        records = self._records.get(chunk_id)
        return records[0] if records else None

    def history(self, chunk_id: str) -> tuple[LineageRecord, ...]:
        """Every time a tool returned the chunk, oldest first."""
        return tuple(self._records.get(chunk_id, ()))

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._records

    def __len__(self) -> int:
        return sum(len(r) for r in self._records.values())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lineage) and self._records == other._records

    def __repr__(self) -> str:
        return f"Lineage({len(self)} records)"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool message shows: header, chunk blocks (by id), footer."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    status: str
    header: str
    chunk_ids: tuple[str, ...] = ()
    footer: str = ""


@dataclass(slots=True)
class TurnRecord:
    """One turn of the transcript: notices shown, the assistant's calls, their results."""

    turn: int
    notices: tuple[str, ...] = ()
    assistant: dict[str, Any] | None = None
    outcomes: list[ToolOutcome] = field(default_factory=list)


@dataclass
class EpisodeState:
    """Everything the harness knows mid-episode; changed only by :meth:`apply`."""

    question: str = ""
    policy: str = ""
    system_prompt: str = ""
    tool_schemas: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    budget: int = 0
    context: ActiveContext = field(default_factory=ActiveContext)
    cache: RetrievalCache = field(default_factory=RetrievalCache)
    lineage: Lineage = field(default_factory=Lineage)
    turns: list[TurnRecord] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)
    current_query: str = ""
    correction: int = 0
    used: int = 0
    peak: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    final: list[dict[str, Any]] | None = None
    exit_reason: str | None = None
    trace: Trace = field(default_factory=Trace)

    @property
    def turn(self) -> int:
        """The current turn (the last one observed), -1 before the first."""
        return self.turns[-1].turn if self.turns else -1

    def calls_made(self) -> int:
        """Tool calls executed so far (ok or error; refused calls excluded)."""
        return sum(self.tool_calls.values())

    def apply(self, event: TraceEvent) -> TraceEvent:
        """Record ``event`` in the trace and apply its state change; returns the stored event."""
        stored = self.trace.append(event)
        if isinstance(event, EpisodeStart):
            self.question = event.question
            self.policy = event.policy
            self.system_prompt = event.system_prompt
            self.tool_schemas = list(event.tool_schemas)
            self.config = dict(event.config)
            self.budget = int(event.config.get("budget", {}).get("total", 0))
            self.current_query = event.question
        elif isinstance(event, QueryState):
            self.turns.append(TurnRecord(event.turn, tuple(event.notices)))
            self.used = event.used
            self.peak = max(self.peak, event.used)
        elif isinstance(event, ProposalEvent):
            if event.valid and event.proposal is not None and self.turns:
                self.turns[-1].assistant = {
                    "text": event.proposal.get("text", ""),
                    "tool_calls": list(event.proposal.get("tool_calls") or []),
                }
        elif isinstance(event, ToolResult):
            self._apply_tool_result(event)
        elif isinstance(event, UsageReport):
            self.correction = event.correction
        elif isinstance(event, FinalEvent):
            self.final = list(event.documents)
        elif isinstance(event, EpisodeEnd):
            self.exit_reason = event.exit_reason
        return stored

    def _apply_tool_result(self, event: ToolResult) -> None:
        for data in event.new_chunks:
            self.cache.add(Chunk.from_dict(data))
        for data in event.lineage:
            self.lineage.add(LineageRecord.from_dict(data))
        for chunk_id in event.pruned:
            self.context.remove(chunk_id)
            self.pruned[chunk_id] = event.turn
        for chunk_id in event.shown:
            self.context.add(chunk_id, event.turn, event.call_id)
            self.pruned.pop(chunk_id, None)
        if event.status != "refused":
            self.tool_calls[event.tool] = self.tool_calls.get(event.tool, 0) + 1
        if event.tool == "search_corpus" and event.status == "ok" and event.query:
            self.current_query = event.query
        if self.turns:
            self.turns[-1].outcomes.append(
                ToolOutcome(
                    event.call_id,
                    event.tool,
                    dict(event.arguments),
                    event.status,
                    event.header,
                    tuple(event.shown),
                    event.footer,
                )
            )


def replay(events: Iterable[TraceEvent], turn: int | None = None) -> EpisodeState:
    """The state at the start of ``turn`` (or at the end of the episode).

    Args:
        events: a trace, in order (for example from :func:`read_jsonl`).
        turn: 0-based turn; the state is the one the policy saw at that turn,
            i.e. right after the turn's ``query_state`` event. None: every event.

    Returns:
        A fresh :class:`EpisodeState`.

    Raises:
        InputError: the trace does not start with ``episode_start``, or the
            turn was never reached.
    """
    events = list(events)
    if not events or not isinstance(events[0], EpisodeStart):
        raise InputError("a trace must start with an episode_start event; is this a trace file?")
    state = EpisodeState()
    if turn is None:
        for event in events:
            state.apply(event)
        return state
    reached = False
    for event in events:
        state.apply(event)
        if isinstance(event, QueryState) and event.turn == turn:
            reached = True
            break
    if not reached:
        raise InputError(
            f"turn {turn} is not in the trace; it has turns 0..{turn_count(events) - 1}"
        )
    return state


def turn_count(events: Iterable[TraceEvent]) -> int:
    """How many turns the trace observed."""
    return sum(1 for e in events if isinstance(e, QueryState))
