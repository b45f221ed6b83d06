"""thresher's search harness as a verifiers (v1) environment.

``vf-eval thresher-search`` loads this package: the taskset (:mod:`thresher_search.taskset`:
thresher tasks on an index, thresher's reward and metrics) and its default harness
(:mod:`thresher_search.harness`: one ``thresher.env.SearchEnv`` episode per rollout, every
model call through verifiers' interception endpoint). ``load_environment(...)`` builds the
same environment from Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers.v1 as vf

from thresher_search.harness import ThresherSearchHarness, ThresherSearchHarnessConfig
from thresher_search.taskset import (
    ThresherSearchConfig,
    ThresherSearchData,
    ThresherSearchTask,
    ThresherSearchTaskset,
)

__all__ = ["ThresherSearchTaskset", "ThresherSearchHarness", "load_environment"]

#: the id verifiers knows this environment by (``vf-eval thresher-search``)
ENV_ID = "thresher-search"


def load_environment(
    index: str | Path | None = None,
    tasks: str | Path | None = None,
    *,
    seed: int = 7,
    size: str = "small",
    world_dir: str | Path | None = None,
    num_tasks: int | None = None,
    beta: float = 4.0,
    mode: str = "edit",
    config: str | Path | None = None,
    training: bool = False,
    runtime: dict[str, Any] | None = None,
) -> vf.Env:
    """The environment over ``index`` and ``tasks`` (or the seeded world ``seed``/``size``,
    built into ``world_dir``, by default thresher's cache folder), its harness in ``mode`` (``edit`` or ``append``)
    with thresher settings ``config``. ``runtime``: verifiers' runtime config for the
    harness (default: a local subprocess runtime; the harness runs in-process and needs no
    container)."""
    env_config = vf.resolve_env_config(
        {
            "taskset": {
                "id": ENV_ID,
                "index": None if index is None else str(index),
                "tasks": None if tasks is None else str(tasks),
                "seed": seed,
                "size": size,
                "world_dir": None if world_dir is None else str(world_dir),
                "num_tasks": num_tasks,
                "beta": beta,
            },
            "agent": {
                "harness": {
                    "id": ENV_ID,
                    "mode": mode,
                    "config": None if config is None else str(config),
                    "training": training,
                },
                "runtime": runtime or {"type": "subprocess"},
            },
        }
    )
    return vf.load_environment(env_config)


# re-exported for `from thresher_search import ...`; not plugin exports (`__all__` names
# exactly one Taskset and one Harness, as verifiers' loader requires)
_PUBLIC = (
    ThresherSearchConfig,
    ThresherSearchData,
    ThresherSearchTask,
    ThresherSearchHarnessConfig,
)
