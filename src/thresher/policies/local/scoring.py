"""The candidate scorer: what a search shows, and the utility of every chunk in the cache.

A search's fused hits become :class:`~.features.Candidate` records, scored
against the question (through the harness's question scorer) and the
subquery; the learned models (:mod:`.scorer`) give each its utility, and the
best few are shown. Between turns every cached chunk is ranked again with
links to the current anchors. Configured once per policy; an episode's state
is the :class:`~.memory.EpisodeMemory` it is handed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from thresher.harness.observation import Observation
from thresher.harness.policy import QuestionScorer, RerankRequest
from thresher.harness.state import LineageRecord
from thresher.index.store import Hit
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.features import (
    AnchorView,
    Candidate,
    base_matrix,
    link_matrix,
)
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.scorer import LocalWeights, Model
from thresher.policies.local.text import content_words

__all__ = [
    "RETRIEVER_HEAD",
    "Recorder",
    "Ranked",
    "CandidateScorer",
    "rerank_pool",
    "anchor_views",
    "pool_titles",
]

#: a follow-up's hit within either retriever's best this many is scored whatever its
#: fused rank (``rerank_depth`` cuts the fused list below it); the weights' constants
#: may set another (``retriever_head``)
RETRIEVER_HEAD = DEFAULT_CONSTANTS.retriever_head
_FAR = sys.maxsize

#: ``(kind, question, candidates, base X, link X)`` -> None; kinds: ``pool``, ``final``,
#: ``stop``, and ``shown`` (the candidates a search shows, best first; empty X)
Recorder = Callable[[str, str, list[Candidate], np.ndarray, np.ndarray], None]


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


class Ranked(NamedTuple):
    """A cached chunk with its utility: ``prob`` (the ranker's), ``base`` (base model's).

    A named tuple (immutable, read by name): the cache is ranked on every turn, and a
    frozen dataclass costs several times as much to build."""

    chunk_id: str
    cand: Candidate
    prob: float
    base: float


class CandidateScorer:
    """Scores search candidates and ranks the cache with the learned models.

    Args:
        weights: the learned models.
        hop_k: chunks a follow-up shows unless its plan says otherwise.
        question_scores: how many candidates of a follow-up search are scored against
            the question through the store (the rest get the list's floor).
        rerank_depth: how many of a follow-up's fused hits are ranked (0: all; see
            :func:`rerank_pool`).
        recorder: called with features as they are computed (training data).

    Its constants (how many anchors, the retrievers' head) are the weights'.
    """

    def __init__(
        self,
        weights: LocalWeights,
        *,
        hop_k: int,
        question_scores: int,
        rerank_depth: int,
        recorder: Recorder | None = None,
    ) -> None:
        self.weights = weights
        self.constants: Constants = weights.constants
        self.hop_k = hop_k
        self.question_scores = question_scores
        self.rerank_depth = rerank_depth
        self.recorder = recorder

    def rerank(self, memory: EpisodeMemory, request: RerankRequest) -> list[Hit]:
        """Score a ``search_corpus`` call's candidates; the best few, best first."""
        query, hits = request.query, list(request.hits)
        if not hits:
            return hits
        if query.strip() != memory.question.question.strip() and self.rerank_depth > 0:
            hits = rerank_pool(hits, self.rerank_depth, self.constants.retriever_head)
        show = memory.show.get(query.strip(), self.hop_k)
        anchors = list(memory.anchors)
        cands = self.candidates(memory, query, hits, request.score_against_question)
        bx = base_matrix(cands, memory.question)
        base = self.weights.base.predict(bx)
        if not anchors:
            anchors = anchor_views(cands, base, self.constants.first_anchors)
        utility = self.source_utility(memory, cands)
        links = link_matrix(
            cands, memory.question, anchors, memory.text.pairs, utility, memory.link_rows
        )
        full = self.weights.full.predict(np.concatenate((bx, links), axis=1))
        if self.recorder is not None:
            self.recorder("pool", memory.question.question, cands, bx, links)
        memory.pools[query.strip()] = {c.chunk.chunk_id: c for c in cands}
        order = np.argsort(-full, kind="stable")[:show]
        if self.recorder is not None:
            empty = np.zeros((0, 0))
            shown = [cands[i] for i in order]
            self.recorder("shown", memory.question.question, shown, empty, empty)
        return [hits[i] for i in order]

    def candidates(
        self, memory: EpisodeMemory, query: str, hits: list[Hit], scorer: QuestionScorer
    ) -> list[Candidate]:
        """Candidate records of a search's ``hits``, with scores against the question.

        The question's own search in the first turn sets the question's score maxima
        (the normalizers of every later candidate's question scores).
        """
        q = memory.question
        hop = memory.hop
        is_question = query.strip() == q.question.strip()
        b_max = max((h.bm25_score or 0.0 for h in hits), default=0.0)
        d_max = max((h.dense_score for h in hits if h.dense_score is not None), default=0.0)
        if is_question and hop == 0:
            q = memory.question = replace(q, bm25_max=b_max or 1.0, dense_max=d_max or 1.0)
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
        head = missing[: self.question_scores]
        if head:
            # a chunk's scores against the question are its own (not the batch's): the
            # episode asks the store only for chunks no earlier search had it score
            held = memory.question_scores
            ask = list(
                dict.fromkeys(c.chunk.chunk_id for c in head if c.chunk.chunk_id not in held)
            )
            if ask:
                for cid, pair in zip(ask, scorer(ask), strict=True):
                    held[cid] = pair
            for c in head:
                b, d = held[c.chunk.chunk_id]
                c.bm25_q = b if c.bm25_q is None else c.bm25_q
                c.dense_q = d if c.dense_q is None else c.dense_q
        floor_b = min((c.bm25_q for c in cands if c.bm25_q is not None), default=0.0)
        floor_d = min((c.dense_q for c in cands if c.dense_q is not None), default=0.0)
        for c in missing[self.question_scores :]:
            c.bm25_q = floor_b if c.bm25_q is None else c.bm25_q
            c.dense_q = floor_d if c.dense_q is None else c.dense_q
        return cands

    def adopt(self, memory: EpisodeMemory, obs: Observation) -> None:
        """Give every cached chunk a candidate record (grep hits and reads have none),
        and refresh the map of titles seen."""
        for cid, chunk in obs.cache.items():
            if cid in memory.cands:
                continue
            origin = obs.origins.get(cid)
            query = origin.query.strip() if origin is not None else ""
            pooled = memory.pools.get(query, {}).get(cid)
            if pooled is not None:  # the record of the search that showed it
                memory.cands[cid] = pooled
                continue
            text = memory.text.chunk(chunk)
            fresh = Candidate(
                chunk,
                hop=obs.hop or 0,
                subquery=memory.question.question,
                rank=self.constants.unlisted_rank,
                words=text.words,
                title_words=text.title_words,
                lower=text.lower,
                folded=text.folded,
                title_folded=text.title_folded,
            )
            fresh.bm25_q, fresh.dense_q = question_scores(origin, memory.question.question)
            memory.cands[cid] = fresh
        memory.titles = pool_titles(memory)

    def rank_cached(self, memory: EpisodeMemory, obs: Observation) -> list[Ranked]:
        """Every cached chunk with its base and full utility, best first."""
        cands = [memory.cands[cid] for cid in obs.cache if cid in memory.cands]
        if not cands:
            return []
        bx = self.base_rows(memory, cands)
        base = self.weights.base.predict(bx)
        anchors = anchor_views(cands, base, self.constants.cache_anchors)
        utility = {c.chunk.chunk_id: float(b) for c, b in zip(cands, base, strict=True)}
        links = link_matrix(
            cands, memory.question, anchors, memory.text.pairs, utility, memory.link_rows
        )
        fx = np.concatenate((bx, links), axis=1)
        full = self.weights.ranker.predict(fx)
        # the order: LambdaRank's when the weights carry it; the probabilities stay the
        # ranker's (prune threshold, sufficiency features, the answer's scores)
        order_model = self.weights.order
        score = self.order_logits(memory, order_model, fx) if order_model is not None else full
        order = np.argsort(-score, kind="stable").tolist()
        probs, bases = full.tolist(), base.tolist()  # Python floats, as float() of each
        return [Ranked(cands[i].chunk.chunk_id, cands[i], probs[i], bases[i]) for i in order]

    @staticmethod
    def order_logits(memory: EpisodeMemory, model: Model, fx: np.ndarray) -> np.ndarray:
        """The order model's raw scores of the rows of ``fx``, rows scored before in the
        episode read back (:attr:`~.memory.EpisodeMemory.order_logits`): only the new
        rows go to the model, whose score of a row never depends on the rows beside it."""
        held = memory.order_logits
        keys = [row.tobytes() for row in fx]
        todo = [i for i, k in enumerate(keys) if k not in held]
        if todo:
            got = model.logits(fx[todo])
            for i, value in zip(todo, got.tolist(), strict=True):
                held[keys[i]] = value
        return np.asarray([held[k] for k in keys], dtype=np.float64)

    def source_utility(self, memory: EpisodeMemory, cands: list[Candidate]) -> dict[str, float]:
        """Chunk id -> base utility of each chunk the ``cands``' bridges came from."""
        sources = sorted({c.via_source for c in cands if c.via_source in memory.cands})
        if not sources:
            return {}
        rows = self.base_rows(memory, [memory.cands[s] for s in sources])
        # the model's answer for this batch of rows, read back when a search of the same
        # bridge sources asked before (the same array, the same answer)
        key = rows.tobytes()
        probs = memory.source_utility.get(key)
        if probs is None:
            probs = memory.source_utility[key] = self.weights.base.predict(rows).tolist()
        return dict(zip(sources, probs, strict=True))

    @staticmethod
    def base_rows(memory: EpisodeMemory, cands: list[Candidate]) -> np.ndarray:
        """:func:`base_matrix` of ``cands``, rows kept between turns: a candidate's base
        features depend only on it and the question, and neither changes once it is
        ranked (the memo checks both are the same objects)."""
        q = memory.question
        held_rows = memory.base_rows
        todo = []
        for c in cands:
            held = held_rows.get(c.chunk.chunk_id)
            if held is None or held[0] is not c or held[1] is not q:
                todo.append(c)
        if todo:
            for c, row in zip(todo, base_matrix(todo, q), strict=True):
                held_rows[c.chunk.chunk_id] = (c, q, row)
        # concatenate and reshape: vstack of 1-D rows costs four times as much (a copy either way)
        return np.concatenate([held_rows[c.chunk.chunk_id][2] for c in cands]).reshape(
            len(cands), -1
        )

    def record_final(self, memory: EpisodeMemory, ranked: list[Ranked]) -> None:
        """Hand the recorder the features of the chunks the episode ends with."""
        if self.recorder is None or not ranked:
            return
        cands = [r.cand for r in ranked]
        anchors = anchor_views(
            cands, np.asarray([r.base for r in ranked]), self.constants.cache_anchors
        )
        self.recorder(
            "final",
            memory.question.question,
            cands,
            base_matrix(cands, memory.question),
            link_matrix(
                cands,
                memory.question,
                anchors,
                memory.text.pairs,
                {r.chunk_id: r.base for r in ranked},
            ),
        )


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


def anchor_views(cands: Sequence[Candidate], base: np.ndarray, k: int) -> list[AnchorView]:
    """The ``k`` best candidates of distinct documents by base utility, as anchors."""
    out: list[AnchorView] = []
    seen: set[str] = set()
    for i in np.argsort(-base, kind="stable"):
        c = cands[i]
        if c.chunk.doc_id in seen:
            continue
        seen.add(c.chunk.doc_id)
        out.append(AnchorView.of(c, float(base[i])))
        if len(out) >= k:
            break
    return out


def question_scores(origin: LineageRecord | None, question: str) -> tuple[float, float]:
    """A chunk's BM25 and cosine scores against the question, from how it was found.

    Grep hits are scored against the question by the harness; a search for the
    question itself carries them too. Anything else (a read) scores 0.
    """
    if origin is None or (origin.tool != "grep_corpus" and origin.query.strip() != question):
        return 0.0, 0.0
    return origin.bm25_score or 0.0, origin.dense_score or 0.0
