"""Policies: what proposes each turn's tool calls or final answer.

Policies are looked up by name in :data:`POLICIES` (``name -> "module:factory"``),
imported only when asked for. Other modules register theirs with
:func:`register_policy`; the harness itself never imports a concrete policy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from thresher.errors import ConfigError

if TYPE_CHECKING:
    from thresher.policies.base import Policy

__all__ = ["POLICIES", "register_policy", "get_policy", "policy_names"]

#: policy name -> "module:factory" (a class or function returning a Policy)
POLICIES: dict[str, str] = {
    "local": "thresher.policies.local:LocalPolicy",
    "single-shot": "thresher.policies.single_shot:SingleShotPolicy",
    "bm25": "thresher.policies.baselines:Bm25SingleShotPolicy",
    "dense": "thresher.policies.baselines:DenseSingleShotPolicy",
    "hybrid-rerank": "thresher.policies.baselines:hybrid_rerank_policy",
    "no-prune": "thresher.policies.baselines:no_prune_policy",
    "llm": "thresher.policies.llm:LLMPolicy",
    "context-1": "thresher.policies.llm:context1_policy",
}


def register_policy(name: str, target: str) -> None:
    """Make ``get_policy(name)`` build ``target`` (``"package.module:factory"``)."""
    if ":" not in target:
        raise ConfigError(f"policy target '{target}' must look like 'package.module:factory'")
    POLICIES[name] = target


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)


def get_policy(name: str, **options: Any) -> Policy:
    """Build the policy registered as ``name`` with ``options``.

    Raises ``ConfigError`` for an unknown name (listing the known ones).
    """
    target = POLICIES.get(name)
    if target is None:
        raise ConfigError(f"unknown policy '{name}'; choose one of: {', '.join(policy_names())}")
    module, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    return factory(**options)
