"""Warm starts of the local policy's fitters, the task split and the index fingerprint
(pure: no index)."""

from __future__ import annotations

import numpy as np
import pytest

from thresher.errors import InputError
from thresher.tasks.task import Task
from thresher.train.local.adapt import split_tasks
from thresher.train.local.fit import fit_lambdarank, fit_logistic, prior_coefficients

from .pool_rows import pool_rows

FEATURES = ("a", "b", "c")


def _rows(n: int, seed: int, w: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(loc=[1.0, -2.0, 0.5], scale=[1.0, 3.0, 0.2], size=(n, 3))
    p = 1 / (1 + np.exp(-(x @ np.asarray(w) - 0.5)))
    return x, (rng.random(n) < p).astype(float)


def test_prior_coefficients_give_the_prior_logits_under_another_standardization() -> None:
    x, y = _rows(400, 0, (1.0, -0.5, 2.0))
    prior = fit_logistic(x, y, FEATURES)
    shifted = x * 3.0 + 7.0
    mean, std = shifted.mean(axis=0), shifted.std(axis=0)
    beta = prior_coefficients(prior, FEATURES, mean, std)
    z = (x - mean) / std
    assert np.allclose(z @ beta[:-1] + beta[-1], prior.logits(x))


def test_a_feature_the_prior_lacks_starts_at_zero_and_one_it_has_extra_is_dropped() -> None:
    x, y = _rows(300, 1, (1.0, 0.0, 0.0))
    prior = fit_logistic(x[:, :2], y, ("a", "b"))
    beta = prior_coefficients(prior, ("b", "a", "z"), np.zeros(3), np.ones(3))
    assert beta[2] == 0.0
    assert np.isclose(beta[1] * 1.0, prior.params["w"][0] / prior.std[0])


def test_anchor_moves_the_fit_from_the_new_rows_toward_the_prior() -> None:
    old_x, old_y = _rows(2000, 2, (2.0, 0.0, 0.0))
    new_x, new_y = _rows(2000, 3, (0.0, 0.0, 3.0))
    prior = fit_logistic(old_x, old_y, FEATURES)
    alone = fit_logistic(new_x, new_y, FEATURES)
    assert np.allclose(
        fit_logistic(new_x, new_y, FEATURES, prior=prior).params["w"], alone.params["w"]
    )
    mean, std = alone.mean, alone.std
    want = prior_coefficients(prior, FEATURES, mean, std)
    gaps = []
    for anchor in (0.0, 1.0, 100.0):
        fit = fit_logistic(new_x, new_y, FEATURES, prior=prior, anchor=anchor)
        got = np.append(fit.params["w"], fit.params["b"])
        gaps.append(float(np.abs(got - want).max()))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.05 * gaps[0]


def test_a_lambdarank_warm_start_keeps_the_trees_and_adds_rounds() -> None:
    rng = np.random.default_rng(4)
    sizes = [10] * 30
    x = rng.normal(size=(300, 3))
    y = (x[:, 0] + 0.3 * rng.normal(size=300) > 1.0).astype(float)
    first = fit_lambdarank(x, y, sizes, FEATURES, rounds=5)
    more = fit_lambdarank(x, y, sizes, FEATURES, rounds=3, init=first)
    trees = lambda m: m.params["model"].count("Tree=")  # noqa: E731
    assert trees(more) == trees(first) + 3
    with pytest.raises(ValueError):
        fit_lambdarank(x, y, sizes, ("a", "b", "d"), rounds=1, init=first)


def test_split_is_by_task_fixed_by_seed_and_keeps_order() -> None:
    tasks = [
        Task(task_id=f"t{i}", question="q?", answer="a", gold_doc_ids=["d"]) for i in range(10)
    ]
    train, held = split_tasks(tasks, 0.3, seed=5)
    assert len(held) == 3 and len(train) == 7
    assert {t.task_id for t in train} | {t.task_id for t in held} == {t.task_id for t in tasks}
    assert (train, held) == split_tasks(tasks, 0.3, seed=5)
    assert [t.task_id for t in train] == sorted(
        (t.task_id for t in train), key=lambda s: int(s[1:])
    )
    assert len(split_tasks(tasks[:2], 0.01)[1]) == 1  # something held out when asked
    assert split_tasks(tasks, 0.0)[1] == []
    with pytest.raises(InputError):
        split_tasks(tasks, 1.0)


def test_fit_weights_only_refits_the_models_named_and_keeps_the_rest() -> None:
    from thresher.train.local.trainer import fit_weights

    data = pool_rows("a", 60, 15)
    data.extend(pool_rows("b", 60, 20, shift=0.5))
    start = fit_weights(data, order=False)
    shifted = pool_rows("c", 80, 30, shift=1.0)
    again = fit_weights(shifted, start=start, only=("final",), order=False)
    assert again.base is start.base and again.full is start.full
    assert again.meta["fitted"] == []  # no final rows here: nothing the rows could fit
    everything = fit_weights(shifted, start=start, anchor=1.0, order=False)
    assert everything.meta["fitted"] == ["base", "full"]
    assert everything.base.to_dict() != start.base.to_dict()


def test_a_lambdarank_warm_start_keeps_its_columns_first_and_its_new_trees_read_the_rest() -> None:
    """Columns after the start's own are new: the start's trees are kept as they were
    and the added ones read the new column (here the one that decides the gold rows)."""
    import lightgbm

    rng = np.random.default_rng(5)
    sizes = [10] * 40
    x = rng.normal(size=(400, 4))
    y = (x[:, 3] + 0.2 * rng.normal(size=400) > 1.0).astype(float)
    first = fit_lambdarank(x[:, :3], y, sizes, FEATURES, rounds=4)
    more = fit_lambdarank(x, y, sizes, (*FEATURES, "d"), rounds=6, init=first)
    blocks = lambda m: m.params["model"].split("end of trees")[0].split("Tree=")[1:]  # noqa: E731
    assert blocks(more)[:4] == blocks(first)  # the start's trees, unchanged
    assert len(blocks(more)) == 10
    booster = lightgbm.Booster(model_str=more.params["model"])
    assert booster.feature_name() == ["a", "b", "c", "d"]
    assert booster.feature_importance()[3] > 0  # the added trees read the new column
    start_score = first.logits(x[:, :3])
    added = lightgbm.Booster(model_str=more.params["model"]).predict(x, start_iteration=4)
    assert np.allclose(more.logits(x), start_score + added)
    with pytest.raises(ValueError, match="first of these features"):
        fit_lambdarank(x, y, sizes, ("d", *FEATURES), rounds=1, init=first)
