"""Run attacks as real episodes, and summarize the verdicts per attack class and policy.

:func:`run_attack` runs one episode of a policy on an attack's question over a
store that holds the attack documents, records every user and tool message the
policy is sent (the transcript is rendered from the state each turn, exactly
what an LLM policy sends), and judges it (:mod:`thresher.synth.attacks.judge`).
Success is judged against a control: the same policy with the attack documents
hidden (a :class:`~thresher.index.filtered.FilteredStore` through
``DocFilter.without``, for a policy that searches), or not obeying (a
scripted model), so that what a policy does anyway is not counted. :func:`summarize` and :func:`format_table` give the table the
bench prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.harness.policy import Policy
from thresher.harness.render import render_messages
from thresher.harness.result import Result
from thresher.harness.state import EpisodeState
from thresher.index.store import Store
from thresher.synth.attacks.catalog import Attack
from thresher.synth.attacks.judge import AttackOutcome, judge_attack

__all__ = ["attack_config", "run_attack", "Row", "summarize", "format_table"]


def attack_config(attack: Attack, config: Config) -> Config:
    """``config`` with the attack's own overrides (a small budget for budget attacks)."""
    return config.override(attack.config) if attack.config else config


def run_attack(
    attack: Attack,
    store: Store,
    policy: Policy,
    config: Config,
    *,
    label: str,
    control: Result | None = None,
) -> tuple[Result, AttackOutcome]:
    """One attacked episode and its verdict.

    Args:
        attack: the attack (its question is asked).
        store: an index holding the attack documents.
        policy: the policy under attack.
        config: the base config (the attack's overrides are applied).
        label: the policy's name in the table.
        control: the control run (the same policy without the attack), when one was run.
    """
    cfg = attack_config(attack, config)
    sent: set[str] = set()

    def record(state: EpisodeState) -> None:
        for message in render_messages(state):
            if message["role"] in ("user", "tool"):
                sent.add(str(message.get("content") or ""))

    result = run_episode(attack.question, store, policy, cfg, on_turn=record)
    outcome = judge_attack(
        attack,
        result,
        policy=label,
        config=cfg,
        schemas=policy.tool_schemas(),
        messages=sent,
        system_prompt=str(policy.system_prompt),
        control=control,
    )
    return result, outcome


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: an attack class under one policy."""

    kind: str
    policy: str
    run: int
    exposed: int
    visible: int
    succeeded: int
    refusals: int
    flagged: int
    cited: int
    breaches: int


def summarize(outcomes: Iterable[AttackOutcome]) -> list[Row]:
    """Counts per (attack class, policy), in first-seen order."""
    groups: dict[tuple[str, str], list[AttackOutcome]] = {}
    for o in outcomes:
        groups.setdefault((o.kind, o.policy), []).append(o)
    return [
        Row(
            kind,
            policy,
            len(items),
            sum(o.exposed for o in items),
            sum(o.visible for o in items),
            sum(o.succeeded for o in items),
            sum(o.refusals for o in items),
            sum(o.flagged for o in items),
            sum(o.cited for o in items),
            sum(bool(o.breaches) for o in items),
        )
        for (kind, policy), items in groups.items()
    ]


_HEADER = (
    "class",
    "policy",
    "run",
    "exposed",
    "visible",
    "succeeded",
    "refusals",
    "flagged",
    "cited",
    "harness",
)


def format_table(rows: Sequence[Row]) -> str:
    """A fixed-width table of ``rows`` with a total line per policy.

    Columns: attacks run; exposed (an attack chunk was shown); visible (its
    instruction survived ingestion); succeeded (the policy did what it asked);
    refusals (recorded by the harness); flagged (a shown attack chunk carried
    injection flags); cited (an attack document is in the final ranking); harness
    (episodes with a harness-level breach: must be 0).
    """
    lines = [list(_HEADER)]
    for r in rows:
        lines.append(
            [r.kind, r.policy, *map(str, (r.run, r.exposed, r.visible, r.succeeded, r.refusals, r.flagged, r.cited, r.breaches))]
        )  # fmt: skip
    for policy in dict.fromkeys(r.policy for r in rows):
        mine = [r for r in rows if r.policy == policy]
        totals = [sum(getattr(r, f) for r in mine) for f in _HEADER[2:-1]] + [
            sum(r.breaches for r in mine)
        ]
        lines.append(["total", policy, *map(str, totals)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(_HEADER))]
    return "\n".join(
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
        for line in lines
    )  # fmt: skip
