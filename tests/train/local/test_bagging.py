"""A bagged LambdaRank order model: boosters differing only in their seed, ordering by the
mean of their raw scores; saved and loaded; one booster stays as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lightgbm
import numpy as np
import pytest

from thresher.errors import ConfigError
from thresher.policies.local.models import DEFAULT_WEIGHTS, LocalWeights, Model, load_weights
from thresher.train.local.fit import fit_lambdarank
from thresher.train.local.trainer import FULL_FEATURES, prior_weights

from .pool_rows import ranking_groups


def _groups(n_groups: int = 40, size: int = 10, seed: int = 0):
    """Random candidate groups where column 2 (plus noise) decides the gold rows."""
    return ranking_groups(n_groups, size, seed, noise=0.5)


def test_a_bag_scores_the_mean_of_its_members_and_round_trips(tmp_path: Path) -> None:
    x, y, sizes = _groups()
    bag = fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=8, seed=1, bag=3)
    assert bag.bagged and bag.bag == 3 and bag.params["base"] is None
    # member i is the booster of seed ``seed · bag + i``
    singles = [fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=8, seed=s) for s in (3, 4, 5)]
    assert bag.params["members"] == [m.params["model"] for m in singles]
    mean = np.mean([m.logits(x) for m in singles], axis=0)
    assert np.allclose(bag.logits(x), mean, rtol=0, atol=1e-12)
    prior = prior_weights()
    saved = LocalWeights(prior.base, prior.full, order=bag).save(tmp_path / "w.json")
    assert json.loads(saved.read_text(encoding="utf-8"))["format"] == 2  # old readers refuse it
    back = load_weights(saved).order
    assert back is not None and back.bagged and back.bag == 3
    assert np.array_equal(back.logits(x), bag.logits(x))


def test_a_warm_bag_keeps_the_start_once_and_averages_the_continuations() -> None:
    x, y, sizes = _groups()
    narrow = FULL_FEATURES[:-2]
    start = fit_lambdarank(x[:, :-2], y, sizes, narrow, rounds=6)
    bag = fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=4, seed=0, init=start, bag=2)
    assert bag.params["base"] == start.params["model"]
    assert [m.count("Tree=") for m in bag.params["members"]] == [4, 4]  # the added trees
    # the mean of the two full continuations (the start's trees and each seed's added ones)
    full = [
        fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=4, seed=s, init=start) for s in (0, 1)
    ]
    mean = np.mean([m.logits(x) for m in full], axis=0)
    assert np.allclose(bag.logits(x), mean, rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="bagged model cannot be continued"):
        fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=2, init=bag)
    with pytest.raises(ValueError, match="bag must be 1 or more"):
        fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=2, bag=0)


def test_one_booster_is_stored_and_scored_as_before(tmp_path: Path) -> None:
    x, y, sizes = _groups()
    one = fit_lambdarank(x, y, sizes, FULL_FEATURES, rounds=8, seed=2, bag=1)
    assert not one.bagged and one.bag == 1 and set(one.params) == {"model"}
    booster = lightgbm.Booster(model_str=one.params["model"])
    assert np.array_equal(one.logits(x), booster.predict(x, num_threads=1))
    # the shipped file: written back byte for byte, format 1, scoring as its own booster
    shipped = load_weights()
    assert shipped.order is not None and not shipped.order.bagged
    again = shipped.save(tmp_path / "shipped.json")
    assert again.read_bytes() == DEFAULT_WEIGHTS.read_bytes()
    rows = np.random.default_rng(3).normal(size=(30, len(shipped.order.features)))
    raw = lightgbm.Booster(model_str=shipped.order.params["model"]).predict(rows, num_threads=1)
    assert np.array_equal(shipped.order.logits(rows), raw)


def test_an_empty_bag_or_a_newer_format_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_WEIGHTS.read_text(encoding="utf-8"))
    data["order"]["params"] = {"base": None, "members": []}
    bad = tmp_path / "empty.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="at least one member"):
        load_weights(bad)
    newer = tmp_path / "newer.json"
    shutil.copy(DEFAULT_WEIGHTS, newer)
    data = json.loads(newer.read_text(encoding="utf-8"))
    newer.write_text(json.dumps({**data, "format": 3}), encoding="utf-8")
    with pytest.raises(ConfigError, match="format <= 2.*upgrade"):
        load_weights(newer)
    assert Model.from_dict({**data["order"]}).bag == 1
