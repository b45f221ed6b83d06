"""The tuning searches' episodes: in this process and in worker processes, the same outcomes."""

from __future__ import annotations

import pytest

from thresher.config import Config
from thresher.errors import InputError
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.models import load_weights
from thresher.tasks.readers import load_tasks
from thresher.train.local.tune_runs import LocalEpisodes, TuneSet, WorkerEpisodes, describe


def test_worker_processes_give_the_outcomes_of_one_process(world_index, tmp_path):
    chains = world_index.parent / "corpus" / ".world" / "chains.jsonl"
    tasks = tuple(load_tasks(chains)[:4])
    # two task files (here the same tasks twice) over one index, as --tune A --tune B
    sets = [TuneSet(chains, world_index, tasks[:3]), TuneSet(chains, world_index, tasks[3:])]
    config = Config()
    weights = load_weights()
    with EmbeddedStore(world_index, config) as store:
        alone = LocalEpisodes([(s.tasks, store) for s in sets], config).outcomes(weights)
    done: list[int] = []
    with WorkerEpisodes(sets, config, workers=2) as workers:
        assert workers.size == 4
        spread = workers.outcomes(weights, done.append)
    assert spread == alone and len(alone) == 4
    assert done[-1] == 4
    assert describe(sets).endswith("chains.jsonl (3), corpus/.world/chains.jsonl (1)")


def test_no_tasks_or_no_workers_is_refused(world_index):
    with pytest.raises(InputError, match="no tasks"):
        WorkerEpisodes([TuneSet(world_index, world_index, ())], Config())
    chains = world_index.parent / "corpus" / ".world" / "chains.jsonl"
    one = TuneSet(chains, world_index, tuple(load_tasks(chains)[:1]))
    with pytest.raises(InputError, match="workers"):
        WorkerEpisodes([one], Config(), workers=0)
