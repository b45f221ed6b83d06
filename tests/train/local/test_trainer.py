"""Curriculum ordering of training tasks (pure: no index)."""

from __future__ import annotations

import pytest

from thresher.errors import InputError
from thresher.tasks.task import Task
from thresher.train.local.trainer import curriculum_tasks

from .pool_rows import pool_rows


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


def test_sample_weights_follow_rows_through_extend_subset_and_weighted():
    a, b = pool_rows("a", 40, 10), pool_rows("b", 30, 5)
    merged = a  # unweighted rows count 1
    merged.extend(b.weighted(0.25))
    assert merged.sample_weights().tolist() == [1.0] * 40 + [0.25] * 30
    assert merged.subset({"b"}).sample_weights().tolist() == [0.25] * 30
    with pytest.raises(ValueError):
        b.weighted(0)


def test_down_weighted_rows_pull_the_fit_less():
    from thresher.train.local.trainer import fit_weights

    real = pool_rows("real", 400, 100)
    other = pool_rows("synthetic", 400, 100, shift=3.0)  # a shifted feature distribution
    full_mix, light_mix = pool_rows("real", 400, 100), pool_rows("real", 400, 100)
    full_mix.extend(other)
    light_mix.extend(other.weighted(0.05))
    w_real = fit_weights(real).base.params["w"][0]
    w_full = fit_weights(full_mix).base.params["w"][0]
    w_light = fit_weights(light_mix).base.params["w"][0]
    assert abs(w_light - w_real) < abs(w_full - w_real)
