"""Feature extraction: shapes, normalizations and link features on hand-made candidates."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from thresher.corpus.document import Chunk
from thresher.index.store import Hit
from thresher.policies.local.candidate import AnchorView, Candidate, QuestionContext
from thresher.policies.local.features import BASE_FEATURES, LINK_FEATURES, base_matrix, link_matrix
from thresher.policies.local.pool import doc_ranks

Q = "In which province is the town where the Halvard Glassworks was founded?"


def chunk(doc: str, title: str, text: str) -> Chunk:
    return Chunk(f"{doc}#0", doc, 0, title, text, 0, len(text), doc)


GLASS = chunk(
    "glassworks",
    "Halvard Glassworks",
    "The Halvard Glassworks was founded in 1891 in the river town of Marrowick.",
)
TOWN = chunk("marrowick", "Marrowick", "Marrowick is a small town in the province of Tessaly.")


def col(name: str, row: np.ndarray, names=BASE_FEATURES) -> float:
    return float(row[names.index(name)])


def test_candidate_field_order_is_the_one_the_scorer_builds_by_position():
    # pool.search_candidates builds a search's candidates with positional arguments
    # (its hot loop): reordering the fields must come with that call changed
    assert [f.name for f in fields(Candidate)] == [
        "chunk", "hop", "subquery", "rank", "bm25_s", "dense_s", "pool_bm25_max",
        "pool_dense_max", "bm25_q", "dense_q", "words", "title_words", "sub_words", "via",
        "lower", "via_words", "via_score", "via_source", "folded", "title_folded",
    ]  # fmt: skip


def test_base_features_question_hit():
    q = QuestionContext.of(Q, bm25_max=10.0, dense_max=0.8)
    c = Candidate(GLASS, subquery=Q, rank=1, bm25_s=10.0, dense_s=0.8, pool_bm25_max=10.0,
                  pool_dense_max=0.8, bm25_q=10.0, dense_q=0.8)  # fmt: skip
    x = base_matrix([c], q)
    assert x.shape == (1, len(BASE_FEATURES))
    row = x[0]
    assert col("bm25_q_norm", row) == pytest.approx(1.0)
    assert col("dense_q_gap", row) == pytest.approx(0.0)
    assert col("title_in_q", row) == 1.0 and col("is_subquery", row) == 0.0
    assert col("title_in_s", row) == 0.0  # only for follow-ups
    assert col("inv_log_rank", row) == pytest.approx(1.0)


def test_base_features_follow_up_and_missing_dense():
    q = QuestionContext.of(Q, bm25_max=10.0, dense_max=0.8)
    c = Candidate(TOWN, hop=1, subquery="Marrowick province", rank=3, bm25_s=6.0, dense_s=None,
                  pool_bm25_max=12.0, pool_dense_max=0.7, bm25_q=2.0, dense_q=0.4)  # fmt: skip
    row = base_matrix([c], q)[0]
    assert col("is_subquery", row) == 1.0 and col("hop", row) == 1.0
    assert col("title_in_s", row) == 1.0 and col("title_in_q", row) == 0.0
    assert col("bm25_s_norm", row) == pytest.approx(0.5)
    assert col("dense_s_missing", row) == 1.0
    assert col("bm25_q_norm", row) == pytest.approx(0.2)


def test_via_score_is_the_score_of_the_bridge_that_found_the_chunk():
    q = QuestionContext.of(Q, bm25_max=10.0, dense_max=0.8)
    found = Candidate(TOWN, hop=1, subquery="Marrowick province", via="Marrowick", via_score=2.5)
    asked = Candidate(GLASS, subquery=Q, via_score=2.5)  # the question's search: no bridge
    rows = base_matrix([found, asked], q)
    assert col("via_score", rows[0]) == pytest.approx(2.5)
    assert col("via_score", rows[1]) == 0.0


def test_the_question_searchs_ranks_of_a_document_are_features_of_every_chunk_of_it():
    """A chunk a follow-up found carries its document's ranks in the question's own
    search (fused, BM25, dense): what single-shot retrieval gave that document."""
    q = QuestionContext.of(Q, doc_ranks={"marrowick": (3, 1, 0)})
    later = Candidate(TOWN, hop=1, subquery="Marrowick province", rank=2)
    unseen = Candidate(GLASS, hop=1, subquery="Marrowick province", rank=1)
    rows = base_matrix([later, unseen], q)
    assert col("q_doc_fused", rows[0]) == pytest.approx(0.5)  # 1 / log2(1 + 3)
    assert col("q_doc_bm25", rows[0]) == pytest.approx(1.0)
    assert col("q_doc_dense", rows[0]) == 0.0  # dense did not list it
    assert [col(n, rows[1]) for n in ("q_doc_fused", "q_doc_bm25", "q_doc_dense")] == [0.0] * 3


def test_doc_ranks_keep_each_documents_best_rank_per_list():
    second = Chunk("glassworks#1", "glassworks", 1, GLASS.title, "More glass.", 0, 11, "glassworks")
    hits = [
        Hit(GLASS, 0.9, "hybrid", bm25_rank=4, dense_rank=None),
        Hit(TOWN, 0.8, "hybrid", bm25_rank=None, dense_rank=1),
        Hit(second, 0.7, "hybrid", bm25_rank=2, dense_rank=7),
    ]
    assert doc_ranks(hits) == {"glassworks": (1, 2, 7), "marrowick": (2, 0, 1)}


def test_link_features_follow_titles_both_ways():
    q = QuestionContext.of(Q)
    glass = Candidate(GLASS, subquery=Q)
    town = Candidate(TOWN, subquery=Q)
    anchors = [
        AnchorView("glassworks", GLASS.title, GLASS.text.lower(), frozenset(glass.words), 0.9),
    ]
    x = link_matrix([glass, town], q, anchors)
    assert x.shape == (2, len(LINK_FEATURES))
    assert col("top_anchor", x[0], LINK_FEATURES) == 1.0
    assert col("linked_to", x[0], LINK_FEATURES) == 0.0  # its own document is no link
    assert col("linked_to", x[1], LINK_FEATURES) == pytest.approx(0.9)  # named by the anchor
    assert col("complement", x[1], LINK_FEATURES) > 0  # adds "province", "town"
    assert base_matrix([], q).shape == (0, len(BASE_FEATURES))
    assert link_matrix([], q, anchors).shape == (0, len(LINK_FEATURES))


def test_source_utility_is_the_utility_of_the_chunk_that_named_the_bridge():
    q = QuestionContext.of(Q)
    town = Candidate(TOWN, hop=1, subquery="Marrowick", via="Marrowick", via_source=GLASS.chunk_id)
    glass = Candidate(GLASS, subquery=Q)  # the question's search: no source
    anchors = [AnchorView("glassworks", GLASS.title, GLASS.text.lower(), frozenset(), 0.9)]
    x = link_matrix([town, glass], q, anchors, utility={GLASS.chunk_id: 0.7})
    assert col("source_utility", x[0], LINK_FEATURES) == pytest.approx(0.7)
    assert col("source_utility", x[1], LINK_FEATURES) == 0.0
    assert col("source_utility", link_matrix([town], q, anchors)[0], LINK_FEATURES) == 0.0
