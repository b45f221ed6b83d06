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
import typing
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
    "policy_settings",
    "count_settings",
]

#: a factory's document-count parameters and how ``k`` sets them: the documents it
#: answers with (``k``), or keeps in view while it searches (at least ``k``)
_COUNTS: dict[str, Callable[[int, Any], int]] = {
    "top_k": lambda k, default: k,
    "final_k": lambda k, default: k,
    "keep_docs": lambda k, default: max(k, default) if isinstance(default, int) else k,
}

#: factory parameters the harness fills in itself, never a ``[policy]`` setting
_NOT_SETTINGS = frozenset({"self", "config", "seed", "recorder", "client", "env", "sleep"})

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
    takes them and ``options`` does not already set them; its ``[policy]`` section
    (:func:`policy_settings`) gives keyword arguments that ``options`` may override.

    Raises ``ConfigError`` for an unknown policy, or a ``[policy]`` setting it does
    not take.
    """
    params = factory_parameters(spec)
    out = policy_settings(spec, config.policy_options) if config is not None else {}
    if config is not None and config.episode.k:
        for name, value in count_settings(spec, config.episode.k).items():
            out.setdefault(name, value)
    out.update(options or {})
    if config is not None and "config" in params:
        out.setdefault("config", config)
    if seed is not None and "seed" in params:
        out.setdefault("seed", seed)
    return get_policy(spec, **out)


def policy_settings(spec: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A config's ``[policy]`` settings, checked against the factory of ``spec``.

    Each name must be a keyword parameter of the factory; a value is converted to
    the type of the parameter's default (``--set policy.keep_docs=8`` gives the
    string ``"8"``, the factory gets ``8``), and a parameter whose default is None
    takes the first plain type of its annotation.

    Raises:
        ConfigError: a name the factory does not take (its settings listed), or a
            value of the wrong type.
    """
    if not given:
        return {}
    from thresher.config import coerce_setting

    params = _setting_params(spec)
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


def _setting_params(spec: str) -> dict[str, type | None]:
    """The settable keyword parameters of the factory of ``spec``, each with the plain
    type (bool, int, float, str) its value is converted to, or None (taken as given)."""
    factory = policy_factory(spec)
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}
    try:
        hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory)
    except (NameError, TypeError):  # an unresolvable annotation: convert by default only
        hints = {}
    plain = (bool, int, float, str)
    out: dict[str, type | None] = {}
    for name, param in signature.parameters.items():
        if name in _NOT_SETTINGS or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        kind: type | None = type(param.default) if type(param.default) in plain else None
        if kind is None and param.default is None:
            args = typing.get_args(hints.get(name)) or (hints.get(name),)
            kind = next((a for a in args if a in plain), None)
        out[name] = kind
    return out


def count_settings(spec: str, k: int) -> dict[str, int]:
    """The factory settings of ``spec`` that make it answer with ``k`` documents.

    ``top_k`` and ``final_k`` become ``k``; ``keep_docs`` (what the local policy keeps
    in view while it searches) becomes at least ``k``. A policy without such a
    parameter is held to ``k`` by the harness alone (it keeps the first ``k``).
    """
    try:
        params = inspect.signature(policy_factory(spec)).parameters
    except (TypeError, ValueError):
        return {}
    return {name: rule(k, params[name].default) for name, rule in _COUNTS.items() if name in params}
