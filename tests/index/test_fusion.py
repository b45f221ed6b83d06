from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thresher.index.fusion import Fused, FusionWeights, fuse_retrievers, fuse_scores, rrf, rrf_score


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
    assert rrf([], k=60) == []
    assert rrf([[], []], k=60) == []
    assert [d for d, _ in rrf([["b", "a"]], k=60)] == ["b", "a"]


def test_rrf_checks_its_input() -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        rrf([["a"]], k=0)
    with pytest.raises(ValueError, match="repeats"):
        rrf([["a", "a"]], k=60)


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), unique=True), max_size=4))
def test_rrf_is_sorted_and_covers_every_id(rankings: list[list[str]]) -> None:
    fused = rrf(rankings, k=60)
    assert {d for d, _ in fused} == {d for r in rankings for d in r}
    keys = [(-s, d) for d, s in fused]
    assert keys == sorted(keys)


def test_rrf_has_no_default_k() -> None:
    # every fusion passes the configured k (config.retrieval.rrf_k); none falls back to 60
    with pytest.raises(TypeError):
        rrf([["a"]])  # type: ignore[call-arg]


def test_rrf_score_is_the_formula() -> None:
    assert rrf_score([1, None, 3], k=10) == pytest.approx(1 / 11 + 1 / 13)
    assert rrf_score([None, None], k=10) == 0.0
    with pytest.raises(ValueError, match="1-based"):
        rrf_score([0], k=10)
    with pytest.raises(ValueError, match="k must be positive"):
        rrf_score([1], k=0)


def test_fuse_retrievers_keeps_each_retrievers_evidence() -> None:
    bm25 = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    dense = [("c", 0.9), ("d", 0.8), ("a", 0.1)]
    fused = fuse_retrievers(bm25, dense, k=5)
    assert [f.key for f in fused] == ["a", "c", "b", "d"]
    a, c, b, d = fused
    assert a == Fused("a", 1 / 6 + 1 / 8, 1, 3, 9.0, 0.1)
    assert c == Fused("c", 1 / 8 + 1 / 6, 3, 1, 1.0, 0.9)
    assert (b.dense_rank, b.dense_score, d.bm25_rank, d.bm25_score) == (None, None, None, None)
    assert [f.key for f in fuse_retrievers(bm25, dense, k=5, limit=2)] == ["a", "c"]
    assert [(f.key, f.score) for f in fused] == rrf([["a", "b", "c"], ["c", "d", "a"]], k=5)


def _hand_fused(bm25: list[float], dense: list[float], k: int) -> list[tuple[int, float, int, int]]:
    """The formula written out as harness/tools.py rank_by_similarity does it."""
    n = len(bm25)
    rb = {i: r for r, i in enumerate(sorted(range(n), key=lambda i: (-bm25[i], i)), 1)}
    rd = {i: r for r, i in enumerate(sorted(range(n), key=lambda i: (-dense[i], i)), 1)}
    fused = {i: 1.0 / (k + rb[i]) + 1.0 / (k + rd[i]) for i in range(n)}
    return [(i, fused[i], rb[i], rd[i]) for i in sorted(range(n), key=lambda i: (-fused[i], i))]


def test_fuse_scores_hand_example() -> None:
    fused = fuse_scores([3.0, 1.0, 2.0], [0.1, 0.9, 0.5], k=60)
    # items 0 and 1 tie (1/61 + 1/63): the lower index first; item 2 is 2/62
    assert [(f.item, f.bm25_rank, f.dense_rank) for f in fused] == [(0, 1, 3), (1, 3, 1), (2, 2, 2)]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 63)
    assert fuse_scores([], [], k=60) == []
    with pytest.raises(ValueError, match="2 BM25 scores but 1 dense"):
        fuse_scores([1.0, 2.0], [1.0], k=60)


@given(
    st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.floats(-1, 1)), max_size=12),
    st.integers(1, 100),
)
def test_fuse_scores_matches_the_formula(pairs: list[tuple[float, float]], k: int) -> None:
    bm25, dense = [p[0] for p in pairs], [p[1] for p in pairs]
    assert [tuple(f) for f in fuse_scores(bm25, dense, k)] == _hand_fused(bm25, dense, k)


_ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=8)


@given(_ids, _ids, st.integers(1, 100))
def test_equal_weights_of_one_are_plain_rrf_to_the_last_bit(b: list[str], d: list[str], k: int):
    bm25 = [(c, float(len(b) - i)) for i, c in enumerate(b)]
    dense = [(c, 1.0 - i / 10) for i, c in enumerate(d)]
    plain = [(f.key, f.score) for f in fuse_retrievers(bm25, dense, k)]
    weighted = fuse_retrievers(bm25, dense, k, weights=(1.0, 1.0))
    assert [(f.key, f.score) for f in weighted] == plain == rrf([b, d], k)


@given(_ids, _ids, st.floats(0.1, 10), st.floats(0.1, 10), st.integers(1, 100))
def test_weighted_fusion_is_the_formula(b: list[str], d: list[str], wb: float, wd: float, k: int):
    bm25 = [(c, 1.0) for c in b]
    dense = [(c, 1.0) for c in d]
    fused = fuse_retrievers(bm25, dense, k, weights=(wb, wd))
    for f in fused:
        want = (wb / (k + f.bm25_rank) if f.bm25_rank else 0.0) + (
            wd / (k + f.dense_rank) if f.dense_rank else 0.0
        )
        assert f.score == pytest.approx(want)
    keys = [(-f.score, f.key) for f in fused]
    assert keys == sorted(keys)


def test_a_zero_weight_orders_by_the_other_retriever() -> None:
    bm25 = [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    dense = [("z", 0.9), ("c", 0.8), ("a", 0.7)]
    assert [f.key for f in fuse_retrievers(bm25, dense, 60, weights=(1.0, 0.0))] == [
        "a", "b", "c", "z"
    ]  # fmt: skip
    assert [f.key for f in fuse_retrievers(bm25, dense, 60, weights=(0.0, 1.0))] == [
        "z", "c", "a", "b"
    ]  # fmt: skip


def test_fusion_weights_check_their_values_and_round_trip() -> None:
    w = FusionWeights(2.5, 1.0, 5)
    assert FusionWeights.from_dict(w.to_dict()) == w
    assert FusionWeights().plain and not w.plain
    for bad in ({"bm25": -1.0}, {"dense": float("inf")}, {"bm25": 0.0, "dense": 0.0},
                {"rrf_k": 0}, {"rrf_k": 2.5}, {"bm25": True}):  # fmt: skip
        with pytest.raises(ValueError):
            FusionWeights(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bm25, dense, rrf_k"):
        FusionWeights.from_dict({"bm25": 1.0, "alpha": 2})
