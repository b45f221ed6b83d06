"""Render the transcript the policy will be sent next (its tokens: :mod:`.budget`).

The transcript is a list of chat messages (OpenAI shape)::

    system     the policy's system prompt
    user       the question
    per turn:  user       notices (usage line first; soft/hard notices; refusals)
               assistant  the turn's text and tool calls
               tool       one message per call: header, chunk blocks, footer

Retrieved text is data: each chunk is a delimited block
``<chunk id="…" doc="…" title="…">…</chunk>`` whose text and attributes are
escaped (``&``, ``<``, ``>``, ``"``), so retrieved text cannot close the
delimiter or forge another chunk; a chunk whose text (or document) matched a
known injection pattern carries ``flags="…"`` on its tag, as data the policy
may weigh. A chunk is shown in full only at its placement in the active
context (where it last entered); everywhere else, and after a prune, it is the
one-line stub ``[pruned chunk <id>]``; a run of chunks the policy pruned is the
one line ``[3 chunks pruned]``: their ids are in its own ``prune_chunks(chunk_ids=…)``
call, where it finds them to recall one (an id is written once); after
``prune_chunks(keep=…)`` they are named nowhere in the transcript, only in the trace.

Ids are data too: a document id is whatever a corpus file says, so every id
is rendered through :func:`escape_id`: ``&<>"`` become entities and every
character that is not printable (newlines, ESC and other controls, bidi and
zero-width characters, line and paragraph separators) becomes a numeric
reference ``&#x…;``. An id can then neither close a tag, start a line, nor
reorder or hide text; every line the harness composes around ids is also kept
to one line (:func:`one_line`). A policy that sends an id back in its escaped
form is understood (:func:`resolve_id`).

The tokens are counted by
:class:`~thresher.harness.budget.TranscriptCounter` (which says how).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from thresher.corpus.document import Chunk
from thresher.corpus.sanitize import chunk_flags
from thresher.harness.state import EpisodeState, ToolOutcome

__all__ = [
    "MESSAGE_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "escape_text",
    "escape_attr",
    "escape_id",
    "one_line",
    "resolve_id",
    "unescape_id",
    "chunk_block",
    "stub",
    "pruned_line",
    "flagged_in_view",
    "tool_content",
    "assistant_message",
    "dump_arguments",
    "render_messages",
    "dumped_arguments",
    "outcome_content",
]

MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 3


def escape_text(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities: retrieved text cannot form a tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_WHITESPACE = re.compile(r"\s")


def _unprintable(text: str) -> str:
    """Every non-printable character of ``text`` as ``&#x…;`` (printable text unchanged)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"&#x{ord(c):x};" for c in text)


def escape_attr(text: str) -> str:
    """Text safe inside a double-quoted attribute, on one line.

    Every whitespace character (newline, tab, no-break space, line separator)
    becomes a space: a title's line breaks carry no meaning; any other
    non-printable character becomes ``&#x…;``.
    """
    flat = escape_text(text).replace('"', "&quot;")
    if not flat.isprintable():
        flat = _unprintable(_WHITESPACE.sub(" ", flat))
    return flat


def escape_id(text: str) -> str:
    """An id as it is shown to a policy: one printable line that forms no tag.

    ``&<>"`` become entities and every non-printable character (newline, ESC,
    bidi and zero-width characters, line separators...) a numeric reference
    ``&#x…;``, so the escaped form is unambiguous and :func:`resolve_id` can map
    it back. Ids of ordinary characters come out unchanged.
    """
    return _unprintable(escape_text(text).replace('"', "&quot;"))


def one_line(text: str) -> str:
    """A line the harness composes, kept to one printable line: every non-printable
    character (a newline, ESC, a bidi control) becomes ``&#x…;``; ``<>&"`` are kept.

    Used for every header, footer and notice line, whose ids are escaped with
    :func:`escape_id` where the line is composed (``Not pruned: …``,
    ``same text as …``, refusals); text from outside the harness (a store's error
    message) is escaped whole with :func:`escape_id`.
    """
    return _unprintable(text)


def resolve_id(raw: str, known: Callable[[str], bool]) -> str:
    """The id a policy meant: the id the transcript showed as ``raw``, else ``raw`` itself.

    A policy copies ids from the transcript, where they are escaped
    (:func:`escape_id`), so a name is read as a transcript name first: its
    unescaped form when that is known. Only then is ``raw`` taken as written, so
    a document whose id *is* another's escaped form (an escaped-id twin) cannot
    take the place of the document the transcript showed under that name.
    ``raw`` is returned unchanged when neither form is known.
    """
    if "&" in raw:
        plain = unescape_id(raw)
        if plain != raw and known(plain):
            return plain
    return raw


_REFERENCE = re.compile(r"&(?:(amp|lt|gt|quot)|#x([0-9a-fA-F]{1,6})|#([0-9]{1,7}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"'}


def unescape_id(text: str) -> str:
    """Inverse of :func:`escape_id`: the four entities and numeric references back to characters.

    Written here rather than ``html.unescape``, which follows HTML5 and drops or
    replaces control characters (``&#x1b;`` becomes nothing), so it cannot give
    back an id that holds one. References beyond U+10FFFF are left as written.
    """

    def back(m: re.Match[str]) -> str:
        if m.group(1):
            return _NAMED[m.group(1)]
        code = int(m.group(2), 16) if m.group(2) else int(m.group(3))
        return chr(code) if code <= 0x10FFFF else m.group(0)

    return _REFERENCE.sub(back, text) if "&" in text else text


def chunk_block(chunk: Chunk) -> str:
    """The delimited DATA block of one chunk (with its injection flags, if any)."""
    flags = ",".join(chunk_flags(chunk))
    return _block(chunk.chunk_id, chunk.doc_id, chunk.title, chunk.text, flags)


@lru_cache(maxsize=4096)
def _block(chunk_id: str, doc_id: str, title: str, text: str, flags: str) -> str:
    marked = f' flags="{escape_attr(flags)}"' if flags else ""
    return (
        f'<chunk id="{escape_id(chunk_id)}" doc="{escape_id(doc_id)}" '
        f'title="{escape_attr(title)}"{marked}>{escape_text(text)}</chunk>'
    )


def stub(chunk_id: str) -> str:
    """The one line that stands in for a chunk not shown in full here."""
    return f"[pruned chunk {escape_id(chunk_id)}]"


def pruned_line(n: int) -> str:
    """The one line that stands in for a run of ``n`` chunks the policy pruned (see the
    module docstring for where their ids are)."""
    return f"[{n} chunk pruned]" if n == 1 else f"[{n} chunks pruned]"


def flagged_in_view(state: EpisodeState) -> list[dict[str, Any]]:
    """The chunks in view that carry injection flags: ``[{"id", "flags"}]``, in context order.

    Recorded on a prune, a recall and the final answer (see the trace schema), so a
    decision that followed flagged text can be named.
    """
    out: list[dict[str, Any]] = []
    for cid in state.context.ids():
        chunk = state.cache.get(cid)
        flags = chunk_flags(chunk) if chunk is not None else ()
        if flags:
            out.append({"id": cid, "flags": list(flags)})
    return out


def tool_content(header: str, blocks: Sequence[str], footer: str) -> str:
    """A tool message: header line, one block per line, footer (empty parts skipped)."""
    return "\n".join(part for part in (header, *blocks, footer) if part)


def outcome_content(
    state: EpisodeState, turn: int, outcome: ToolOutcome, memo: dict[Any, Any] | None
) -> str:
    where = (turn, outcome.call_id)
    placement = state.context.placement
    pruned = state.pruned
    # per chunk: shown in full here (1), pruned (2: a run's line), else its stub (0); the
    # memo's key, since a recall takes a chunk out of the pruned run without showing it here
    how = tuple(
        1 if placement(cid) == where else 2 if cid in pruned else 0 for cid in outcome.chunk_ids
    )
    key = (where, how)
    if memo is not None and key in memo:
        held: str = memo[key]
        return held
    blocks: list[str] = []
    run = 0  # pruned chunks in a row: one line
    for chunk_id, shown in zip(outcome.chunk_ids, how, strict=True):
        chunk = state.cache.get(chunk_id)
        if shown == 2:
            run += 1
            continue
        if run:
            blocks.append(pruned_line(run))
            run = 0
        blocks.append(chunk_block(chunk) if shown == 1 and chunk is not None else stub(chunk_id))
    if run:
        blocks.append(pruned_line(run))
    content = tool_content(outcome.header, blocks, outcome.footer)
    if memo is not None:
        memo[key] = content
    return content


def assistant_message(
    text: str, tool_calls: Sequence[dict[str, Any]], dumped: Sequence[str] | None = None
) -> dict[str, Any]:
    """An assistant message with tool calls (``{"name", "arguments", "call_id"}`` dicts).

    ``dumped``: the calls' arguments already as JSON (:func:`dump_arguments`), if known.
    """
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        args = dumped if dumped is not None else dump_arguments(tool_calls)
        message["tool_calls"] = [
            {
                "id": c["call_id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": a},
            }
            for c, a in zip(tool_calls, args, strict=True)
        ]
    return message


def dump_arguments(tool_calls: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """Each call's arguments as the JSON text the transcript shows (keys sorted)."""
    return tuple(json.dumps(c["arguments"], ensure_ascii=False, sort_keys=True) for c in tool_calls)


def render_messages(
    state: EpisodeState, memo: dict[Any, Any] | None = None
) -> list[dict[str, Any]]:
    """The chat messages the policy is sent, rendered from the state alone.

    ``memo`` (optional, one per episode) keeps rendered tool messages and the calls'
    JSON arguments between calls; it only speeds rendering up and never changes
    the result.
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": state.system_prompt},
        {"role": "user", "content": state.question},
    ]
    for record in state.turns:
        if record.notices:
            messages.append({"role": "user", "content": "\n".join(record.notices)})
        if record.assistant is not None:
            calls = record.assistant["tool_calls"]
            dumped = dumped_arguments(record.turn, calls, memo)
            messages.append(assistant_message(record.assistant["text"], calls, dumped))
        for outcome in record.outcomes:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": outcome.call_id,
                    "content": outcome_content(state, record.turn, outcome, memo),
                }
            )
    return messages


def dumped_arguments(
    turn: int, calls: Sequence[dict[str, Any]], memo: dict[Any, Any] | None
) -> tuple[str, ...]:
    """:func:`dump_arguments` of a turn's calls, kept in ``memo`` with the list it dumped."""
    held = memo.get(("arguments", turn)) if memo is not None else None
    if held is None or held[0] is not calls:  # the memo holds the list it dumped
        held = (calls, dump_arguments(calls))
        if memo is not None:
            memo[("arguments", turn)] = held
    dumped: tuple[str, ...] = held[1]
    return dumped
