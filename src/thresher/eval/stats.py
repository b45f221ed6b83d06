"""Confidence intervals and paired significance tests for per-task scores.

The resampling runs on numpy; the Student t quantile is scipy's. Every
resampling method takes a ``seed`` and gives the same numbers for the same
inputs on any machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from thresher.errors import InputError

__all__ = ["MeanCI", "PairedResult", "mean_ci", "paired_test", "t_quantile"]

_BLOCK = 1000  # resamples drawn per block, to bound memory on long score lists


class MeanCI(NamedTuple):
    """A mean and its two-sided confidence interval."""

    mean: float
    ci_low: float
    ci_high: float


class PairedResult(NamedTuple):
    """Mean of ``a - b``, its confidence interval, and the two-sided p-value."""

    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float


def _as_array(values: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"{name} must be a non-empty list of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} holds NaN or infinite values; drop undefined scores first")
    return arr


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}; e.g. 0.95")


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n (number of resamples) must be a positive integer, got {n!r}")


# --- Student t quantile ------------------------------------------------------------------------


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom
    (``scipy.stats.t.ppf``).

    Raises:
        InputError: ``p`` outside (0, 1) or ``df <= 0``.
    """
    if not 0.0 < p < 1.0 or df <= 0:
        raise InputError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p!r}, df={df!r}")
    from scipy.stats import t  # imported on use: scipy.stats is slow to load

    return float(t.ppf(p, df))


# --- resampling kernels ------------------------------------------------------------------------


def _bootstrap_means(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(n)
    for start in range(0, n, _BLOCK):
        rows = min(_BLOCK, n - start)
        idx = rng.integers(0, x.size, size=(rows, x.size))
        out[start : start + rows] = x[idx].mean(axis=1)
    return out


def _sign_flip_means(d: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(n)
    for start in range(0, n, _BLOCK):
        rows = min(_BLOCK, n - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, d.size))
        out[start : start + rows] = (signs * d).mean(axis=1)
    return out


def _percentile_ci(means: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


# --- public API --------------------------------------------------------------------------------


def mean_ci(
    values: Sequence[float],
    confidence: float = 0.95,
    method: Literal["bootstrap", "t"] = "bootstrap",
    n: int = 10000,
    seed: int = 0,
) -> MeanCI:
    """The mean of ``values`` with a two-sided confidence interval.

    ``bootstrap``: percentile interval of the means of ``n`` resamples with
    replacement. ``t``: ``mean ± t_{(1+c)/2, m-1} · s / √m`` with ``s`` the sample
    standard deviation (ddof 1) of the ``m`` values.

    Args:
        values: per-task scores (finite numbers).
        confidence: coverage of the interval, in (0, 1).
        method: ``"bootstrap"`` or ``"t"``.
        n: bootstrap resamples.
        seed: bootstrap random seed.

    Returns:
        ``MeanCI(mean, ci_low, ci_high)``.

    Raises:
        InputError: empty or non-finite values, a bad confidence, method or ``n``,
            or ``method="t"`` with fewer than two values.
    """
    x = _as_array(values, "values")
    _check_confidence(confidence)
    mean = float(x.mean())
    if method == "t":
        if x.size < 2:
            raise InputError("mean_ci(method='t') needs at least two values; use more tasks")
        half = t_quantile((1.0 + confidence) / 2.0, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
        return MeanCI(mean, mean - float(half), mean + float(half))
    if method == "bootstrap":
        _check_n(n)
        low, high = _percentile_ci(_bootstrap_means(x, n, np.random.default_rng(seed)), confidence)
        return MeanCI(mean, low, high)
    raise InputError(f"unknown method {method!r}; use 'bootstrap' or 't'")


def paired_test(
    a: Sequence[float],
    b: Sequence[float],
    method: Literal["randomization", "bootstrap"] = "randomization",
    n: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedResult:
    """Two-sided paired test of ``mean(a - b) = 0`` for scores on the same tasks.

    With ``d = a - b`` and ``obs = |mean(d)|``:

    - ``randomization``: sign-flip permutation test; each of ``n`` draws flips the
      sign of every ``d_i`` at random, ``p = (1 + #{|mean(±d)| >= obs}) / (n + 1)``.
    - ``bootstrap``: resample the centered differences ``d - mean(d)`` with
      replacement, ``p = (1 + #{|mean(d*)| >= obs}) / (n + 1)``.

    Both report the bootstrap percentile interval of ``mean(d)``. When every
    difference is 0 the p-value is 1.

    Args:
        a, b: per-task scores of two configurations, same tasks in the same order.
        method: ``"randomization"`` or ``"bootstrap"``.
        n: resamples.
        seed: random seed (same inputs and seed, same result).
        confidence: coverage of the interval.

    Returns:
        ``PairedResult(mean_diff, ci_low, ci_high, p_value)`` (a tuple).

    Raises:
        InputError: empty, non-finite or unequal-length inputs; bad method, ``n`` or
            confidence.
    """
    xa, xb = _as_array(a, "a"), _as_array(b, "b")
    if xa.size != xb.size:
        raise InputError(f"paired scores need equal lengths, got {xa.size} and {xb.size}")
    _check_n(n)
    _check_confidence(confidence)
    if method not in ("randomization", "bootstrap"):
        raise InputError(f"unknown method {method!r}; use 'randomization' or 'bootstrap'")
    d = xa - xb
    mean_diff = float(d.mean())
    rng = np.random.default_rng(seed)
    low, high = _percentile_ci(_bootstrap_means(d, n, rng), confidence)
    obs = abs(mean_diff)
    if np.all(d == 0):
        return PairedResult(mean_diff, low, high, 1.0)
    if method == "randomization":
        null = _sign_flip_means(d, n, rng)
    else:
        null = _bootstrap_means(d - mean_diff, n, rng)
    tol = 1e-12 * max(1.0, obs)
    extreme = int(np.count_nonzero(np.abs(null) >= obs - tol))
    return PairedResult(mean_diff, low, high, (1 + extreme) / (n + 1))
