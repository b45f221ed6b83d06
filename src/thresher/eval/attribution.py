"""Why an episode failed, read from its trace alone (the table in ``docs/eval.md``).

An episode *fails* when a gold document is missing from its final ranking, or
(when an answering model's prediction is given) when the prediction is wrong.
Each missing gold document gets a cause from the trace:

| cause | trace evidence |
|---|---|
| ``retrieval_miss`` | no tool call ever returned the document |
| ``premature_pruning`` | it entered the cache, an applied prune removed it, and it is not in view at the end |
| ``context_overload`` | it is in the active context at the end, yet not in the answer (or every gold document was returned and the answer is wrong but supported) |
| ``hallucination`` | the answer is not supported by any cached chunk (a prediction found in no cached chunk, or a ranked document no call returned) |
| ``early_termination`` | the policy stopped (``answered``) after the previous hops' documents arrived and made no retrieval call after that: it never searched for the next hop |
| ``policy_error`` | the episode ended ``policy_error`` or ``endpoint_unavailable``: the policy (a model that does not follow the tool format, an endpoint that is down) failed, not retrieval |

A policy error decides the episode's cause whatever its missing documents
show: an episode whose model never ran a tool did not miss at retrieval.

The episode's cause is the one of its earliest-hop missing document (ties in
the order of :data:`CAUSES`). For premature pruning the pruned chunks are still
in the retrieval cache by construction (the recovery invariant), so
``recall_chunks`` of them would have restored the document without re-querying
the corpus: ``recoverable`` is True, with the chunk ids and the prune's turn.

:func:`attribution_counts` and :func:`attribution_by_hop` tally many episodes'
attributions; the markdown summary and the HTML report both read them from here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from thresher.corpus.ids import doc_of
from thresher.eval.episode_metrics import final_ranking
from thresher.harness.state import replay
from thresher.harness.tools import RETRIEVAL_TOOLS
from thresher.harness.trace import EpisodeEnd, FinalEvent, ToolResult, TraceEvent
from thresher.tasks.answers import answer_found, exact_match
from thresher.tasks.task import Task

__all__ = [
    "CAUSES",
    "CAUSE_LABELS",
    "POLICY_EXITS",
    "Evidence",
    "Attribution",
    "attribute",
    "attribution_counts",
    "attribution_by_hop",
    "exit_reason_counts",
]

CAUSES = (
    "hallucination",
    "premature_pruning",
    "early_termination",
    "retrieval_miss",
    "context_overload",
    "policy_error",
)
#: exit reasons that mean the policy failed (attributed ``policy_error``)
POLICY_EXITS = frozenset({"policy_error", "endpoint_unavailable"})
CAUSE_LABELS = {
    "retrieval_miss": "retrieval miss",
    "premature_pruning": "premature pruning",
    "context_overload": "context overload / synthesis",
    "hallucination": "hallucination / retrieval gap",
    "early_termination": "termination too aggressive",
    "policy_error": "policy error (not retrieval)",
}
_NO_HOP = 10**6


@dataclass(frozen=True, slots=True)
class Evidence:
    """A trace event that supports an attribution: where it is and what it shows."""

    turn: int
    seq: int
    event: str
    detail: str


@dataclass(slots=True)
class Attribution:
    """The failure cause of one episode, with its evidence.

    Attributes:
        failed: whether the episode failed (see the module docstring).
        cause: one of :data:`CAUSES`, None when it did not fail.
        hop: the task hop of the document that decided the cause (None: unknown).
        doc_causes: every missing gold document's cause.
        evidence: trace events behind the cause.
        recoverable: for premature pruning, whether ``recall_chunks`` would bring the
            pruned gold chunks back from the cache (always True: the cache is
            append-only); None for other causes.
        recover_chunk_ids: the pruned gold chunks to recall.
        pruned_turn: the turn of the prune that removed them.
    """

    failed: bool
    cause: str | None = None
    hop: int | None = None
    doc_causes: dict[str, str] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    recoverable: bool | None = None
    recover_chunk_ids: list[str] = field(default_factory=list)
    pruned_turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _hop_of(task: Task) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, hop in enumerate(task.hops):
        for d in hop:
            out.setdefault(d, i)
    return out


def _arrival(events: Sequence[TraceEvent]) -> dict[str, ToolResult]:
    """doc id -> the tool result that first brought one of its chunks into the cache."""
    out: dict[str, ToolResult] = {}
    for e in events:
        if isinstance(e, ToolResult):
            for c in e.new_chunks:
                out.setdefault(str(c.get("doc_id") or doc_of(str(c["chunk_id"]))), e)
    return out


def _retrieval_calls(events: Sequence[TraceEvent]) -> list[ToolResult]:
    return [
        e
        for e in events
        if isinstance(e, ToolResult) and e.tool in RETRIEVAL_TOOLS and e.status != "refused"
    ]


def _ev(e: TraceEvent, detail: str) -> Evidence:
    return Evidence(e.turn, e.seq, e.type, detail)


def _end_event(events: Sequence[TraceEvent]) -> TraceEvent:
    for e in reversed(events):
        if isinstance(e, FinalEvent | EpisodeEnd):
            return e
    return events[-1]


def _missing_cause(
    doc: str, task: Task, events: Sequence[TraceEvent], ctx: dict[str, Any]
) -> tuple[str, list[Evidence], list[str], int | None]:
    """(cause, evidence, chunk ids to recall, prune turn) of one missing gold document."""
    state = ctx["state"]
    if doc in ctx["active_docs"]:
        shown = ctx["arrival"].get(doc)
        ev = [_ev(shown, f"{doc} retrieved here and still in view at the end")] if shown else []
        return "context_overload", ev, [], None
    if doc in ctx["seen_docs"]:
        prunes = [
            e
            for e in events
            if isinstance(e, ToolResult)
            and e.tool == "prune_chunks"
            and any(doc_of(c) == doc for c in e.pruned)
        ]
        if prunes:
            last = prunes[-1]
            chunks = [c for c in state.pruned if doc_of(c) == doc]
            detail = f"applied prune of {', '.join(c for c in last.pruned if doc_of(c) == doc)}"
            return "premature_pruning", [_ev(last, detail)], chunks, last.turn
        return (
            "context_overload",
            [_ev(ctx["arrival"][doc], f"{doc} cached, not returned")],
            [],
            None,
        )
    hop = ctx["hop_of"].get(doc)
    calls = ctx["calls"]
    if ctx["exit_reason"] == "answered" and hop is not None and hop > 0:
        earlier = [d for h in task.hops[:hop] for d in h]
        if all(d in ctx["seen_docs"] for d in earlier):
            bridge_turn = max(ctx["arrival"][d].turn for d in earlier)
            later = [c for c in calls if c.turn > bridge_turn]
            if not later:
                arrived = ctx["arrival"][earlier[-1]]
                ev = [
                    _ev(arrived, f"hop {hop - 1} document(s) retrieved by turn {bridge_turn}"),
                    _ev(ctx["end"], f"stopped with no retrieval call after turn {bridge_turn}"),
                ]
                return "early_termination", ev, [], None
    queries = [c.query or str(c.arguments) for c in calls][-3:]
    detail = f"{doc} never returned by {len(calls)} retrieval call(s)" + (
        f"; last: {'; '.join(queries)}" if queries else ""
    )
    return "retrieval_miss", [_ev(ctx["end"], detail)], [], None


def attribute(
    events: Sequence[TraceEvent], task: Task, *, prediction: str | None = None
) -> Attribution:
    """Attribute an episode's failure from its trace and task.

    Args:
        events: the episode's trace.
        task: the task (gold documents, hops, answer).
        prediction: an answering model's answer; without one, success is retrieval
            success (every gold document in the final ranking).

    Returns:
        An :class:`Attribution` (``failed=False`` when the episode succeeded).

    Raises:
        InputError: the trace does not start with ``episode_start``.
    """
    events = list(events)
    state = replay(events)
    ranked = [d["doc_id"] for d in final_ranking(events)]
    end = _end_event(events)
    ctx: dict[str, Any] = {
        "state": state,
        "seen_docs": {c.doc_id for c in state.cache.chunks()},
        "active_docs": {doc_of(c) for c in state.context.ids()},
        "arrival": _arrival(events),
        "calls": _retrieval_calls(events),
        "hop_of": _hop_of(task),
        "exit_reason": next(
            (e.exit_reason for e in reversed(events) if isinstance(e, EpisodeEnd)), ""
        ),
        "end": end,
    }
    unsupported = [d for d in ranked if d not in ctx["seen_docs"]]
    if prediction is not None and not any(
        answer_found(c.text, prediction) for c in state.cache.chunks()
    ):
        ev = [_ev(end, f"answer {prediction!r} occurs in no cached chunk")]
        return Attribution(True, "hallucination", None, {}, ev)
    if unsupported:
        ev = [_ev(end, f"ranked document(s) no call returned: {', '.join(unsupported)}")]
        return Attribution(True, "hallucination", None, {}, ev)
    missing = [g for g in task.gold_doc_ids if g not in set(ranked)]
    if not missing:
        if prediction is not None and not exact_match(prediction, task.answer, task.answer_aliases):
            ev = [_ev(end, f"every gold document returned; answer {prediction!r} is wrong")]
            return Attribution(True, "context_overload", None, {}, ev)
        return Attribution(False)
    found = {doc: _missing_cause(doc, task, events, ctx) for doc in missing}
    if ctx["exit_reason"] in POLICY_EXITS:
        return _policy_failure(events, ctx["exit_reason"], {d: found[d][0] for d in missing})
    first = min(
        missing,
        key=lambda d: (ctx["hop_of"].get(d, _NO_HOP), CAUSES.index(found[d][0])),
    )
    cause, evidence, chunks, turn = found[first]
    return Attribution(
        failed=True,
        cause=cause,
        hop=ctx["hop_of"].get(first),
        doc_causes={d: found[d][0] for d in missing},
        evidence=evidence,
        recoverable=True if cause == "premature_pruning" else None,
        recover_chunk_ids=chunks,
        pruned_turn=turn,
    )


def _policy_failure(
    events: Sequence[TraceEvent], exit_reason: str, doc_causes: dict[str, str]
) -> Attribution:
    """The attribution of an episode the policy ended: its end message, and how many
    tool calls ran before it (none: the model never acted)."""
    end = next(e for e in reversed(events) if isinstance(e, EpisodeEnd))
    ran = sum(1 for e in events if isinstance(e, ToolResult) and e.status != "refused")
    detail = f"{exit_reason} after {ran} tool call(s) run: {end.message[:300]}"
    return Attribution(True, "policy_error", None, doc_causes, [_ev(end, detail)])


def attribution_counts(attributions: Iterable[Attribution]) -> dict[str, int]:
    """Failures per cause over many episodes: every cause listed (zeros included), then ``ok``.

    Args:
        attributions: one :class:`Attribution` per episode (or per task).

    Returns:
        ``{cause: count}`` in the order of :data:`CAUSES`, then ``"ok"`` (no failure).
    """
    counts = Counter(a.cause if a.failed else "ok" for a in attributions)
    return {c: counts.get(c, 0) for c in (*CAUSES, "ok")}


def attribution_by_hop(attributions: Iterable[Attribution]) -> dict[str, dict[str, int]]:
    """Failures per hop of the deciding document, per cause.

    Args:
        attributions: one :class:`Attribution` per episode (or per task).

    Returns:
        ``{hop: {cause: count}}`` with hops as strings in ascending order and
        ``"?"`` (no hop order known) last; episodes that did not fail are left out.
    """
    out: dict[str, dict[str, int]] = {}
    for a in attributions:
        if not a.failed or a.cause is None:
            continue
        hop = "?" if a.hop is None else str(a.hop)
        out.setdefault(hop, {c: 0 for c in CAUSES})[a.cause] += 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == "?", kv[0])))


def exit_reason_counts(exit_reasons: Iterable[str]) -> dict[str, int]:
    """Episodes per exit reason (``answered``, ``policy_error``, ``budget``, …), most first.

    Args:
        exit_reasons: one exit reason per episode (or per task).

    Returns:
        ``{exit reason: count}``, by count descending, then by name.
    """
    counts = Counter(exit_reasons)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
