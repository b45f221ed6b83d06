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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thresher.corpus.document import Chunk
from thresher.harness.actions import ToolCall
from thresher.harness.render import MESSAGE_OVERHEAD, TranscriptCounter, chunk_block, tool_content
from thresher.harness.state import EpisodeState, LineageRecord
from thresher.harness.tools import Fetched
from thresher.harness.trace import ToolResult
from thresher.index.store import Hit

__all__ = ["CallContext", "refused_result", "retrieval_result", "prune_result", "recall_result"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a transition needs besides the state.

    room: the most tokens this tool message may take (content plus overhead).
    per_call: cap for search/grep messages. search_results: how many search hits to keep.
    """

    turn: int
    hop: int | None
    parents: tuple[str, ...]
    room: int
    per_call: int
    search_results: int
    counter: TranscriptCounter


def _base(call: ToolCall, turn: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"turn": turn, "call_id": call.call_id, "tool": call.name, "arguments": arguments}


def refused_result(call: ToolCall, turn: int, code: str, message: str) -> ToolResult:
    """A call the harness did not run (allow-list, caps, hard cutoff, bad arguments)."""
    arguments = dict(call.arguments) if isinstance(call.arguments, dict) else {}
    text = message if message.startswith("Error:") else f"Error: refused, {message}"
    return ToolResult(**_base(call, turn, arguments), status="refused", code=code, header=text)


def _error(call: ToolCall, ctx: CallContext, code: str, message: str, elapsed: float) -> ToolResult:
    return ToolResult(
        **_base(call, ctx.turn, dict(call.arguments)),
        status="error",
        code=code,
        header=f"Error: {message}",
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
    ).to_dict()


def _fit(
    ctx: CallContext, cap: int, blocks: list[str], header_of, footer_of
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
        n = ctx.counter.text(block) + 1
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


def retrieval_result(
    call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """The event of a search_corpus / grep_corpus / read_document call."""
    if fetched.error_code:
        return _error(call, ctx, fetched.error_code, fetched.error, fetched.elapsed_s)
    args = dict(call.arguments)
    query = {"search_corpus": "query", "grep_corpus": "pattern", "read_document": "doc_id"}
    query = str(args.get(query[call.name], ""))
    is_read = call.name == "read_document"
    limit = ctx.search_results if call.name == "search_corpus" else len(fetched.hits)
    fresh: list[tuple[int, Hit]] = []
    dups: list[tuple[int, Hit, str]] = []
    hashes: dict[str, str] = {}
    repeats = 0
    for rank, hit in enumerate(fetched.hits, 1):
        if len(fresh) >= limit:
            break
        chunk = hit.chunk
        cached = chunk.chunk_id in state.cache
        if is_read and cached and chunk.chunk_id in state.pruned:
            fresh.append((rank, hit))  # reactivated
            continue
        if cached or (is_read and chunk.chunk_id in state.context):
            repeats += 1
            continue
        first = state.cache.first_with_hash(chunk.content_hash) or hashes.get(chunk.content_hash)
        if first is not None and first != chunk.chunk_id:
            dups.append((rank, hit, first))
            continue
        hashes.setdefault(chunk.content_hash, chunk.chunk_id)
        fresh.append((rank, hit))
    cap = ctx.room if is_read else min(ctx.per_call, ctx.room)

    def header_of(n: int) -> str:
        if is_read:
            return f"read_document {query}: {n} of {fetched.total} chunk(s), most relevant first."
        if call.name == "grep_corpus":
            return f"grep_corpus: {n} chunk(s) matching."
        return f"search_corpus: {n} new chunk(s)."

    def footer_of(keep: list[int], m: int) -> str:
        n = len(keep)
        notes = []
        if m > n:
            notes.append(f"{m - n} more result(s) left out to fit the token budget.")
        if dups:
            same = ", ".join(sorted({d[2] for d in dups}))
            notes.append(f"{len(dups)} result(s) not shown: same text as {same}.")
        if repeats:
            where = "already in context" if is_read else "already shown this turn"
            notes.append(f"{repeats} result(s) {where}.")
        if m == 0 and not is_read:
            notes.append("No new chunks (chunks seen this episode are excluded).")
        return " ".join(notes)

    blocks = [chunk_block(hit.chunk) for _, hit in fresh]
    keep, _content, tokens = _fit(ctx, cap, blocks, header_of, footer_of)
    kept = len(keep)
    if fresh and kept == 0:
        smallest = min(
            MESSAGE_OVERHEAD + ctx.counter.text(tool_content(header_of(1), [b], "")) for b in blocks
        )
        return _error(
            call,
            ctx,
            "budget_exhausted",
            f"not enough token budget for even one result (the smallest needs about "
            f"{smallest} tokens, {max(cap, 0)} are available). Prune chunks or give your "
            "final answer.",
            fetched.elapsed_s,
        )
    shown = [fresh[i] for i in keep]
    new_chunks = [_chunk_dict(h.chunk) for _, h in shown if h.chunk.chunk_id not in state.cache]
    new_chunks += [_chunk_dict(h.chunk) for _, h, _ in dups]
    lineage = [_lineage(h, call, ctx, query, r, None) for r, h in shown]
    lineage += [_lineage(h, call, ctx, query, r, first) for r, h, first in dups]
    return ToolResult(
        **_base(call, ctx.turn, args),
        header=header_of(kept),
        footer=footer_of(keep, len(fresh)),
        shown=[h.chunk.chunk_id for _, h in shown],
        new_chunks=new_chunks,
        lineage=lineage,
        duplicates=[[h.chunk.chunk_id, first] for _, h, first in dups],
        reactivated=[h.chunk.chunk_id for _, h in shown if h.chunk.chunk_id in state.cache],
        query=query if call.name == "search_corpus" else "",
        tokens=tokens,
        elapsed_s=fetched.elapsed_s,
    )


def _reject(chunk_id: str, code: str, message: str) -> dict[str, str]:
    return {"id": chunk_id, "code": code, "message": message}


def _rejected_text(rejected: list[dict[str, str]], verb: str) -> str:
    """``Not pruned: a, b (already pruned); c (unknown id: never retrieved).``"""
    if not rejected:
        return ""
    groups: dict[str, list[str]] = {}
    for r in rejected:
        groups.setdefault(r["message"], []).append(r["id"])
    parts = [f"{', '.join(ids)} ({message})" for message, ids in groups.items()]
    return f"Not {verb}: " + "; ".join(parts) + "."


def prune_result(call: ToolCall, state: EpisodeState, turn: int) -> ToolResult:
    """Prune: remove valid ids from the context; report every other id with a reason."""
    ids: list[str] = list(dict.fromkeys(call.arguments["chunk_ids"]))
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
    header = f"Pruned {len(pruned)} chunk(s)" + (f": {', '.join(pruned)}." if pruned else ".")
    return ToolResult(
        **_base(call, turn, dict(call.arguments)),
        status="ok" if pruned else "error",
        code="" if pruned else rejected[0]["code"],
        header=header,
        footer=_rejected_text(rejected, "pruned"),
        pruned=pruned,
        rejected=rejected,
    )


def _recall_header(n: int) -> str:
    return f"Recalled {n} chunk(s)."


def recall_result(call: ToolCall, state: EpisodeState, ctx: CallContext) -> ToolResult:
    """Recall: bring pruned chunks back from the cache, as many as the room allows."""
    ids: list[str] = list(dict.fromkeys(call.arguments["chunk_ids"]))
    candidates: list[str] = []
    rejected: list[dict[str, str]] = []
    for cid in ids:
        origin = state.lineage.origin(cid)
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid in state.context:
            rejected.append(_reject(cid, "already_active", "already in context"))
        elif origin is not None and origin.duplicate_of is not None:
            msg = f"same text as {origin.duplicate_of}; recall that id"
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
        tokens=tokens,
    )
