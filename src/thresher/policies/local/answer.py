"""The answer ranker: which documents the answer keeps, in what order, with what score.

The documents in view are ordered by their best chunk (the learned order:
LambdaRank when the weights carry it); each of the best ``keep_docs`` brings
its chain links up beside it, and for a question stated as linked clues the
best document per clue leads (:mod:`.chain`). The same order decides what is
pruned before the answer. Each answered document is justified by its
sentences closest to the question and the follow-up that found it, and scored
by the ranker's probability that it is evidence, fit to the answer order
(:func:`answer_scores`): scores never rise with rank.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from thresher.harness.actions import RankedDocument
from thresher.harness.observation import Observation
from thresher.harness.replies import rank_scores
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.chain import chain_order
from thresher.policies.local.clues import Sentences, by_link, links
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.entities import names_in
from thresher.policies.local.guards import keep_agreed, keep_best_evidence
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.scoring import Ranked
from thresher.policies.local.text import best_sentences

__all__ = ["AnswerRanker", "ClueInputs", "answer_scores", "found"]

#: what :func:`~.clues.clue_docs` reads of the documents in view: each one's words,
#: nearest chain link, sentences (words, names the question lacks) and title
ClueInputs = tuple[
    dict[str, frozenset[str]], dict[str, list[str]], Mapping[str, Sentences], dict[str, str]
]


class AnswerRanker:
    """Orders, prunes and justifies the documents an episode ends with.

    Args:
        keep_docs: documents the answer keeps in view (the best ones).
        prune_below: within those, utility under which a chunk other than its
            document's best is pruned.
        final_k: documents in the final answer.
        chain_order: move each of the best ``keep_docs`` documents' chain links up
            beside it (and, for a clue chain, the best document per clue first).
        constants: the policy's constants (clue chains, justifications).
    """

    def __init__(
        self,
        *,
        keep_docs: int,
        prune_below: float,
        final_k: int,
        chain_order: bool,
        constants: Constants = DEFAULT_CONSTANTS,
    ) -> None:
        self.constants = constants
        self.keep_docs = keep_docs
        self.prune_below = prune_below
        self.final_k = final_k
        self.chain_order = chain_order

    def order(
        self,
        memory: EpisodeMemory,
        ranked: list[Ranked],
        active: set[str],
        clue_first: bool = True,
    ) -> tuple[list[str], dict[str, Ranked], dict[str, list[str]]]:
        """The documents in view in answer order, each one's best chunk, and its chunks
        (``clue_first``: a clue chain's documents per clue lead the order)."""
        best: dict[str, Ranked] = {}
        chunks: dict[str, list[str]] = {}
        for r in ranked:
            if r.chunk_id not in active:
                continue
            doc = r.cand.chunk.doc_id
            chunks.setdefault(doc, []).append(r.chunk_id)
            best.setdefault(doc, r)
        order = list(best)
        if self.chain_order:
            links_of = self.links_of(memory, ranked)
            prob = {d: r.prob for d, r in best.items()}
            order = chain_order(order, self.keep_docs, links_of, prob)
            clues = links(memory.question.question)
            if clue_first and len(clues) > 1:
                words, parents, sents, titles = self.clue_inputs(
                    memory, order, best, chunks, links_of
                )
                order = by_link(
                    clues, order, words, parents, self.keep_docs, sents, titles, self.constants
                )
        return order, best, chunks

    @staticmethod
    def links_of(memory: EpisodeMemory, ranked: list[Ranked]) -> Callable[[str], list[str]]:
        """A document's chain links (see :meth:`~.chain.Chain.links`), from its best chunk."""
        chain = memory.chain()
        firsts: dict[str, Candidate] = {}
        for r in ranked:
            firsts.setdefault(r.cand.chunk.doc_id, r.cand)
        # the chain's refound candidates, read once when first needed: the answer order
        # asks every document in view, and nothing changes the chain meanwhile
        refound: dict[str, Candidate] | None = None

        def links_of(doc: str) -> list[str]:
            nonlocal refound
            first = firsts.get(doc)
            if refound is None and first is not None and not chain.continues(first):
                refound = chain.refound()
            return chain.links(first, refound)

        return links_of

    @staticmethod
    def clue_inputs(
        memory: EpisodeMemory,
        pool: list[str],
        best: dict[str, Ranked],
        chunks: dict[str, list[str]],
        links_of: Callable[[str], list[str]],
    ) -> ClueInputs:
        """What :func:`~.clues.clue_docs` reads of the documents in view (``pool``, best
        first). A document answers a clue with any of its chunks in view."""
        held = {
            d: [memory.cands[c] for c in chunks[d] if c in memory.cands] or [best[d].cand]
            for d in pool
        }
        asked = frozenset(n.lower() for n in names_in(memory.question.question))
        words = {d: frozenset().union(*(c.words for c in held[d])) for d in pool}
        parents = {d: links_of(d)[:1] for d in pool}
        names = memory.text.sentence_names
        sents = {d: [(w, n - asked) for c in held[d] for w, n in names(c.chunk.text)] for d in pool}
        titles = {d: best[d].cand.chunk.title.lower() for d in pool}
        return words, parents, sents, titles

    def prune_ids(self, memory: EpisodeMemory, obs: Observation, ranked: list[Ranked]) -> list[str]:
        """What leaves the context before the answer: every chunk outside the answer's
        best ``keep_docs`` documents (chain links placed among them stay), and within
        those, chunks of low utility other than each document's best one."""
        active = {a.chunk_id for a in obs.active}
        order, best, _ = self.order(memory, ranked, active)
        order = self.keep_agreed(memory, order, best)
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
        agreed = [best[d].chunk_id for d in memory.agreed if d in best]
        return keep_best_evidence([a.chunk_id for a in obs.active], out, prob, agreed)

    def keep_agreed(
        self, memory: EpisodeMemory, order: list[str], best: Mapping[str, Ranked]
    ) -> list[str]:
        """``order`` with the documents the question's search agreed on kept among the
        answer's best unless clearly beaten (:func:`~.guards.keep_agreed`)."""
        if not memory.agreed:
            return order
        c = self.constants
        slots = min(self.keep_docs, self.final_k)
        prob = {d: r.prob for d, r in best.items()}
        return keep_agreed(order, prob, memory.agreed, slots, c.agree_keep, c.agree_margin)

    def final(
        self, memory: EpisodeMemory, obs: Observation, ranked: list[Ranked]
    ) -> list[RankedDocument]:
        """The documents still in view, best first: the answer cites only evidence it kept."""
        order, best, chunks = self.order(memory, ranked, {a.chunk_id for a in obs.active})
        order = self.keep_agreed(memory, order, best)
        docs = order[: self.final_k]
        scores = answer_scores([best[d].prob for d in docs])
        c = self.constants
        keep = found(scores, c.answer_floor, c.answer_min_docs, [d in memory.agreed for d in docs])
        docs = [d for d, k in zip(docs, keep, strict=True) if k]
        if len(docs) < len(scores):  # the scores of what stays, fit to its own order
            scores = answer_scores([best[d].prob for d in docs])
        out = []
        for doc, score in zip(docs, scores, strict=True):
            r = best[doc]
            cues = [memory.question.question]
            if r.cand.subquery and r.cand.subquery != memory.question.question:
                cues.append(r.cand.subquery)
            c = self.constants
            why = best_sentences(
                r.cand.chunk.text,
                cues,
                limit=c.justification_sentences,
                split=memory.text.sentence_words,
            ) or _first_sentence(r.cand.chunk.text, c.fallback_chars, c.fallback_min_chars)
            out.append(RankedDocument(doc, why, tuple(chunks[doc]), score))
        return out


def answer_scores(probs: list[float]) -> list[float]:
    """Scores of the answer's documents, best first: each document's probability of
    being evidence (its best chunk's, from the ranker), fit to the answer order by
    isotonic regression (:func:`thresher.harness.replies.rank_scores`): the closest
    non-increasing scores in least squares, so two documents the order placed
    against their probabilities share their mean, and every other keeps its own.
    Rounded to 4 places; empty for no documents.
    """
    given: list[float | None] = [*probs]
    return rank_scores(given) if given else []


def found(scores: list[float], floor: float, min_docs: int, agreed: list[bool]) -> list[bool]:
    """Which answered documents stay (``scores`` best first, non-increasing): each
    scored at least ``floor``, the first ``min_docs`` and the ``agreed`` ones whatever
    their scores. The rest are "not found": the answer holds fewer documents than
    asked rather than fillers it finds unlikely to be evidence."""
    return [
        i < min_docs or s >= floor or a for i, (s, a) in enumerate(zip(scores, agreed, strict=True))
    ]


def _first_sentence(text: str, limit: int, min_chars: int) -> str:
    """The chunk's first sentence (ending at a stop past ``min_chars`` characters; at most
    ``limit`` characters): a justification of last resort."""
    line = " ".join(text.split())
    end = next((i + 1 for i, ch in enumerate(line) if ch in ".!?" and i > min_chars), len(line))
    return line[: min(end, limit)]
