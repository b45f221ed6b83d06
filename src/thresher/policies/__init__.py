"""Policies: what proposes each turn's tool calls or final answer.

A policy is named three ways, all resolved by :func:`policy_factory`:

* a built-in name from :data:`POLICIES` (``name -> "module:factory"``, imported
  only when asked for);
* a name a third-party package registers under the ``thresher.policies`` entry
  point group (``[project.entry-points."thresher.policies"] mine = "pkg.mod:factory"``);
* ``module:factory`` itself (``--policy mypkg.policies:my_policy``).

Each names a :class:`~thresher.policies.factory.PolicyFactory`: called with the
settings, a seed and its options record, whatever the policy (see
:mod:`thresher.policies.factory`). :func:`register_policy` adds a name at run time.
The harness never imports a concrete policy: it drives a subclass of
:class:`thresher.harness.policy.BasePolicy`, or whatever else satisfies
:class:`thresher.harness.policy.Policy`.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from thresher.config import Config, coerce_setting
from thresher.errors import ConfigError
from thresher.policies.factory import PolicyFactory, fill_options, option_types

if TYPE_CHECKING:
    from thresher.harness.policy import Policy

__all__ = [
    "POLICIES",
    "ENTRY_POINT_GROUP",
    "PolicyFactory",
    "register_policy",
    "get_policy",
    "build_policy",
    "policy_factory",
    "policy_names",
    "is_policy_spec",
    "policy_settings",
    "count_settings",
]

#: a factory's document-count options and how ``k`` sets them: the documents it
#: answers with (``k``), or keeps in view while it searches (at least ``k``)
_COUNTS: dict[str, Callable[[int, Any], int]] = {
    "top_k": lambda k, default: k,
    "final_k": lambda k, default: k,
    "keep_docs": lambda k, default: max(k, default) if isinstance(default, int) else k,
}

#: the entry point group third-party packages register their policies under
ENTRY_POINT_GROUP = "thresher.policies"

#: policy name -> "module:factory" (a :class:`~thresher.policies.factory.PolicyFactory`)
POLICIES: dict[str, str] = {
    "local": "thresher.policies.local.factory:local",
    "single-shot": "thresher.policies.single_shot:single_shot",
    "bm25": "thresher.policies.baselines:bm25",
    "dense": "thresher.policies.baselines:dense",
    "hybrid-rerank": "thresher.policies.baselines:hybrid_rerank",
    "no-prune": "thresher.policies.baselines:no_prune",
    "llm": "thresher.policies.llm.factory:llm",
    "context-1": "thresher.policies.llm.factory:context1",
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
    """Whether ``spec`` names a known policy or has the ``module:factory`` form."""
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
        "or name a factory as 'package.module:factory'"
    )


def policy_factory(spec: str) -> PolicyFactory:
    """The :class:`~thresher.policies.factory.PolicyFactory` the policy ``spec`` names.

    Raises ``ConfigError`` for an unknown name, a factory that cannot be imported,
    or an object that is not a ``PolicyFactory``.
    """
    target = _target(spec)
    module, _, attr = target.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load policy '{spec}' ({target}): {exc}") from exc
    if not isinstance(found, PolicyFactory) or not dataclasses.is_dataclass(found.defaults):
        raise ConfigError(
            f"policy '{spec}' ({target}) is not a PolicyFactory: name an object called with "
            "(config, seed, options) whose `defaults` is its options record (a dataclass) "
            "and `seeded` says whether the seed matters; "
            "thresher.policies.factory.Factory(build, Options()) makes one"
        )
    return found


def get_policy(
    spec: str, config: Config | None = None, *, seed: int | None = None, **options: Any
) -> Policy:
    """Build the policy ``spec`` names with ``options`` (see :func:`build_policy`).

    Raises ``ConfigError`` for an unknown name (listing the known ones) or option.
    """
    return build_policy(spec, config, options, seed=seed)


def build_policy(
    spec: str,
    config: Config | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
) -> Policy:
    """Build a policy the way every caller (API, CLI, eval, training) does.

    The factory is called with ``config`` (default ``Config()``), ``seed`` and its
    options record, filled from the config's ``[policy]`` section
    (:func:`policy_settings`), then ``episode.k`` (:func:`count_settings`), then
    ``options``, each overriding the one before.

    Raises ``ConfigError`` for an unknown policy, or a ``[policy]`` setting or an
    option it does not take.
    """
    factory = policy_factory(spec)
    cfg = config if config is not None else Config()
    out = policy_settings(spec, cfg.policy_options)
    if cfg.episode.k:
        for name, value in count_settings(spec, cfg.episode.k).items():
            out.setdefault(name, value)
    out.update(options or {})
    return factory(cfg, seed, fill_options(spec, factory, out))


def policy_settings(spec: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A config's ``[policy]`` settings, checked against the factory of ``spec``.

    Each name must be a field of the factory's options record; a value is converted
    to the type of the field's default (``--set policy.keep_docs=8`` gives the
    string ``"8"``, the factory gets ``8``), and a field whose default is None
    takes the first plain type of its annotation.

    Raises:
        ConfigError: a name the factory does not take (its settings listed), or a
            value of the wrong type.
    """
    if not given:
        return {}
    params = option_types(policy_factory(spec).defaults)
    unknown = sorted(set(given) - set(params))
    if unknown:
        known = ", ".join(sorted(params)) or "none"
        raise ConfigError(
            f"policy '{spec}' has no setting {', '.join(repr(u) for u in unknown)}; "
            f"its settings: {known}"
        )
    out: dict[str, Any] = {}
    for name, value in given.items():
        kind = params[name]
        out[name] = value if kind is None else coerce_setting(f"policy.{name}", value, kind)
    return out


def count_settings(spec: str, k: int) -> dict[str, int]:
    """The options of ``spec`` that make it answer with ``k`` documents.

    ``top_k`` and ``final_k`` become ``k``; ``keep_docs`` (what the local policy keeps
    in view while it searches) becomes at least ``k``. A policy without such an
    option is held to ``k`` by the harness alone (it keeps the first ``k``).
    """
    defaults = policy_factory(spec).defaults
    names = {f.name for f in dataclasses.fields(defaults)}
    return {
        name: rule(k, getattr(defaults, name)) for name, rule in _COUNTS.items() if name in names
    }
