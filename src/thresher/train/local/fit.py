"""Fitting the scorer's models: L2 logistic regression and a small MLP (numpy), LambdaRank (LightGBM).

Each fitter returns a :class:`~thresher.policies.local.models.Model` and raises
``ValueError`` on shapes that do not match. The two numpy fitters standardize
the columns first (mean 0, std 1; constant columns keep std 1); LambdaRank's
trees take the raw columns, and :func:`prior_model` is a hand-set logistic
model on raw columns (to bootstrap the first round of collection).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thresher.policies.local.models import Model, sigmoid

__all__ = [
    "fit_logistic",
    "fit_mlp",
    "fit_lambdarank",
    "prior_model",
    "prior_coefficients",
    "LAMBDARANK_PARAMS",
]


def _standardize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    std = x.std(axis=0) if len(x) else np.ones(x.shape[1])
    std = np.where(std < 1e-9, 1.0, std)
    return mean, std


def prior_coefficients(
    prior: Model, features: Sequence[str], mean: np.ndarray, std: np.ndarray
) -> np.ndarray:
    """A logistic ``prior``'s coefficients re-expressed on columns standardized by
    ``mean`` and ``std`` (weights then bias): the same logits on every row.

    A feature of ``features`` the prior lacks gets weight 0; one the prior has and
    ``features`` lacks is dropped. Raises ``ValueError`` unless ``prior`` is logistic.
    """
    if prior.kind != "logistic":
        raise ValueError(f"prior_coefficients: a logistic prior is needed, got {prior.kind}")
    raw = np.asarray(prior.params["w"], dtype=np.float64) / prior.std  # per raw column
    bias = float(prior.params["b"]) - float(np.dot(raw, prior.mean))
    by_name = dict(zip(prior.features, raw, strict=True))
    a = np.asarray([by_name.get(f, 0.0) for f in features], dtype=np.float64)
    return np.append(a * std, bias + float(np.dot(a, mean)))


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    features: Sequence[str],
    *,
    l2: float = 1.0,
    weight: np.ndarray | None = None,
    iterations: int = 50,
    prior: Model | None = None,
    anchor: float = 0.0,
) -> Model:
    """L2-regularized logistic regression by Newton's method (IRLS).

    Minimizes ``Σ_i s_i·logloss(y_i, σ(z_i·w + b)) + l2/2·|w|²`` with sample
    weights ``s`` (default 1).

    With a logistic ``prior`` and ``anchor`` > 0 (a warm start: adapting fitted
    weights to new rows), the penalty is instead
    ``l2/2·|w - w0|² + anchor/2·(β - β0)ᵀ H0 (β - β0)``, ``β0`` the prior's
    coefficients (bias included) and ``H0`` the log loss's curvature on these rows at
    ``β0``: the prior counts as ``anchor`` times as many rows like these that agree
    with it (0: the rows alone; large: the prior kept).

    Raises ``ValueError`` on shape mismatches or a prior that is not logistic.
    """
    if x.ndim != 2 or len(x) != len(y) or x.shape[1] != len(features):
        raise ValueError(f"fit_logistic: x {x.shape}, y {y.shape}, {len(features)} features")
    mean, std = _standardize(x)
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    s = np.ones(len(x)) if weight is None else np.asarray(weight, dtype=np.float64)
    reg = np.full(z.shape[1], l2)
    reg[-1] = 0.0
    center = np.zeros(z.shape[1])
    tie = np.zeros((z.shape[1], z.shape[1]))  # the prior's curvature (anchor · H0)
    if prior is not None and anchor > 0:
        center = prior_coefficients(prior, features, mean, std)
        p0 = sigmoid(z @ center)
        tie = anchor * ((z * (s * p0 * (1 - p0))[:, None]).T @ z)
    beta = center.copy()
    for _ in range(iterations):
        p = sigmoid(z @ beta)
        grad = z.T @ (s * (p - y)) + reg * (beta - center) + tie @ (beta - center)
        hess = (z * (s * p * (1 - p))[:, None]).T @ z + tie + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-7:
            break
    return Model(tuple(features), "logistic", mean, std, {"w": beta[:-1], "b": np.array(beta[-1])})


def fit_mlp(
    x: np.ndarray,
    y: np.ndarray,
    features: Sequence[str],
    *,
    hidden: int = 16,
    l2: float = 1e-3,
    epochs: int = 300,
    lr: float = 0.01,
    seed: int = 0,
    weight: np.ndarray | None = None,
) -> Model:
    """A one-hidden-layer ReLU MLP trained with full-batch Adam on log loss (seeded),
    rows weighted by ``weight`` (default 1; the loss is the weighted mean)."""
    if x.ndim != 2 or len(x) != len(y) or x.shape[1] != len(features):
        raise ValueError(f"fit_mlp: x {x.shape}, y {y.shape}, {len(features)} features")
    rng = np.random.default_rng(seed)
    mean, std = _standardize(x)
    z = (x - mean) / std
    n, d = z.shape
    s = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    s = s * (n / s.sum()) if s.sum() > 0 else np.ones(n)
    params = {
        "W1": rng.normal(0, 1 / np.sqrt(d), (d, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0, 1 / np.sqrt(hidden), hidden),
        "b2": np.array(0.0),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(val) for k, val in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        pre = z @ params["W1"] + params["b1"]
        h = np.maximum(pre, 0.0)
        p = sigmoid(h @ params["w2"] + params["b2"])
        g_out = s * (p - y) / n
        grads = {
            "w2": h.T @ g_out + l2 * params["w2"],
            "b2": np.array(g_out.sum()),
        }
        g_h = np.outer(g_out, params["w2"]) * (pre > 0)
        grads["W1"] = z.T @ g_h + l2 * params["W1"]
        grads["b1"] = g_h.sum(axis=0)
        for k in params:
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
            mhat = m[k] / (1 - b1**t)
            vhat = v[k] / (1 - b2**t)
            params[k] = params[k] - lr * mhat / (np.sqrt(vhat) + eps)
    return Model(tuple(features), "mlp", mean, std, params)


def prior_model(features: Sequence[str], weights: dict[str, float], bias: float) -> Model:
    """A hand-set logistic model (raw features, no standardization) for bootstrapping."""
    w = np.asarray([weights.get(f, 0.0) for f in features], dtype=np.float64)
    return Model(
        tuple(features),
        "logistic",
        np.zeros(len(features)),
        np.ones(len(features)),
        {"w": w, "b": np.array(bias)},
    )


#: LightGBM settings of the ordering model: small trees, single-threaded and
#: deterministic so ``thresher train-policy`` reproduces the model bit for bit
LAMBDARANK_PARAMS: dict[str, object] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [5],
    "lambdarank_truncation_level": 10,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "learning_rate": 0.05,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "verbosity": -1,
}


def fit_lambdarank(
    x: np.ndarray,
    y: np.ndarray,
    group_sizes: Sequence[int],
    features: Sequence[str],
    *,
    rounds: int = 300,
    seed: int = 0,
    init: Model | None = None,
    bag: int = 1,
) -> Model:
    """Gradient-boosted trees ranking each group's rows, by LightGBM's LambdaRank.

    Args:
        x: feature rows, groups contiguous (one group = one question's candidates).
        y: relevance grades (0 = not gold; higher = more relevant).
        group_sizes: row counts of the consecutive groups (summing to ``len(x)``).
        features: column names.
        rounds: boosting rounds.
        seed: LightGBM's seed (bagging, feature sampling).
        init: a ``lambdarank`` model to continue boosting from (a warm start: its trees
            kept, ``rounds`` more added on these rows, LightGBM's ``init_model``), over
            the first of ``features``: the columns after its own are new, read by the
            added trees only (the result scores ``init``'s raw score plus theirs).
        bag: boosters fit, differing only in their seed (member ``i`` of ``bag``
            takes seed ``seed · bag + i``: bags of one size and different seeds share
            no member; ``bag`` 1 is the single booster of ``seed``). With 2 or more
            the result is a bagged model scoring the mean of the members' raw
            scores; with ``init``, each member continues ``init``'s trees, which the
            model keeps once as its ``base`` while each member keeps only the trees
            it added (``init``'s score plus the mean of the added trees' scores: the
            same mean).

    Returns:
        A ``lambdarank`` :class:`Model` holding LightGBM's text model (or, bagged,
        its base's and members').

    Raises:
        ValueError: shapes that do not match, ``bag`` below 1, an ``init`` that is not
            a single-booster lambdarank model over the first of ``features``.
    """
    import lightgbm

    if x.ndim != 2 or len(x) != len(y) or x.shape[1] != len(features):
        raise ValueError(f"fit_lambdarank: x {x.shape}, y {y.shape}, {len(features)} features")
    if sum(group_sizes) != len(x):
        raise ValueError(f"fit_lambdarank: groups sum to {sum(group_sizes)}, x has {len(x)} rows")
    if bag < 1:
        raise ValueError(f"fit_lambdarank: bag must be 1 or more, got {bag}")
    params: dict[str, object] = dict(LAMBDARANK_PARAMS)
    start = None
    if init is not None:
        own = tuple(init.features)
        if init.kind != "lambdarank" or init.bagged or own != tuple(features)[: len(own)]:
            raise ValueError(
                "fit_lambdarank: init must be a single-booster lambdarank model over the "
                "first of these features (a bagged model cannot be continued: start from "
                "the shipped weights)"
            )
        start = lightgbm.Booster(model_str=str(init.params["model"]))
        if len(own) < len(features):
            # the start's score of these rows reads its own columns, the first ones (its
            # trees' column indices stay valid in the wider rows)
            params["predict_disable_shape_check"] = True
    texts = []
    for member in range(bag):
        data = lightgbm.Dataset(
            x, label=y.astype(np.int32), group=list(group_sizes), feature_name=list(features)
        )
        member_params = {**params, "seed": seed * bag + member}
        booster = lightgbm.train(member_params, data, num_boost_round=rounds, init_model=start)
        if bag == 1:
            texts.append(booster.model_to_string())
        else:  # a member keeps the trees it added (the start's are the model's base)
            kept = start.current_iteration() if start is not None else 0
            texts.append(booster.model_to_string(start_iteration=kept))
    dim = len(features)
    bagged: dict[str, object] = (
        {"model": texts[0]}
        if bag == 1
        else {"base": str(init.params["model"]) if init is not None else None, "members": texts}
    )
    return Model(tuple(features), "lambdarank", np.zeros(dim), np.ones(dim), bagged)
