"""Hand-computed cases for every metric, and property tests for their bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thresher.errors import InputError
from thresher.eval import metrics as m
from thresher.tasks import answers

RANKED = ["d1", "d2", "d3", "d4", "d5"]
GOLD = {"d2", "d4", "d9"}


# --- ranked retrieval: hand-computed ------------------------------------------------------------


def test_recall_precision_all_gold_by_hand() -> None:
    assert m.recall_at_k(RANKED, GOLD, 1) == 0.0
    assert m.recall_at_k(RANKED, GOLD, 2) == pytest.approx(1 / 3)
    assert m.recall_at_k(RANKED, GOLD, 5) == pytest.approx(2 / 3)
    assert m.precision_at_k(RANKED, GOLD, 2) == pytest.approx(1 / 2)
    assert m.precision_at_k(RANKED, GOLD, 4) == pytest.approx(2 / 4)
    # denominator is k even past the end of the ranking (trec_eval P_k)
    assert m.precision_at_k(RANKED, GOLD, 10) == pytest.approx(2 / 10)
    assert m.all_gold_at_k(RANKED, GOLD, 5) == 0.0
    assert m.all_gold_at_k(RANKED, {"d2", "d4"}, 4) == 1.0
    assert m.all_gold_at_k(RANKED, {"d2", "d4"}, 3) == 0.0


def test_ndcg_by_hand() -> None:
    # rel at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); ideal (3 gold, k=5): 1 + 1/log2(3) + 1/2
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / 2
    assert m.ndcg_at_k(RANKED, GOLD, 5) == pytest.approx(dcg / idcg)
    # k=2: DCG = 1/log2(3); ideal = 1 + 1/log2(3)
    assert m.ndcg_at_k(RANKED, GOLD, 2) == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    )
    assert m.ndcg_at_k(["a", "b"], {"a", "b"}, 2) == pytest.approx(1.0)


def test_ndcg_graded_linear_gain() -> None:
    graded = {"d1": 1, "d3": 2, "dx": 0}
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert m.ndcg_at_k(RANKED, graded, 3) == pytest.approx(dcg / idcg)


def test_mrr_and_average_precision_by_hand() -> None:
    assert m.mrr(RANKED, GOLD) == pytest.approx(1 / 2)
    assert m.mrr(RANKED, GOLD, k=1) == 0.0
    assert m.mrr(RANKED, {"zz"}) == 0.0
    # hits at 2 and 4: AP = (1/2 + 2/4) / 3
    assert m.average_precision(RANKED, GOLD) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert m.average_precision(RANKED, GOLD, k=3) == pytest.approx((1 / 2) / 3)


def test_duplicates_keep_first_rank() -> None:
    # chunk ranking a#0, b#0, a#1 mapped to docs -> a, b, a -> a, b
    ranked = ["a", "b", "a", "c"]
    assert m.precision_at_k(ranked, {"c"}, 3) == pytest.approx(1 / 3)
    assert m.mrr(ranked, {"c"}) == pytest.approx(1 / 3)
    assert m.average_precision(ranked, {"a", "c"}) == pytest.approx((1 + 2 / 3) / 2)


def test_mapping_gold_uses_positive_grades_only() -> None:
    assert m.recall_at_k(["a", "b"], {"a": 1, "b": 0}, 2) == 1.0
    with pytest.raises(InputError):
        m.recall_at_k(["a"], {"a": 0}, 1)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, None])
def test_bad_k_rejected(k: object) -> None:
    with pytest.raises(InputError, match="k must be a positive integer"):
        m.recall_at_k(RANKED, GOLD, k)  # type: ignore[arg-type]


def test_empty_gold_and_string_inputs_rejected() -> None:
    with pytest.raises(InputError, match="no relevant document"):
        m.precision_at_k(RANKED, set(), 3)
    with pytest.raises(InputError, match="not the string"):
        m.recall_at_k("d1", GOLD, 3)
    with pytest.raises(InputError, match="not the string"):
        m.output_recall(["d1"], "d1")


# --- returned set and episode -------------------------------------------------------------------


def test_output_set_metrics_by_hand() -> None:
    returned = ["d2", "d7"]
    assert m.output_recall(returned, GOLD) == pytest.approx(1 / 3)
    assert m.output_precision(returned, GOLD) == pytest.approx(1 / 2)
    assert m.output_f1(returned, GOLD) == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))
    assert m.output_precision([], GOLD) == 0.0
    assert m.output_f1([], GOLD) == 0.0
    assert m.output_f1(["x"], GOLD) == 0.0


def test_trajectory_recall_and_bridge_preservation() -> None:
    assert m.trajectory_recall(["d9", "d1", "d9"], GOLD) == pytest.approx(1 / 3)
    assert m.bridge_preservation(["b1", "x"], ["b1", "b2"]) == pytest.approx(1 / 2)
    assert m.bridge_preservation(["x"], []) is None


def test_prune_accuracy_counts_each_pruned_chunk() -> None:
    # four prunes: x, x (two chunks of x), d2 (gold), y -> 3 of 4 were not needed
    assert m.prune_accuracy(["x", "x", "d2", "y"], GOLD) == pytest.approx(3 / 4)
    assert m.prune_accuracy(["x"], GOLD) == 1.0
    assert m.prune_accuracy([], GOLD) is None
    assert m.prune_accuracy(["x"], set()) == 1.0


def test_premature_prunes() -> None:
    pruned = ["x", "d4", "d2", "d4"]
    assert m.premature_prunes(pruned, GOLD) == ["d4", "d2"]
    assert m.premature_prunes(pruned, GOLD, final_context=["d2"]) == ["d4"]
    assert m.premature_prunes(["x"], GOLD) == []


# --- answers -------------------------------------------------------------------------------------


def test_normalize_answer_squad_rules() -> None:
    assert answers.normalize_answer("The  Quick, brown FOX!") == "quick brown fox"
    assert answers.normalize_answer("an apple a day") == "apple day"
    assert answers.normalize_answer("theatre") == "theatre"  # articles only as whole words


def test_exact_match_and_f1_by_hand() -> None:
    assert answers.exact_match("The Beatles.", "beatles") == 1.0
    assert answers.exact_match("Beatles", "Rolling Stones") == 0.0
    assert answers.exact_match("Stanley Hall", "G. Stanley Hall", ["Stanley Hall"]) == 1.0
    # pred "new york city" vs "york city": common 2, P=2/3, R=1 -> F1 = 0.8
    assert answers.f1("New York City", "York City") == pytest.approx(0.8)
    assert answers.f1("New York City", "Boston", ["new york"]) == pytest.approx(0.8)
    assert answers.f1("Paris", "London") == 0.0
    assert answers.f1("the", "a") == 1.0  # both normalize to empty
    assert answers.f1("yes", "yes indeed") == 0.0  # HotpotQA yes/no rule
    assert answers.f1("no", "no") == 1.0


def test_answer_found_whole_tokens() -> None:
    text = "He was born in Tulsa, Oklahoma, in 1950."
    assert answers.answer_found(text, "tulsa")
    assert answers.answer_found(text, "Oklahoma City", ["Tulsa Oklahoma"])
    assert not answers.answer_found(text, "Tuls")
    assert not answers.answer_found(text, "the")
    assert not answers.answer_found("", "Tulsa")
    with pytest.raises(InputError):
        answers.answer_found(text, "x", "tulsa")


# --- properties ----------------------------------------------------------------------------------

DOCS = st.sampled_from([f"d{i}" for i in range(12)])
RANKINGS = st.lists(DOCS, max_size=15)
GOLDS = st.sets(DOCS, min_size=1, max_size=6)
KS = st.integers(min_value=1, max_value=20)


@given(RANKINGS, GOLDS, KS)
def test_ranked_metrics_within_bounds(ranked: list[str], gold: set[str], k: int) -> None:
    for fn in (m.recall_at_k, m.precision_at_k, m.all_gold_at_k, m.ndcg_at_k):
        assert 0.0 <= fn(ranked, gold, k) <= 1.0 + 1e-12
    assert 0.0 <= m.mrr(ranked, gold, k) <= 1.0
    assert 0.0 <= m.average_precision(ranked, gold, k) <= 1.0 + 1e-12


@given(RANKINGS, GOLDS, KS)
def test_cumulative_metrics_monotone_in_k(ranked: list[str], gold: set[str], k: int) -> None:
    for fn in (m.recall_at_k, m.all_gold_at_k, m.mrr, m.average_precision):
        assert fn(ranked, gold, k) <= fn(ranked, gold, k + 1)
    # precision hits (P@k * k) never decrease either
    assert m.precision_at_k(ranked, gold, k) * k <= m.precision_at_k(ranked, gold, k + 1) * (k + 1)


@given(RANKINGS, GOLDS)
def test_perfect_ranking_scores_one(noise: list[str], gold: set[str]) -> None:
    ranked = sorted(gold) + [d for d in noise if d not in gold]
    k = len(gold)
    for fn in (m.recall_at_k, m.precision_at_k, m.all_gold_at_k, m.ndcg_at_k):
        assert fn(ranked, gold, k) == pytest.approx(1.0)
    assert m.average_precision(ranked, gold) == pytest.approx(1.0)
    assert m.mrr(ranked, gold) == 1.0


@given(st.sets(DOCS, max_size=12), GOLDS)
def test_set_metrics_within_bounds(returned: set[str], gold: set[str]) -> None:
    p, r, f = (fn(returned, gold) for fn in (m.output_precision, m.output_recall, m.output_f1))
    assert 0.0 <= p <= 1.0 and 0.0 <= r <= 1.0
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12
    assert m.trajectory_recall(returned, gold) == r


@given(st.lists(DOCS, min_size=1, max_size=12), GOLDS)
def test_prune_accuracy_complements_premature(pruned: list[str], gold: set[str]) -> None:
    acc = m.prune_accuracy(pruned, gold)
    assert acc is not None and 0.0 <= acc <= 1.0
    assert (acc == 1.0) == (m.premature_prunes(pruned, gold) == [])


@given(st.text(max_size=30), st.text(max_size=30))
def test_answer_scores_within_bounds(pred: str, answer: str) -> None:
    em, f = answers.exact_match(pred, answer), answers.f1(pred, answer)
    assert em in (0.0, 1.0) and 0.0 <= f <= 1.0
    if em == 1.0:
        assert f == 1.0
    assert answers.exact_match(answer, answer) == 1.0
