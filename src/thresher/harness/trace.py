"""The trace: an append-only, versioned record of everything an episode did.

Every event is a small frozen dataclass whose fields are JSON-safe (plain
dicts, lists, strings, numbers), so ``from_dict(to_dict(e)) == e`` exactly and
a trace written as JSONL replays to the same state as the live run. The
schema is documented in ``docs/trace-schema.md``; bump
:data:`TRACE_SCHEMA_VERSION` on any incompatible change.

State is event-sourced: the episode loop builds an event, appends it here,
and applies it to the state with the same function replay uses
(:meth:`thresher.harness.state.EpisodeState.apply`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from thresher.corpus import jsonl
from thresher.corpus.sanitize import safe_json
from thresher.errors import InputError

__all__ = [
    "TRACE_SCHEMA_VERSION",
    "TraceEvent",
    "EpisodeStart",
    "QueryState",
    "ProposalEvent",
    "Refusal",
    "ToolResult",
    "UsageReport",
    "SampleEvent",
    "FinalEvent",
    "EpisodeEnd",
    "EVENT_TYPES",
    "Trace",
    "event_from_dict",
    "read_jsonl",
    "write_jsonl",
]

TRACE_SCHEMA_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class TraceEvent:
    """Fields every event carries.

    seq: 0-based position in the trace. turn: the turn it belongs to (0-based).
    t: seconds since the episode started (informational; replay ignores it).
    """

    type: ClassVar[str] = "event"
    seq: int = 0
    turn: int = 0
    t: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """``{"v": version, "type": ..., **fields}``, JSON-safe."""
        return {"v": TRACE_SCHEMA_VERSION, "type": self.type, **asdict(self)}


@dataclass(frozen=True, kw_only=True)
class EpisodeStart(TraceEvent):
    """The episode's inputs: question, policy, prompt, tools, config.

    policy_info: what the policy recorded of itself beyond its name (e.g. which
    weights ran; :attr:`~thresher.harness.policy.BasePolicy.info`); empty when nothing.
    """

    type: ClassVar[str] = "episode_start"
    question: str = ""
    policy: str = ""
    policy_info: dict[str, Any] = field(default_factory=dict)
    system_prompt: str = ""
    tool_schemas: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    tokenizer: str = ""
    started_at: str = ""


@dataclass(frozen=True, kw_only=True)
class QueryState(TraceEvent):
    """What the policy is about to be sent at the start of a turn.

    used = counted + correction; counted is the harness's exact count of the
    rendered messages, correction the endpoint-reported excess (reconciliation).
    notices: the lines of this turn's notice message (usage line first).
    """

    type: ClassVar[str] = "query_state"
    used: int = 0
    counted: int = 0
    correction: int = 0
    budget: int = 0
    soft: bool = False
    hard: bool = False
    notices: list[str] = field(default_factory=list)
    active: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    current_query: str = ""


@dataclass(frozen=True, kw_only=True)
class ProposalEvent(TraceEvent):
    """What the policy returned: a normalized proposal, or the garbage it sent."""

    type: ClassVar[str] = "proposal"
    proposal: dict[str, Any] | None = None
    valid: bool = True
    raw: str = ""
    elapsed_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Refusal(TraceEvent):
    """A refused proposal or a dropped final-answer id, with a reason code."""

    type: ClassVar[str] = "refusal"
    call_id: str | None = None
    code: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolResult(TraceEvent):
    """The applied outcome of one tool call (status ok, error or refused).

    shown: chunk ids rendered in the tool message, in order.
    new_chunks: full chunk dicts entering the retrieval cache for the first time.
    lineage: lineage record dicts added by this call.
    duplicates: ``[chunk_id, shown_id]`` pairs: cached but not shown (same text).
    pruned / recalled / reactivated: context changes of prune, recall, read.
    rejected: per-id refusals ``{"id", "code", "message"}`` (prune, recall).
    flagged: for prune and recall, the chunks in view when the call was proposed
        that carry an injection flag (``{"id", "flags"}``): a context change that
        followed text imitating instructions, for attribution to name.
    """

    type: ClassVar[str] = "tool_result"
    call_id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    code: str = ""
    header: str = ""
    footer: str = ""
    shown: list[str] = field(default_factory=list)
    new_chunks: list[dict[str, Any]] = field(default_factory=list)
    lineage: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[list[str]] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    reactivated: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)
    query: str = ""
    tokens: int = 0
    elapsed_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class UsageReport(TraceEvent):
    """Endpoint-reported usage next to the harness's own count (reconciliation).

    discrepancy: the reported prompt was far below the harness's own count; it was
    recorded, not used (``correction`` is the one before it).
    """

    type: ClassVar[str] = "usage"
    counted: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    correction: int = 0
    discrepancy: bool = False


@dataclass(frozen=True, kw_only=True)
class SampleEvent(TraceEvent):
    """The tokens a reply was sampled as, when the model server reported them.

    Recorded right after the turn's ``proposal`` (refused or not) for training:
    prompt_ids (the whole prompt as the server tokenized it), completion_ids (the
    reply's tokens), logprobs (one per completion token, or None) and the model.
    It changes no state: replay skips it, and a trace without it is unchanged.
    """

    type: ClassVar[str] = "sample"
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] | None = None
    model: str = ""


@dataclass(frozen=True, kw_only=True)
class FinalEvent(TraceEvent):
    """The accepted final answer, resolved to known documents (rank order).

    flagged: the chunks in view when the answer was given that carry an
    injection flag (``{"id", "flags"}``), as on :class:`ToolResult`.
    """

    type: ClassVar[str] = "final"
    documents: list[dict[str, Any]] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class EpisodeEnd(TraceEvent):
    """Why and how the episode ended, and the documents the Result ranks.

    models: the models the policy's replies came from, in first-use order (an LLM
    policy: the model asked of the endpoint; empty for other policies and in
    older traces), so the endpoint totals in ``usage`` can be priced.
    """

    type: ClassVar[str] = "episode_end"
    exit_reason: str = ""
    partial: bool = False
    message: str = ""
    turns: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    documents: list[dict[str, Any]] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


EVENT_TYPES: dict[str, type[TraceEvent]] = {
    cls.type: cls
    for cls in (
        EpisodeStart,
        QueryState,
        ProposalEvent,
        Refusal,
        ToolResult,
        UsageReport,
        SampleEvent,
        FinalEvent,
        EpisodeEnd,
    )
}


def event_from_dict(data: dict[str, Any]) -> TraceEvent:
    """Inverse of :meth:`TraceEvent.to_dict`.

    Raises ``InputError`` for an unknown type or a newer schema version.
    """
    version = data.get("v", TRACE_SCHEMA_VERSION)
    if not isinstance(version, int) or version > TRACE_SCHEMA_VERSION:
        raise InputError(
            f"trace event schema v{version} is newer than this thresher "
            f"(v{TRACE_SCHEMA_VERSION}); upgrade thresher to read it"
        )
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InputError(
            f"unknown trace event type {kind!r}; known: {', '.join(sorted(EVENT_TYPES))}"
        )
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


class Trace:
    """Append-only sequence of events; ``append`` assigns ``seq``."""

    def __init__(self, events: Iterable[TraceEvent] = ()) -> None:
        self._events: list[TraceEvent] = []
        for event in events:
            self.append(event)

    def append(self, event: TraceEvent) -> TraceEvent:
        """Add ``event`` with the next sequence number; returns the stored event (``event``
        itself when it already carries that number: no copy)."""
        seq = len(self._events)
        stored = event if event.seq == seq else replace(event, seq=seq)
        self._events.append(stored)
        return stored

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self._events)

    def __getitem__(self, index: int) -> TraceEvent:
        return self._events[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and self._events == other._events

    def events(self) -> list[TraceEvent]:
        """A copy of the events, in order."""
        return list(self._events)


def write_jsonl(events: Iterable[TraceEvent], path: str | Path) -> Path:
    """Write ``events`` to ``path`` as JSONL (parents created); returns the path.

    A line whose text UTF-8 cannot encode (a lone surrogate that got in) is
    written with ASCII escapes (:func:`~thresher.corpus.sanitize.safe_json`): the
    writer never fails on text.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for event in events:
            fh.write(safe_json(event.to_dict()) + "\n")
    return p


def read_jsonl(path: str | Path) -> list[TraceEvent]:
    """Read a JSONL trace.

    Raises ``InputError`` naming the file and line of anything unreadable.
    """
    p = Path(path)
    try:
        return _read_events(p)
    except RecursionError as exc:
        raise InputError(
            f"{p}: a line nests JSON too deeply to read; a trace line is one event object"
        ) from exc


def _read_events(p: Path) -> list[TraceEvent]:
    events: list[TraceEvent] = []
    for n, data in jsonl.iter_jsonl(p):
        if not isinstance(data, dict):
            raise InputError(f"{p}:{n}: a trace line must be a JSON object")
        try:
            events.append(event_from_dict(data))
        except InputError as exc:
            raise InputError(f"{p}:{n}: {exc}") from exc
        except TypeError as exc:
            raise InputError(f"{p}:{n}: malformed event ({exc})") from exc
    return events
