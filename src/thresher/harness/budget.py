"""The token budget: what the next prompt counts, what that allows, and what was reported.

* *Counting* (:class:`TranscriptCounter`): the exact tokens of the transcript
  :mod:`thresher.harness.render` renders. Token count = Σ over messages of
  (per-message cost + tokens of the content + for each tool call its cost + tokens of
  name and arguments) + tokens of the tool schemas (JSON) if the policy declares any;
  the generic costs are :data:`~thresher.harness.render.MESSAGE_OVERHEAD` and
  :data:`~thresher.harness.render.TOOL_CALL_OVERHEAD`. A policy that declares its chat
  template's costs (``prompt_cost``, :class:`~thresher.harness.policy.BasePolicy`; the LLM
  policy) is counted with them instead (:class:`~thresher.tokens.PromptCost`: per
  message, per tool call, per tool result, the tools preamble), and the texts' tokens
  are scaled by the ratio of the model's vocabulary to ours, calibrated from each
  reported usage (:meth:`TranscriptCounter.calibrate`): the count is anchored on the
  last reported figure and only the text added since is estimated, at the ratio
  measured on the text added between earlier reports (retrieved text, whose names,
  ids and numbers make it differ from the prompt's prose).
* *Arithmetic* (pure): the usage line, the soft and hard limits with their notices,
  and the room one more tool message may take (:func:`tool_room`). ``used`` is always
  the count of what the policy will be sent next, including the notice message that
  carries the usage line itself: the line's number is a fixed point, found by
  iterating from below (:func:`settle_usage`: adding notices only raises the count,
  so the iteration is monotone and ends in a few steps).
* *Metering* one episode (:class:`Meter`): before each turn the transcript is counted
  with its notices (:meth:`Meter.settle`): the episode ends rather than send anything
  over its budget. After a reply, the usage its endpoint reported
  (``prompt_tokens``, ``completion_tokens``) becomes a ``usage_report`` event and its
  excess over our count corrects the counts that follow (:meth:`Meter.reconcile`); a
  declared chat template has the ratio of its model's vocabulary to ours fitted
  instead. The harness's own count bounds what an endpoint reports: a
  ``prompt_tokens`` far below it (:func:`understated`) is recorded as a discrepancy
  and changes nothing, so an endpoint cannot lift the budget by under-reporting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import BudgetConfig
from thresher.harness.render import dumped_arguments, outcome_content
from thresher.harness.result import Usage
from thresher.harness.state import EpisodeState
from thresher.harness.trace import UsageReport
from thresher.tokens import GENERIC_COST, PromptCost, SegmentedCounter, TokenCounter

__all__ = [
    "SOFT_NOTICE",
    "HARD_NOTICE",
    "HARD_REFUSAL",
    "UsageState",
    "usage_line",
    "soft_limit",
    "hard_limit",
    "notices_for",
    "settle_usage",
    "tool_room",
    "UNDERSTATED_SHARE",
    "understated",
    "TranscriptCounter",
    "Meter",
]

SOFT_NOTICE = (
    "[Notice: over half of the token budget is used. Prune chunks you no longer need "
    "(prune_chunks) or give your final answer.]"
)
HARD_NOTICE = (
    "[Notice: hard token limit reached. Only prune_chunks, recall_chunks and the final "
    "answer are allowed now; every other tool is refused.]"
)
HARD_REFUSAL = (
    "Error: refused, the hard token limit is reached ({used}/{budget}). Only prune_chunks, "
    "recall_chunks and the final answer are allowed; prune chunks or answer."
)


@dataclass(frozen=True, slots=True)
class UsageState:
    """Token usage of what is sent next.

    used = counted + correction (endpoint-reported excess over our count).
    """

    used: int
    counted: int
    correction: int
    budget: int
    soft: bool
    hard: bool

    @property
    def remaining(self) -> int:
        return self.budget - self.used


def usage_line(used: int, budget: int) -> str:
    """The line the policy sees every turn: ``[Token usage: used/budget]``."""
    return f"[Token usage: {used}/{budget}]"


def soft_limit(config: BudgetConfig) -> int:
    """Tokens at which the prune-or-conclude notice appears."""
    return int(config.total * config.soft_fraction)


def hard_limit(config: BudgetConfig) -> int:
    """Tokens at which every tool but prune, recall and the final answer is refused."""
    return int(config.total * config.hard_fraction)


def notices_for(used: int, config: BudgetConfig, extra: Sequence[str] = ()) -> list[str]:
    """Notice lines for a turn at ``used`` tokens: usage line, soft/hard notices, then ``extra``.

    Past the hard limit both notices appear, so the lines only grow with
    ``used`` (which keeps :func:`settle_usage` a monotone iteration).
    """
    lines = [usage_line(used, config.total)]
    if used >= soft_limit(config):
        lines.append(SOFT_NOTICE)
    if used >= hard_limit(config):
        lines.append(HARD_NOTICE)
    lines.extend(extra)
    return lines


def settle_usage(
    base: int,
    correction: int,
    config: BudgetConfig,
    count_notices: Callable[[list[str]], int],
    extra: Sequence[str] = (),
) -> tuple[UsageState, list[str]]:
    """The usage of the next transcript, notices included, and those notices.

    Args:
        base: exact tokens of the transcript without the new notice message.
        correction: reconciliation offset added to every count.
        config: the budget settings.
        count_notices: tokens the notice message adds (overhead included).
        extra: further notice lines (refusals of the previous turn).

    Returns:
        ``(usage, notices)`` where ``usage.used`` is exactly what the transcript
        with these notices counts (plus correction).
    """
    used = base + correction
    for _ in range(16):
        notices = notices_for(used, config, extra)
        nxt = base + correction + count_notices(notices)
        if nxt == used:
            break
        used = nxt
    notices = notices_for(used, config, extra)
    state = UsageState(
        used=used,
        counted=used - correction,
        correction=correction,
        budget=config.total,
        soft=used >= soft_limit(config),
        hard=used >= hard_limit(config),
    )
    return state, notices


#: a reported prompt under this share of the harness's own count is not believed: no
#: vocabulary is that much denser than ours (the calibrated ratio's lower bound too)
UNDERSTATED_SHARE = 0.5


def understated(reported: int, own: int) -> bool:
    """Whether an endpoint's ``prompt_tokens`` is far below the harness's own count
    ``own`` of the same prompt (a discrepancy: the report is recorded, not used)."""
    return reported < own * UNDERSTATED_SHARE


def tool_room(counted_now: int, correction: int, config: BudgetConfig, reserve: int) -> int:
    """Tokens one more tool message may take.

    ``total - reply_reserve - correction - counted_now - reserve``, where
    ``reserve`` covers the next notice message and the turn's remaining calls.
    May be negative (no room).
    """
    return config.total - config.reply_reserve - correction - counted_now - reserve


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
        #: rendered tool messages, for :func:`~thresher.harness.render.render_messages`
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

    def uncalibrated(self, counted: int, raw_text: int) -> int:
        """What a transcript this counter counted ``counted`` (texts of ``raw_text``
        unscaled tokens) counts at the declared text scale, before any calibration: the
        harness's own count, which no reported usage has moved."""
        return counted + round((self.cost.text_scale - self.scale) * raw_text)

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

        The sum of :meth:`message` over :func:`~thresher.harness.render.render_messages` (the same terms, counted
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
                    dumped = dumped_arguments(record.turn, calls, memo)
                    for c, a in zip(calls, dumped, strict=True):
                        n += cost.per_tool_call + text(c["name"]) + text(a)
            for outcome in record.outcomes:
                content = outcome_content(state, record.turn, outcome, memo)
                n += cost.per_message + text(content) + cost.per_tool_result
        return n + self.tools(state.tool_schemas)


class Meter:
    """Counts one episode's transcript against its budget and tallies reported usage.

    Args:
        state: the episode state (read).
        counter: the episode's transcript counter.
        budget: the episode's budget settings.
    """

    __slots__ = ("state", "tc", "budget", "sent_text", "prompt_tokens", "completion_tokens")

    def __init__(
        self, state: EpisodeState, counter: TranscriptCounter, budget: BudgetConfig
    ) -> None:
        self.state = state
        self.tc = counter
        self.budget = budget
        self.sent_text = 0  # unscaled text tokens of the last transcript sent (calibration)
        self.prompt_tokens = 0  # reported by the policy's endpoint, over the episode
        self.completion_tokens = 0

    def notice_reserve(self) -> int:
        """Tokens of the largest notice message a turn after tool calls can get (no
        proposal refusals): kept free when the turn's results are cut to fit."""
        worst = notices_for(int("9" * len(str(self.budget.total))), self.budget)
        return self.tc.message({"content": "\n".join(worst)}) + 4

    def settle(self, extra: list[str]) -> tuple[UsageState, list[str]]:
        """The next prompt's usage and its notice lines (``extra``: the last refusal's)."""
        base = self.tc.transcript(self.state)
        return settle_usage(
            base,
            self.state.correction,
            self.budget,
            lambda lines: self.tc.message({"content": "\n".join(lines)}),
            extra,
        )

    def sending(self, messages: list[dict[str, Any]]) -> None:
        """Note the transcript about to be sent (its unscaled text, for calibration)."""
        self.sent_text = self.tc.raw_text(messages, self.state.tool_schemas)

    def reconcile(
        self, turn: int, usage: UsageState, reported: dict[str, int] | None
    ) -> UsageReport | None:
        """The ``usage_report`` event of an endpoint-reported usage (None: none reported);
        its correction (the excess over our count) corrects the counts once it is applied.

        A prompt count far below our own (:func:`understated`) is reported with
        ``discrepancy`` set and otherwise ignored."""
        reported = reported or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if not isinstance(prompt, int) and not isinstance(completion, int):
            return None
        prompt = prompt if isinstance(prompt, int) else None
        completion = completion if isinstance(completion, int) else None
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        own = self.tc.uncalibrated(usage.counted, self.sent_text)
        discrepancy = prompt is not None and understated(prompt, own)
        if prompt is None or discrepancy:
            correction = usage.correction
        else:
            correction = max(0, prompt - usage.counted)
            fitted = self.tc.calibrate(prompt, usage.counted, self.sent_text) if prompt else None
            if fitted is not None:  # a declared template cost: the ratio is fitted, may be < 0
                correction = fitted
        return UsageReport(
            turn=turn,
            counted=usage.counted,
            prompt_tokens=prompt,
            completion_tokens=completion,
            correction=correction,
            discrepancy=discrepancy,
        )

    def usage(self) -> Usage:
        """The episode's usage so far, with the tokens its endpoint reported."""
        state = self.state
        usage = Usage(state.used, state.peak, self.budget.total)
        return replace(
            usage, prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens
        )
