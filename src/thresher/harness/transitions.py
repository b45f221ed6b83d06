"""Pure transitions: turn a tool call (and its fetched hits) into a ToolResult event.

Nothing here does I/O or mutates state; the episode applies the returned
event with :meth:`EpisodeState.apply`. Rules, per the Context-1 report:

* search/grep: chunks already in the retrieval cache are excluded (the store
  did it; a chunk an earlier call of the same turn returned is dropped here:
  the first call wins); a chunk whose text equals an already shown chunk's
  enters the cache (so it stays excluded) but is not shown;
* the shown list is cut to fit the call's room: a chunk that does not fit is
  left out whole; if none fits, the call is an error saying the budget is too small;
* prune: unknown, not-in-context and already-pruned ids are reported back;
* recall: from the cache only, budget-checked chunk by chunk.

A document id is corpus data and must not forge a line, a tag or a control
sequence in the transcript: every id a header or footer quotes is escaped
(:func:`~thresher.harness.render.escape_id`), every composed line is kept to
one line (:func:`~thresher.harness.render.one_line`), and error and refusal
lines, which quote a store's message or the policy's own words, are escaped
whole. An id the policy sends back in its escaped form is mapped to the real
one (:func:`~thresher.harness.render.resolve_id`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thresher.corpus.document import Chunk
from thresher.harness.actions import ToolCall
from thresher.harness.render import (
    MESSAGE_OVERHEAD,
    chunk_block,
    escape_id,
    flagged_in_view,
    one_line,
    resolve_id,
    tool_content,
)
from thresher.harness.state import EpisodeState, LineageRecord
from thresher.harness.toolspec import CallContext, Fetched, ResultView, ToolSpec
from thresher.harness.trace import ToolResult
from thresher.index.store import Hit

__all__ = [
    "CallContext",
    "refused_result",
    "retrieval_result",
    "prune_result",
    "recall_result",
    "apply_prune",
    "apply_recall",
    "search_header",
    "grep_header",
    "read_header",
]


def _base(call: ToolCall, turn: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"turn": turn, "call_id": call.call_id, "tool": call.name, "arguments": arguments}


def refused_result(call: ToolCall, turn: int, code: str, message: str) -> ToolResult:
    """A call the harness did not run (allow-list, caps, hard cutoff, bad arguments)."""
    arguments = dict(call.arguments) if isinstance(call.arguments, dict) else {}
    text = message if message.startswith("Error:") else f"Error: refused, {message}"
    return ToolResult(
        **_base(call, turn, arguments), status="refused", code=code, header=escape_id(text)
    )


def _error(call: ToolCall, ctx: CallContext, code: str, message: str, elapsed: float) -> ToolResult:
    return ToolResult(
        **_base(call, ctx.turn, dict(call.arguments)),
        status="error",
        code=code,
        header=escape_id(f"Error: {message}"),
        elapsed_s=elapsed,
    )


_CHUNK_FIELDS = tuple(Chunk.__dataclass_fields__)


def _chunk_dict(chunk: Chunk) -> dict[str, Any]:
    """``chunk.to_dict()`` without ``asdict``'s deep copy (metadata copied one level)."""
    data = {name: getattr(chunk, name) for name in _CHUNK_FIELDS}
    data["metadata"] = dict(chunk.metadata)
    return data


def _lineage(
    hit: Hit, call: ToolCall, ctx: CallContext, query: str, rank: int, dup: str | None
) -> dict[str, Any]:
    return LineageRecord(
        chunk_id=hit.chunk.chunk_id,
        doc_id=hit.chunk.doc_id,
        turn=ctx.turn,
        hop=ctx.hop,
        tool=call.name,
        call_id=call.call_id,
        query=query,
        rank=rank,
        score=float(hit.score),
        parents=ctx.parents,
        duplicate_of=dup,
        bm25_rank=hit.bm25_rank,
        dense_rank=hit.dense_rank,
        bm25_score=_float(hit.bm25_score),
        dense_score=_float(hit.dense_score),
    ).to_dict()


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _fit(
    ctx: CallContext,
    cap: int,
    blocks: list[str],
    header_of: Callable[[int], str],
    footer_of: Callable[[list[int], int], str],
) -> tuple[list[int], str, int]:
    """Which blocks fit in ``cap`` tokens: ``(kept indices, content, tokens)``.

    Blocks are tried in order; one that does not fit is skipped whole. The
    estimate (sum of block counts, the longest footer) is then checked on the
    exact message text, dropping the last kept block while it is over ``cap``;
    if nothing is left, each block alone is tried exactly, so a block that fits
    on its own is never refused.
    """

    def exact(keep: list[int]) -> tuple[str, int]:
        kept = [blocks[i] for i in keep]
        content = tool_content(header_of(len(kept)), kept, footer_of(keep, len(blocks)))
        return content, MESSAGE_OVERHEAD + ctx.counter.text(content)

    budget = cap - MESSAGE_OVERHEAD - ctx.counter.text(header_of(0) + footer_of([], len(blocks)))
    keep: list[int] = []
    used = 0
    for i, block in enumerate(blocks):
        n = ctx.counter.text(block + "\n")  # as it stands in the message: before a line
        if used + n <= budget:
            keep.append(i)
            used += n
    while keep:
        content, tokens = exact(keep)
        if tokens <= cap:
            return keep, content, tokens
        keep.pop()
    for i in range(len(blocks)):
        content, tokens = exact([i])
        if tokens <= cap:
            return [i], content, tokens
    content, tokens = exact([])
    return [], content, tokens


@dataclass(slots=True)
class _Selection:
    """A retrieval call's hits sorted into shown candidates, same-text duplicates and repeats."""

    fresh: list[tuple[int, Hit]]
    dups: list[tuple[int, Hit, str]]
    repeats: int


def _select(view: ResultView, fetched: Fetched, state: EpisodeState, limit: int) -> _Selection:
    """Which hits may be shown: new chunks (or pruned ones a read brings back), first of a text."""
    is_read = view.whole_document
    out = _Selection([], [], 0)
    hashes: dict[str, str] = {}
    for rank, hit in enumerate(fetched.hits, 1):
        if len(out.fresh) >= limit:
            break
        chunk = hit.chunk
        cached = chunk.chunk_id in state.cache
        if is_read and cached and chunk.chunk_id in state.pruned:
            out.fresh.append((rank, hit))  # reactivated
            continue
        if cached or (is_read and chunk.chunk_id in state.context):
            out.repeats += 1
            continue
        first = state.cache.first_with_hash(chunk.content_hash) or hashes.get(chunk.content_hash)
        if first is not None and first != chunk.chunk_id:
            out.dups.append((rank, hit, first))
            continue
        hashes.setdefault(chunk.content_hash, chunk.chunk_id)
        out.fresh.append((rank, hit))
    return out


def read_header(doc_id: str, fetched: Fetched, n: int) -> str:
    """``read_document``'s first line for ``n`` shown chunks."""
    return one_line(
        f"read_document {escape_id(doc_id)}: {n} of {fetched.total} chunk(s), most relevant first."
    )


def grep_header(pattern: str, fetched: Fetched, n: int) -> str:
    """``grep_corpus``'s first line for ``n`` shown chunks."""
    if fetched.capped:
        return (
            f"grep_corpus: {n} of at least {fetched.total} matching chunk(s) "
            "(counting stopped there)."
        )
    if fetched.total > n:
        return f"grep_corpus: {n} of {fetched.total} matching chunk(s)."
    return f"grep_corpus: {n} chunk(s) matching."


def search_header(query: str, fetched: Fetched, n: int) -> str:
    """``search_corpus``'s first line for ``n`` shown chunks."""
    return f"search_corpus: {n} new chunk(s)."


def _footer(view: ResultView, sel: _Selection, shown: int, candidates: int) -> str:
    """The tool message's closing notes: what was left out and why."""
    is_read = view.whole_document
    notes = []
    if candidates > shown:
        notes.append(f"{candidates - shown} more result(s) left out to fit the token budget.")
    if sel.dups:
        same = ", ".join(escape_id(first) for first in sorted({d[2] for d in sel.dups}))
        notes.append(f"{len(sel.dups)} result(s) not shown: same text as {same}.")
    if sel.repeats:
        where = "already in context" if is_read else "already shown this turn"
        notes.append(f"{sel.repeats} result(s) {where}.")
    if candidates == 0 and not is_read:
        notes.append("No new chunks (chunks seen this episode are excluded).")
    return one_line(" ".join(notes))


def retrieval_result(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """The event of a search_corpus / grep_corpus / read_document call (``spec``: its tool)."""
    if fetched.error_code:
        return _error(call, ctx, fetched.error_code, fetched.error, fetched.elapsed_s)
    args = dict(call.arguments)
    query = str(args.get(spec.argument.name, ""))
    view = spec.view or ResultView(search_header)
    limit = ctx.search_results if view.search_results else len(fetched.hits)
    sel = _select(view, fetched, state, limit)
    cap = ctx.room if view.whole_document else min(ctx.per_call, ctx.room)

    def header_of(n: int) -> str:
        return view.header(query, fetched, n)

    def footer_of(keep: list[int], m: int) -> str:
        return _footer(view, sel, len(keep), m)

    blocks = [chunk_block(hit.chunk) for _, hit in sel.fresh]
    keep, _content, tokens = _fit(ctx, cap, blocks, header_of, footer_of)
    if sel.fresh and not keep:
        return _no_room(call, ctx, cap, blocks, header_of(1), fetched.elapsed_s)
    shown = [sel.fresh[i] for i in keep]
    new_chunks = [_chunk_dict(h.chunk) for _, h in shown if h.chunk.chunk_id not in state.cache]
    new_chunks += [_chunk_dict(h.chunk) for _, h, _ in sel.dups]
    lineage = [_lineage(h, call, ctx, query, r, None) for r, h in shown]
    lineage += [_lineage(h, call, ctx, query, r, first) for r, h, first in sel.dups]
    return ToolResult(
        **_base(call, ctx.turn, args),
        header=header_of(len(keep)),
        footer=footer_of(keep, len(sel.fresh)),
        shown=[h.chunk.chunk_id for _, h in shown],
        new_chunks=new_chunks,
        lineage=lineage,
        duplicates=[[h.chunk.chunk_id, first] for _, h, first in sel.dups],
        reactivated=[h.chunk.chunk_id for _, h in shown if h.chunk.chunk_id in state.cache],
        query=query if view.sets_query else "",
        tokens=tokens,
        elapsed_s=fetched.elapsed_s,
    )


def _no_room(
    call: ToolCall, ctx: CallContext, cap: int, blocks: list[str], header: str, elapsed: float
) -> ToolResult:
    """The error of a call none of whose results fits in the room left."""
    smallest = min(
        MESSAGE_OVERHEAD + ctx.counter.text(tool_content(header, [b], "")) for b in blocks
    )
    return _error(
        call,
        ctx,
        "budget_exhausted",
        f"not enough token budget for even one result (the smallest needs about "
        f"{smallest} tokens, {max(cap, 0)} are available). Prune chunks or give your "
        "final answer.",
        elapsed,
    )


def _resolve_ids(raw: list[str], state: EpisodeState) -> list[str]:
    """The policy's ids, each mapped to the cached id it names (escaped copies too), once each."""
    return list(dict.fromkeys(resolve_id(cid, state.cache.__contains__) for cid in raw))


def _reject(chunk_id: str, code: str, message: str) -> dict[str, str]:
    return {"id": chunk_id, "code": code, "message": message}


def _rejected_text(rejected: list[dict[str, str]], verb: str) -> str:
    """``Not pruned: a, b (already pruned); c (unknown id: never retrieved).``"""
    if not rejected:
        return ""
    groups: dict[str, list[str]] = {}
    for r in rejected:
        groups.setdefault(r["message"], []).append(r["id"])
    parts = [
        f"{', '.join(escape_id(i) for i in ids)} ({message})" for message, ids in groups.items()
    ]
    return one_line(f"Not {verb}: " + "; ".join(parts) + ".")


def prune_result(call: ToolCall, state: EpisodeState, turn: int) -> ToolResult:
    """Prune: remove valid ids from the context; report every other id with a reason.

    With ``keep`` instead of ``chunk_ids``: every chunk in view but the kept ones is
    pruned; a kept id that is not in view is reported (``Not kept: …``).
    """
    if "keep" in call.arguments:
        return _prune_all_but(call, state, turn)
    ids = _resolve_ids(call.arguments["chunk_ids"], state)
    pruned: list[str] = []
    rejected: list[dict[str, str]] = []
    for cid in ids:
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid in state.pruned:
            rejected.append(_reject(cid, "already_pruned", "already pruned"))
        elif cid not in state.context:
            rejected.append(_reject(cid, "not_in_context", "not in context"))
        else:
            pruned.append(cid)
    # the ids are the call's own (its arguments are in the transcript): the header counts
    # them, the footer names each id that was not pruned and why
    header = f"Pruned {len(pruned)} chunk(s)."
    return ToolResult(
        **_base(call, turn, dict(call.arguments)),
        status="ok" if pruned else "error",
        code="" if pruned else rejected[0]["code"],
        header=header,
        footer=_rejected_text(rejected, "pruned"),
        pruned=pruned,
        rejected=rejected,
        flagged=flagged_in_view(state),
    )


def _prune_all_but(call: ToolCall, state: EpisodeState, turn: int) -> ToolResult:
    keep = _resolve_ids(call.arguments["keep"], state)
    rejected: list[dict[str, str]] = []
    for cid in keep:
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid not in state.context:
            rejected.append(_reject(cid, "not_in_context", "not in context"))
    kept = set(keep)
    pruned = [cid for cid in state.context.ids() if cid not in kept]
    return ToolResult(
        **_base(call, turn, dict(call.arguments)),
        status="ok",
        header=f"Pruned {len(pruned)} chunk(s); kept {len(kept) - len(rejected)}.",
        footer=_rejected_text(rejected, "kept"),
        pruned=pruned,
        rejected=rejected,
        flagged=flagged_in_view(state),
    )


def apply_prune(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """:func:`prune_result` as a :class:`~thresher.harness.toolspec.Transition`."""
    return prune_result(call, state, ctx.turn)


def apply_recall(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """:func:`recall_result` as a :class:`~thresher.harness.toolspec.Transition`."""
    return recall_result(call, state, ctx)


def _recall_header(n: int) -> str:
    return f"Recalled {n} chunk(s)."


def recall_result(call: ToolCall, state: EpisodeState, ctx: CallContext) -> ToolResult:
    """Recall: bring pruned chunks back from the cache, as many as the room allows."""
    ids = _resolve_ids(call.arguments["chunk_ids"], state)
    candidates: list[str] = []
    rejected: list[dict[str, str]] = []
    for cid in ids:
        origin = state.lineage.origin(cid)
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid in state.context:
            rejected.append(_reject(cid, "already_active", "already in context"))
        elif origin is not None and origin.duplicate_of is not None:
            msg = f"same text as {escape_id(origin.duplicate_of)}; recall that id"
            rejected.append(_reject(cid, "duplicate_content", msg))
        else:
            candidates.append(cid)
    chunks = [state.cache.get(cid) for cid in candidates]
    blocks = [chunk_block(c) for c in chunks if c is not None]
    no_room = "not enough token budget; prune first"

    def footer_of(keep: list[int], m: int) -> str:
        left = [
            _reject(c, "no_room", no_room) for i, c in enumerate(candidates[:m]) if i not in keep
        ]
        return _rejected_text(rejected + left, "recalled")

    keep, _content, tokens = _fit(ctx, ctx.room, blocks, _recall_header, footer_of)
    recalled = [candidates[i] for i in keep]
    header = _recall_header(len(recalled))
    footer = footer_of(keep, len(candidates))
    rejected += [_reject(c, "no_room", no_room) for c in candidates if c not in recalled]
    return ToolResult(
        **_base(call, ctx.turn, dict(call.arguments)),
        status="ok" if recalled else "error",
        code="" if recalled else rejected[0]["code"],
        header=header,
        footer=footer,
        shown=recalled,
        recalled=recalled,
        rejected=rejected,
        flagged=flagged_in_view(state),
        tokens=tokens,
    )
