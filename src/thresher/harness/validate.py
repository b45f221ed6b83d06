"""Check what a policy returned before anything is applied (pure).

A valid proposal has tool calls *or* a final answer. Free text holding a
parsable final answer counts as a final answer. Call ids are made unique
within the turn (``t{turn}c{i}`` for missing or repeated ones), because the
transcript links each tool message to its call by id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import EpisodeConfig
from thresher.corpus.sanitize import scrub, scrub_value
from thresher.harness.actions import (
    FinalAnswer,
    MalformedReply,
    Proposal,
    RankedDocument,
    ToolCall,
)
from thresher.harness.budget import HARD_REFUSAL, UsageState
from thresher.harness.final import DroppedId, cited_pruned, parse_final, resolve_final
from thresher.harness.render import escape_id, resolve_id
from thresher.harness.state import ActiveContext, RetrievalCache
from thresher.harness.tools import RETRIEVAL_TOOLS, TOOL_NAMES, check_arguments

__all__ = ["ProposalCheck", "check_proposal", "check_final", "PlannedCall", "plan_calls"]


@dataclass(frozen=True, slots=True)
class ProposalCheck:
    """Outcome of :func:`check_proposal`: a normalized proposal, or a refusal code and message."""

    proposal: Proposal | None
    code: str = ""
    message: str = ""

    @property
    def ok(self) -> bool:
        return not self.code


def _refuse(code: str, message: str, proposal: Proposal | None = None) -> ProposalCheck:
    return ProposalCheck(proposal and _scrubbed(proposal), scrub(code), scrub(message))


def _scrubbed(proposal: Proposal) -> Proposal:
    """``proposal`` with every string a model wrote made valid Unicode (lone surrogates
    replaced by U+FFFD), so nothing recorded or shown can fail to encode."""
    calls = tuple(
        replace(c, name=scrub(c.name), call_id=scrub(c.call_id), arguments=scrub_value(c.arguments))
        if isinstance(c, ToolCall) and isinstance(c.name, str) and isinstance(c.call_id, str)
        else c
        for c in proposal.tool_calls
    )
    final = proposal.final
    if isinstance(final, FinalAnswer) and all(
        isinstance(d, RankedDocument) for d in final.documents
    ):
        docs = tuple(
            replace(
                d,
                doc_id=scrub(d.doc_id) if isinstance(d.doc_id, str) else d.doc_id,
                justification=scrub(d.justification)
                if isinstance(d.justification, str)
                else d.justification,
                chunk_ids=tuple(scrub(c) if isinstance(c, str) else c for c in d.chunk_ids)
                if isinstance(d.chunk_ids, list | tuple)
                else d.chunk_ids,
            )
            for d in final.documents
        )
        final = replace(final, documents=docs)
    text = scrub(proposal.text) if isinstance(proposal.text, str) else proposal.text
    return replace(proposal, tool_calls=calls, final=final, text=text)


def check_proposal(value: Any, turn: int) -> ProposalCheck:
    """Validate and normalize a policy's return value.

    Args:
        value: whatever ``policy.propose`` returned.
        turn: the current turn (for generated call ids).

    Returns:
        A :class:`ProposalCheck`; codes: ``not_a_proposal``, ``malformed``,
        ``both_calls_and_final``, ``empty_proposal``, or a :class:`MalformedReply`'s own.
    """
    if isinstance(value, MalformedReply):
        return _refuse(value.code or "malformed_reply", value.message or "unreadable reply")
    if not isinstance(value, Proposal):
        return _refuse("not_a_proposal", f"expected a Proposal, got {type(value).__name__}")
    calls = value.tool_calls
    if not isinstance(calls, list | tuple) or not all(isinstance(c, ToolCall) for c in calls):
        return _refuse("malformed", "tool_calls must be a list of ToolCall")
    if not all(isinstance(c.name, str) and isinstance(c.call_id, str) for c in calls):
        return _refuse("malformed", "every tool call needs a string name and call_id")
    if not all(isinstance(c.arguments, dict) for c in calls):
        return _refuse("malformed", "tool call arguments must be JSON objects (dicts)")
    final = value.final
    if final is not None and (
        not isinstance(final, FinalAnswer)
        or not isinstance(final.documents, list | tuple)
        or not all(
            isinstance(d, RankedDocument) and isinstance(d.doc_id, str) for d in final.documents
        )
    ):
        return _refuse("malformed", "final must be a FinalAnswer of RankedDocument entries")
    if value.hop is not None and (not isinstance(value.hop, int) or isinstance(value.hop, bool)):
        return _refuse("malformed", "hop must be an int or None")
    if not isinstance(value.text, str):
        return _refuse("malformed", "text must be a string")
    if calls and final is not None:
        return _refuse(
            "both_calls_and_final",
            "a reply has tool calls or a final answer, not both; send them in separate turns",
            value,
        )
    value = _scrubbed(value)
    calls, final = value.tool_calls, value.final
    if not calls and final is None:
        final = parse_final(value.text)
        if final is None:
            return _refuse(
                "empty_proposal",
                "the reply has neither tool calls nor a final answer; call a tool or answer "
                'with <Document id="..."><Justification>...</Justification></Document>',
                value,
            )
    ids: set[str] = set()
    normalized: list[ToolCall] = []
    call_parents: dict[str, tuple[str, ...]] = {}
    given = value.call_parents if isinstance(value.call_parents, Mapping) else {}
    for i, c in enumerate(calls):
        call_id = c.call_id if c.call_id and c.call_id not in ids else f"t{turn}c{i}"
        while call_id in ids:
            call_id += "_"
        ids.add(call_id)
        normalized.append(replace(c, call_id=call_id))
        if c.call_id in given:
            call_parents[call_id] = tuple(str(p) for p in given[c.call_id] or ())
    parents = tuple(str(p) for p in (value.parents or ()))
    usage = dict(value.usage) if isinstance(value.usage, dict) else None
    return ProposalCheck(
        replace(
            value,
            tool_calls=tuple(normalized),
            final=final,
            parents=parents,
            call_parents=call_parents,
            usage=usage,
        )
    )


def check_final(
    check: ProposalCheck, cache: RetrievalCache, context: ActiveContext, max_documents: int
) -> tuple[ProposalCheck, list[dict[str, Any]], list[DroppedId]]:
    """Resolve a checked proposal's final answer against the episode.

    Returns ``(check, documents, dropped)``; the check becomes a refusal when the
    answer cites pruned evidence (``final_cites_pruned``: recall it first) or names
    documents but none was seen (``no_known_documents``).
    A proposal without a final answer passes through with no documents.
    """
    proposal = check.proposal
    if not check.ok or proposal is None or proposal.final is None:
        return check, [], []
    proposal = replace(proposal, final=_resolve_final_ids(proposal.final, cache))
    check = replace(check, proposal=proposal)
    assert proposal.final is not None
    pruned = cited_pruned(proposal.final, cache, context)
    if pruned:
        shown = ", ".join(escape_id(p) for p in pruned[:8])
        shown += f" and {len(pruned) - 8} more" if len(pruned) > 8 else ""
        message = (
            f"the final answer cites evidence that was pruned: {shown}. Call recall_chunks "
            "with those chunk ids first, or leave them out of the answer"
        )
        return replace(check, code="final_cites_pruned", message=message), [], []
    docs, dropped = resolve_final(proposal.final, cache, context, max_documents)
    if proposal.final.documents and not docs:
        named = ", ".join(escape_id(d.doc_id) for d in proposal.final.documents[:5])
        message = f"the final answer names no document retrieved in this episode: {named}"
        return replace(check, code="no_known_documents", message=message), [], dropped
    return check, docs, dropped


def _resolve_final_ids(final: FinalAnswer, cache: RetrievalCache) -> FinalAnswer:
    """The answer with each id the policy copied in escaped form mapped to the real id."""
    docs = {c.doc_id for c in cache.chunks()}

    def known(i: str) -> bool:
        return i in cache or i in docs

    return replace(
        final,
        documents=tuple(
            replace(
                d,
                doc_id=resolve_id(d.doc_id, known),
                chunk_ids=tuple(resolve_id(c, known) for c in d.chunk_ids),
            )
            for d in final.documents
        ),
    )


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A tool call with normalized arguments, or the reason it is refused (``code``)."""

    call: ToolCall
    code: str = ""
    message: str = ""


def plan_calls(
    calls: tuple[ToolCall, ...], calls_made: int, caps: EpisodeConfig, usage: UsageState
) -> tuple[list[PlannedCall], bool]:
    """Decide which calls of a turn run; the rest are refused with a reason.

    Checks, in order: the tool allow-list, calls per turn, calls per episode,
    the hard cutoff (retrieval tools only), the arguments.

    Args:
        calls: the turn's calls (ids already normalized).
        calls_made: calls executed earlier in the episode.
        caps: the episode caps.
        usage: the usage the policy saw this turn (hard flag).

    Returns:
        ``(plan, hit_cap)``: one PlannedCall per call in order; ``hit_cap`` when a
        call was refused because the episode's call cap is used up.
    """
    plan: list[PlannedCall] = []
    accepted = 0
    hit_cap = False
    for i, call in enumerate(calls):
        if call.name not in TOOL_NAMES:
            why = f"unknown tool '{call.name}'; use one of " + ", ".join(TOOL_NAMES)
            plan.append(PlannedCall(call, "unknown_tool", why))
        elif i >= caps.max_calls_per_turn:
            why = f"at most {caps.max_calls_per_turn} calls per turn"
            plan.append(PlannedCall(call, "max_calls_per_turn", why))
        elif calls_made + accepted >= caps.max_calls:
            hit_cap = True
            why = f"the episode's {caps.max_calls} tool calls are used"
            plan.append(PlannedCall(call, "max_calls", why))
        elif usage.hard and call.name in RETRIEVAL_TOOLS:
            why = HARD_REFUSAL.format(used=usage.used, budget=usage.budget)
            plan.append(PlannedCall(call, "hard_cutoff", why))
        else:
            args, why = check_arguments(call.name, call.arguments)
            if why:
                plan.append(
                    PlannedCall(call, "bad_arguments", f"bad arguments for {call.name}: {why}")
                )
            else:
                accepted += 1
                plan.append(PlannedCall(replace(call, arguments=args)))
    return plan, hit_cap
