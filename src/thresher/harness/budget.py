"""Budget arithmetic: the usage line, soft/hard state, and room for tool output.

All pure. ``used`` is always the count of what the policy will be sent next,
including the notice message that carries the usage line itself: the line's
number is a fixed point, found by iterating from below (adding notices only
raises the count, so the iteration is monotone and ends in a few steps).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from thresher.config import BudgetConfig

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
