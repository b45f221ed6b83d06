"""The cost of an answer: endpoint tokens × a price table, wall time, cost per resolved question.

A price table maps a name to what its episodes cost (all optional, at least one)::

    prompt       USD per 1M prompt tokens (the endpoint-reported ``prompt_tokens``)
    completion   USD per 1M completion tokens
    gpu_hour     USD per hour of the machine serving the model (a self-hosted model,
                 or the local policy's CPU), billed by the episode's wall time

    cost(episode) = prompt_tokens · prompt / 10⁶ + completion_tokens · completion / 10⁶
                    + gpu_hour · wall_s / 3600 / concurrency

where ``concurrency`` is how many episodes shared the machine at once (the eval's
``--workers``), so a run's machine time is billed once, not once per worker.

A side is priced by the entry named like its label (``label = "context-1@my-gpu"``
in its config file, or the policy name), else by the entry named like the one
model its episodes asked the endpoint for (``gpt-4.1``). A side whose episodes
asked no model (the local policy, the baselines) used no tokens: without an
entry it costs $0, its machine time shown as wall time only. Anything else
without a price is "n/a", never a guess.

A question is *resolved* when every gold document is in its final top 5
(``all_gold@5 = 1``); the cost per resolved question is the side's total cost
over the questions it resolved (n/a when it resolved none).

Pure: no I/O (``thresher eval --prices FILE`` reads the file).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from thresher.errors import ConfigError
from thresher.eval.metrics import all_gold_at_k

if TYPE_CHECKING:
    from thresher.eval.protocol import PairedReport
    from thresher.eval.records import TaskOutcome

__all__ = [
    "PRICE_FIELDS",
    "RESOLVED_AT",
    "RESOLVED_RULE",
    "Price",
    "EpisodeUsage",
    "SideCost",
    "parse_prices",
    "episode_cost",
    "side_cost",
    "report_costs",
    "format_usd",
]

#: what a price entry may hold: USD per 1M prompt / completion tokens, USD per machine hour
PRICE_FIELDS = ("prompt", "completion", "gpu_hour")
#: a question is resolved when every gold document is in the final top ``RESOLVED_AT``
RESOLVED_AT = 5
RESOLVED_RULE = (
    f"a question is resolved when every gold document is in its final top {RESOLVED_AT} "
    f"(all_gold@{RESOLVED_AT} = 1)"
)


@dataclass(frozen=True, slots=True)
class Price:
    """One entry of a price table (USD; a field left out costs nothing)."""

    prompt: float = 0.0
    completion: float = 0.0
    gpu_hour: float = 0.0

    @property
    def per_token(self) -> bool:
        """True when tokens cost something (so unreported usage makes the cost unknown)."""
        return self.prompt > 0 or self.completion > 0

    def to_dict(self) -> dict[str, float]:
        """Every field (JSON-safe, as a price file writes an entry)."""
        return {f: getattr(self, f) for f in PRICE_FIELDS}

    def describe(self) -> str:
        """In words: ``$2.00 / $8.00 per 1M prompt / completion tokens; $1.20 per machine hour``."""
        parts = []
        if self.per_token:
            parts.append(
                f"${self.prompt:,.2f} / ${self.completion:,.2f} per 1M prompt / completion tokens"
            )
        if self.gpu_hour:
            parts.append(f"${self.gpu_hour:,.2f} per machine hour")
        return "; ".join(parts) or "free"


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where} must be a number of USD, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where} must be a finite number of USD >= 0, got {value!r}")
    return float(value)


def parse_prices(data: Any, source: str = "the price table") -> dict[str, Price]:
    """Check a decoded price table and return its entries.

    Args:
        data: ``{name: {"prompt": USD/1M, "completion": USD/1M, "gpu_hour": USD/h}}``
            (a name is a side's label or a model name; each field optional, one at least).
        source: what to name in errors (the file).

    Returns:
        ``{name: Price}`` in the table's order.

    Raises:
        ConfigError: ``"<source>: <what is wrong>"``: not a table, an empty table, an
            entry that is not a table or holds no price, an unknown field, a value that
            is not a finite number >= 0.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source}: a price table maps model names to prices, "
            f'e.g. {{"gpt-4.1": {{"prompt": 2.0, "completion": 8.0}}}}; got {type(data).__name__}'
        )
    if not data:
        raise ConfigError(f"{source}: the price table is empty")
    prices: dict[str, Price] = {}
    for name, entry in data.items():
        where = f"{source}: {name!r}"
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{where} must be a table of {', '.join(PRICE_FIELDS)}, got {entry!r}"
            )
        unknown = [k for k in entry if k not in PRICE_FIELDS]
        if unknown:
            raise ConfigError(
                f"{where}: unknown field {unknown[0]!r}; a price has {', '.join(PRICE_FIELDS)} "
                "(USD per 1M prompt tokens, per 1M completion tokens, per machine hour)"
            )
        if not entry:
            raise ConfigError(f"{where} holds no price; give one of {', '.join(PRICE_FIELDS)}")
        values = {k: _number(v, f"{where}.{k}") for k, v in entry.items()}
        prices[str(name)] = Price(**values)
    return prices


@dataclass(frozen=True, slots=True)
class EpisodeUsage:
    """What one episode used: endpoint tokens, wall time, the models it asked."""

    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    models: tuple[str, ...] = ()


def episode_cost(usage: EpisodeUsage, price: Price, concurrency: int = 1) -> float:
    """USD of one episode (formula in the module docstring).

    Raises:
        ValueError: ``concurrency`` below 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    return (
        usage.prompt_tokens * price.prompt / 1e6
        + usage.completion_tokens * price.completion / 1e6
        + price.gpu_hour * usage.wall_s / 3600.0 / concurrency
    )


@dataclass(frozen=True, slots=True)
class SideCost:
    """The cost figures of one side of a paired run.

    ``total_usd`` is None ("n/a") when the side cannot be priced; ``note`` says why,
    or how it was priced.
    """

    label: str
    questions: int
    resolved: int
    episodes: int
    prompt_tokens: int
    completion_tokens: int
    wall_mean_s: float
    wall_p50_s: float
    wall_p95_s: float
    models: tuple[str, ...]
    priced_by: str | None
    price: Price | None
    total_usd: float | None
    note: str

    @property
    def per_episode_usd(self) -> float | None:
        if self.total_usd is None or not self.episodes:
            return None
        return self.total_usd / self.episodes

    @property
    def per_resolved_usd(self) -> float | None:
        if self.total_usd is None or not self.resolved:
            return None
        return self.total_usd / self.resolved

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; USD figures are None when n/a."""
        return {
            "label": self.label,
            "questions": self.questions,
            "resolved": self.resolved,
            "episodes": self.episodes,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "wall_s": {"mean": self.wall_mean_s, "p50": self.wall_p50_s, "p95": self.wall_p95_s},
            "models": list(self.models),
            "priced_by": self.priced_by,
            "price": self.price.to_dict() if self.price is not None else None,
            "total_usd": self.total_usd,
            "per_episode_usd": self.per_episode_usd,
            "per_resolved_usd": self.per_resolved_usd,
            "note": self.note,
        }


def _pricing(
    label: str, models: Sequence[str], prices: Mapping[str, Price] | None
) -> tuple[str | None, str]:
    """The table entry pricing a side (label first, then its one model), or why none does."""
    if prices and label in prices:
        return label, ""
    if prices and len(models) == 1 and models[0] in prices:
        return models[0], ""
    if not models:
        return None, "no model calls"
    if prices is None:
        return None, "no price table (--prices FILE)"
    if len(models) > 1:
        return None, f"several models ({', '.join(models)}); price the side by its label"
    return None, f"no price for {label!r} or model {models[0]!r} in the price table"


def side_cost(
    label: str,
    episodes: Sequence[EpisodeUsage],
    questions: int,
    resolved: int,
    prices: Mapping[str, Price] | None,
    concurrency: int = 1,
) -> SideCost:
    """Tokens, wall time and cost of one side (see the module docstring).

    Args:
        label: the side's label (a price table key).
        episodes: every episode of the side (all rollouts).
        questions: the tasks run; ``resolved``: how many were resolved.
        prices: the price table, or None when none was given.
        concurrency: episodes that ran at once on one machine (``--workers``).

    Raises:
        ValueError: ``concurrency`` below 1, or ``resolved`` above ``questions``.
    """
    if resolved > questions:
        raise ValueError(f"resolved ({resolved}) is more than the questions ({questions})")
    walls = np.asarray([e.wall_s for e in episodes] or [0.0], dtype=float)
    models = tuple(dict.fromkeys(m for e in episodes for m in e.models))
    key, note = _pricing(label, models, prices)
    price = prices[key] if prices and key is not None else None
    total: float | None = None
    if price is not None:
        silent = sum(1 for e in episodes if e.models and not e.prompt_tokens + e.completion_tokens)
        if price.per_token and silent:
            note = f"the endpoint reported no token usage for {silent} of {len(episodes)} episodes"
        else:
            total = sum(episode_cost(e, price, concurrency) for e in episodes)
            note = f"{key}: {price.describe()}"
    elif not models and not any(e.prompt_tokens + e.completion_tokens for e in episodes):
        total = 0.0  # no model asked, no token used: wall time only
    return SideCost(
        label=label,
        questions=questions,
        resolved=resolved,
        episodes=len(episodes),
        prompt_tokens=sum(e.prompt_tokens for e in episodes),
        completion_tokens=sum(e.completion_tokens for e in episodes),
        wall_mean_s=float(walls.mean()),
        wall_p50_s=float(np.percentile(walls, 50)),
        wall_p95_s=float(np.percentile(walls, 95)),
        models=models,
        priced_by=key,
        price=price,
        total_usd=total,
        note=note,
    )


def _resolved(outcome: TaskOutcome) -> bool:
    gold = outcome.task.gold_doc_ids
    return bool(gold) and all_gold_at_k(outcome.metrics.ranked_doc_ids, gold, RESOLVED_AT) >= 1.0


def report_costs(report: PairedReport) -> dict[str, SideCost]:
    """``{"a": SideCost, "b": SideCost}`` of a paired run.

    The price table is ``report.settings["prices"]`` (as :func:`parse_prices` reads
    it; absent: no table), the concurrency ``report.settings["workers"]``; every
    rollout is one episode.
    """
    table = report.settings.get("prices")
    prices = (
        parse_prices(table, str(report.settings.get("prices_file") or "prices")) if table else None
    )
    concurrency = max(1, int(report.settings.get("workers") or 1))
    out: dict[str, SideCost] = {}
    for side, run, outcomes in (("a", report.run_a, report.a), ("b", report.run_b, report.b)):
        episodes = [
            EpisodeUsage(r.prompt_tokens, r.completion_tokens, r.wall_s, tuple(r.models))
            for o in outcomes
            for r in (o.rollouts or [o.metrics])
        ]
        resolved = sum(1 for o in outcomes if _resolved(o))
        out[side] = side_cost(run.label, episodes, len(outcomes), resolved, prices, concurrency)
    return out


def format_usd(value: float | None) -> str:
    """``$0.0123`` under a dollar, ``$12.34`` above, ``< $0.0001``, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if value == 0:
        return "$0.00"
    if abs(value) < 0.0001:
        return "< $0.0001"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
