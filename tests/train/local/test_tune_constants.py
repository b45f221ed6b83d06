"""Tuning the local policy's constants: the steps tried and when one is taken (pure)."""

from __future__ import annotations

import pytest

from thresher.errors import InputError
from thresher.policies.local.scorer import load_weights
from thresher.train.local.tune_constants import DEFAULT_TUNED, _better, candidates, tune_constants


def test_candidates_step_floats_by_factor_and_integers_by_one():
    assert candidates(1.2) == [0.6, 1.8]
    assert candidates(4) == [3, 5]
    assert candidates(0) == [1]  # never below zero


def test_a_step_is_taken_only_past_the_noise():
    base = [1.0, 1.0, 1.0, 1.0]
    assert _better([1.2, 1.2, 1.2, 1.2], base, margin=1.0)  # clear gain, no spread
    assert not _better([1.4, 0.8, 1.3, 0.7], base, margin=1.0)  # a gain within the noise
    assert not _better(base, base, margin=0.0)  # a tie is no step


def test_default_tuned_are_constants_and_unknown_names_are_refused():
    known = load_weights().constants.values()
    assert set(DEFAULT_TUNED) <= set(known)
    with pytest.raises(InputError, match="unknown constants"):
        tune_constants([object()], None, load_weights(), names=["temperature"])  # type: ignore[list-item, arg-type]
    with pytest.raises(InputError, match="no tasks"):
        tune_constants([], None, load_weights())  # type: ignore[arg-type]
