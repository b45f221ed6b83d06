"""Confidence intervals and paired tests: known values, determinism, input checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.errors import InputError
from thresher.eval.stats import mean_ci, paired_test, t_quantile


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 1, 12.706204736),
        (0.975, 9, 2.262157163),
        (0.95, 30, 1.697260887),
        (0.995, 4, 4.604094871),
        (0.5, 7, 0.0),
        (0.025, 9, -2.262157163),
    ],
)
def test_t_quantile_table_values(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-7)


def test_mean_ci_t_by_hand() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    # mean 2.5, s = sqrt(5/3), half = t_{0.975,3} * s / 2
    half = 3.182446305 * math.sqrt(5 / 3) / 2
    mean, low, high = mean_ci(values, method="t")
    assert mean == 2.5
    assert (low, high) == pytest.approx((2.5 - half, 2.5 + half), abs=1e-7)


def test_mean_ci_bootstrap_deterministic_and_sane() -> None:
    rng = np.random.default_rng(1)
    values = rng.random(200).tolist()
    a = mean_ci(values, seed=3)
    assert a == mean_ci(values, seed=3)
    assert a != mean_ci(values, seed=4)
    assert a.ci_low < a.mean < a.ci_high
    t = mean_ci(values, method="t")
    # with 200 values the bootstrap and t intervals agree closely
    assert a.ci_low == pytest.approx(t.ci_low, abs=0.01)
    assert a.ci_high == pytest.approx(t.ci_high, abs=0.01)
    assert mean_ci(values, confidence=0.5).ci_high < a.ci_high


def test_mean_ci_degenerate_and_bad_input() -> None:
    assert mean_ci([0.7]) == (0.7, 0.7, 0.7)
    assert mean_ci([1.0, 1.0, 1.0], method="t") == (1.0, 1.0, 1.0)
    with pytest.raises(InputError, match="at least two"):
        mean_ci([1.0], method="t")
    with pytest.raises(InputError, match="non-empty"):
        mean_ci([])
    with pytest.raises(InputError, match="NaN"):
        mean_ci([1.0, float("nan")])
    with pytest.raises(InputError, match="confidence"):
        mean_ci([1.0, 2.0], confidence=95)
    with pytest.raises(InputError, match="unknown method"):
        mean_ci([1.0, 2.0], method="normal")  # type: ignore[arg-type]


def _exact_sign_flip_p(d: list[float]) -> float:
    obs = abs(sum(d) / len(d))
    flips = list(itertools.product((-1, 1), repeat=len(d)))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d, strict=True)) / len(d)) >= obs - 1e-12
        for signs in flips
    )
    return hits / len(flips)


def test_randomization_p_value_matches_exact_enumeration() -> None:
    a = [0.9, 0.8, 0.7, 1.0, 0.6, 0.9, 0.5, 0.8]
    b = [0.5, 0.8, 0.6, 0.4, 0.7, 0.3, 0.5, 0.6]
    exact = _exact_sign_flip_p([x - y for x, y in zip(a, b, strict=True)])
    res = paired_test(a, b, n=20000, seed=0)
    assert res.mean_diff == pytest.approx(np.mean(a) - np.mean(b))
    assert res.p_value == pytest.approx(exact, abs=0.01)
    assert res.ci_low < res.mean_diff < res.ci_high
    # five equal positive differences: only the all-same-sign flips are as extreme
    five = paired_test([1.0] * 5, [0.0] * 5, n=20000, seed=1)
    assert five.p_value == pytest.approx(2 / 32, abs=0.01)


def test_paired_test_deterministic_and_symmetric() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(50)
    b = a - 0.05 + rng.normal(0, 0.1, 50)
    for method in ("randomization", "bootstrap"):
        r1 = paired_test(a, b, method=method, seed=11)
        assert r1 == paired_test(a, b, method=method, seed=11)
        r2 = paired_test(b, a, method=method, seed=11)
        assert r2.mean_diff == pytest.approx(-r1.mean_diff)
        assert 0.0 < r1.p_value <= 1.0


def test_paired_test_identical_and_clear_differences() -> None:
    same = paired_test([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert same == (0.0, 0.0, 0.0, 1.0)
    a, b = [1.0] * 40, [0.0] * 40
    for method in ("randomization", "bootstrap"):
        assert paired_test(a, b, method=method, n=2000).p_value == pytest.approx(1 / 2001)


def test_paired_test_bad_input() -> None:
    with pytest.raises(InputError, match="equal lengths"):
        paired_test([1.0, 2.0], [1.0])
    with pytest.raises(InputError, match="unknown method"):
        paired_test([1.0], [0.0], method="t")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="positive integer"):
        paired_test([1.0], [0.0], n=0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=30), st.integers(0, 2**16))
def test_paired_test_properties(d: list[float], seed: int) -> None:
    b = [0.0] * len(d)
    res = paired_test(d, b, n=300, seed=seed)
    assert 0.0 < res.p_value <= 1.0
    assert min(d) - 1e-12 <= res.ci_low <= res.ci_high <= max(d) + 1e-12
