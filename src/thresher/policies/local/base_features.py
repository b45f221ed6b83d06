"""Base features of a candidate chunk: the chunk and the queries alone (pure).

The **base** features of a :class:`~.candidate.Candidate` read it and the
queries only: BM25 and dense scores against the question and the subquery
(normalized within the episode / the result list), fused rank, hop of origin,
title and word overlap with the question and the subquery, and what the
follow-up that found it asked (its bridge phrase, asked words and bridge
score). They feed the base utility model (:mod:`.scorer`); the link features
against the retained context (:mod:`.link_features`) come after them in the
full models' rows.

:func:`base_matrix` returns one row per candidate, columns in
:data:`BASE_FEATURES` order. Nothing is memoized here (the scorer keeps an
episode's rows: :meth:`~.scoring.CandidateScorer.base_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from thresher.policies.local.candidate import Candidate, QuestionContext
from thresher.policies.local.text import fold, fold_phrase, holds_folded

__all__ = ["BASE_FEATURES", "base_matrix"]

BASE_FEATURES: tuple[str, ...] = (
    "bm25_q_norm",  # BM25(question, chunk) / best BM25 of the question's own search
    "dense_q",  # cosine(question, chunk)
    "dense_q_gap",  # cosine(question, chunk) - best cosine of the question's search
    "bm25_s_norm",  # BM25(subquery, chunk) / best in its result list
    "dense_s",  # cosine(subquery, chunk)
    "dense_s_gap",  # cosine(subquery, chunk) - best in its result list
    "dense_s_missing",  # the chunk was not in the subquery's dense list
    "inv_log_rank",  # 1 / log2(1 + fused rank in its result list)
    "is_subquery",  # found by a follow-up query, not the question
    "hop",  # hop of origin (0, 1, 2, ...), capped at 3
    "title_in_q",  # the title occurs in the question
    "title_cov_q",  # share of the title's content words in the question
    "q_cov",  # share of the question's content words in the chunk (title + text)
    "title_in_s",  # the title occurs in the subquery (follow-ups only)
    "title_cov_s",  # share of the title's content words in the subquery (follow-ups only)
    "s_cov",  # share of the subquery's content words in the chunk (follow-ups only)
    "via_held",  # the chunk holds the bridge phrase of the follow-up that found it
    "ask_cov",  # share of that follow-up's asked words (beside the bridge) in the chunk
    "via_score",  # the score of that follow-up's bridge (0 for the question's search)
)


def _subquery_view(subquery: str, q: QuestionContext) -> tuple[bool, str]:
    """Whether ``subquery`` is a follow-up (not the question), and it lowercased and folded."""
    return subquery.strip().lower() != q.question.strip().lower(), fold(subquery.lower())


def _base_rows(cands: Sequence[Candidate], q: QuestionContext) -> list[list[float]]:
    """The :data:`BASE_FEATURES` of each of ``cands``. One loop, what the candidates of
    one search share (their subquery, its bridge phrase and asked words) read once: a
    rerank scores a few dozen candidates of one search. A phrase test is called only
    when the phrase occurs in the text at all (``in``, no call: most do not), here and
    in :func:`~.link_features._link_rows`; the test then checks the word boundaries."""
    q_folded = q.folded or fold(q.lower)
    q_words = q.words
    n_q = len(q_words)
    views: dict[str, tuple[bool, str]] = {}  # subquery -> _subquery_view
    vias: dict[str, str] = {}  # bridge phrase -> it as phrase tests look for it
    asks: dict[tuple[frozenset[str], frozenset[str]], frozenset[str]] = {}  # asked words
    empty: frozenset[str] = frozenset()
    log2 = math.log2
    rows = []
    for c in cands:
        sub = views.get(c.subquery)
        if sub is None:
            sub = views[c.subquery] = _subquery_view(c.subquery, q)
        is_sub, sub_folded = sub
        words, title_words, title_folded = c.words, c.title_words, c.title_folded
        n_words = len(words)
        bm25_q = c.bm25_q if c.bm25_q is not None else 0.0
        dense_q = c.dense_q if c.dense_q is not None else 0.0
        dense_s = c.dense_s if c.dense_s is not None else dense_q if not is_sub else 0.0
        bm25_s = c.bm25_s if c.bm25_s is not None else 0.0
        s_words = c.sub_words if is_sub and c.sub_words is not None else empty
        n_s = len(s_words)
        via = c.via
        via_held = ask_cov = via_score = 0.0
        if via:
            via_folded = vias.get(via)
            if via_folded is None:
                via_folded = vias[via] = fold_phrase(via)
            folded = c.folded
            via_held = 1.0 if via_folded in folded and holds_folded(folded, via_folded) else 0.0
            pair = (s_words, c.via_words or empty)
            asked = asks.get(pair)
            if asked is None:
                asked = asks[pair] = pair[0] - pair[1]
            ask_cov = len(asked & words) / n_words if n_words else 0.0
            via_score = c.via_score
        rows.append(
            [
                bm25_q / q.bm25_max if q.bm25_max > 0 else 0.0,
                dense_q,
                dense_q - q.dense_max,
                bm25_s / c.pool_bm25_max if c.pool_bm25_max > 0 else 0.0,
                dense_s,
                dense_s - c.pool_dense_max if c.dense_s is not None else -0.3,
                1.0 if c.dense_s is None else 0.0,
                1.0 / log2(1 + max(c.rank, 1)),
                1.0 if is_sub else 0.0,
                float(min(c.hop, 3)),
                1.0 if title_folded in q_folded and holds_folded(q_folded, title_folded) else 0.0,
                (len(title_words & q_words) / n_q if n_q else 0.0) if title_words else 0.0,
                len(q_words & words) / n_words if n_words else 0.0,
                1.0
                if is_sub and title_folded in sub_folded and holds_folded(sub_folded, title_folded)
                else 0.0,
                (len(title_words & s_words) / n_s if n_s else 0.0)
                if is_sub and title_words
                else 0.0,
                (len(s_words & words) / n_words if n_words else 0.0) if is_sub else 0.0,
                via_held,
                ask_cov,
                via_score,
            ]
        )
    return rows


def base_matrix(cands: Sequence[Candidate], q: QuestionContext) -> np.ndarray:
    """Rows of :data:`BASE_FEATURES` for ``cands`` (shape ``(len(cands), len(BASE_FEATURES))``)."""
    if not cands:
        return np.zeros((0, len(BASE_FEATURES)))
    return np.asarray(_base_rows(cands, q), dtype=np.float64)
