"""The scorer: the shipped weights load and score deterministically; fitting; round trips."""

from __future__ import annotations

import numpy as np
import pytest

from thresher.errors import ConfigError
from thresher.policies.local.features import BASE_FEATURES, LINK_FEATURES, RANK_FEATURES
from thresher.policies.local.models import DEFAULT_WEIGHTS, LocalWeights, load_weights, sigmoid
from thresher.policies.local.stop import STOP_FEATURES, stop_features, sufficiency
from thresher.train.local.fit import fit_logistic, fit_mlp


def test_shipped_weights_load_and_are_deterministic():
    assert DEFAULT_WEIGHTS.exists()
    w = load_weights()
    # a file fit before the newest features reads its own columns by name
    assert set(w.base.features) <= set(BASE_FEATURES)
    assert set(w.full.features) <= set(BASE_FEATURES + LINK_FEATURES)
    assert [f for f in BASE_FEATURES if f in w.base.features] == list(w.base.features)
    x = np.random.default_rng(0).normal(size=(20, len(BASE_FEATURES)))
    p1, p2 = w.base.predict(x), load_weights().base.predict(x)
    assert np.array_equal(p1, p2) and ((p1 >= 0) & (p1 <= 1)).all()
    if w.stop is not None:
        assert w.stop.features == STOP_FEATURES
    assert w.ranker.features == w.full.features


def test_fit_separates_and_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] - 0.5 * x[:, 2] + 0.1 * rng.normal(size=400) > 0).astype(float)
    names = ("a", "b", "c")
    lr = fit_logistic(x, y, names)
    assert ((lr.predict(x) > 0.5) == y).mean() > 0.95
    mlp = fit_mlp(x, y, names, epochs=200)
    assert ((mlp.predict(x) > 0.5) == y).mean() > 0.9
    path = LocalWeights(lr, mlp, None, {"note": "test"}, final=lr).save(tmp_path / "w.json")
    back = load_weights(path)
    assert back.final is not None and back.ranker is back.final
    assert np.allclose(back.base.predict(x), lr.predict(x))
    assert np.allclose(back.full.predict(x), mlp.predict(x))
    with pytest.raises(ConfigError, match="3 features"):
        back.base.predict(x[:, :2])


def test_a_model_fit_before_a_feature_existed_reads_its_own_columns_by_name():
    """Rows in the policy's layouts carry every feature; a model that lacks the newest
    (fit on an older file) scores them as it scored rows of its own columns."""
    rng = np.random.default_rng(2)
    full_names = BASE_FEATURES + LINK_FEATURES
    older = tuple(f for f in full_names if f != "via_score")
    x_old = rng.normal(size=(50, len(older)))
    y = (x_old[:, 0] > 0).astype(float)
    model = fit_logistic(x_old, y, older)
    x_new = np.zeros((50, len(full_names)))
    for j, name in enumerate(older):
        x_new[:, full_names.index(name)] = x_old[:, j]
    x_new[:, full_names.index("via_score")] = 9.0  # ignored: the model never saw it
    assert np.allclose(model.predict(x_new), model.predict(x_old))
    with pytest.raises(ConfigError, match="retrain"):
        fit_logistic(x_new, y, (*full_names[:-1], "unknown")).predict(x_new[:, :3])


def test_bad_weights_files_are_typed_errors(tmp_path):
    with pytest.raises(ConfigError, match="train-policy"):
        load_weights(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_weights(bad)


def test_stop_rule_without_model():
    ok = stop_features([0.9, 0.8, 0.1], True, 1, 2)
    assert ok.shape == (len(STOP_FEATURES),)
    assert sufficiency(ok, None) == 1.0
    assert sufficiency(stop_features([0.9, 0.8, 0.1], False, 1, 2), None) == 0.0


def test_scores_are_the_bits_of_the_unoptimized_formulas():
    """Model.logits/predict compute in place: the same bits as
    ``sigmoid((x - mean) / std @ w + b)``; a lambdarank model's are ``Booster.predict``'s."""
    w = load_weights()
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 45):
        for model in (w.base, w.full, w.ranker):
            x = rng.normal(size=(n, len(model.features)))
            z = (x - model.mean) / model.std
            logit = np.asarray(z @ model.params["w"] + float(model.params["b"]))
            assert model.logits(x).tobytes() == logit.tobytes()
            assert model.predict(x).tobytes() == sigmoid(logit).tobytes()
        if w.order is not None:
            x = rng.normal(size=(n, len(w.order.features)))
            raw = w.order._booster.predict(x, num_threads=1)
            assert w.order.logits(x).tobytes() == np.asarray(raw, dtype=np.float64).tobytes()
            # a row taken out of a bigger matrix (not contiguous) scores the same
            wide = rng.normal(size=(n, 2 * len(w.order.features)))[:, ::2]
            raw = w.order._booster.predict(wide, num_threads=1)
            assert w.order.logits(wide).tobytes() == np.asarray(raw).tobytes()


def test_a_model_over_a_layouts_columns_in_another_order_reads_them_by_name():
    """A warm-started order model keeps its start's columns first and appends the ones
    it added: as many columns as the policy's full layout, in another order. It reads
    the layout's rows by name, not by position."""
    rng = np.random.default_rng(3)
    layout = BASE_FEATURES + LINK_FEATURES
    start = tuple(f for f in layout if f not in RANK_FEATURES)
    own = start + RANK_FEATURES  # the same names as the layout, in another order
    assert len(own) == len(layout) and own != layout
    x = rng.normal(size=(40, len(layout)))
    y = (x[:, layout.index("q_doc_bm25")] > 0).astype(float)
    x_own = x[:, [layout.index(f) for f in own]]
    model = fit_logistic(x_own, y, own)
    assert np.allclose(model.predict(x), _own(model, x_own))


def _own(model, x_own):
    """The model's probabilities from rows of its own columns (computed by hand)."""
    z = (x_own - model.mean) / model.std
    return 1 / (1 + np.exp(-(z @ model.params["w"] + float(model.params["b"]))))
