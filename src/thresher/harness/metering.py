"""Metering one episode's transcript: counted before it is sent, reconciled after.

Before each turn the transcript is counted exactly, with the notice message
(usage line, soft/hard notices, refusals) included (:meth:`Meter.settle`, over
:func:`~thresher.harness.budget.settle_usage`): the episode ends rather than send
anything over its budget. After a reply, the usage its endpoint reported
(``prompt_tokens``, ``completion_tokens``) is recorded (``usage_report``) and its
excess over our count corrects the counts that follow (:meth:`Meter.reconcile`);
a policy that declares its chat template's cost has the ratio of its model's
vocabulary to ours fitted instead
(:meth:`~thresher.harness.transcript_counter.TranscriptCounter.calibrate`). The reported
tokens add up into the Result's :class:`~thresher.harness.result.Usage`.

The harness's own count bounds what an endpoint reports: a ``prompt_tokens`` far
below it (:func:`~thresher.harness.budget.understated`) is recorded as a
discrepancy and changes nothing (no calibration, the correction kept), so an
endpoint cannot lift the budget by under-reporting.

The meter holds the recorder's ``emit``, not the episode's, so it makes no
reference cycle back to the episode (see :mod:`thresher.harness.recorder`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from thresher.config import BudgetConfig
from thresher.harness.budget import UsageState, notices_for, settle_usage, understated
from thresher.harness.result import Usage
from thresher.harness.state import EpisodeState
from thresher.harness.trace import TraceEvent, UsageReport
from thresher.harness.transcript_counter import TranscriptCounter

__all__ = ["Meter"]


class Meter:
    """Counts one episode's transcript against its budget and tallies reported usage.

    Args:
        state: the episode state (read).
        counter: the episode's transcript counter.
        budget: the episode's budget settings.
        emit: records an event (the episode's recorder).
    """

    __slots__ = ("state", "tc", "budget", "emit", "sent_text", "prompt_tokens", "completion_tokens")

    def __init__(
        self,
        state: EpisodeState,
        counter: TranscriptCounter,
        budget: BudgetConfig,
        emit: Callable[[TraceEvent], TraceEvent],
    ) -> None:
        self.state = state
        self.tc = counter
        self.budget = budget
        self.emit = emit
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

    def reconcile(self, turn: int, usage: UsageState, reported: dict[str, int] | None) -> None:
        """Record endpoint-reported usage; its excess over our count corrects later counts.

        A prompt count far below our own (:func:`~thresher.harness.budget.understated`)
        is recorded with ``discrepancy`` set and otherwise ignored."""
        reported = reported or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if not isinstance(prompt, int) and not isinstance(completion, int):
            return
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
        self.emit(
            UsageReport(
                turn=turn,
                counted=usage.counted,
                prompt_tokens=prompt,
                completion_tokens=completion,
                correction=correction,
                discrepancy=discrepancy,
            )
        )

    def usage(self) -> Usage:
        """The episode's usage so far, with the tokens its endpoint reported."""
        state = self.state
        usage = Usage(state.used, state.peak, self.budget.total)
        return replace(
            usage, prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens
        )
