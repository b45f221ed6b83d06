"""thresher as an environment a trainer drives: :class:`SearchEnv` (see ``docs/rl.md``)."""

from thresher.env.search_env import (
    Rollout,
    SearchEnv,
    Step,
    Turn,
    WorkClock,
    infrastructure_failure,
)

__all__ = ["SearchEnv", "Step", "Turn", "Rollout", "WorkClock", "infrastructure_failure"]
