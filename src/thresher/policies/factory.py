"""What a policy name stands for: a :class:`PolicyFactory`, called with (config, seed, options).

A factory declares its options as a record (a dataclass instance,
:attr:`PolicyFactory.defaults`): the record's fields are the policy's
``[policy]`` settings, their annotations the types a ``--set`` string is
converted to, their values the defaults. :func:`thresher.policies.build_policy`
fills the record from the config's ``[policy]`` section, ``episode.k`` and the
caller's options, then calls the factory with the settings and the seed: every
factory takes all three, so nothing is passed or withheld by reading a
signature. :class:`Factory` makes one from a function::

    @dataclass(frozen=True)
    class MyOptions:
        top_k: int = 5

    def _build(config: Config, seed: int | None, options: MyOptions) -> MyPolicy:
        return MyPolicy(options.top_k)

    my_policy = Factory(_build, MyOptions())   # register "mypkg.policies:my_policy"
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from thresher.errors import ConfigError

if TYPE_CHECKING:
    from thresher.config import Config
    from thresher.harness.policy import Policy

__all__ = ["PolicyFactory", "Factory", "NoOptions", "fill_options", "option_types"]

OptionsT = TypeVar("OptionsT")


@runtime_checkable
class PolicyFactory(Protocol):
    """Builds a policy from the settings, a seed and its options record.

    Attributes:
        defaults: the options record (a dataclass instance) with the default of each
            option; its fields are the policy's ``[policy]`` settings.
        seeded: whether ``seed`` changes what the policy does (rollouts then differ;
            the eval report says which sides had seeded rollouts).
    """

    @property
    def defaults(self) -> Any: ...

    @property
    def seeded(self) -> bool: ...

    def __call__(self, config: Config, seed: int | None, options: Any, /) -> Policy:
        """The policy: ``config`` the run's settings, ``seed`` the rollout's (None: no
        seed asked for), ``options`` a record of the type of :attr:`defaults`."""
        ...


@dataclass(frozen=True)
class Factory(Generic[OptionsT]):
    """A :class:`PolicyFactory` from a build function and its options' defaults."""

    build: Callable[[Config, int | None, OptionsT], Policy]
    defaults: OptionsT
    seeded: bool = False

    def __call__(self, config: Config, seed: int | None, options: OptionsT, /) -> Policy:
        return self.build(config, seed, options)


@dataclass(frozen=True, slots=True)
class NoOptions:
    """The options record of a policy that takes none."""


def option_types(defaults: Any) -> dict[str, type | None]:
    """Each option of a record, with the plain type (bool, int, float, str) a setting's
    value is converted to, or None (taken as given).

    The type is the default's when that is plain, else the first plain type of the
    field's annotation (``int | None`` gives int).
    """
    record = type(defaults)
    try:
        hints = typing.get_type_hints(record)
    except (NameError, TypeError):  # an unresolvable annotation: convert by default only
        hints = {}
    plain = (bool, int, float, str)
    out: dict[str, type | None] = {}
    for f in dataclasses.fields(defaults):
        default = getattr(defaults, f.name)
        kind: type | None = type(default) if type(default) in plain else None
        if kind is None and default is None:
            args = typing.get_args(hints.get(f.name)) or (hints.get(f.name),)
            kind = next((a for a in args if a in plain), None)
        out[f.name] = kind
    return out


def fill_options(spec: str, factory: PolicyFactory, given: Mapping[str, Any]) -> Any:
    """``factory.defaults`` with the options ``given`` replaced (values taken as they are).

    Raises:
        ConfigError: an option the policy does not have (its options listed).
    """
    known = option_types(factory.defaults)
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigError(
            f"policy '{spec}' has no option {', '.join(repr(u) for u in unknown)}; "
            f"its options: {', '.join(sorted(known)) or 'none'}"
        )
    return dataclasses.replace(factory.defaults, **given)
