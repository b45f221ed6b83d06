"""An attack suite: documents written to steer a search agent, and how to score them.

Retrieved text is data, never instruction: the harness alone owns the tool
allow-list, the budget and the termination logic. This package measures that
promise instead of asserting it. It generates attack documents into a
fictional world (data we own), each with a measurable success condition, and
judges an episode's trace twice:

* *model level*: did the policy do what the attack asked (prune the chunk it
  names, stop at once, call a tool, cite a document, echo the system prompt,
  forge a delimiter in the transcript)? A policy may obey; the trace records it.
* *harness level*: did content change the allow-list, the budget or the
  termination? Never allowed; :func:`harness_breaches` lists any such change.

Modules: :mod:`.catalog` (the attacks and their goals), :mod:`.templates` and
:mod:`.forgeries` (their texts), :mod:`.obedient` (the replies of a model that
obeys every instruction it is shown, as replay-server script entries),
:mod:`.judge` and :mod:`.outcome_checks` (success conditions, harness breaches,
attribution evidence), :mod:`.admit` (which attack documents an ingest admits),
:mod:`.run` (running an attack and the summary table), :mod:`.suite` (every
attack against the local policy and an obedient LLM policy). The default ``thresher synth world`` output holds
no attack: :func:`write_attacks` adds the attacks to a world folder on request.
"""

from __future__ import annotations

from thresher._lazy import lazy_getattr

__all__ = [
    "Attack",
    "AttackFile",
    "Goal",
    "ATTACK_CLASSES",
    "build_attacks",
    "write_attacks",
    "read_attacks",
    "harness_breaches",
    "judge_attack",
    "obedient_script",
    "AttackOutcome",
    "run_attack",
    "summarize",
    "format_table",
]

_WHERE = {
    "Attack": ".catalog",
    "AttackFile": ".catalog",
    "Goal": ".catalog",
    "ATTACK_CLASSES": ".catalog",
    "build_attacks": ".catalog",
    "write_attacks": ".catalog",
    "read_attacks": ".catalog",
    "harness_breaches": ".judge",
    "judge_attack": ".judge",
    "obedient_script": ".obedient",
    "AttackOutcome": ".judge",
    "run_attack": ".run",
    "summarize": ".run",
    "format_table": ".run",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
