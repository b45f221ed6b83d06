"""The LambdaRank ordering model: fit, deterministic, saved and loaded, used by the policy."""

from __future__ import annotations

import numpy as np
import pytest

from thresher.policies.local.features import BASE_FEATURES, RANK_FEATURES
from thresher.policies.local.models import LocalWeights, load_weights
from thresher.train.local.fit import fit_lambdarank
from thresher.train.local.trainer import (
    FULL_FEATURES,
    RECIPE_BASE,
    RECIPE_FULL,
    TrainingData,
    final_groups,
    fit_weights,
    prior_weights,
)

from .pool_rows import ranking_groups


def _groups(n_groups: int = 60, size: int = 12, seed: int = 0):
    """Random candidate groups where column 2 (plus noise) decides the gold rows."""
    return ranking_groups(n_groups, size, seed, noise=0.1)


def test_lambdarank_orders_gold_first_and_is_deterministic() -> None:
    x, y, sizes = _groups()
    a = fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=60)
    b = fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=60)
    assert a.params["model"] == b.params["model"]  # same data and seed: the same model
    tx, ty, tsizes = _groups(seed=1)
    hits = 0
    for g, size in enumerate(tsizes):
        scores = a.logits(tx[g * size : (g + 1) * size])
        hits += ty[g * size + int(np.argmax(scores))] == 1.0
    assert hits / len(tsizes) > 0.8


def test_lambdarank_refuses_mismatched_groups() -> None:
    x, y, sizes = _groups(n_groups=3)
    with pytest.raises(ValueError, match="groups sum"):
        fit_lambdarank(x, y, [*sizes, 4], FULL_FEATURES)


def test_weights_with_an_order_model_round_trip(tmp_path) -> None:
    x, y, sizes = _groups()
    prior = prior_weights()
    weights = LocalWeights(
        prior.base, prior.full, order=fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=30)
    )
    back = load_weights(weights.save(tmp_path / "w.json"))
    assert back.order is not None and back.order.kind == "lambdarank"
    assert np.allclose(back.order.logits(x[:20]), weights.order.logits(x[:20]))


def test_fit_weights_adds_the_order_model_from_final_blocks() -> None:
    data = _final_data(n_groups=30)
    ox, oy, osizes = final_groups(data)
    assert len(osizes) == 30 and len(ox) == len(oy) == sum(osizes)
    weights = fit_weights(data)
    assert weights.order is not None and weights.meta["order"]["groups"] == 30
    assert fit_weights(data, order=False).order is None


def _final_data(n_groups: int = 30) -> TrainingData:
    x, y, sizes = _groups(n_groups=n_groups)
    data = TrainingData()
    start = 0
    for g, size in enumerate(sizes):
        rows = slice(start, start + size)
        data.base.append(x[rows, : len(BASE_FEATURES)])
        data.full.append(x[rows])
        data.labels.append(y[rows])
        data.groups.extend([f"t{g}"] * size)
        data.kinds.append("final")
        start += size
    return data


def test_the_recipe_leaves_the_rank_features_out_unless_the_order_model_asks() -> None:
    data = _final_data()
    plain = fit_weights(data)
    assert plain.base.features == RECIPE_BASE and plain.full.features == RECIPE_FULL
    assert not set(RANK_FEATURES) & set(RECIPE_FULL)
    assert plain.order is not None and plain.order.features == RECIPE_FULL
    ranked = fit_weights(data, order_features=RANK_FEATURES, order_rounds=20)
    assert ranked.order is not None and ranked.order.features == RECIPE_FULL + RANK_FEATURES
    assert ranked.full.to_dict() == plain.full.to_dict()  # the chunk models: the recipe's
    warm = fit_weights(
        data, start=plain, only=("order",), order_features=RANK_FEATURES, order_rounds=5
    )
    assert warm.order is not None and warm.order.features == plain.order.features + RANK_FEATURES
    assert (
        warm.order.params["model"].count("Tree=") == plain.order.params["model"].count("Tree=") + 5
    )
    with pytest.raises(ValueError, match="not feature columns"):
        fit_weights(data, order_features=("q_doc_nowhere",))
