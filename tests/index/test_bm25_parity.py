"""BM25 parity: our wrapper's scores and ranks against ``rank_bm25`` on a small corpus.

Variant compared: Lucene's BM25 (the ``bm25s`` method ``lucene`` our index builds),
k1 = 1.5, b = 0.75,

    score(q, d) = sum over distinct terms t of q:  idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))

The reference is ``rank_bm25.BM25Okapi`` (its document statistics, length
normalization and sum over query terms) with Lucene's idf put in place of its own
(Robertson's, floored at epsilon): its term part has the factor (k1 + 1) that
Lucene's drops, so its scores are divided by (k1 + 1). Both sides get the same
terms: our :class:`~thresher.index.bm25.Analyzer` (lowercase, ``\\w+``, stopwords
out, Snowball English stems), and the reference the distinct terms of a query (our
index counts a repeated query term once, as documented).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import rank_bm25

from thresher.index.bm25 import Analyzer, Bm25Index

K1, B = 1.5, 0.75

_CONTENT = "river harbor glass salt market town province founder railway bridge lighthouse"
_MORE = "merchant guild charter festival mountain valley archive museum painter violin"
_STOPWORDS = "the of and in was a to by"  # dropped on both sides
_WORDS = [*_CONTENT.split(" "), *_MORE.split(" "), *_STOPWORDS.split(" ")]


class LuceneReference(rank_bm25.BM25Okapi):
    """``BM25Okapi`` with Lucene's idf (no floor: Lucene's idf is never negative)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, df in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))

    def lucene_scores(self, terms: list[str]) -> np.ndarray:
        return np.asarray(self.get_scores(sorted(set(terms)))) / (K1 + 1)


def _corpus(seed: int, size: int) -> dict[str, str]:
    """Texts of 3 to 40 words with skewed word frequencies (so idf and length matter)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(_WORDS) + 1)
    weights /= weights.sum()
    texts = {}
    for i in range(size):
        n = int(rng.integers(3, 41))
        words = rng.choice(_WORDS, size=n, p=weights)
        texts[f"doc-{i:03d}"] = " ".join(
            w.capitalize() if j == 0 else w for j, w in enumerate(words)
        )
    texts["doc-dup-a"] = texts["doc-dup-b"] = "Salt market of the river town."  # an exact tie
    return texts


QUERIES = [
    "river",
    "salt market town",
    "Glass harbors and lighthouses",  # plural and capitals: stemmed and lowercased alike
    "violin violin painter",  # a repeated term counts once
    "founder of the railway bridge guild charter",
    "the of and",  # stopwords only: no scores
    "zeppelin",  # unknown term
    "museum zeppelin archive",
]


@pytest.fixture(scope="module", params=[(7, 60), (11, 200)], ids=["60-docs", "200-docs"])
def both(request: pytest.FixtureRequest) -> tuple[Bm25Index, LuceneReference, list[str]]:
    texts = _corpus(*request.param)
    ids = list(texts)
    ours = Bm25Index.build(ids, [texts[i] for i in ids])
    analyzer = Analyzer()
    reference = LuceneReference([analyzer.terms(texts[i]) for i in ids], k1=K1, b=B)
    return ours, reference, ids


def _reference_ranking(scores: np.ndarray, ids: list[str]) -> list[tuple[str, float]]:
    ranked = sorted((-float(s), cid) for s, cid in zip(scores, ids, strict=True) if s > 0)
    return [(cid, -neg) for neg, cid in ranked]


@pytest.mark.parametrize("query", QUERIES)
def test_scores_equal_the_references(both, query: str) -> None:
    ours, reference, _ids = both
    want = reference.lucene_scores(Analyzer().terms(query))
    got = ours.scores(query)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("query", QUERIES)
def test_ranks_equal_the_references(both, query: str) -> None:
    """The same chunks in the reference's order (score, then id); two chunks whose scores
    differ by less than float32 rounding (1e-6 relative) may come in either order."""
    ours, reference, ids = both
    scores = reference.lucene_scores(Analyzer().terms(query))
    want = [cid for cid, _ in _reference_ranking(scores, ids)]
    full = ours.search(query, k=len(ids))
    got = [cid for cid, _ in full]
    assert sorted(got) == sorted(want)
    ref = dict(zip(ids, scores.tolist(), strict=True))
    for a, b in zip(got, got[1:], strict=False):
        assert ref[a] >= ref[b] * (1 - 1e-6), (a, b)
        assert ref[a] != ref[b] or a < b, (a, b)
    swapped = sum(g != w for g, w in zip(got, want, strict=True))
    assert swapped <= 2 * _near_ties(scores), (got, want)
    # every cut of the ranking is its head (the search's sampled threshold is exact)
    for k in (1, 3, 10):
        assert ours.search(query, k=k) == full[:k]


def _near_ties(scores: np.ndarray) -> int:
    """Pairs of neighbouring nonzero scores closer than float32 rounding, yet unequal."""
    values = np.sort(scores[scores > 0])[::-1]
    gaps = values[:-1] - values[1:]
    return int(np.count_nonzero((gaps > 0) & (gaps <= 1e-6 * values[:-1])))


def test_an_exact_tie_is_broken_by_chunk_id(both) -> None:
    ours, _reference, _ids = both
    hits = dict(ours.search("salt market river town", k=500))
    assert hits["doc-dup-a"] == hits["doc-dup-b"]
    order = [cid for cid, _ in ours.search("salt market river town", k=500)]
    assert order.index("doc-dup-a") + 1 == order.index("doc-dup-b")


def test_a_saved_and_loaded_index_scores_as_the_reference(both, tmp_path) -> None:
    ours, reference, _ids = both
    ours.save(tmp_path / "bm25")
    loaded = Bm25Index.load(tmp_path / "bm25")
    for query in QUERIES:
        want = reference.lucene_scores(Analyzer().terms(query))
        np.testing.assert_allclose(loaded.scores(query), want, rtol=2e-6, atol=1e-7)
