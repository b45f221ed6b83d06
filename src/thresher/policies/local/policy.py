"""LocalPolicy: the offline default, multi-hop search with a learned scorer and no LLM.

An episode, turn by turn:

0. ``search_corpus(question)``, plus ``grep_corpus`` for the question's quoted
   names and codes. The policy's :meth:`~LocalPolicy.rerank` scores the 50
   fused candidates with the learned scorer and shows the best ``first_k``.
1. *Hops*: bridges are read from the best retained chunks (anchors) and, first,
   from the chain's leading edge: the best chunk the last hop found that holds
   the phrase of the follow-up that found it (:meth:`~LocalPolicy._frontier`).
   A bridge is another document's title an anchor mentions, a name opening a
   known title, or an entity span the question lacks, preferring names beside
   the phrase that led to the anchor (:mod:`~thresher.policies.local.bridges`).
   Each becomes a ``search_corpus`` subquery: the bridge plus what the question
   still asks, i.e. its words that no document of the anchor's chain holds
   (or, for a question stated as linked clues, the next clue's words:
   :mod:`~thresher.policies.local.decompose`). Candidates are scored against
   the question, the subquery and the anchors; the best ``hop_k`` are shown.
   Repeats up to ``max_hops`` unless the sufficiency signal (which sees where
   the chain's leading edge ranks) says the evidence is in hand, or the soft
   budget threshold is near.
2. *Prune*: every chunk outside the answer's best ``keep_docs`` documents
   leaves the context, and within them chunks of low utility other than each
   document's best (skipped with ``prune=False``: the no-prune multi-turn
   baseline).
3. *Final*: the documents still in view ranked by the LambdaRank order model;
   each top document's chain links (the documents whose bridges led to it) are
   placed beside it, and for a clue chain the best document per clue comes
   first. Each is justified by its sentences closest to the question and the
   follow-up that found it.

The policy keeps per-episode state (scores of every candidate it saw), so one
instance runs one episode at a time. It never holds the Store: it declares
:class:`~thresher.harness.policy.SearchReranker`, and each rerank request
carries the harness's scorer of chunks against the question (used for a
follow-up's best-fused candidates); grep hits come scored against the question
in their lineage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from thresher.config import Config
from thresher.harness.actions import FinalAnswer, Proposal, RankedDocument, ToolCall
from thresher.harness.observation import Observation
from thresher.harness.policy import QuestionScorer, RerankRequest
from thresher.harness.state import LineageRecord
from thresher.index.store import Hit
from thresher.policies.base import DEFAULT_SYSTEM_PROMPT
from thresher.policies.local.bridges import (
    Anchor,
    Bridge,
    bridge_queries,
    names_in,
    question_patterns,
)
from thresher.policies.local.chain import (
    Chain,
    Sentences,
    by_link,
    chain_order,
    clue_docs,
    how_stated,
)
from thresher.policies.local.decompose import link_words, links
from thresher.policies.local.features import (
    AnchorView,
    Candidate,
    QuestionContext,
    base_matrix,
    chunk_words,
    link_matrix,
    lower_text,
)
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.scorer import LocalWeights, load_weights
from thresher.policies.local.stop import stop_features, sufficiency
from thresher.policies.local.text import (
    best_sentences,
    contains_phrase,
    content_words,
    sentence_words,
)

__all__ = ["LocalPolicy", "Recorder", "DEFAULT_CONTROLS", "rerank_pool"]

#: settings a weights file's ``controls`` may tune (see :mod:`.tune`), and their defaults
DEFAULT_CONTROLS: dict[str, float | int] = {
    "max_hops": 2,
    "hop_k": 3,
    "bridges_per_hop": 3,
    "stop_at": 0.9,
    "rerank_depth": 30,
}

#: a follow-up's hit within either retriever's best this many is scored whatever its
#: fused rank (``rerank_depth`` cuts the fused list below it)
RETRIEVER_HEAD = 3
_FAR = 1 << 30


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


#: ``(kind, question, candidates, base X, link X)`` -> None; kinds: ``pool``, ``final``,
#: ``stop``, and ``shown`` (the candidates a search shows, best first; empty X)
Recorder = Callable[[str, str, list[Candidate], np.ndarray, np.ndarray], None]


@dataclass
class _EpisodeState:
    question: QuestionContext
    cands: dict[str, Candidate] = field(default_factory=dict)  # cached chunk id -> record
    pools: dict[str, dict[str, Candidate]] = field(default_factory=dict)  # query -> candidates
    titles: dict[str, str] = field(default_factory=dict)  # title -> doc id
    show: dict[str, int] = field(default_factory=dict)  # planned query -> how many to show
    asked: set[str] = field(default_factory=set)
    anchors: list[AnchorView] = field(default_factory=list)
    via: dict[str, Bridge] = field(default_factory=dict)  # follow-up query -> its bridge
    #: chunk id -> (candidate, question context, its base row): see LocalPolicy._base_rows
    base_rows: dict[str, tuple[Candidate, QuestionContext, np.ndarray]] = field(
        default_factory=dict
    )
    hop: int = 0
    phase: str = "search"  # search -> prune -> final
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: set once the question's own search has fixed ``question``'s score maxima
    normalized: threading.Event = field(default_factory=threading.Event)

    def chain(self) -> Chain:
        """The follow-ups so far and the chunks they came from."""
        return Chain(self.via, self.cands, self.pools)


class LocalPolicy:
    """Offline multi-hop search policy driven by a small learned scorer.

    Args:
        options: how it searches, prunes and answers (:class:`LocalOptions`).
        config: the run's settings: ``episode.max_final_documents`` caps ``final_k``
            and ``episode.tool_timeout_s`` bounds the first turn's wait (None: neither).
        recorder: called with features as they are computed (training data).
    """

    name = "local"
    system_prompt = DEFAULT_SYSTEM_PROMPT
    #: no model call and no I/O: the harness calls ``propose`` on the episode's thread
    in_process = True

    def __init__(
        self,
        options: LocalOptions | None = None,
        *,
        config: Config | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        o = options or LocalOptions()
        weights = o.weights
        self.options = o
        self.weights = weights if isinstance(weights, LocalWeights) else load_weights(weights)
        tuned = {**DEFAULT_CONTROLS, **self.weights.controls}
        self.max_hops = int(tuned["max_hops"] if o.max_hops is None else o.max_hops)
        self.first_k = o.first_k
        self.hop_k = int(tuned["hop_k"] if o.hop_k is None else o.hop_k)
        self.bridges_per_hop = int(
            tuned["bridges_per_hop"] if o.bridges_per_hop is None else o.bridges_per_hop
        )
        self.keep_docs = o.keep_docs
        self.prune_below = o.prune_below
        self.prune = o.prune
        self.stop_at = float(tuned["stop_at"] if o.stop_at is None else o.stop_at)
        self.grep = o.grep
        self.first_clue = o.first_clue
        self.final_k = o.final_k
        #: how long a first-turn search other than the question's waits for the
        #: question's scores to be normalized (see :meth:`rerank`)
        self.first_turn_wait_s = 30.0
        if config is not None:
            self.final_k = min(o.final_k, config.episode.max_final_documents)
            self.first_turn_wait_s = config.episode.tool_timeout_s
        self.recorder = recorder
        self.question_scores = o.question_scores
        self.rerank_depth = int(tuned["rerank_depth"] if o.rerank_depth is None else o.rerank_depth)
        self.frontier_k = o.frontier_k
        self.chain_order = o.chain_order
        self._ep: _EpisodeState | None = None

    # -- the protocol ---------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def propose(self, observation: Observation) -> Proposal:
        """The next turn's calls, prune or final answer (see the module docstring)."""
        ep = self._ep
        if observation.turn == 0 or ep is None or ep.question.question != observation.question:
            ep = self._ep = _EpisodeState(QuestionContext.of(observation.question))
        if observation.turn == 0:
            return self._first_turn(ep)
        ep.normalized.set()  # the first turn is over, whether its question search ran or not
        self._adopt(ep, observation)
        ranked = self._rank_cached(ep, observation)
        if ep.phase == "search":
            proposal = self._hop(ep, observation, ranked)
            if proposal is not None:
                return proposal
            ep.phase = "prune" if self.prune else "final"
        if ep.phase == "prune":
            ep.phase = "final"
            prune = set(self._prune_ids(ep, observation, ranked))
            if prune:
                # named by what stays (a few ids, not every dropped one): this policy
                # never recalls, so its transcript need not list what it let go
                keep = [a.chunk_id for a in observation.active if a.chunk_id not in prune]
                call = ToolCall("prune_chunks", {"keep": keep}, "prune")
                return Proposal(tool_calls=(call,), hop=ep.hop)
        return Proposal(final=FinalAnswer(tuple(self._final(ep, observation, ranked))))

    def rerank(self, request: RerankRequest) -> list[Hit]:
        """Score ``search_corpus`` candidates; return the best few, best first."""
        ep = self._ep
        query, hits = request.query, list(request.hits)
        if ep is None:
            return hits
        is_question = query.strip() == ep.question.question.strip()
        if not hits:
            if is_question:
                ep.normalized.set()
            return hits
        if not is_question:
            if self.rerank_depth > 0:
                hits = rerank_pool(hits, self.rerank_depth)
            # a first-turn search beside the question's (a clue chain's first clue)
            # scores its candidates against the question with the maxima the
            # question's own search sets: wait for them, or its pool would depend on
            # which call the workers finished first
            ep.normalized.wait(self.first_turn_wait_s)
        with ep.lock:
            hop = ep.hop
            show = ep.show.get(query.strip(), self.hop_k)
            anchors = list(ep.anchors)
        cands = self._candidates(ep, query, hits, hop, request.score_against_question)
        bx = base_matrix(cands, ep.question)
        base = self.weights.base.predict(bx)
        if not anchors:
            anchors = _anchor_views(cands, base, 3)
        links = link_matrix(cands, ep.question, anchors)
        full = self.weights.full.predict(np.hstack([bx, links]))
        if self.recorder is not None:
            self.recorder("pool", ep.question.question, cands, bx, links)
        with ep.lock:
            ep.pools[query.strip()] = {c.chunk.chunk_id: c for c in cands}
        order = np.argsort(-full, kind="stable")[:show]
        if self.recorder is not None:
            empty = np.zeros((0, 0))
            self.recorder("shown", ep.question.question, [cands[i] for i in order], empty, empty)
        return [hits[i] for i in order]

    # -- turns ------------------------------------------------------------------------------
    def _first_turn(self, ep: _EpisodeState) -> Proposal:
        q = ep.question.question
        ep.show[q.strip()] = self.first_k
        ep.asked.add(q.strip().lower())
        calls = [ToolCall("search_corpus", {"query": q}, "q0")]
        clues = links(q)
        if self.first_clue and len(clues) > 1:
            # a clue chain starts at its first clue: searched alone, its few words
            # ("born 1984 town Stosstead") are not drowned by the other clues'
            first = " ".join(link_words(clues[0]))
            if first.lower() not in ep.asked:
                ep.show[first] = self.hop_k
                ep.asked.add(first.lower())
                calls.append(ToolCall("search_corpus", {"query": first}, "c0"))
        if self.grep:
            for i, pattern in enumerate(question_patterns(q)):
                calls.append(ToolCall("grep_corpus", {"pattern": pattern}, f"g{i}"))
        return Proposal(tool_calls=tuple(calls), hop=0)

    def _hop(self, ep: _EpisodeState, obs: Observation, ranked: list[_Ranked]) -> Proposal | None:
        if ep.hop >= self.max_hops or obs.usage.soft:
            return None
        active = {a.chunk_id for a in obs.active}
        top = [r for r in ranked if r.chunk_id in active][:3]
        known = {t: d for t, d in ep.titles.items()}
        frontier = self._frontier(ep, ranked, active, {r.cand.chunk.doc_id for r in top})
        edges: list[tuple[_Ranked, int | None, frozenset[str]]] = [
            (r, None, frozenset()) for r in frontier
        ]
        clue_edge = self._clue_edge(ep, ranked, active)
        if clue_edge is not None:
            edges.insert(0, clue_edge)
        bridges: list[Bridge] = []  # the best of each chain edge first, whatever its weight
        for edge, clue, passed in edges:
            for b in self._bridges(ep, ranked, [edge], known, 2, clue, passed):
                if all(b.phrase.lower() != x.phrase.lower() for x in bridges):
                    bridges.append(b)
                    break
        taken = {b.phrase.lower() for b in bridges}
        for b in self._bridges(ep, ranked, top, known, self.bridges_per_hop):
            if len(bridges) >= self.bridges_per_hop:
                break
            if b.phrase.lower() not in taken:
                bridges.append(b)
                taken.add(b.phrase.lower())
        if not bridges:
            return None
        if self.stop_at < 1.0 or self.recorder is not None:
            docs = _doc_probs(ranked)
            linked = _linked12(ranked)
            feats = stop_features(
                [p for _, p in docs], linked, ep.hop, len(bridges), self._front(ep, ranked, docs)
            )
            if self.recorder is not None:
                firsts: dict[str, Candidate] = {}
                for r in ranked:
                    firsts.setdefault(r.cand.chunk.doc_id, r.cand)
                tops = list(firsts.values())
                self.recorder("stop", ep.question.question, tops, feats.reshape(1, -1), np.zeros(0))
            # a clue chain whose edge still has a clue to ask is visibly unfinished:
            # the learned signal decides only when the question's form says nothing
            if (
                clue_edge is None
                and self.stop_at < 1.0
                and sufficiency(feats, self.weights.stop) >= self.stop_at
            ):
                return None
        with ep.lock:
            ep.hop += 1
            ep.anchors = [AnchorView.of(r.cand, r.prob) for r in top]
            calls = []
            for i, b in enumerate(bridges):
                ep.show[b.query.strip()] = self.hop_k
                ep.via[b.query.strip()] = b
                ep.asked.add(b.query.strip().lower())
                ep.asked.add(b.phrase.lower())
                calls.append(ToolCall("search_corpus", {"query": b.query}, f"h{ep.hop}b{i}"))
        return Proposal(
            tool_calls=tuple(calls),
            hop=ep.hop,
            parents=tuple(dict.fromkeys(b.source for b in bridges)),
            call_parents={c.call_id: (b.source,) for c, b in zip(calls, bridges, strict=True)},
        )

    def _bridges(
        self,
        ep: _EpisodeState,
        ranked: list[_Ranked],
        chunks: list[_Ranked],
        known: dict[str, str],
        limit: int,
        clue: int | None = None,
        passed: frozenset[str] = frozenset(),
    ) -> list[Bridge]:
        """Follow-up queries read from ``chunks`` (anchors), best first; ``clue``: the clue
        of a clue chain their documents answer, when known, and ``passed``: the names
        the chain came through to it (see :class:`Anchor`)."""
        chain = ep.chain()
        anchors = [
            Anchor(
                r.chunk_id,
                r.cand.chunk.doc_id,
                r.cand.chunk.title,
                r.cand.chunk.text,
                r.prob,
                chain.path(r.cand.subquery),
                via.phrase if (via := chain.bridge_of(r.cand)) else "",
                clue,
                passed,
            )
            for r in chunks
        ]
        return bridge_queries(
            ep.question.question,
            anchors,
            known,
            exclude_docs={r.cand.chunk.doc_id for r in ranked},
            asked=ep.asked,
            limit=limit,
        )

    def _clue_edge(
        self, ep: _EpisodeState, ranked: list[_Ranked], active: set[str]
    ) -> tuple[_Ranked, int, frozenset[str]] | None:
        """For a clue chain: the chunk stating its clue of the document answering the
        furthest clue the chain has reached (each pick continuing the previous one),
        that clue's index, and the names the chain came through to it, unless it is
        the last clue.

        The chain goes on from there whichever hop found that document (the question's
        own search often finds a later clue's document): the next follow-up asks the
        clue after it, from the name that document states.
        """
        clues = links(ep.question.question)
        if len(clues) < 2 or not self.chain_order:
            return None
        order, best, chunks = self._answer_docs(ep, ranked, active, clue_first=False)
        words, parents, sents, titles = self._clue_inputs(
            ep, order, best, chunks, self._links_of(ep, ranked)
        )
        picked = clue_docs(clues, order, words, parents, self.keep_docs, sents, titles)
        # the chain reaches as far as its picks continue one another: a later clue's
        # words alone ("launch") do not say its document is the one the chain leads to
        reach = next((i for i, p in enumerate(picked) if not p.linked), len(picked))
        if reach == 0 or picked[reach - 1].clue >= len(clues) - 1:
            return None
        last = picked[reach - 1]
        # of that document's chunks in view, the one stating the clue: its next link
        # is named there ("Patent X cites the earlier patent Y" sits in the record
        # notes of chunk 0, while chunk 1 may rank better)
        by_id = {r.chunk_id: r for r in ranked}

        def stating(cid: str) -> tuple[int, int]:
            text = by_id[cid].cand.chunk.text
            sents, _ = sentence_words(text)
            facts = [(x, w, n) for x, (w, n) in zip(sents, _sentence_names(text), strict=True)]
            return how_stated(clues[last.clue], last.passed, facts)

        return by_id[max(chunks[last.doc], key=stating)], last.clue, last.passed

    def _frontier(
        self, ep: _EpisodeState, ranked: list[_Ranked], active: set[str], skip_docs: set[str]
    ) -> list[_Ranked]:
        """The chain's leading edge: per follow-up of the last hop, the likeliest chunk it
        found that holds its bridge (at most ``frontier_k``).

        A chunk that holds the phrase of the follow-up that found it continues the
        chain; the next hop reads it first (and the words its chain resolved leave
        the next query) rather than reading the same top chunks again.
        """
        chain = ep.chain()
        out: list[_Ranked] = []
        followed: set[str] = set()  # one edge per bridge: each followed link goes on
        for r in sorted(ranked, key=lambda r: -r.prob):
            if r.chunk_id not in active or r.cand.hop != ep.hop or ep.hop == 0:
                continue
            if r.cand.chunk.doc_id in skip_docs or not chain.continues(r.cand):
                continue
            bridge = r.cand.subquery.strip()
            if bridge in followed:
                continue
            followed.add(bridge)
            out.append(r)
            skip_docs = skip_docs | {r.cand.chunk.doc_id}
            if len(out) >= self.frontier_k:
                break
        return out

    def _front(
        self, ep: _EpisodeState, ranked: list[_Ranked], docs: list[tuple[str, float]]
    ) -> tuple[float, int]:
        """Utility and document rank of the best chunk the last hop found through its bridge."""
        if ep.hop == 0:
            return 0.0, 6
        chain = ep.chain()
        for r in ranked:
            if r.cand.hop == ep.hop and chain.continues(r.cand):
                rank = next(i for i, (d, _) in enumerate(docs, 1) if d == r.cand.chunk.doc_id)
                return r.prob, rank
        return 0.0, 6

    def _prune_ids(self, ep: _EpisodeState, obs: Observation, ranked: list[_Ranked]) -> list[str]:
        """What leaves the context before the answer: every chunk outside the answer's
        best ``keep_docs`` documents (chain links placed among them stay), and within
        those, chunks of low utility other than each document's best one."""
        active = {a.chunk_id for a in obs.active}
        order, best, _ = self._answer_docs(ep, ranked, active)
        kept = set(order[: self.keep_docs])
        prob = {r.chunk_id: r.prob for r in ranked}
        out = []
        for a in obs.active:
            doc = a.chunk.doc_id
            if doc in kept and (
                best[doc].chunk_id == a.chunk_id or prob.get(a.chunk_id, 0.0) >= self.prune_below
            ):
                continue
            out.append(a.chunk_id)
        return out

    def _answer_docs(
        self, ep: _EpisodeState, ranked: list[_Ranked], active: set[str], clue_first: bool = True
    ) -> tuple[list[str], dict[str, _Ranked], dict[str, list[str]]]:
        """The documents in view in answer order, each one's best chunk, and its chunks
        (``clue_first``: a clue chain's documents per clue lead the order)."""
        best: dict[str, _Ranked] = {}
        chunks: dict[str, list[str]] = {}
        for r in ranked:
            if r.chunk_id not in active:
                continue
            doc = r.cand.chunk.doc_id
            chunks.setdefault(doc, []).append(r.chunk_id)
            best.setdefault(doc, r)
        order = list(best)
        if self.chain_order:
            links_of = self._links_of(ep, ranked)
            order = chain_order(order, self.keep_docs, links_of)
            clues = links(ep.question.question)
            if clue_first and len(clues) > 1:
                words, parents, sents, titles = self._clue_inputs(ep, order, best, chunks, links_of)
                order = by_link(clues, order, words, parents, self.keep_docs, sents, titles)
        return order, best, chunks

    @staticmethod
    def _links_of(ep: _EpisodeState, ranked: list[_Ranked]) -> Callable[[str], list[str]]:
        """A document's chain links (see :meth:`Chain.links`), from its best chunk."""
        chain = ep.chain()
        firsts: dict[str, Candidate] = {}
        for r in ranked:
            firsts.setdefault(r.cand.chunk.doc_id, r.cand)

        def links_of(doc: str) -> list[str]:
            return chain.links(firsts.get(doc))

        return links_of

    @staticmethod
    def _clue_inputs(
        ep: _EpisodeState,
        pool: list[str],
        best: dict[str, _Ranked],
        chunks: dict[str, list[str]],
        links_of: Callable[[str], list[str]],
    ) -> tuple[
        dict[str, frozenset[str]], dict[str, list[str]], Mapping[str, Sentences], dict[str, str]
    ]:
        """What :func:`clue_docs` reads of the documents in view (``pool``, best first):
        each one's words, nearest chain link, sentences and title. A document answers
        a clue with any of its chunks in view."""
        held = {
            d: [ep.cands[c].chunk for c in chunks[d] if c in ep.cands] or [best[d].cand.chunk]
            for d in pool
        }
        asked = frozenset(n.lower() for n in names_in(ep.question.question))
        words = {d: frozenset().union(*(chunk_words(c)[0] for c in held[d])) for d in pool}
        parents = {d: links_of(d)[:1] for d in pool}
        sents = {
            d: [(w, n - asked) for c in held[d] for w, n in _sentence_names(c.text)] for d in pool
        }
        titles = {d: best[d].cand.chunk.title.lower() for d in pool}
        return words, parents, sents, titles

    def _final(
        self, ep: _EpisodeState, obs: Observation, ranked: list[_Ranked]
    ) -> list[RankedDocument]:
        """The documents still in view, best first: the answer cites only evidence it kept."""
        if self.recorder is not None and ranked:
            cands = [r.cand for r in ranked]
            anchors = _anchor_views(cands, np.asarray([r.base for r in ranked]), 4)
            self.recorder(
                "final",
                ep.question.question,
                cands,
                base_matrix(cands, ep.question),
                link_matrix(cands, ep.question, anchors),
            )
        order, best, chunks = self._answer_docs(ep, ranked, {a.chunk_id for a in obs.active})
        out = []
        for doc in order[: self.final_k]:
            r = best[doc]
            cues = [ep.question.question]
            if r.cand.subquery and r.cand.subquery != ep.question.question:
                cues.append(r.cand.subquery)
            why = best_sentences(r.cand.chunk.text, cues, limit=2) or _first_sentence(
                r.cand.chunk.text
            )
            out.append(RankedDocument(doc, why, tuple(chunks[doc]), round(r.prob, 4)))
        return out

    # -- scoring ------------------------------------------------------------------------------
    def _candidates(
        self, ep: _EpisodeState, query: str, hits: list[Hit], hop: int, scorer: QuestionScorer
    ) -> list[Candidate]:
        q = ep.question
        is_question = query.strip() == q.question.strip()
        b_max = max((h.bm25_score or 0.0 for h in hits), default=0.0)
        d_max = max((h.dense_score for h in hits if h.dense_score is not None), default=0.0)
        if is_question and hop == 0:
            with ep.lock:
                ep.question = replace(q, bm25_max=b_max or 1.0, dense_max=d_max or 1.0)
                q = ep.question
            ep.normalized.set()
        cands = []
        sub_words = frozenset(content_words(query))
        bridge = ep.via.get(query.strip())
        for rank, h in enumerate(hits, 1):
            c = Candidate(
                h.chunk,
                hop=hop,
                subquery=query,
                rank=rank,
                bm25_s=h.bm25_score,
                dense_s=h.dense_score,
                pool_bm25_max=b_max,
                pool_dense_max=d_max,
                sub_words=sub_words,
                via=bridge.phrase if bridge is not None else "",
            )
            if is_question:
                c.bm25_q, c.dense_q = h.bm25_score, h.dense_score
            cands.append(c)
        missing = [c for c in cands if c.bm25_q is None or c.dense_q is None]
        # scores against the question for the best-fused candidates only (a store read
        # per call; the tail of a follow-up's list is rarely shown): the rest get the floor
        head = missing[: self.question_scores]
        if head:
            scores = scorer([c.chunk.chunk_id for c in head])
            for c, (b, d) in zip(head, scores, strict=True):
                c.bm25_q = b if c.bm25_q is None else c.bm25_q
                c.dense_q = d if c.dense_q is None else c.dense_q
        floor_b = min((c.bm25_q for c in cands if c.bm25_q is not None), default=0.0)
        floor_d = min((c.dense_q for c in cands if c.dense_q is not None), default=0.0)
        for c in missing[self.question_scores :]:
            c.bm25_q = floor_b if c.bm25_q is None else c.bm25_q
            c.dense_q = floor_d if c.dense_q is None else c.dense_q
        return cands

    def _adopt(self, ep: _EpisodeState, obs: Observation) -> None:
        """Give every cached chunk a candidate record (grep hits and reads have none)."""
        for cid, chunk in obs.cache.items():
            if cid in ep.cands:
                continue
            origin = obs.origins.get(cid)
            query = origin.query.strip() if origin is not None else ""
            pooled = ep.pools.get(query, {}).get(cid)
            if pooled is not None:  # the record of the search that showed it
                ep.cands[cid] = pooled
                continue
            fresh = Candidate(chunk, hop=obs.hop or 0, subquery=ep.question.question, rank=5)
            fresh.bm25_q, fresh.dense_q = _question_scores(origin, ep.question.question)
            ep.cands[cid] = fresh
        titles: dict[str, str] = {}
        for q in sorted(ep.pools):  # sorted: the same map whatever order reranks ran in
            for c in ep.pools[q].values():
                titles.setdefault(c.chunk.title, c.chunk.doc_id)
        ep.titles = titles

    def _rank_cached(self, ep: _EpisodeState, obs: Observation) -> list[_Ranked]:
        """Every cached chunk with its base and full utility, best first."""
        cands = [ep.cands[cid] for cid in obs.cache if cid in ep.cands]
        if not cands:
            return []
        bx = self._base_rows(ep, cands)
        base = self.weights.base.predict(bx)
        anchors = _anchor_views(cands, base, 4)
        fx = np.hstack([bx, link_matrix(cands, ep.question, anchors)])
        full = self.weights.ranker.predict(fx)
        # the order: LambdaRank's when the weights carry it; the probabilities stay the
        # ranker's (prune threshold, sufficiency features)
        score = self.weights.order.logits(fx) if self.weights.order is not None else full
        order = np.argsort(-score, kind="stable")
        return [
            _Ranked(cands[i].chunk.chunk_id, cands[i], float(full[i]), float(base[i]))
            for i in order
        ]

    @staticmethod
    def _base_rows(ep: _EpisodeState, cands: list[Candidate]) -> np.ndarray:
        """:func:`base_matrix` of ``cands``, rows kept between turns: a candidate's base
        features depend only on it and the question, and neither changes once it is
        ranked (the memo checks both are the same objects)."""
        q = ep.question
        todo = []
        for c in cands:
            held = ep.base_rows.get(c.chunk.chunk_id)
            if held is None or held[0] is not c or held[1] is not q:
                todo.append(c)
        if todo:
            for c, row in zip(todo, base_matrix(todo, q), strict=True):
                ep.base_rows[c.chunk.chunk_id] = (c, q, row)
        return np.vstack([ep.base_rows[c.chunk.chunk_id][2] for c in cands])


@dataclass(frozen=True, slots=True)
class _Ranked:
    chunk_id: str
    cand: Candidate
    prob: float
    base: float


def _anchor_views(cands: Sequence[Candidate], base: np.ndarray, k: int) -> list[AnchorView]:
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


@lru_cache(maxsize=4096)
def _sentence_names(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """Per sentence of ``text``: its content words and the names and codes it holds
    (memoized: a clue chain reads the documents in view again on every hop)."""
    sents, words = sentence_words(text)
    return tuple((w, frozenset(names_in(x))) for x, w in zip(sents, words, strict=True))


def _question_scores(origin: LineageRecord | None, question: str) -> tuple[float, float]:
    """A chunk's BM25 and cosine scores against the question, from how it was found.

    Grep hits are scored against the question by the harness; a search for the
    question itself carries them too. Anything else (a read) scores 0.
    """
    if origin is None or (origin.tool != "grep_corpus" and origin.query.strip() != question):
        return 0.0, 0.0
    return origin.bm25_score or 0.0, origin.dense_score or 0.0


def _first_sentence(text: str, limit: int = 300) -> str:
    """The chunk's first sentence (at most ``limit`` characters): a justification of last resort."""
    line = " ".join(text.split())
    end = next((i + 1 for i, ch in enumerate(line) if ch in ".!?" and i > 20), len(line))
    return line[: min(end, limit)]


def _doc_probs(ranked: Sequence[_Ranked]) -> list[tuple[str, float]]:
    """Documents by their best chunk's utility, best first."""
    out: dict[str, float] = {}
    for r in ranked:
        out.setdefault(r.cand.chunk.doc_id, r.prob)
    return list(out.items())


def _linked12(ranked: Sequence[_Ranked]) -> bool:
    """Whether the two best documents name each other's title."""
    firsts: list[_Ranked] = []
    for r in ranked:
        if all(f.cand.chunk.doc_id != r.cand.chunk.doc_id for f in firsts):
            firsts.append(r)
        if len(firsts) == 2:
            break
    if len(firsts) < 2:
        return False
    a, b = firsts[0].cand.chunk, firsts[1].cand.chunk
    return contains_phrase(lower_text(a), b.title) or contains_phrase(lower_text(b), a.title)
