"""What an episode does with its policy's reply: refuse it, or apply it.

A reply is checked (:func:`~thresher.harness.validate.check_proposal`, and a
final answer's documents resolved against what the episode saw,
:func:`~thresher.harness.validate.check_final`), then:

* *refused*: recorded with its refusal, and the refusal is the next turn's
  notice; after ``episode.max_refused_in_a_row`` refusals in a row the episode
  ends (``policy_error``);
* *a final answer*: recorded and the episode ends (``answered``), except an answer
  naming no document after every retrieval call of the episode failed in the
  tool itself (:data:`TOOL_FAILURES`: a timeout, a store error), as with an index
  that is down: that ends ``tools_failed``;
* *tool calls*: run by the episode's :class:`~thresher.harness.calls.CallRunner`,
  each result handed to the reader as it is applied; past ``episode.max_calls``
  the episode ends (``max_calls``), and after ``episode.max_hard_refused_turns``
  turns in a row whose calls the hard cutoff refused, ``budget``.

Every reply's reported usage, refused or not, is reconciled with the count
(:meth:`~thresher.harness.metering.Meter.reconcile`). Like the recorder and the
meter, :class:`Replies` holds no reference back to the episode: it says how the
episode ends (an :class:`~thresher.harness.ending.Exit`) and the episode ends it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from thresher.config import Config
from thresher.harness.actions import MalformedReply, Proposal
from thresher.harness.budget import UsageState
from thresher.harness.calls import CallRunner
from thresher.harness.ending import Exit
from thresher.harness.final import DroppedId
from thresher.harness.metering import Meter
from thresher.harness.recorder import EventRecorder
from thresher.harness.render import flagged_in_view, one_line
from thresher.harness.result import ExitReason
from thresher.harness.state import EpisodeState
from thresher.harness.tools import RETRIEVAL_TOOLS
from thresher.harness.trace import FinalEvent, ProposalEvent, Refusal, ToolResult, TraceEvent
from thresher.harness.validate import ProposalCheck, check_final, check_proposal

__all__ = ["TOOL_FAILURES", "Replies", "retrieval_all_failed"]

#: codes of a retrieval call the tool itself failed (not the policy's arguments)
TOOL_FAILURES = frozenset({"timeout", "tool_error", "tool_failed"})


class Replies:
    """Takes one episode's replies, turn by turn, and keeps what they leave for the next.

    Args:
        recorder: the episode's recorder (its state is the episode's).
        config: the episode's settings.
        meter: the episode's meter (reported usage is reconciled there).
        calls: runs a proposal's tool calls.
    """

    __slots__ = (
        "state",
        "config",
        "recorder",
        "emit",
        "meter",
        "calls",
        "hop",
        "models",
        "refused_streak",
        "hard_streak",
        "extra",
    )

    def __init__(
        self, recorder: EventRecorder, config: Config, meter: Meter, calls: CallRunner
    ) -> None:
        self.state: EpisodeState = recorder.state
        self.config = config
        self.recorder = recorder
        self.emit = recorder.emit
        self.meter = meter
        self.calls = calls
        self.hop: int | None = None  # the last hop a proposal declared (the next observation's)
        self.models: list[str] = []  # models the policy's replies came from (LLM policies)
        self.refused_streak = 0  # refused proposals in a row
        self.hard_streak = 0  # turns in a row whose calls the hard cutoff refused
        self.extra: list[str] = []  # notice lines for the next turn (the last refusal)

    def take(
        self, turn: int, value: Any, elapsed: float, usage: UsageState
    ) -> Generator[TraceEvent, None, Exit | None]:
        """Check the policy's reply ``value`` (that took ``elapsed`` seconds) to the turn
        counted at ``usage``, and refuse or apply it; the Exit when the episode ends."""
        model = getattr(value, "model", "")
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)
        check, docs, dropped = check_final(
            check_proposal(value, turn),
            self.state.cache,
            self.state.context,
            self.config.episode.final_documents,
        )
        if not check.ok:
            return self.refuse(turn, value, check, usage, elapsed)
        assert check.proposal is not None
        return (yield from self.apply(turn, check.proposal, usage, elapsed, docs, dropped))

    def refuse(
        self, turn: int, value: Any, check: ProposalCheck, usage: UsageState, elapsed: float
    ) -> Exit | None:
        """Record a refused proposal; end the episode after too many in a row."""
        proposal = check.proposal
        self.emit(
            ProposalEvent(
                turn=turn,
                proposal=proposal.to_dict() if proposal is not None else None,
                valid=False,
                raw=_raw_reply(value)[:2000],
                elapsed_s=elapsed,
            )
        )
        self.emit(Refusal(turn=turn, code=check.code, message=check.message))
        # every reply's usage, refused or not (a proposal's or a malformed reply's)
        reported = value.usage if isinstance(value, Proposal | MalformedReply) else None
        self.meter.reconcile(turn, usage, reported)
        self.refused_streak += 1
        self.extra = [one_line(f"[Refused: {check.message}]")]
        if self.refused_streak >= self.config.episode.max_refused_in_a_row:
            return Exit(
                ExitReason.POLICY_ERROR,
                f"{self.refused_streak} refused proposals in a row; last: {check.message}",
            )
        return None

    def apply(
        self,
        turn: int,
        proposal: Proposal,
        usage: UsageState,
        elapsed: float,
        docs: list[dict[str, Any]],
        dropped: list[DroppedId],
    ) -> Generator[TraceEvent, None, Exit | None]:
        """Record a valid proposal and apply it: the final answer, or the turn's calls
        (each call's result handed to the reader as it is applied)."""
        cfg = self.config
        self.refused_streak, self.extra = 0, []
        self.emit(
            ProposalEvent(turn=turn, proposal=proposal.to_dict(), valid=True, elapsed_s=elapsed)
        )
        self.meter.reconcile(turn, usage, proposal.usage)
        if proposal.hop is not None:
            self.hop = proposal.hop
        if proposal.final is not None:
            if not docs and retrieval_all_failed(self.state):
                message = (
                    "every retrieval call of the episode failed (errors or timeouts) and the "
                    "answer names no document; check the index and episode.tool_timeout_s"
                )
                self.emit(Refusal(turn=turn, code="tools_failed", message=message))
                return Exit(ExitReason.TOOLS_FAILED, message)
            for d in dropped:
                self.emit(Refusal(turn=turn, code=d.code, message=f"{d.id}: {d.message}"))
            self.emit(FinalEvent(turn=turn, documents=docs, flagged=flagged_in_view(self.state)))
            return Exit(ExitReason.ANSWERED)
        outcome = yield from self.run_calls(turn, usage, proposal)
        if outcome == "max_calls":
            return Exit(ExitReason.MAX_CALLS, f"{cfg.episode.max_calls} tool calls")
        self.hard_streak = self.hard_streak + 1 if outcome == "hard_refused" else 0
        if self.hard_streak >= cfg.episode.max_hard_refused_turns:
            return Exit(
                ExitReason.BUDGET,
                f"past the hard limit, {self.hard_streak} turns of refused retrieval calls",
            )
        return None

    def run_calls(
        self, turn: int, usage: UsageState, proposal: Proposal
    ) -> Generator[TraceEvent, None, str]:
        """The turn's calls (:meth:`CallRunner.run`), each result read out as it is applied."""
        steps = self.calls.run(turn, usage, proposal)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                yield from self.recorder.drain()
                return str(done.value)
            yield from self.recorder.drain()


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
