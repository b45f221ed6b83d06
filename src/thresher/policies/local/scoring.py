"""The candidate scorer: what a search shows, and the utility of every chunk in the cache.

The scorer applies the learned models (:mod:`.models`: what they are and the
weights file) to an episode's candidates. A search's candidates (:mod:`.pool`:
:class:`~.candidate.Candidate` records, scored against the question through the
harness's question scorer and against the subquery) get their features
(:mod:`.features`: base, and link against anchors, the best candidates by base
utility, :func:`anchor_views`); the models give each its utility, and the best
few are shown (the question's own search also shows every hit the retrievers
agree on: :mod:`.guards`). Between turns every cached chunk is given a record
and ranked again with links to the current anchors (:class:`Ranked`).
Configured once per policy; an episode's state is the
:class:`~.memory.EpisodeMemory` it is handed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from thresher.config import RetrievalConfig
from thresher.harness.observation import Observation
from thresher.harness.policy import RerankRequest
from thresher.harness.tools import rank_by_similarity
from thresher.index.store import Hit
from thresher.policies.local.bridges import Bridge
from thresher.policies.local.candidate import AnchorView, Candidate
from thresher.policies.local.constants import Constants
from thresher.policies.local.features import base_matrix, link_matrix
from thresher.policies.local.guards import agreed_docs, agreed_hits, show_agreed
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.models import LocalWeights, Model
from thresher.policies.local.pool import (
    pool_titles,
    question_scores,
    rerank_pool,
    search_candidates,
)

__all__ = [
    "Recorder",
    "Ranked",
    "CandidateScorer",
    "anchor_views",
]

#: ``(kind, question, candidates, base X, link X)`` -> None; kinds: ``pool``, ``final``,
#: ``stop``, and ``shown`` (the candidates a search shows, best first; empty X)
Recorder = Callable[[str, str, list[Candidate], np.ndarray, np.ndarray], None]


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
            :func:`~.pool.rerank_pool`).
        recorder: called with features as they are computed (training data).
        read_rrf_k: the RRF constant a linked page's chunks are ordered by against the
            question (the run's ``retrieval.rrf_k``, as the harness orders a read).

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
        read_rrf_k: int = RetrievalConfig().rrf_k,
    ) -> None:
        self.weights = weights
        self.read_rrf_k = read_rrf_k
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
        is_question = query.strip() == memory.question.question.strip()
        if not is_question and self.rerank_depth > 0:
            hits = rerank_pool(hits, self.rerank_depth, self.constants.retriever_head)
        show = memory.show.get(query.strip(), self.hop_k)
        anchors = list(memory.anchors)
        cands = search_candidates(
            memory, query, hits, request.score_against_question, self.question_scores
        )
        bx = base_matrix(cands, memory.question)
        base = self.weights.base.predict(bx)
        if not anchors:
            anchors = anchor_views(cands, base, self.constants.first_anchors)
        utility = self.source_utility(memory, cands)
        links = link_matrix(
            cands, memory.question, anchors, memory.link_pairs, utility, memory.link_rows
        )
        full = self.weights.full.predict(np.concatenate((bx, links), axis=1))
        if self.recorder is not None:
            self.recorder("pool", memory.question.question, cands, bx, links)
        memory.pools[query.strip()] = {c.chunk.chunk_id: c for c in cands}
        order = np.argsort(-full, kind="stable").tolist()
        if is_question and memory.hop == 0:
            # do no harm: what the retrievers agree on is shown whatever the model's order
            c = self.constants
            agreed = agreed_hits(hits, c.agree_fused, c.agree_head)
            memory.agreed = agreed_docs(hits, c.agree_fused, c.agree_head)
            order = show_agreed(order, agreed, show)
        else:
            order = order[:show]
        if self.recorder is not None:
            empty = np.zeros((0, 0))
            shown = [cands[i] for i in order]
            self.recorder("shown", memory.question.question, shown, empty, empty)
        picked = [hits[i] for i in order]
        memory.shown.update(h.chunk.chunk_id for h in picked)
        return picked

    def rank_read(self, memory: EpisodeMemory, request: RerankRequest) -> list[Hit]:
        """The chunks of a read of a page a link names (``memory.links``) to show: its
        ``hop_k`` nearest the question (RRF of their BM25 and cosine orders against it,
        as the harness orders a read against its query) that no search showed, their
        scores kept in
        :attr:`~.memory.EpisodeMemory.question_scores`. Any other read as it came."""
        hits = list(request.hits)
        if request.query not in memory.links or not hits:
            return hits
        # what a search of the same turn showed is not shown again (the harness would
        # count it a repeat, in place of another of the page's chunks)
        hits = [h for h in hits if h.chunk.chunk_id not in memory.shown] or hits
        ids = [h.chunk.chunk_id for h in hits]
        held = memory.question_scores
        ask = [cid for cid in ids if cid not in held]
        if ask:
            for cid, pair in zip(ask, request.score_against_question(ask), strict=True):
                held[cid] = pair
        chunks = [h.chunk for h in hits]
        ranked = rank_by_similarity(chunks, [held[cid] for cid in ids], self.read_rrf_k)
        return ranked[: self.hop_k]

    def adopt(self, memory: EpisodeMemory, obs: Observation) -> None:
        """Give every cached chunk a candidate record (grep hits and reads have none),
        and refresh the map of titles seen. A hit of a grep following a cross-reference
        (``memory.refs``) is recorded as that reference's follow-up: its subquery the
        reference, its bridge (in ``memory.via``) the name the definition states, read
        in the anchor that made it. A chunk of a read following a link
        (``memory.links``) is recorded as that link's follow-up: its subquery the
        linked document's id, its bridge of kind ``link``, its scores against the
        question those :meth:`rank_read` asked for."""
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
            lead = (
                memory.refs.get(query)
                if origin is not None and origin.tool == "grep_corpus"
                else None
            )
            link = (
                memory.links.get(query)
                if origin is not None and origin.tool == "read_document"
                else None
            )
            subquery, via = memory.question.question, None
            if link is not None:
                # a read of the page a link names: a follow-up of the link, every chunk
                # of that page continuing the chain from the anchor (:mod:`.pagelinks`)
                subquery = link.doc_id
                via = memory.via.setdefault(
                    subquery, Bridge(subquery, link.target, "link", link.source, link.score)
                )
            elif lead is not None:
                # a grep for where a reference is defined: a follow-up of the reference,
                # the chain going on from the anchor that made it (:mod:`.references`)
                subquery = lead.target
                via = memory.via.setdefault(
                    subquery, Bridge(subquery, lead.name, "ref", lead.source, lead.score)
                )
            fresh = Candidate(
                chunk,
                hop=obs.hop or 0,
                subquery=subquery,
                rank=self.constants.unlisted_rank,
                words=text.words,
                title_words=text.title_words,
                lower=text.lower,
                folded=text.folded,
                title_folded=text.title_folded,
                via=via.phrase if via is not None else "",
                via_score=via.score if via is not None else 0.0,
                via_source=via.source if via is not None else "",
            )
            held = memory.question_scores.get(cid) if link is not None else None
            fresh.bm25_q, fresh.dense_q = (
                held if held is not None else question_scores(origin, memory.question.question)
            )
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
            cands, memory.question, anchors, memory.link_pairs, utility, memory.link_rows
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
                memory.link_pairs,
                {r.chunk_id: r.base for r in ranked},
            ),
        )


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
