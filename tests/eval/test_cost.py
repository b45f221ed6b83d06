"""The cost of an answer: price tables, episode and side costs (pure)."""

from __future__ import annotations

import pytest

from thresher.errors import ConfigError
from thresher.eval.cost import (
    EpisodeUsage,
    Price,
    episode_cost,
    format_usd,
    parse_prices,
    report_costs,
    side_cost,
)

TABLE = parse_prices(
    {
        "gpt-4.1": {"prompt": 2.0, "completion": 8.0},
        "context-1@my-gpu": {"gpu_hour": 1.2},
        "local": {"gpu_hour": 0.36},
    }
)


def llm(prompt: int, completion: int, wall: float, model: str = "gpt-4.1") -> EpisodeUsage:
    return EpisodeUsage(prompt, completion, wall, (model,))


def test_parse_prices_reads_every_field_and_keeps_the_order() -> None:
    assert list(TABLE) == ["gpt-4.1", "context-1@my-gpu", "local"]
    assert TABLE["gpt-4.1"] == Price(prompt=2.0, completion=8.0)
    assert TABLE["context-1@my-gpu"].to_dict() == {
        "prompt": 0.0,
        "completion": 0.0,
        "gpu_hour": 1.2,
    }
    assert parse_prices({"m": {"prompt": 1}})["m"].prompt == 1.0  # ints are fine
    assert parse_prices({"free": {"prompt": 0}})["free"].describe() == "free"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"m": {"prompt": True}}, "'m'.prompt must be a number of USD, got True"),
        ({"m": {"completion": float("inf")}}, "must be a finite number of USD >= 0"),
        ({"m": {"gpu-hour": 1.0}}, "unknown field 'gpu-hour'"),
        ({"m": {}}, "'m' holds no price"),
        ({"m": None}, "'m' must be a table"),
        ({}, "the price table is empty"),
        ("gpt-4.1", "a price table maps model names to prices"),
    ],
)
def test_parse_prices_names_the_source_and_the_problem(data, problem) -> None:
    with pytest.raises(ConfigError) as err:
        parse_prices(data, "price file p.json")
    assert str(err.value).startswith("price file p.json: ") and problem in str(err.value)


def test_episode_cost_is_tokens_times_price_plus_machine_time() -> None:
    usage = llm(1_000_000, 250_000, 7200.0)
    assert episode_cost(usage, Price(2.0, 8.0)) == pytest.approx(2.0 + 2.0)
    assert episode_cost(usage, Price(gpu_hour=1.2)) == pytest.approx(2.4)
    assert episode_cost(usage, Price(gpu_hour=1.2), concurrency=4) == pytest.approx(0.6)
    with pytest.raises(ValueError):
        episode_cost(usage, Price(), concurrency=0)


def test_a_side_is_priced_by_its_model_and_per_resolved_question() -> None:
    episodes = [llm(10_000, 500, 2.0), llm(20_000, 1_000, 4.0), llm(30_000, 1_500, 12.0)]
    cost = side_cost("llm", episodes, questions=3, resolved=2, prices=TABLE)
    assert cost.priced_by == "gpt-4.1" and cost.models == ("gpt-4.1",)
    assert (cost.prompt_tokens, cost.completion_tokens) == (60_000, 3_000)
    total = (60_000 * 2.0 + 3_000 * 8.0) / 1e6
    assert cost.total_usd == pytest.approx(total)
    assert cost.per_episode_usd == pytest.approx(total / 3)
    assert cost.per_resolved_usd == pytest.approx(total / 2)
    assert (cost.wall_mean_s, cost.wall_p50_s) == (6.0, 4.0)
    assert cost.wall_p95_s == pytest.approx(4.0 + 0.9 * 8.0)  # linear interpolation
    assert cost.note == "gpt-4.1: $2.00 / $8.00 per 1M prompt / completion tokens"
    assert side_cost("llm", episodes, 3, 0, TABLE).per_resolved_usd is None  # none resolved


def test_the_label_wins_over_the_model_for_a_self_hosted_deployment() -> None:
    episodes = [llm(50_000, 900, 1800.0, "chromadb/context-1")] * 2
    cost = side_cost("context-1@my-gpu", episodes, 2, 1, TABLE, concurrency=2)
    assert cost.priced_by == "context-1@my-gpu"
    assert cost.total_usd == pytest.approx(2 * 1.2 * 0.5 / 2)  # half an hour each, two at once
    assert cost.note == "context-1@my-gpu: $1.20 per machine hour"


def test_what_cannot_be_priced_is_n_a_and_says_why() -> None:
    one = [llm(100, 10, 1.0, "mystery-model")]
    assert side_cost("llm", one, 1, 1, None).note == "no price table (--prices FILE)"
    missing = side_cost("llm", one, 1, 1, TABLE)
    assert missing.total_usd is None and missing.per_resolved_usd is None
    assert missing.note == "no price for 'llm' or model 'mystery-model' in the price table"
    mixed = side_cost("llm", [llm(1, 1, 1.0, "a"), llm(1, 1, 1.0, "b")], 2, 2, TABLE)
    assert mixed.total_usd is None and mixed.note.startswith("several models (a, b)")
    silent = side_cost("llm", [llm(0, 0, 1.0), llm(5, 5, 1.0)], 2, 2, TABLE)
    assert silent.total_usd is None
    assert silent.note == "the endpoint reported no token usage for 1 of 2 episodes"


def test_a_policy_without_a_model_costs_nothing_unless_its_machine_is_priced() -> None:
    local = [EpisodeUsage(0, 0, 0.5), EpisodeUsage(0, 0, 1.5)]
    free = side_cost("single-shot", local, 2, 1, None)
    assert (free.total_usd, free.per_resolved_usd, free.note) == (0.0, 0.0, "no model calls")
    billed = side_cost("local", local, 2, 1, TABLE)
    assert billed.total_usd == pytest.approx(0.36 * 2.0 / 3600)
    with pytest.raises(ValueError):
        side_cost("local", local, 1, 2, TABLE)


def test_format_usd() -> None:
    assert [format_usd(x) for x in (None, 0.0, 0.00004, 0.01234, 12.345, 1234.5)] == [
        "n/a", "$0.00", "< $0.0001", "$0.0123", "$12.35", "$1,234.50",
    ]  # fmt: skip


@pytest.mark.slow
def test_report_costs_of_a_paired_run(world_run) -> None:
    report = world_run[0]
    costs = report_costs(report)
    for side, outcomes in (("a", report.a), ("b", report.b)):
        c = costs[side]
        assert c.questions == c.episodes == len(outcomes) == 3
        assert c.total_usd == 0.0 and c.note == "no model calls"  # single-shot asks no model
        resolved = sum(1 for o in outcomes if o.metrics.all_gold_at[5] == 1.0)
        assert c.resolved == resolved
        assert c.wall_mean_s == pytest.approx(sum(o.metrics.wall_s for o in outcomes) / 3)
