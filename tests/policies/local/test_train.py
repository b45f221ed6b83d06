"""Curriculum ordering of training tasks (pure: no index)."""

from __future__ import annotations

import pytest

from thresher.errors import InputError
from thresher.eval.task import Task
from thresher.policies.local.train import curriculum_tasks


def make(i: int, hops: int) -> Task:
    docs = [f"d{i}-{h}" for h in range(hops)]
    return Task(task_id=f"t{i}-{hops}", question=f"q{i}?", answer="a", gold_doc_ids=docs)


def test_curriculum_tasks_move_from_few_to_many_hops():
    pool = [make(i, h) for h in (2, 3, 4) for i in range(10)]
    drawn = curriculum_tasks(pool, 300, seed=1)
    assert len(drawn) == 300 and {t.task_id for t in drawn} <= {t.task_id for t in pool}
    early = sum(len(t.gold_doc_ids) for t in drawn[:50]) / 50
    late = sum(len(t.gold_doc_ids) for t in drawn[-50:]) / 50
    assert early < 2.5 < 3.5 < late
    assert curriculum_tasks(pool, 300, seed=1) == drawn


def test_curriculum_tasks_need_steps_and_tasks():
    with pytest.raises(InputError):
        curriculum_tasks([make(0, 2)], 1)
    with pytest.raises(InputError):
        curriculum_tasks([], 10)
