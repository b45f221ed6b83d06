"""How the name ``local`` builds the local policy (a :class:`~thresher.policies.factory.PolicyFactory`)."""

from __future__ import annotations

from thresher.config import Config
from thresher.policies.factory import Factory
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy

__all__ = ["local"]


def _local(config: Config, seed: int | None, options: LocalOptions) -> LocalPolicy:
    """The local policy (deterministic: ``seed`` changes nothing)."""
    return LocalPolicy(options, config=config)


#: the ``local`` policy's factory
local = Factory(_local, LocalOptions())
