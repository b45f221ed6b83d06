"""Training rows are the same, in the same order, on every run (the shipped fit is reproducible)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from thresher.config import Config
from thresher.index.backends import open_store
from thresher.tasks.readers import load_tasks
from thresher.tasks.task import Task
from thresher.train.local.trainer import collect, fit_weights, prior_weights


def _world_tasks(index: Path) -> list[Task]:
    return load_tasks(index.parent / "corpus" / ".world" / "chains.jsonl")


def test_collect_twice_gives_identical_rows_and_weights(world_index: Path, tmp_path: Path) -> None:
    config = Config()
    tasks = _world_tasks(world_index)
    assert tasks
    runs = []
    for _ in range(2):  # a fresh store each time: nothing carried over but the index
        with open_store(world_index, config) as store:
            runs.append(collect(tasks, store, prior_weights(), config=config))
    (bx1, fx1, y1), (bx2, fx2, y2) = runs[0].arrays(), runs[1].arrays()
    assert np.array_equal(bx1, bx2) and np.array_equal(fx1, fx2) and np.array_equal(y1, y2)
    assert np.array_equal(np.vstack(runs[0].stop_x), np.vstack(runs[1].stop_x))
    first = fit_weights(runs[0], order=False).save(tmp_path / "a.json").read_bytes()
    assert fit_weights(runs[1], order=False).save(tmp_path / "b.json").read_bytes() == first
