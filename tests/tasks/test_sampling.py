"""``eval --sample``: tasks drawn across hop counts."""

from __future__ import annotations

from collections import Counter

import pytest

from thresher.errors import ConfigError
from thresher.tasks.sampling import hop_count, sample_by_hops
from thresher.tasks.task import Task


def _tasks() -> list[Task]:
    hops = [2] * 60 + [3] * 30 + [4] * 10
    return [
        Task(f"q{i}", "?", "a", hops=[[f"d{i}-{h}"] for h in range(n)]) for i, n in enumerate(hops)
    ]


def test_sample_keeps_each_hop_counts_share_and_file_order() -> None:
    tasks = _tasks()
    drawn = sample_by_hops(tasks, 10, seed=3)
    assert Counter(hop_count(t) for t in drawn) == {2: 6, 3: 3, 4: 1}
    ids = [t.task_id for t in tasks]
    assert [ids.index(t.task_id) for t in drawn] == sorted(ids.index(t.task_id) for t in drawn)
    assert drawn == sample_by_hops(tasks, 10, seed=3)  # the seed decides
    assert drawn != sample_by_hops(tasks, 10, seed=4)


def test_sample_gives_every_hop_count_a_task_and_never_more_than_asked() -> None:
    tasks = _tasks()
    assert Counter(hop_count(t) for t in sample_by_hops(tasks, 3, seed=0)) == {2: 1, 3: 1, 4: 1}
    assert len(sample_by_hops(tasks, 2, seed=0)) == 2
    assert len(sample_by_hops(tasks, 7, seed=0)) == 7
    assert sample_by_hops(tasks, 500) == tasks
    with pytest.raises(ConfigError, match="--sample"):
        sample_by_hops(tasks, 0)
