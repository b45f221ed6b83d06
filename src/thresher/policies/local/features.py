"""The feature rows the learned models read: a candidate chunk's base and link features (pure).

The **base** features of a :class:`~.candidate.Candidate` (:data:`BASE_FEATURES`)
read it and the queries only: BM25 and dense scores against the question and the
subquery (normalized within the episode / the result list), fused rank, hop of
origin, title and word overlap with the question and the subquery, what the
follow-up that found it asked (its bridge phrase, asked words and bridge score),
and the retrievers' own ranks of its document in the question's search (fused,
BM25, dense: what single-shot retrieval would rank it, whichever search found it;
:data:`RANK_FEATURES`). They feed the base utility model (:mod:`.models`); the
training recipe leaves :data:`RANK_FEATURES` out unless asked
(:mod:`thresher.train.local.trainer`), and a model reads only its own columns.

The **link** features (:data:`LINK_FEATURES`) read it against the retained chunks
trusted as context (its *anchors*, :class:`~.candidate.AnchorView`, best first):
whether an anchor names this chunk's title or this chunk names an anchor's title,
how much of the question it covers that the best anchor does not, its redundancy
with the anchors, and the utility of the chunk whose bridge found it. The full
models' rows are the base features, then the link features.

:func:`base_matrix` and :func:`link_matrix` return one row per candidate, columns in
their tuple's order. Nothing is memoized here: a session's
:class:`~.memory.EpisodeMemory` keeps its episode's base rows
(:meth:`~.scoring.CandidateScorer.base_rows`), the link features of (candidate,
anchor) pairs (a :data:`PairMemo`) and the link rows computed against one set of
anchors (a :data:`LinkRowMemo`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeAlias

import numpy as np

from thresher.policies.local.candidate import AnchorView, Candidate, QuestionContext
from thresher.policies.local.text import fold, fold_phrase, holds_folded

__all__ = [
    "BASE_FEATURES",
    "LINK_FEATURES",
    "RANK_FEATURES",
    "PairMemo",
    "LinkRowMemo",
    "base_matrix",
    "link_matrix",
]

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
    # the retrievers' own ranks of the chunk's *document* for the question, whichever
    # search found the chunk: 1 / log2(1 + best rank in the question's own search), 0
    # when no chunk of the document was listed there
    "q_doc_fused",  # in the question's fused list
    "q_doc_bm25",  # in BM25's own list for the question
    "q_doc_dense",  # in dense's own list for the question
)

#: the base features that are the retrievers' own ranks of the chunk's document in the
#: question's search: computed for every chunk, fit only when a fit asks for them
RANK_FEATURES: tuple[str, ...] = ("q_doc_fused", "q_doc_bm25", "q_doc_dense")


def _subquery_view(subquery: str, q: QuestionContext) -> tuple[bool, str]:
    """Whether ``subquery`` is a follow-up (not the question), and it lowercased and folded."""
    return subquery.strip().lower() != q.question.strip().lower(), fold(subquery.lower())


def _base_rows(cands: Sequence[Candidate], q: QuestionContext) -> list[list[float]]:
    """The :data:`BASE_FEATURES` of each of ``cands``. One loop, what the candidates of
    one search share (their subquery, its bridge phrase and asked words) read once: a
    rerank scores a few dozen candidates of one search. A phrase test is called only
    when the phrase occurs in the text at all (``in``, no call: most do not), here and
    in :func:`_link_rows`; the test then checks the word boundaries."""
    q_folded = q.folded or fold(q.lower)
    q_words = q.words
    n_q = len(q_words)
    doc_ranks = q.doc_ranks
    absent = (0, 0, 0)
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
        r_fused, r_bm25, r_dense = doc_ranks.get(c.chunk.doc_id, absent)
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
                1.0 / log2(1 + r_fused) if r_fused else 0.0,
                1.0 / log2(1 + r_bm25) if r_bm25 else 0.0,
                1.0 / log2(1 + r_dense) if r_dense else 0.0,
            ]
        )
    return rows


def base_matrix(cands: Sequence[Candidate], q: QuestionContext) -> np.ndarray:
    """Rows of :data:`BASE_FEATURES` for ``cands`` (shape ``(len(cands), len(BASE_FEATURES))``)."""
    if not cands:
        return np.zeros((0, len(BASE_FEATURES)))
    return np.asarray(_base_rows(cands, q), dtype=np.float64)


LINK_FEATURES: tuple[str, ...] = (
    "linked_to",  # best anchor weight among anchors whose text names this chunk's title
    "links_from",  # best anchor weight among anchors whose title this chunk's text names
    "top_anchor",  # this chunk's document is the best anchor
    "anchor_rank_inv",  # 1 / rank among anchors (0 if not an anchor)
    "complement",  # share of question words this chunk adds to the best anchor's
    "redundancy",  # best content-word Jaccard with an anchor of another document
    "source_utility",  # base utility now of the chunk whose bridge found this one (0: none)
)


#: (candidate chunk id, content hash) -> anchor key -> what :func:`_link_rows` found of the pair: an
#: episode's memo of the pairs it scored (owned by its session; nested so that a
#: candidate's pairs are found from one key of it, not one key per anchor)
PairMemo: TypeAlias = dict[tuple[str, str], dict[tuple[str, ...], tuple[bool, bool, float]]]

#: anchors' signature -> (candidate chunk id, content hash) -> the candidate's link
#: features but ``source_utility``: an episode's memo of the rows it computed (owned
#: by its session). The signature is what those features read of the anchors and the
#: question (each anchor's key, document and weight, the question's words): a
#: chunk ranked again against the same anchors finds its row.
LinkRowMemo: TypeAlias = dict[tuple[object, ...], dict[tuple[str, str], tuple[float, ...]]]

#: what :func:`_link_rows` reads of an anchor, once per call: its document, weight,
#: memo key, folded text, lowercased title, folded title and words
_AnchorRead: TypeAlias = tuple[str, float, tuple[str, ...], str, str, str, frozenset[str]]


def _anchor_read(a: AnchorView, memo: PairMemo | None) -> _AnchorRead:
    return (
        a.doc_id,
        a.weight,
        a.key if memo is not None else (),
        a.text_folded or fold(a.text_lower),
        a.title.lower(),
        a.title_folded or fold_phrase(a.title),
        a.words,
    )


def _link_rows(
    cands: Sequence[Candidate],
    q: QuestionContext,
    anchors: Sequence[AnchorView],
    memo: PairMemo | None,
    utility: Mapping[str, float] | None,
    row_memo: LinkRowMemo | None = None,
) -> list[list[float]]:
    """The :data:`LINK_FEATURES` of each of ``cands`` (see :func:`link_matrix`). One loop
    over the candidates with what it reads of the anchors taken once: a rerank scores
    a few hundred (candidate, anchor) pairs. With both memos, a candidate's row against
    these anchors is read back from ``row_memo`` when it was computed before."""
    reads = [_anchor_read(a, memo) for a in anchors]
    top = anchors[0] if anchors else None
    q_words = q.words
    known: dict[tuple[str, str], tuple[float, ...]] | None = None
    if row_memo is not None and memo is not None and all(a.key for a in anchors):
        sig = (q_words, tuple((a.key, a.doc_id, a.weight) for a in anchors))
        known = row_memo.get(sig)
        if known is None:
            known = row_memo[sig] = {}
    rows = []
    for c in cands:
        chunk = c.chunk
        source = utility.get(c.via_source, 0.0) if utility and c.via_source else 0.0
        held: dict[tuple[str, ...], tuple[bool, bool, float]] | None = None
        if memo is not None:
            ckey = (chunk.chunk_id, chunk.content_hash)
            if known is not None:
                row = known.get(ckey)
                if row is not None:
                    rows.append([*row, source])
                    continue
            held = memo.get(ckey)
            if held is None:
                held = memo[ckey] = {}
        doc = chunk.doc_id
        title_lower = chunk.title.lower()
        words, n_words, folded, title_folded = c.words, len(c.words), c.folded, c.title_folded
        linked_to = links_from = redundancy = rank_inv = 0.0
        for i, (a_doc, weight, key, a_folded, a_title_lower, a_title_folded, a_words) in enumerate(
            reads
        ):
            if a_doc == doc:
                if rank_inv == 0.0:  # the first is the best: 1 / (i + 1) falls with i
                    rank_inv = 1.0 / (i + 1)
                continue
            got = held.get(key) if held is not None and key else None
            if got is None:
                # the pair: (the anchor names the candidate's title, the candidate names
                # the anchor's title, content-word Jaccard of the two)
                shared = len(words & a_words)
                union = n_words + len(a_words) - shared
                got = (
                    title_folded in a_folded and holds_folded(a_folded, title_folded),
                    a_title_lower != title_lower
                    and a_title_folded in folded
                    and holds_folded(folded, a_title_folded),
                    shared / union if union else 0.0,
                )
                if held is not None and key:
                    held[key] = got
            if weight > linked_to and got[0]:
                linked_to = weight
            if weight > links_from and got[1]:
                links_from = weight
            if got[2] > redundancy:
                redundancy = got[2]
        complement = 0.0
        if top is not None and top.doc_id != doc and q_words:
            complement = len((words & q_words) - top.words) / len(q_words)
        found = (
            linked_to,
            links_from,
            1.0 if top is not None and top.doc_id == doc else 0.0,
            rank_inv,
            complement,
            redundancy,
        )
        if known is not None:
            known[ckey] = found
        rows.append([*found, source])
    return rows


def link_matrix(
    cands: Sequence[Candidate],
    q: QuestionContext,
    anchors: Sequence[AnchorView],
    memo: PairMemo | None = None,
    utility: Mapping[str, float] | None = None,
    row_memo: LinkRowMemo | None = None,
) -> np.ndarray:
    """Rows of :data:`LINK_FEATURES` for ``cands`` against ``anchors`` (``memo``: an
    episode's :data:`PairMemo`, read and filled; ``utility``: chunk id -> base utility
    of each bridge's source chunk, for ``source_utility``; ``row_memo``: an episode's
    :data:`LinkRowMemo`, read and filled, used along with ``memo`` when every anchor
    has a key). Pairs with an anchor made by hand, without a key, are computed each
    time."""
    if not cands:
        return np.zeros((0, len(LINK_FEATURES)))
    return np.asarray(_link_rows(cands, q, anchors, memo, utility, row_memo), dtype=np.float64)
