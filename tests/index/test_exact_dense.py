"""Exact dense search: the nearest chunks by cosine, ties by id, exclusions before the cut."""

from __future__ import annotations

import numpy as np
import pytest

from thresher.index.exact_dense import ExactDense


def test_nearest_first_with_exclusions_and_id_tiebreak() -> None:
    ids = ["c", "a", "b", "d"]
    matrix = np.array([[1, 0], [1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32) * 3.0
    exact = ExactDense(ids, matrix)
    got = exact.search(np.array([2.0, 0.0]), 3)
    assert [cid for cid, _ in got] == ["a", "c", "b"]  # a and c tie: by id
    assert got[0][1] == pytest.approx(1.0) and got[2][1] == pytest.approx(0.6)
    assert [cid for cid, _ in exact.search(np.array([1.0, 0.0]), 2, exclude={"a"})] == ["c", "b"]
    assert exact.search(np.array([1.0, 0.0]), 0) == []


def test_matches_a_brute_force_ranking() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(500, 16)).astype(np.float32)
    ids = [f"x{i:03d}" for i in range(500)]
    q = rng.normal(size=16)
    got = [cid for cid, _ in ExactDense(ids, matrix).search(q, 20)]
    cos = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    assert got == [ids[i] for i in np.argsort(-cos)[:20]]


def test_rejects_mismatched_ids() -> None:
    with pytest.raises(ValueError, match="2 ids"):
        ExactDense(["a", "b"], np.zeros((3, 4), dtype=np.float32))


def test_saved_vectors_answer_as_the_matrix_they_hold(tmp_path) -> None:
    from thresher.index.embedded.vectors import Vectors, write_vectors

    rng = np.random.default_rng(1)
    ids = [f"x{i:05d}" for i in range(12_000)]
    matrix = rng.normal(size=(12_000, 8)).astype(np.float32)
    write_vectors(tmp_path, matrix, ann=False)
    q = rng.normal(size=8)
    loaded = ExactDense(ids, np.asarray(Vectors(tmp_path).matrix))
    assert loaded.search(q, 30) == ExactDense(ids, matrix).search(q, 30)
    (tmp_path / "vectors.npy").write_bytes(b"damaged")
    with pytest.raises(ValueError):
        Vectors(tmp_path)


def test_ties_and_exclusions_match_sorting_every_pair() -> None:
    # repeated rows tie exactly: the order is (score descending, id), excluded ids
    # dropped before the cut, whatever the row order
    rng = np.random.default_rng(2)
    base = rng.normal(size=(40, 8)).astype(np.float32)
    matrix = base[rng.integers(0, 40, size=600)]
    ids = [f"d{i}" for i in rng.permutation(600)]
    exact = ExactDense(ids, matrix)
    for seed in range(20):
        local = np.random.default_rng(seed)
        q = local.normal(size=8)
        exclude = {ids[i] for i in local.integers(0, 600, size=int(local.integers(0, 60)))}
        n = int(local.integers(1, 120))
        q32 = q.astype(np.float32)
        qn = q32 / np.float32(np.linalg.norm(q32))
        scores = np.einsum("ij,j->i", exact.matrix, qn, optimize=False)
        every = sorted(
            ((cid, float(s)) for cid, s in zip(ids, scores, strict=True) if cid not in exclude),
            key=lambda p: (-p[1], p[0]),
        )
        assert exact.search(q, n, exclude) == every[:n]


def test_rows_in_the_order_asked() -> None:
    exact = ExactDense(["a", "b", "c"], np.eye(3, dtype=np.float32) * 2)
    got = exact.rows(["c", "a", "c"])
    assert got is not None and got.tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 1]]
    assert exact.rows(["a", "zz"]) is None


def test_concurrent_first_calls_read_the_vectors_once() -> None:
    import threading
    import time

    from thresher.index.exact_dense import LazyExactDense

    opened: list[int] = []

    def load() -> ExactDense:
        opened.append(1)
        time.sleep(0.05)  # a slow read: the other callers arrive while it runs
        return ExactDense(["a", "b"], np.eye(2, dtype=np.float32))

    lazy = LazyExactDense(load)
    start = threading.Barrier(8)
    got: list[ExactDense] = []

    def first_call() -> None:
        start.wait()
        got.append(lazy.get())

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(opened) == 1
    assert len(got) == 8 and all(g is got[0] for g in got)
    assert lazy.get() is got[0] and len(opened) == 1


def test_follows_an_order_when_rows_are_in_it() -> None:
    exact = ExactDense(["a", "b"], np.eye(2, dtype=np.float32))
    order = ["a", "b"]
    assert exact.follows(order) and exact.follows(order)
    assert not exact.follows(["b", "a"]) and not exact.follows(["a"])


def test_the_cut_is_the_kth_largest_score() -> None:
    from thresher.index.exact_dense import _kth_largest

    rng = np.random.default_rng(3)
    for size in (5, 40, 997, 6000):
        scores = rng.choice(rng.normal(size=size // 3 + 1), size=size).astype(np.float32)
        for k in {1, 2, size // 4, size // 4 + 1, size // 2, size - 1} - {0}:
            assert _kth_largest(scores, k) == float(np.sort(scores)[::-1][k - 1])
    with_nan = rng.normal(size=400).astype(np.float32)
    with_nan[rng.integers(0, 400, size=150)] = np.nan  # NaN counts as the smallest
    for k in (1, 20, 60, 200, 399):
        expected = float(-np.sort(-with_nan)[k - 1])
        got = _kth_largest(with_nan, k)
        assert got == expected or (np.isnan(got) and np.isnan(expected))
