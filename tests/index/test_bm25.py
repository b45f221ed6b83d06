from __future__ import annotations

import pytest

from thresher.errors import UnknownIdError
from thresher.index.bm25 import Analyzer, Bm25Index

TEXTS = {
    "d1": "The cat sat on the mat.",
    "d2": "Dogs are running in the park.",
    "d3": "the and of",
    "d4": "Cats and dogs live together.",
    "d5": "A dog runs; a dog sleeps.",
}


@pytest.fixture
def index() -> Bm25Index:
    return Bm25Index.build(list(TEXTS), list(TEXTS.values()))


def test_analyzer_lowercases_splits_drops_stopwords_and_stems() -> None:
    assert Analyzer().terms("The Cats are RUNNING, naïvely!") == ["cat", "run", "naïv"]
    assert Analyzer(stemmer=None).terms("The Cats are RUNNING") == ["cats", "running"]


def test_search_ranks_matching_chunks_and_never_returns_zero_scores(index: Bm25Index) -> None:
    hits = index.search("dog", k=10)
    assert [cid for cid, _ in hits][:1] == ["d5"]  # two occurrences
    assert {cid for cid, _ in hits} == {"d2", "d4", "d5"}
    assert all(score > 0 for _, score in hits)
    assert index.search("zebra", k=10) == []
    assert index.search("the of", k=10) == []  # only stopwords


def test_search_cuts_to_k_after_exclusion(index: Bm25Index) -> None:
    full = index.search("dogs cats", k=10)
    assert len(index.search("dogs cats", k=2)) == 2
    first = full[0][0]
    again = index.search("dogs cats", k=2, exclude={first, "unknown-id"})
    assert [c for c, _ in again] == [c for c, _ in full[1:3]]


def test_ties_are_broken_by_chunk_id() -> None:
    ix = Bm25Index.build(["z", "b", "m", "a"], ["apple", "apple", "apple", "pear"])
    assert [c for c, _ in ix.search("apple", k=2)] == ["b", "m"]
    assert [c for c, _ in ix.search("apple", k=3)] == ["b", "m", "z"]


def test_scores_for_follows_the_order_asked(index: Bm25Index) -> None:
    scores = index.scores_for("dog", ["d1", "d5", "d2"])
    assert scores[0] == 0.0
    assert scores[1] > scores[2] > 0
    with pytest.raises(UnknownIdError) as err:
        index.scores_for("dog", ["d1", "nope", "nada"])
    assert err.value.ids == ["nope", "nada"]


def test_save_and_load_round_trip(index: Bm25Index, tmp_path) -> None:
    index.save(tmp_path / "bm25")
    loaded = Bm25Index.load(tmp_path / "bm25")
    assert loaded.ids == index.ids
    assert loaded.search("cats dogs", k=5) == index.search("cats dogs", k=5)


def test_empty_index(tmp_path) -> None:
    ix = Bm25Index.build([], [])
    assert len(ix) == 0
    assert ix.search("anything", k=3) == []
    ix.save(tmp_path / "e")
    assert Bm25Index.load(tmp_path / "e").search("anything", k=3) == []


def test_search_keeps_the_order_of_a_full_sort_when_many_chunks_tie(tmp_path) -> None:
    """Repeated texts tie: the top k is (score descending, chunk id), as a full sort gives,
    built or loaded (ids read through the memory-mapped id table)."""
    import random

    rng = random.Random(7)
    words = ["river", "town", "glass", "market", "bread", "moon", "harbour", "salt"]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(40)] * 30
    ids = [f"c{rng.randrange(10**6):06d}-{i}" for i in range(len(texts))]
    built = Bm25Index.build(ids, texts)
    built.save(tmp_path)
    for index in (built, Bm25Index.load(tmp_path)):
        for query in ["river town", "glass", "salt moon harbour", "bread bread market"]:
            scores = index.scores(query)
            full = sorted(
                (i for i in range(len(ids)) if scores[i] > 0), key=lambda i: (-scores[i], ids[i])
            )
            for k in (1, 7, 50, 5000):
                assert index.search(query, k) == [(ids[i], float(scores[i])) for i in full[:k]]
            dropped = {ids[i] for i in full[:5]}
            rest = [i for i in full if ids[i] not in dropped]
            assert index.search(query, 9, dropped) == [(ids[i], float(scores[i])) for i in rest[:9]]


def test_a_saved_index_is_read_without_bm25s_and_scores_alike(tmp_path) -> None:
    """Loading a saved index reads its arrays itself (no ``bm25s``, no ``scipy`` import
    in a reader) and gives the very floats ``bm25s`` gives."""
    import random
    import subprocess
    import sys

    import bm25s
    import numpy as np

    rng = random.Random(3)
    words = [
        "river",
        "harbor",
        "glass",
        "salt",
        "market",
        "town",
        "founder",
        "railway",
        "bridge",
        "museum",
        "violin",
    ]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 30))) for _ in range(400)]
    Bm25Index.build([f"c{i}" for i in range(400)], texts).save(tmp_path)
    ours = Bm25Index.load(tmp_path)
    theirs = bm25s.BM25.load(str(tmp_path / "bm25s"), mmap=True, show_progress=False)
    for query in ["river glass", "museum violin founder", "salt", "bridge town town harbor"]:
        terms = sorted({ours._model.vocab_dict[t] for t in ours.analyzer.terms(query)})
        want = theirs.get_scores_from_ids(terms)
        assert np.array_equal(ours.scores(query), want)
    code = (
        "import sys; from thresher.index.bm25 import Bm25Index; "
        f"i = Bm25Index.load({str(tmp_path)!r}); i.search('river glass', 5); "
        "print(sorted(m for m in ('bm25s', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
