"""Render the transcript the policy will be sent next, and count its tokens exactly.

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

Token count = Σ over messages of (``MESSAGE_OVERHEAD`` + tokens of the content
+ for each tool call ``TOOL_CALL_OVERHEAD`` + tokens of name and arguments)
+ tokens of the tool schemas (JSON) if the policy declares any. Counting is per
message, hence additive; an endpoint's own chat template differs by a roughly
constant amount, which the episode reconciles from reported usage.

A policy that declares its chat template's costs
(:class:`~thresher.harness.policy.DeclaresPromptCost`, the LLM policy) is counted
with them instead (:class:`~thresher.tokens.PromptCost`: per message, per tool call,
per tool result, the tools preamble), and the texts' tokens are scaled by the ratio
of the model's vocabulary to ours, calibrated from each reported usage
(:meth:`TranscriptCounter.calibrate`): the count is anchored on the last reported
figure and only the text added since is estimated, at the ratio measured on the text
added between earlier reports (mostly retrieved text, whose names, ids and numbers
make it differ from the prompt's prose: Qwen2.5 spends a token per digit, o200k one
per three).
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
from thresher.tokens import GENERIC_COST, PromptCost, SegmentedCounter, TokenCounter

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
    "TranscriptCounter",
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


def _outcome_content(
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
            dumped = _dumped_arguments(record.turn, calls, memo)
            messages.append(assistant_message(record.assistant["text"], calls, dumped))
        for outcome in record.outcomes:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": outcome.call_id,
                    "content": _outcome_content(state, record.turn, outcome, memo),
                }
            )
    return messages


def _dumped_arguments(
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


#: counts of message segments shared by every episode of the process, keyed by
#: (vocabulary, segment): a chunk's block is the same text in every episode that shows
#: it, so a corpus's popular chunks are encoded once (a plain dict: reads and writes
#: are atomic under the GIL; cleared when full)
_SHARED_PIECES: dict[tuple[str, str], int] = {}
_SHARED_MAX = 16_384


#: bounds of a calibrated text scale (a reply's usage far off our count is not a vocabulary)
_MIN_SCALE, _MAX_SCALE = 0.5, 3.0
#: our text tokens added between reports before their ratio replaces the first one
_MIN_ADDED = 200


_DIGIT_RUN = re.compile(r"[0-9]+")


def _bounded(scale: float) -> float:
    return min(max(scale, _MIN_SCALE), _MAX_SCALE)


def _schemas_json(schemas: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(schemas), ensure_ascii=False, sort_keys=True)


class TranscriptCounter:
    """Exact token counts of messages, memoized per content string.

    With a :class:`~thresher.tokens.SegmentedCounter` (the BPE counters), a new text
    is counted as the sum of its newline segments, each memoized (per episode, and
    per process in ``_SHARED_PIECES``): a tool message re-rendered after a prune, or a
    result fitted to its budget, shares most of its lines with texts already
    counted, so only the lines that changed are encoded.
    """

    def __init__(
        self, counter: TokenCounter, memo_size: int = 8192, cost: PromptCost | None = None
    ) -> None:
        self.counter = counter
        self._segmented = counter if isinstance(counter, SegmentedCounter) else None
        self._memo: dict[str, int] = {}
        self._memo_size = memo_size
        #: rendered tool messages, for :func:`render_messages`
        self.render_memo: dict[Any, Any] = {}
        #: the chat template's costs; a declared one is calibrated from reported usage
        self.cost = cost or GENERIC_COST
        self._digit_memo: dict[str, int] = {}
        self.calibrates = cost is not None
        #: the model's tokens per token of ours on text (see :meth:`calibrate`)
        self.scale = self.cost.text_scale
        #: (model tokens of text, our text tokens) at the last report, and their
        #: increments summed over the reports after the first
        self._last: tuple[float, int] | None = None
        self._added = (0.0, 0)

    def text(self, text: str) -> int:
        """Tokens in ``text``, in the model's tokens (``scale`` times :meth:`raw`)."""
        n = self.raw(text)
        return n if self.scale == 1.0 else round(n * self.scale)

    def raw(self, text: str) -> int:
        """Tokens in ``text`` by our vocabulary (memoized), plus, for a model whose
        vocabulary splits digits (``cost.split_digits``), the tokens that costs."""
        n = self._memo.get(text)
        if n is None:
            if self._segmented is None:
                n = self.counter.count(text)
            elif "\n" not in text:  # one line: its count is shared like a segment's
                n = self._piece(text)
            else:
                n = sum(self._piece(p) for p in self._segmented.segments(text))
            self._remember(text, n)
        return n + self._digits(text) if self.cost.split_digits else n

    def _digits(self, text: str) -> int:
        """Tokens a digit-splitting vocabulary spends on ``text``'s numbers beyond ours
        (o200k and cl100k read up to three digits as one token)."""
        n = self._digit_memo.get(text)
        if n is None:
            n = sum(len(r) - -(-len(r) // 3) for r in _DIGIT_RUN.findall(text))
            if len(self._digit_memo) >= self._memo_size:
                self._digit_memo.clear()
            self._digit_memo[text] = n
        return n

    def _piece(self, piece: str) -> int:
        n = self._memo.get(piece)
        if n is None:
            key = (self.counter.name, piece)
            n = _SHARED_PIECES.get(key)
            if n is None:
                n = self.counter.count(piece)
                if len(_SHARED_PIECES) >= _SHARED_MAX:
                    _SHARED_PIECES.clear()
                _SHARED_PIECES[key] = n
            self._remember(piece, n)
        return n

    def _remember(self, text: str, n: int) -> None:
        if len(self._memo) >= self._memo_size:
            self._memo.clear()
        self._memo[text] = n

    def message(self, message: dict[str, Any]) -> int:
        """Tokens of one message, overheads included."""
        cost = self.cost
        n = cost.per_message + self.text(message.get("content") or "")
        if message.get("role") == "tool":
            n += cost.per_tool_result
        for call in message.get("tool_calls") or ():
            fn = call["function"]
            n += cost.per_tool_call + self.text(fn["name"]) + self.text(fn["arguments"])
        return n

    def messages(self, messages: Sequence[dict[str, Any]]) -> int:
        """Tokens of a message list."""
        return sum(self.message(m) for m in messages)

    def tools(self, schemas: Sequence[dict[str, Any]]) -> int:
        """Tokens of the declared tool schemas (0 when none)."""
        if not schemas:
            return 0
        return self.cost.tools_block + self.text(_schemas_json(schemas))

    def raw_text(
        self, messages: Sequence[dict[str, Any]], schemas: Sequence[dict[str, Any]] = ()
    ) -> int:
        """Tokens of the texts alone (no overheads, unscaled) of a transcript."""
        n = self.raw(_schemas_json(schemas)) if schemas else 0
        for m in messages:
            n += self.raw(m.get("content") or "")
            for call in m.get("tool_calls") or ():
                n += self.raw(call["function"]["name"]) + self.raw(call["function"]["arguments"])
        return n

    def calibrate(self, reported: int, counted: int, raw_text: int) -> int | None:
        """Fit ``scale`` to a reported usage; returns the correction that makes the
        transcript just reported count exactly ``reported`` (None: not calibrated).

        ``counted`` is what this counter counted for that transcript and ``raw_text``
        its texts' unscaled tokens (:meth:`raw_text`). The first report sets the
        ratio of the whole text; later ones the ratio of the text added between
        reports, once 200 tokens of it were seen (a few tokens say nothing). Only
        a declared :class:`~thresher.tokens.PromptCost` is calibrated: the overheads
        are the template's, the ratio is what is left to learn.
        """
        if not self.calibrates or raw_text <= 0 or reported <= 0:
            return None
        text = reported - (counted - self.scale * raw_text)  # the model's tokens of text
        if self._last is None:
            self.scale = _bounded(text / raw_text)
        else:
            grown = raw_text - self._last[1]
            if grown > 0:
                self._added = (self._added[0] + text - self._last[0], self._added[1] + grown)
            if self._added[1] >= _MIN_ADDED:
                self.scale = _bounded(self._added[0] / self._added[1])
        self._last = (text, raw_text)
        return round(text - self.scale * raw_text)

    def transcript(self, state: EpisodeState) -> int:
        """Tokens of everything the state renders, tool schemas included.

        The sum of :meth:`message` over :func:`render_messages` (the same terms, counted
        from the parts of each message without building the message dicts: the
        harness counts the transcript before every call it applies)."""
        cost = self.cost
        memo = self.render_memo
        text = self.text
        n = 2 * cost.per_message + text(state.system_prompt or "") + text(state.question or "")
        for record in state.turns:
            if record.notices:
                n += cost.per_message + text("\n".join(record.notices))
            if record.assistant is not None:
                calls = record.assistant["tool_calls"]
                n += cost.per_message + text(record.assistant["text"] or "")
                if calls:
                    dumped = _dumped_arguments(record.turn, calls, memo)
                    for c, a in zip(calls, dumped, strict=True):
                        n += cost.per_tool_call + text(c["name"]) + text(a)
            for outcome in record.outcomes:
                content = _outcome_content(state, record.turn, outcome, memo)
                n += cost.per_message + text(content) + cost.per_tool_result
        return n + self.tools(state.tool_schemas)
