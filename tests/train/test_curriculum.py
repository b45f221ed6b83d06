"""Curriculum schedules over beta and hops, and the sampler."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest

from thresher.errors import InputError
from thresher.train.curriculum import Curriculum, CurriculumSampler, task_hops


def test_beta_anneals_from_4_to_2() -> None:
    c = Curriculum(total_steps=100)
    assert [c.beta(s) for s in (0, 50, 100, 150, -5)] == [4.0, 3.0, 2.0, 2.0, 4.0]
    warm = Curriculum(total_steps=110, warmup_steps=10)
    assert warm.beta(10) == 4.0 and warm.beta(60) == 3.0
    cos = Curriculum(total_steps=100, shape="cosine")
    assert cos.beta(50) == pytest.approx(3.0)
    assert cos.beta(25) == pytest.approx(4 - 2 * (0.5 - 0.5 * math.cos(math.pi / 4)))


def test_hop_weights_move_from_2_to_4() -> None:
    c = Curriculum(total_steps=100)
    w0 = c.hop_weights(0)
    # centre 2, spread 0.6: raw 1, exp(-1/0.72), max(0.02, exp(-4/0.72))
    raw = [1.0, math.exp(-1 / 0.72), 0.02]
    assert [w0[h] for h in (2, 3, 4)] == pytest.approx([r / sum(raw) for r in raw])
    w_mid, w_end = c.hop_weights(50), c.hop_weights(100)
    assert max(w_mid, key=w_mid.get) == 3
    assert [w_end[h] for h in (4, 3, 2)] == pytest.approx([w0[h] for h in (2, 3, 4)])
    for w in (w0, w_mid, w_end):
        assert sum(w.values()) == pytest.approx(1.0) and min(w.values()) > 0


def test_bad_schedules_are_refused() -> None:
    with pytest.raises(InputError):
        Curriculum(total_steps=0)
    with pytest.raises(InputError):
        Curriculum(total_steps=10, beta_end=0)
    with pytest.raises(InputError):
        Curriculum(total_steps=10, shape="square")  # type: ignore[arg-type]


def pool() -> list[SimpleNamespace]:
    return [SimpleNamespace(hops=h, task_id=f"{h}-{i}") for h in (2, 3, 4) for i in range(5)]


def test_sampler_follows_the_schedule_and_is_seeded() -> None:
    c = Curriculum(total_steps=100)
    a, b = CurriculumSampler(pool(), c, seed=1), CurriculumSampler(pool(), c, seed=1)
    assert [t.task_id for t in a.sample(0, 50)] == [t.task_id for t in b.sample(0, 50)]
    early = Counter(t.hops for t in CurriculumSampler(pool(), c, seed=2).sample(0, 400))
    late = Counter(t.hops for t in CurriculumSampler(pool(), c, seed=2).sample(100, 400))
    assert early[2] > early[3] > early[4]
    assert late[4] > late[3] > late[2]


def test_sampler_falls_back_to_the_nearest_hop_count() -> None:
    only_two = [SimpleNamespace(hops=2, task_id="x")]
    s = CurriculumSampler(only_two, Curriculum(total_steps=10), seed=0)
    assert {t.task_id for t in s.sample(10, 20)} == {"x"}
    with pytest.raises(InputError):
        CurriculumSampler([], Curriculum(total_steps=10))


def test_task_hops_reads_every_task_kind() -> None:
    assert task_hops(SimpleNamespace(hops=3)) == 3
    assert task_hops(SimpleNamespace(hops=[["a"], ["b"]])) == 2
    assert task_hops(SimpleNamespace(hops=[], metadata={"n_hops": 4})) == 4
    assert task_hops(SimpleNamespace(hops=[], metadata={}, gold_doc_ids=["a", "b"])) == 2
