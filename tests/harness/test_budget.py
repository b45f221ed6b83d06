"""Budget arithmetic: the usage line is a fixed point of what is sent; thresholds."""

from __future__ import annotations

from thresher.config import BudgetConfig
from thresher.harness.budget import (
    HARD_NOTICE,
    SOFT_NOTICE,
    TranscriptCounter,
    hard_limit,
    notices_for,
    settle_usage,
    soft_limit,
    tool_room,
    usage_line,
)
from thresher.tokens import get_counter


def test_defaults_follow_the_report():
    cfg = BudgetConfig()
    assert cfg.total == 32_768
    assert soft_limit(cfg) == 16_384
    assert usage_line(10, 32_768) == "[Token usage: 10/32768]"


def test_notices_by_threshold():
    cfg = BudgetConfig(total=1000, soft_fraction=0.5, hard_fraction=0.8)
    assert notices_for(499, cfg) == ["[Token usage: 499/1000]"]
    assert notices_for(500, cfg)[1] == SOFT_NOTICE
    assert notices_for(hard_limit(cfg), cfg)[1:] == [SOFT_NOTICE, HARD_NOTICE]
    assert notices_for(10, cfg, ["[Refused: x]"])[-1] == "[Refused: x]"


def test_settled_usage_counts_its_own_notice_message():
    tc = TranscriptCounter(get_counter())
    cfg = BudgetConfig(total=1000, soft_fraction=0.5, hard_fraction=0.8)

    def count(lines):
        return tc.message({"content": "\n".join(lines)})

    for base in range(0, 1200, 3):
        usage, notices = settle_usage(base, 7, cfg, count)
        assert usage.used == base + 7 + count(notices)
        assert notices[0] == usage_line(usage.used, 1000)
        assert usage.soft == (usage.used >= 500) and usage.hard == (usage.used >= 800)
        assert (SOFT_NOTICE in notices) == usage.soft and (HARD_NOTICE in notices) == usage.hard
        assert usage.counted == usage.used - 7


def test_tool_room_keeps_the_reply_reserve():
    cfg = BudgetConfig(total=1000, reply_reserve=100)
    assert tool_room(300, 0, cfg, 50) == 550
    assert tool_room(300, 20, cfg, 50) == 530
    assert tool_room(990, 0, cfg, 0) < 0
