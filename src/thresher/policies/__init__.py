"""Policies: what proposes each turn's tool calls or final answer.

A policy is named three ways, all resolved by :func:`get_policy`:

* a built-in name from :data:`POLICIES` (``name -> "module:factory"``, imported
  only when asked for);
* a name a third-party package registers under the ``thresher.policies`` entry
  point group (``[project.entry-points."thresher.policies"] mine = "pkg.mod:Factory"``);
* ``module:Factory`` itself (``--policy mypkg.policies:MyPolicy``).

:func:`register_policy` adds a name at run time. The harness never imports a
concrete policy: it drives whatever satisfies :class:`thresher.harness.policy.Policy`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from thresher.errors import ConfigError

if TYPE_CHECKING:
    from thresher.config import Config
    from thresher.harness.policy import Policy

__all__ = [
    "POLICIES",
    "ENTRY_POINT_GROUP",
    "register_policy",
    "get_policy",
    "build_policy",
    "policy_factory",
    "factory_parameters",
    "policy_names",
    "is_policy_spec",
]

#: the entry point group third-party packages register their policies under
ENTRY_POINT_GROUP = "thresher.policies"

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


def _installed() -> dict[str, str]:
    """Policies registered by installed packages (entry point group ``thresher.policies``)."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def policy_names() -> list[str]:
    """Known policy names (built in, registered, installed), sorted."""
    return sorted({**_installed(), **POLICIES})


def is_policy_spec(spec: str) -> bool:
    """Whether ``spec`` names a known policy or has the ``module:Factory`` form."""
    try:
        _target(spec)
    except ConfigError:
        return False
    return True


def _target(spec: str) -> str:
    """The ``module:factory`` a policy name or spec stands for."""
    target = POLICIES.get(spec) or _installed().get(spec)
    if target is not None:
        return target
    module, sep, attr = spec.partition(":")
    if sep and module and attr:
        return spec
    raise ConfigError(
        f"unknown policy '{spec}'; choose one of: {', '.join(policy_names())}, "
        "or name a factory as 'package.module:Factory'"
    )


def policy_factory(spec: str) -> Callable[..., Policy]:
    """The class or function that builds the policy ``spec`` names.

    Raises ``ConfigError`` for an unknown name or a factory that cannot be imported.
    """
    target = _target(spec)
    module, _, attr = target.partition(":")
    try:
        factory = importlib.import_module(module)
        for part in attr.split("."):
            factory = getattr(factory, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load policy '{spec}' ({target}): {exc}") from exc
    if not callable(factory):
        raise ConfigError(f"policy '{spec}' ({target}) is not a class or function")
    return factory


def get_policy(spec: str, **options: Any) -> Policy:
    """Build the policy ``spec`` names (a name or ``module:Factory``) with ``options``.

    Raises ``ConfigError`` for an unknown name (listing the known ones).
    """
    return policy_factory(spec)(**options)


def factory_parameters(spec: str) -> set[str]:
    """The keyword parameters the factory of ``spec`` takes (empty when it has no signature)."""
    try:
        return set(inspect.signature(policy_factory(spec)).parameters)
    except (TypeError, ValueError):  # a builtin or C factory without a signature
        return set()


def build_policy(
    spec: str,
    config: Config | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
) -> Policy:
    """Build a policy the way every caller (API, CLI, eval, training) does.

    ``config`` is passed as ``config=`` and ``seed`` as ``seed=`` when the factory
    takes them and ``options`` does not already set them.

    Raises ``ConfigError`` for an unknown policy.
    """
    out = dict(options or {})
    params = factory_parameters(spec)
    if config is not None and "config" in params:
        out.setdefault("config", config)
    if seed is not None and "seed" in params:
        out.setdefault("seed", seed)
    return get_policy(spec, **out)
