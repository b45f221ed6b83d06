from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thresher.index.fusion import rrf


def test_rrf_matches_a_hand_computed_example() -> None:
    bm25 = ["a", "b", "c"]
    dense = ["c", "d", "a"]
    # k = 60: a = 1/61 + 1/63, c = 1/63 + 1/61, b = 1/62, d = 1/62; ties go by id
    fused = rrf([bm25, dense], k=60)
    assert [doc for doc, _ in fused] == ["a", "c", "b", "d"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 63)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 62)
    assert fused[3][1] == pytest.approx(1 / 62)


def test_rrf_small_k_changes_the_order() -> None:
    # k = 1: x = 1/2, y = 1/3 + 1/3 = 0.667 > x; with k = 60 x (1/61) < y (2/62) too.
    assert [d for d, _ in rrf([["x", "y"], ["z", "y"]], k=1)] == ["y", "x", "z"]


def test_rrf_empty_and_single() -> None:
    assert rrf([]) == []
    assert rrf([[], []]) == []
    assert [d for d, _ in rrf([["b", "a"]])] == ["b", "a"]


def test_rrf_checks_its_input() -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        rrf([["a"]], k=0)
    with pytest.raises(ValueError, match="repeats"):
        rrf([["a", "a"]])


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), unique=True), max_size=4))
def test_rrf_is_sorted_and_covers_every_id(rankings: list[list[str]]) -> None:
    fused = rrf(rankings)
    assert {d for d, _ in fused} == {d for r in rankings for d in r}
    keys = [(-s, d) for d, s in fused]
    assert keys == sorted(keys)
