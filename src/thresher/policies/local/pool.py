"""The candidate pool: which hits are candidates, and their records.

A search's fused hits are the candidates of its call (a follow-up's cut to its
fused head and either retriever's own head: :func:`rerank_pool`); each becomes a
:class:`~.candidate.Candidate` record with its scores against the subquery and
the question (:func:`search_candidates`), kept in the episode's
:attr:`~.memory.EpisodeMemory.pools`. A cached chunk that no search showed
(a grep hit, a read) gets its scores against the question from how it was found
(:func:`question_scores`); :func:`pool_titles` maps the titles the searches have
seen to their documents. The candidate scorer (:mod:`.scoring`) ranks these
records with the learned models.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

from thresher.harness.policy import QuestionScorer
from thresher.harness.state import LineageRecord
from thresher.index.store import Hit
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.text import content_words

__all__ = [
    "RETRIEVER_HEAD",
    "rerank_pool",
    "search_candidates",
    "doc_ranks",
    "question_scores",
    "pool_titles",
]

#: a follow-up's hit within either retriever's best this many is scored whatever its
#: fused rank (``rerank_depth`` cuts the fused list below it); the weights' constants
#: may set another (``retriever_head``)
RETRIEVER_HEAD = DEFAULT_CONSTANTS.retriever_head
_FAR = sys.maxsize


def rerank_pool(hits: Sequence[Hit], depth: int, head: int = RETRIEVER_HEAD) -> list[Hit]:
    """What a follow-up's scorer ranks: the fused list's best ``depth``, and any hit in
    either retriever's best ``head``. A follow-up shows a few chunks, from its fused
    head; but RRF buries one retriever's clear find that the other misses (a code's
    one e-mail: BM25's 3rd, dense's 137th, fused 37th)."""
    return [
        h
        for i, h in enumerate(hits)
        if i < depth or (h.bm25_rank or _FAR) <= head or (h.dense_rank or _FAR) <= head
    ]


def search_candidates(
    memory: EpisodeMemory, query: str, hits: list[Hit], scorer: QuestionScorer, scored: int
) -> list[Candidate]:
    """Candidate records of a search's ``hits``, with scores against the question.

    The question's own search in the first turn sets the question's score maxima
    (the normalizers of every later candidate's question scores). Of the candidates
    the search did not score against the question (a follow-up's), the best-fused
    ``scored`` are scored through ``scorer`` (the harness's, a store read; the
    episode's :attr:`~.memory.EpisodeMemory.question_scores` keeps each chunk's
    pair) and the rest get the list's floor.
    """
    q = memory.question
    hop = memory.hop
    is_question = query.strip() == q.question.strip()
    b_max = max((h.bm25_score or 0.0 for h in hits), default=0.0)
    d_max = max((h.dense_score for h in hits if h.dense_score is not None), default=0.0)
    if is_question and hop == 0:
        q = memory.question = replace(
            q, bm25_max=b_max or 1.0, dense_max=d_max or 1.0, doc_ranks=doc_ranks(hits)
        )
    sub_words = frozenset(content_words(query))
    bridge = memory.via.get(query.strip())
    via = bridge.phrase if bridge is not None else ""
    via_score = bridge.score if bridge is not None else 0.0
    via_source = bridge.source if bridge is not None else ""
    via_words = frozenset(content_words(via))
    cands = []
    chunk_text = memory.text.chunk
    for rank, h in enumerate(hits, 1):
        text = chunk_text(h.chunk)
        # every field, by position in :class:`Candidate`'s field order (a search
        # builds a few dozen; keywords cost twice as much; test_features pins the order)
        c = Candidate(
            h.chunk,
            hop,  # hop
            query,  # subquery
            rank,  # rank
            h.bm25_score,  # bm25_s
            h.dense_score,  # dense_s
            b_max,  # pool_bm25_max
            d_max,  # pool_dense_max
            h.bm25_score if is_question else None,  # bm25_q
            h.dense_score if is_question else None,  # dense_q
            text.words,  # words
            text.title_words,  # title_words
            sub_words,  # sub_words
            via,  # via
            text.lower,  # lower
            via_words,  # via_words
            via_score,  # via_score
            via_source,  # via_source
            text.folded,  # folded
            text.title_folded,  # title_folded
        )
        cands.append(c)
    missing = [c for c in cands if c.bm25_q is None or c.dense_q is None]
    # scores against the question for the best-fused candidates only (a store read
    # per call; the tail of a follow-up's list is rarely shown): the rest get the floor
    head = missing[:scored]
    if head:
        # a chunk's scores against the question are its own (not the batch's): the
        # episode asks the store only for chunks no earlier search had it score
        held = memory.question_scores
        ask = list(dict.fromkeys(c.chunk.chunk_id for c in head if c.chunk.chunk_id not in held))
        if ask:
            for cid, pair in zip(ask, scorer(ask), strict=True):
                held[cid] = pair
        for c in head:
            b, d = held[c.chunk.chunk_id]
            c.bm25_q = b if c.bm25_q is None else c.bm25_q
            c.dense_q = d if c.dense_q is None else c.dense_q
    floor_b = min((c.bm25_q for c in cands if c.bm25_q is not None), default=0.0)
    floor_d = min((c.dense_q for c in cands if c.dense_q is not None), default=0.0)
    for c in missing[scored:]:
        c.bm25_q = floor_b if c.bm25_q is None else c.bm25_q
        c.dense_q = floor_d if c.dense_q is None else c.dense_q
    return cands


def doc_ranks(hits: Sequence[Hit]) -> dict[str, tuple[int, int, int]]:
    """Document id -> its best 1-based ranks over ``hits`` (a fused list, best first):
    fused position, rank in BM25's own list, rank in dense's own list (0: no chunk of
    the document listed there)."""
    out: dict[str, tuple[int, int, int]] = {}
    for i, h in enumerate(hits, 1):
        doc = h.chunk.doc_id
        b, d = h.bm25_rank or 0, h.dense_rank or 0
        held = out.get(doc)
        if held is None:
            out[doc] = (i, b, d)
        else:
            out[doc] = (held[0], _best(held[1], b), _best(held[2], d))
    return out


def _best(a: int, b: int) -> int:
    """The better (smaller) of two 1-based ranks, 0 meaning absent."""
    return min(a, b) if a and b else a or b


def question_scores(origin: LineageRecord | None, question: str) -> tuple[float, float]:
    """A chunk's BM25 and cosine scores against the question, from how it was found.

    Grep hits are scored against the question by the harness; a search for the
    question itself carries them too. Anything else (a read) scores 0.
    """
    if origin is None or (origin.tool != "grep_corpus" and origin.query.strip() != question):
        return 0.0, 0.0
    return origin.bm25_score or 0.0, origin.dense_score or 0.0


def pool_titles(memory: EpisodeMemory) -> dict[str, str]:
    """Title -> doc id of every candidate of the episode's searches, the first one's in
    the order of the sorted queries and then of each search's list (sorted: one map
    whatever order the searches ran in).

    Each search's titles and doc ids are read once (kept in
    :attr:`~.memory.EpisodeMemory.pool_titles` along with the search's list they
    were read from); the map is made from them with C-level calls: the same keys in the
    same order, and the same values, as ``setdefault`` over every candidate."""
    held = memory.pool_titles
    titles: list[str] = []
    docs: list[str] = []
    for q in sorted(memory.pools):
        pool = memory.pools[q]
        got = held.get(q)
        if got is None or got[0] is not pool:
            chunks = [c.chunk for c in pool.values()]
            got = held[q] = (pool, [c.title for c in chunks], [c.doc_id for c in chunks])
        titles += got[1]
        docs += got[2]
    out = dict(zip(titles, titles, strict=True))  # the keys, in their first occurrence's order
    # each title's doc id: written in reverse, the first occurrence's is written last
    out.update(zip(reversed(titles), reversed(docs), strict=True))
    return out
