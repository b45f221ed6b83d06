"""What happens to a policy's reply: checked, then refused or applied.

*Checked* (pure, :func:`check_proposal`, :func:`check_final`): a valid proposal has tool calls *or* a final
answer; free text holding a parsable final answer counts as a final answer
(:func:`parse_final`); every string a model wrote is made valid Unicode; call ids are
made unique within the turn (``t{turn}c{i}`` for missing or repeated ones), because
the transcript links each tool message to its call by id. A final answer's ids are
then resolved against what the episode saw (:func:`resolve_final`): chunk ids map to
their document, repeated documents merge, ids never seen are dropped with a reason;
an answer citing pruned evidence (``final_cites_pruned``: recall it first) or naming
no seen document (``no_known_documents``) is refused.

Two written forms of a final answer are accepted, with prose around them:

* the report's XML-ish form, tolerant of attribute quoting (``id="x"``,
  ``id='x'``, ``id=x``, curly quotes), tag case, and missing closing tags::

      <Document id="p-1a2b"><Justification>Names the founder.</Justification></Document>

* JSON, bare or in a code fence: ``{"documents": [{"doc_id": "p-1a2b",
  "justification": "..."}]}`` (``id`` is accepted for ``doc_id``; a bare
  list of such objects too).

Then :class:`Replies` yields the events the episode records:

* *the reply's tokens*: when the reply carries a :class:`~thresher.harness.actions.Sample`
  (the model server reported its token ids), a ``sample`` event right after its
  proposal, refused or not; it changes no state;
* *refused*: the proposal and its refusal; the refusal is the next turn's notice;
* *a final answer*: the proposal, a refusal per dropped id and the ``final`` event;
  an answer naming no document after every retrieval call of the episode failed in
  the tool itself (:data:`TOOL_FAILURES`: a timeout, a store error), as with an
  index that is down, gets a ``tools_failed`` refusal instead;
* *tool calls*: the proposal, then each call's result as
  :class:`~thresher.harness.tools.CallRunner` makes it.

Every reply's reported usage, refused or not, is reconciled with the count
(:meth:`~thresher.harness.budget.Meter.reconcile`). What a reply leaves (refusals in a
row, a failed answer, the call cap reached, hard-refused turns in a row) is kept on
:class:`Replies` for the episode's exits (:data:`thresher.harness.episode.EXITS`),
which decide whether the episode ends.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import Config
from thresher.corpus.sanitize import scrub, scrub_value
from thresher.harness.actions import (
    FinalAnswer,
    MalformedReply,
    Proposal,
    RankedDocument,
    Sample,
    ToolCall,
)
from thresher.harness.budget import Meter, UsageState
from thresher.harness.render import escape_id, flagged_in_view, one_line, resolve_id
from thresher.harness.state import ActiveContext, EpisodeState, RetrievalCache
from thresher.harness.tools import RETRIEVAL_TOOLS, CallRunner
from thresher.harness.trace import (
    FinalEvent,
    ProposalEvent,
    Refusal,
    SampleEvent,
    ToolResult,
    TraceEvent,
)

__all__ = [
    "TOOL_FAILURES",
    "TOOLS_FAILED_MESSAGE",
    "Replies",
    "sample_event",
    "retrieval_all_failed",
    "ProposalCheck",
    "check_proposal",
    "check_final",
    "parse_final",
    "DroppedId",
    "resolve_final",
    "cited_pruned",
    "rank_scores",
]

#: codes of a retrieval call the tool itself failed (not the policy's arguments)
TOOL_FAILURES = frozenset({"timeout", "tool_error", "tool_failed"})
#: why an answer naming no document after every retrieval call failed ends the episode
TOOLS_FAILED_MESSAGE = (
    "every retrieval call of the episode failed (errors or timeouts) and the "
    "answer names no document; check the index and episode.tool_timeout_s"
)


class Replies:
    """Takes one episode's replies, turn by turn, and keeps what they leave for the next
    turn and for the episode's exits.

    Args:
        state: the episode state (read; the episode applies each event yielded).
        config: the episode's settings.
        meter: the episode's meter (reported usage is reconciled there).
        calls: runs a proposal's tool calls.
    """

    __slots__ = (
        "state",
        "config",
        "meter",
        "calls",
        "hop",
        "models",
        "extra",
        "refused_streak",
        "last_refusal",
        "tools_failed",
        "ran_calls",
        "hit_call_cap",
        "hard_streak",
    )

    def __init__(
        self, state: EpisodeState, config: Config, meter: Meter, calls: CallRunner
    ) -> None:
        self.state = state
        self.config = config
        self.meter = meter
        self.calls = calls
        self.hop: int | None = None  # the last hop a proposal declared (the next observation's)
        self.models: list[str] = []  # models the policy's replies came from (LLM policies)
        self.extra: list[str] = []  # notice lines for the next turn (the last refusal)
        self.refused_streak = 0  # refused proposals in a row
        self.last_refusal = ""  # the last refusal's message
        self.tools_failed = False  # an answer named no document after every retrieval failed
        self.ran_calls = False  # the last reply's tool calls ran
        self.hit_call_cap = False  # one of them was refused: the episode's calls are used
        self.hard_streak = 0  # turns in a row whose calls the hard cutoff refused

    def take(
        self, turn: int, value: Any, elapsed: float, usage: UsageState
    ) -> Generator[TraceEvent, None, None]:
        """Check the policy's reply ``value`` (that took ``elapsed`` seconds) to the turn
        counted at ``usage``, and refuse or apply it: the events to record, in order
        (each recorded before the next is made)."""
        model = getattr(value, "model", "")
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)
        check, docs, dropped = check_final(
            check_proposal(value, turn),
            self.state.cache,
            self.state.context,
            self.config.episode.final_documents,
        )
        self.ran_calls = False
        if not check.ok:
            yield from self.refuse(turn, value, check, usage, elapsed)
            return
        assert check.proposal is not None
        proposal = check.proposal
        self.refused_streak, self.extra = 0, []
        yield ProposalEvent(turn=turn, proposal=proposal.to_dict(), valid=True, elapsed_s=elapsed)
        yield from sample_event(turn, value)
        report = self.meter.reconcile(turn, usage, proposal.usage)
        if report is not None:
            yield report
        if proposal.hop is not None:
            self.hop = proposal.hop
        if proposal.final is not None:
            yield from self.answer(turn, docs, dropped)
            return
        outcome = yield from self.calls.run(turn, usage, proposal)
        self.ran_calls = True
        self.hit_call_cap = outcome == "max_calls"
        if not self.hit_call_cap:
            self.hard_streak = self.hard_streak + 1 if outcome == "hard_refused" else 0

    def refuse(
        self, turn: int, value: Any, check: ProposalCheck, usage: UsageState, elapsed: float
    ) -> Generator[TraceEvent, None, None]:
        """A refused proposal and its refusal (the next turn's notice)."""
        proposal = check.proposal
        yield ProposalEvent(
            turn=turn,
            proposal=proposal.to_dict() if proposal is not None else None,
            valid=False,
            raw=_raw_reply(value)[:2000],
            elapsed_s=elapsed,
        )
        yield from sample_event(turn, value)
        yield Refusal(turn=turn, code=check.code, message=check.message)
        # every reply's usage, refused or not (a proposal's or a malformed reply's)
        reported = value.usage if isinstance(value, Proposal | MalformedReply) else None
        report = self.meter.reconcile(turn, usage, reported)
        if report is not None:
            yield report
        self.refused_streak += 1
        self.last_refusal = check.message
        self.extra = [one_line(f"[Refused: {check.message}]")]

    def answer(
        self, turn: int, docs: list[dict[str, Any]], dropped: list[DroppedId]
    ) -> Generator[TraceEvent, None, None]:
        """A final answer resolved to ``docs``: a refusal per ``dropped`` id and the final
        event; a ``tools_failed`` refusal instead when it names no document after every
        retrieval call failed."""
        if not docs and retrieval_all_failed(self.state):
            self.tools_failed = True
            yield Refusal(turn=turn, code="tools_failed", message=TOOLS_FAILED_MESSAGE)
            return
        for d in dropped:
            yield Refusal(turn=turn, code=d.code, message=f"{d.id}: {d.message}")
        yield FinalEvent(turn=turn, documents=docs, flagged=flagged_in_view(self.state))


def sample_event(turn: int, value: Any) -> Iterator[SampleEvent]:
    """The ``sample`` event of a reply that carries its tokens (a Proposal's or a
    MalformedReply's :class:`Sample`), with the model it came from; none otherwise."""
    sample = getattr(value, "sample", None)
    if not isinstance(sample, Sample):
        return
    model = getattr(value, "model", "")
    yield SampleEvent(
        turn=turn,
        prompt_ids=list(sample.prompt_ids),
        completion_ids=list(sample.completion_ids),
        logprobs=None if sample.logprobs is None else list(sample.logprobs),
        model=model if isinstance(model, str) else "",
    )


def retrieval_all_failed(state: EpisodeState) -> bool:
    """Whether the episode ran retrieval calls and every one failed in the tool itself
    (a timeout, a store error), as with an index that is down."""
    ran = [
        e.code if e.status == "error" else e.status
        for e in state.trace
        if isinstance(e, ToolResult) and e.tool in RETRIEVAL_TOOLS and e.status != "refused"
    ]
    return bool(ran) and all(code in TOOL_FAILURES for code in ran)


def _raw_reply(value: Any) -> str:
    """A refused reply as the policy received it (a MalformedReply's ``raw``), else its repr."""
    if isinstance(value, MalformedReply) and value.raw:
        return value.raw
    return repr(value)


# -- checking a reply (pure) -------------------------------------------------------------


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


# -- final answers: parsed from text, resolved against the episode (pure) ----------------

_DOC_OPEN = re.compile(r"<\s*document\b([^>]*)>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"<\s*/\s*document\s*>", re.IGNORECASE)
_ID_ATTR = re.compile(
    r"""\b(?:doc_?)?id\s*=\s*(?:"([^"]*)"|'([^']*)'|“([^”]*)”|‘([^’]*)’|([^\s"'>/]+))""",
    re.IGNORECASE,
)
_JUST_OPEN = re.compile(r"<\s*justification\s*>", re.IGNORECASE)
_JUST_CLOSE = re.compile(r"<\s*/\s*justification\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_WS = re.compile(r"\s+")
_ID_KEYS = ("doc_id", "id", "document_id", "document", "chunk_id")
_WHY_KEYS = ("justification", "reason", "why", "explanation")


def _clean(text: str) -> str:
    return _WS.sub(" ", _TAG.sub(" ", text)).strip()


def _parse_xml(text: str) -> list[RankedDocument]:
    opens = list(_DOC_OPEN.finditer(text))
    docs: list[RankedDocument] = []
    for i, m in enumerate(opens):
        attr = _ID_ATTR.search(m.group(1))
        if attr is None:
            continue
        doc_id = next(g for g in attr.groups() if g is not None).strip()
        if not doc_id:
            continue
        end = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        body = text[m.end() : end]
        close = _DOC_CLOSE.search(body)
        if close is not None:
            body = body[: close.start()]
        just = _JUST_OPEN.search(body)
        if just is not None:
            body = body[just.end() :]
            jclose = _JUST_CLOSE.search(body)
            if jclose is not None:
                body = body[: jclose.start()]
        docs.append(RankedDocument(doc_id, _clean(body)))
    return docs


def _json_candidates(text: str) -> list[Any]:
    found: list[Any] = []
    pieces = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for piece in pieces:
        piece = piece.strip()
        try:
            found.append(json.loads(piece))
            continue
        except ValueError:
            pass
        for start in (i for i, ch in enumerate(piece) if ch in "{["):
            try:
                value, _ = decoder.raw_decode(piece, start)
            except ValueError:
                continue
            found.append(value)
            break
    return found


def _from_json_value(value: Any) -> list[RankedDocument] | None:
    items = value.get("documents") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return None
    docs: list[RankedDocument] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            docs.append(RankedDocument(item.strip()))
            continue
        if not isinstance(item, dict):
            continue
        doc_id = next((item[k] for k in _ID_KEYS if isinstance(item.get(k), str | int)), None)
        if doc_id is None or not str(doc_id).strip():
            continue
        why = next((item[k] for k in _WHY_KEYS if isinstance(item.get(k), str)), "")
        chunks = item.get("chunk_ids")
        chunk_ids = tuple(str(c) for c in chunks) if isinstance(chunks, list) else ()
        docs.append(RankedDocument(str(doc_id).strip(), _clean(why), chunk_ids))
    return docs


def parse_final(text: str) -> FinalAnswer | None:
    """Read a final answer from free text.

    Args:
        text: a model's reply, possibly with prose around the answer.

    Returns:
        The documents in the order written, or None when ``text`` holds no
        recognizable final answer (an explicit empty JSON list is an empty answer).
    """
    if not text or not text.strip():
        return None
    docs = _parse_xml(text)
    if docs:
        return FinalAnswer(tuple(docs))
    for value in _json_candidates(text):
        parsed = _from_json_value(value)
        if parsed is not None:
            return FinalAnswer(tuple(parsed))
    return None


@dataclass(frozen=True, slots=True)
class DroppedId:
    """An id a final answer named that could not be used, with a reason code."""

    id: str
    code: str
    message: str


def _pruned(entry: RankedDocument, cache: RetrievalCache, context: ActiveContext) -> list[str]:
    """The ids an answer entry cites that are out of view (pruned): chunk ids, or the doc id
    when none of its chunks is in the active context."""
    named = cache.get(entry.doc_id)
    out = [c for c in entry.chunk_ids if c in cache and c not in context]
    if named is not None:
        return ([named.chunk_id] if named.chunk_id not in context else []) + out
    docs = [c for c in cache.chunks() if c.doc_id == entry.doc_id]
    if docs and not any(c.chunk_id in context for c in docs):
        return [entry.doc_id, *out]
    return out


def cited_pruned(final: FinalAnswer, cache: RetrievalCache, context: ActiveContext) -> list[str]:
    """Every id a final answer cites whose evidence was pruned (in the cache, out of view).

    The answer handed on must come from evidence in view: the harness refuses a
    final answer that cites any of these, and tells the policy to recall them
    (``recall_chunks``) or leave them out.
    """
    out: list[str] = []
    for entry in final.documents:
        out += [i for i in _pruned(entry, cache, context) if i not in out]
    return out


def resolve_final(
    final: FinalAnswer,
    cache: RetrievalCache,
    context: ActiveContext,
    max_documents: int,
) -> tuple[list[dict[str, Any]], list[DroppedId]]:
    """Map a final answer onto documents the episode has seen.

    Args:
        final: the parsed answer (ids may be document or chunk ids).
        cache: the episode's retrieval cache (what counts as seen).
        context: the active context (preferred supporting chunks of a named document).
        max_documents: keep at most this many documents.

    Returns:
        ``(documents, dropped)``: documents as dicts ``{doc_id, title, chunk_ids,
        justification, score, rank}`` in rank order (1-based), and every id left out
        with its reason (``unknown_id``, ``unknown_chunk``, ``too_many_documents``).
        Scores never rise with rank (see :func:`rank_scores`).
    """
    by_doc: dict[str, list[str]] = {}
    for chunk in cache.chunks():
        by_doc.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
    order: list[str] = []
    merged: dict[str, dict[str, Any]] = {}
    dropped: list[DroppedId] = []
    for entry in final.documents:
        named = cache.get(entry.doc_id)
        if named is not None:
            doc_id, chunk_ids = named.doc_id, [named.chunk_id]
        elif entry.doc_id in by_doc:
            doc_id, chunk_ids = entry.doc_id, []
        else:
            dropped.append(
                DroppedId(entry.doc_id, "unknown_id", f"'{entry.doc_id}' was never retrieved")
            )
            continue
        for cid in entry.chunk_ids:
            cited = cache.get(cid)
            if cited is None or cited.doc_id != doc_id:
                dropped.append(
                    DroppedId(cid, "unknown_chunk", f"'{cid}' is not a seen chunk of {doc_id}")
                )
            elif cid not in chunk_ids:
                chunk_ids.append(cid)
        if doc_id not in merged:
            if len(order) >= max_documents:
                dropped.append(
                    DroppedId(
                        entry.doc_id,
                        "too_many_documents",
                        f"only {max_documents} documents are kept",
                    )
                )
                continue
            order.append(doc_id)
            merged[doc_id] = {
                "chunk_ids": [],
                "justification": entry.justification,
                "score": entry.score,
            }
        slot = merged[doc_id]
        slot["chunk_ids"] += [c for c in chunk_ids if c not in slot["chunk_ids"]]
        if not slot["justification"]:
            slot["justification"] = entry.justification
    documents: list[dict[str, Any]] = []
    scores = rank_scores([merged[d]["score"] for d in order])
    for rank, doc_id in enumerate(order, 1):
        slot = merged[doc_id]
        chunk_ids = slot["chunk_ids"] or (
            [c for c in by_doc[doc_id] if c in context] or list(by_doc[doc_id])
        )
        first = cache.get(chunk_ids[0])
        documents.append(
            {
                "doc_id": doc_id,
                "title": first.title if first is not None else "",
                "chunk_ids": chunk_ids,
                "justification": slot["justification"],
                "score": scores[rank - 1],
                "rank": rank,
            }
        )
    return documents, dropped


def rank_scores(given: list[float | None]) -> list[float]:
    """Scores for documents in answer order (best first) that never rise with rank.

    The order is the answer's; a score only describes it. When the policy scored
    every document (the local policy: its ranker's probability that a document is
    evidence), the scores are the isotonic regression of those probabilities onto
    the answer order (non-increasing; :func:`isotonic_non_increasing`): the
    closest scores, in least squares, that agree with the order; two neighbours
    the policy ordered against their probabilities share their mean. Otherwise
    each document gets ``1 / rank``. Either way scores compare documents within one
    result, not across results, and a score cutoff never drops a document while
    keeping one ranked below it.

    Args:
        given: the policy's score per document, best first (None: none given).

    Returns:
        One score per document, rounded to 4 places, non-increasing.
    """
    if not given:
        return []
    if any(s is None or not math.isfinite(s) for s in given):
        return [round(1.0 / rank, 4) for rank in range(1, len(given) + 1)]
    fitted = isotonic_non_increasing([float(s) for s in given if s is not None])
    out = [round(s, 4) for s in fitted]
    for i in range(1, len(out)):  # rounding may not undo the order
        out[i] = min(out[i], out[i - 1])
    return out


def isotonic_non_increasing(values: list[float]) -> list[float]:
    """The non-increasing sequence closest to ``values`` in least squares (unit weights).

    Pool adjacent violators: walk the values, merging each new one into the block
    before it while that block's mean is below it; each block is then its mean.
    What ``scipy.optimize.isotonic_regression(values, increasing=False).x`` gives,
    written here because importing ``scipy.optimize`` costs ~0.45 CPU s in every
    process that ranks an answer (a CLI search), for a few dozen values.
    """
    sums: list[float] = []
    counts: list[int] = []
    for value in values:
        total, count = value, 1
        while sums and sums[-1] / counts[-1] < total / count:
            total += sums.pop()
            count += counts.pop()
        sums.append(total)
        counts.append(count)
    out: list[float] = []
    for total, count in zip(sums, counts, strict=True):
        out.extend([total / count] * count)
    return out
